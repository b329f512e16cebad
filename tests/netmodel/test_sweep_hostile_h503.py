"""run_sweep's lists (h503, hostile pass on the sweep's Python API).

A lone text where a list is taken was read letter by letter: ``params="adjust.hop_latency=1us"``
was refused as ``sweep parameter 'a' must be PATH=LO:HI``, ``models="Llama-3-8B"`` as
``unknown model 'L'``; a lone SweepParam raised TypeError (not iterable); three parameters
were each read (a range's values made) before the count was refused.
"""

from __future__ import annotations

import pytest

from compute.errors import UserError
from netmodel.study.sweep import SweepParam, run_sweep

SCEN = ["lite-flat"]


def _refused(*args, **kw) -> str:
    with pytest.raises(UserError) as e:
        run_sweep(*args, **kw)
    return str(e.value)


def test_a_lone_text_or_param_is_no_list():
    assert _refused(SCEN, "adjust.hop_latency=1us", ["Llama-3-8B"]) == (
        "params must be a list of sweep parameters (SweepParam or 'PATH=LO:HI' text), got "
        "'adjust.hop_latency=1us'")
    assert _refused(SCEN, SweepParam("adjust.hop_latency", (1e-6,), "s"), ["Llama-3-8B"]) == (
        "params must be a list of sweep parameters (SweepParam or 'PATH=LO:HI' text), got "
        "the SweepParam of 'adjust.hop_latency' alone: give [param]")
    assert _refused(SCEN, ["adjust.hop_latency=1us"], "Llama-3-8B") == (
        "models must be a list of model names, files or ModelSpec objects, got 'Llama-3-8B'")
    assert _refused(SCEN, ["adjust.hop_latency=1us"], ["Llama-3-8B"], "decode") == (
        "phases must be a list of phases (prefill, decode), got 'decode'")


def test_three_params_are_counted_before_any_is_read():
    # the third is no parameter at all: the count is said, not its name
    assert _refused(SCEN, ["adjust.hop_latency=1us", "adjust.latency_scale=1,2", "bogus=1"],
                    ["Llama-3-8B"]) == "sweep one or two parameters, got 3"


def test_one_axis_twice_is_refused_however_it_is_given():
    p = SweepParam("adjust.hop_latency", (1e-6, 2e-6), "s")
    assert _refused(SCEN, [p, "adjust.hop_latency=3us,4us"], ["Llama-3-8B"]) == \
        "parameter 'adjust.hop_latency' is given twice"
