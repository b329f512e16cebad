"""A count given in code (the Python API) is a Python or numpy integer; a float is refused,
an integral one too, in one line naming the parameter and saying to pass an int, as
``range(8.0)`` is a TypeError and as ``search``/``compare`` refused ``max_batch=8.0``.

Before: ``netmodel.evaluate(..., batch=8.0, tp=1.0, context=1024.0)`` took all three
floats (:func:`compute.roofline.check_batch`, :func:`compute.sharding.check_tp`,
:func:`compute.parallel` and :mod:`compute.phases` turned an integral float into its int),
while ``search(max_batch=8.0)`` and ``collective_time(group=8.0)`` refused. Text (a command
line's values, spec strings, TOML files) keeps its own rule.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import netmodel
from compute.errors import UserError

M, G = "Llama-3-8B", "H100-SXM"


@pytest.mark.parametrize("kwargs, said", [
    ({"batch": 8.0, "tp": 1}, "batch must be a whole number of sequences >= 1 (an int), got 8.0"),
    ({"batch": np.float64(8), "tp": 1},
     "batch must be a whole number of sequences >= 1 (an int), got 8.0"),
    ({"batch": 8, "tp": 1.0}, "TP degree must be a whole number >= 1 (an int), got 1.0"),
    ({"batch": 8, "tp": 1, "pp": 1.0}, "PP degree must be a whole number >= 1 (an int), got 1.0"),
    ({"batch": 8, "tp": 1, "ep": 1.0}, "EP degree must be a whole number >= 1 (an int), got 1.0"),
    ({"batch": 8, "tp": 1, "attention_dp": 1.0},
     "attention DP degree must be a whole number >= 1 (an int), got 1.0"),
    ({"batch": 8, "tp": 1, "context": 1024.0},
     "context must be a whole number of tokens >= 1 (an int), got 1024.0"),
])
def test_evaluate_refuses_a_whole_float_count(kwargs, said):
    with pytest.raises(UserError, match=re.escape(said)):
        netmodel.evaluate(M, G, "decode", **kwargs)


def test_evaluate_refuses_a_float_prompt_and_takes_numpy_integers():
    with pytest.raises(UserError, match=re.escape(
            "prompt must be a whole number of tokens >= 1 (an int), got 1024.0")):
        netmodel.evaluate(M, G, "prefill", batch=8, tp=1, prompt=1024.0)
    ref = netmodel.evaluate(M, G, "decode", batch=8, tp=1, context=1024)
    got = netmodel.evaluate(M, G, "decode", batch=np.int64(8), tp=np.int64(1),
                            context=np.int64(1024))
    assert got == ref and type(got.batch) is int and type(got.tp) is int


def test_search_refuses_whole_float_degrees_and_tokens_as_max_batch():
    for kwargs, said in (({"max_batch": 8.0}, "max_batch must be a whole number >= 1 (an int), "
                                              "got 8.0"),
                         ({"tp": [1.0, 2.0]}, "TP degree must be a whole number >= 1 (an int), "
                                              "got 1.0"),
                         ({"context": 1024.0}, "context must be a whole number of tokens >= 1 "
                                               "(an int), got 1024.0")):
        with pytest.raises(UserError, match=re.escape(said)):
            netmodel.search(M, G, "decode", **{"max_batch": 8, **kwargs})


def test_a_fractional_float_keeps_its_refusal_without_the_int_words():
    with pytest.raises(UserError, match=r"batch must be a whole number of sequences >= 1, got "
                                        r"8\.5$"):
        netmodel.evaluate(M, G, "decode", batch=8.5, tp=1)
    with pytest.raises(UserError, match=r"from 1 to 1,000,000,000, got 1e\+308"):
        netmodel.evaluate(M, G, "decode", batch=1e308, tp=1)


# -- a fabric builder's count -------------------------------------------------------------


@pytest.mark.parametrize("spec, params, said", [
    ("ring", {"n": 4.0}, "ring: n must be a whole number (an int), got 4.0"),
    ("fat-tree", {"k": np.float64(4)}, "fat-tree: k must be a whole number (an int), got 4.0"),
    (("lite-groups", {"base": {"builder": "ring", "n": 4.0}}), None,
     "lite-groups: ring: n must be a whole number (an int), got 4.0"),
])
def test_build_fabric_refuses_a_whole_float_count(spec, params, said):
    with pytest.raises(UserError, match=f"^{re.escape(said)}$"):
        netmodel.build_fabric(spec, params)


def test_a_builder_called_in_code_refuses_it_too_and_a_fraction_keeps_its_refusal():
    from topologies.specs import get_builder

    with pytest.raises(UserError, match=re.escape("ring: n must be a whole number (an int), "
                                                  "got 4.0")):
        get_builder("ring")(n=4.0)
    with pytest.raises(UserError, match=re.escape("ring: n must be an integer >= 2, got 4.5")):
        netmodel.build_fabric("ring", {"n": 4.5})


def test_numpy_integers_and_text_are_taken():
    for n in (np.int64(4), "4.0"):
        g = netmodel.build_fabric("ring", {"n": n})
        assert g.graph["args"] == {"n": 4} and g.graph["gpus"] == 4
    assert netmodel.build_fabric("ring:n=4.0").graph["spec"] == "ring:n=4"


def test_a_scenario_file_keeps_its_rule_a_whole_float_count_is_its_int(tmp_path):
    from pathlib import Path

    from netmodel.study.scenario_fabric import build_fabric

    src = Path(netmodel.__file__).parent / "data" / "scenarios" / "h100-dgx.toml"
    text = src.read_text().replace('name = "h100-dgx"', 'name = "floats"')
    assert "\ndomains = 4\n" in text
    f = tmp_path / "floats.toml"
    f.write_text(text.replace("\ndomains = 4\n", "\ndomains = 4.0\n"))
    ref = build_fabric(netmodel.get_scenario(str(src)))
    got = build_fabric(netmodel.get_scenario(str(f)))
    assert got.graph["gpus"] == ref.graph["gpus"] == 32 and got.graph["args"] == ref.graph["args"]


def test_collective_time_on_a_scenario_says_the_group_is_an_int():
    # before: 'on a scenario, group must be a size (instances are placed by the scenario's
    # placement)', the value not shown; a fabric's refusal already said '(int)'
    with pytest.raises(UserError, match=re.escape(
            "on a scenario, group must be a size (an int: instances are placed by the "
            "scenario's placement), got 8.0")):
        netmodel.collective_time("h100-dgx", "all-reduce", 1e6, 8.0)
    with pytest.raises(UserError, match=r"group must be a size \(int\) .*got 8\.0"):
        netmodel.collective_time("single-switch:n=8", "all-reduce", 1e6, 8.0)
    t = netmodel.collective_time("h100-dgx", "all-reduce", 1e6, np.int64(8))
    assert t == netmodel.collective_time("h100-dgx", "all-reduce", 1e6, 8) and t > 0
