"""A number below the smallest float (``1e-320``: it underflows) is told the range of the value
it was written for, whether that range holds 0 or not, by every reader of files and unit
quantities. Before, these readers said 'write 0 for zero' (one line, exit 2 as now): a
scenario's whole-number builder parameter ([fabric] n, planes: 0 refused by every builder),
a builder's latency and length, a profile's ``[parameters.NAME] value`` row (a value whose
range was unknown to the reader, 0 refused or allowed), a profile's overheads (0 allowed), a
GPU file's zero-allowed peaks, a model file's zero-allowed counts, a fabric file's latency,
a unit quantity that may be 0 (a builder's latency in a spec string)."""

from __future__ import annotations

import pytest

from compute.profiles import PARAMETERS
from compute.validate import limits, range_words
from tests.netmodel.cli_helpers import one_line_error, refused_file, run_cli
from topologies import build
from topologies.limits import PHYSICAL_MAX
from topologies.registry import builders

HEAD = "below the smallest number netmodel reads (2.225e-308)"
INFER = ["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "1", "--batch", "1"]
COLLECTIVE = ["collective", "all-reduce", "--size", "1MiB", "--scenario", "FILE"]




def _scenario() -> str:
    return run_cli(["compare", "--show", "lite-flat"]).output


def test_every_whole_number_builder_parameter_refuses_zero():
    # the rule the scenario reader says for them: 'may not be 0: a whole number >= 1'
    ints = [(b.name, p.name) for b in builders() for p in b.params if p.type == "int"]
    assert len(ints) >= 19
    from compute.errors import UserError

    for name, key in ints:
        with pytest.raises(UserError):
            build(name, {key: 0})


@pytest.mark.parametrize("key, old", [("n", "n = 128"), ("planes", "planes = 4"),
                                      ("radix", "radix = 144")])
def test_scenario_whole_number_builder_parameter_says_its_range(tmp_path, key, old):
    text = _scenario()
    assert old in text
    text = text.replace(old, f"{key} = 1e-320", 1)
    line_no = next(i for i, s in enumerate(text.splitlines(), 1) if "1e-320" in s)
    line, path = refused_file(tmp_path, "s.toml", text, COLLECTIVE)
    assert line == (f"error: {path} holds the number 1e-320 at line {line_no} ([fabric] {key}), "
                    f"{HEAD}, and {key} may not be 0: it must be a whole number >= 1")


def test_scenario_latency_says_its_range(tmp_path):
    text = _scenario()
    assert 'latency = "330ns"' in text
    text = text.replace('latency = "330ns"', "latency = 1e-320", 1)
    line_no = next(i for i, s in enumerate(text.splitlines(), 1) if "1e-320" in s)
    line, path = refused_file(tmp_path, "s.toml", text, COLLECTIVE)
    assert PHYSICAL_MAX["latency"][:2] == (1.0, "s")
    assert line == (f"error: {path} holds the number 1e-320 at line {line_no} ([fabric] "
                    f"latency), {HEAD}; latency must be a number from 0 to 1 s")


@pytest.mark.parametrize("key", ["gemm_efficiency", "hbm_fraction", "step_overhead_s",
                                 "decode_sequence_overhead_s"])
@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_profile_value_row_says_its_parameters_range(tmp_path, key, suffix):
    p = PARAMETERS[key]
    words = range_words(p.minimum, p.maximum, unit=p.unit)
    if suffix == ".toml":
        text = f'[profile]\nname = "p"\n[parameters.{key}]\nvalue = 1e-320\nsource = "s"\n'
        at = f"line 4 ([parameters.{key}] value)"
    else:
        text = ('{"profile": {"name": "p"}, "parameters": {"' + key
                + '": {"value": 1e-320, "source": "s"}}}')
        at = f'line 1 ("parameters" > "{key}" > "value")'
    line, path = refused_file(tmp_path, f"p{suffix}", text, [*INFER, "--profile", "FILE"])
    said = f"{HEAD}; {key} must be {words}" if p.minimum == 0 else \
        f"{HEAD}, and {key} may not be 0: it must be {words}"
    assert line == f"error: {path} holds the number 1e-320 at {at}, {said}"


@pytest.mark.parametrize("key", ["fp4_dense_TFLOPs", "scaleout_Gbps"])
def test_gpu_file_zero_allowed_key_says_its_range(tmp_path, key):
    r = limits("gpu")[key]
    assert r.or_zero or r.minimum == 0
    words = range_words(r.minimum, r.maximum, integer=r.integer, or_zero=r.or_zero,
                        unit=r.unit)
    line, path = refused_file(tmp_path, "g.toml", f"[gpu.X]\n{key} = 1e-320\n",
                      ["infer", "--gpu-file", "FILE", "--gpu", "X", "--model", "Llama-3-8B",
                       "--tp", "1", "--batch", "1"])
    assert line == (f"error: {path} holds the number 1e-320 at line 2 ([gpu.X] {key}), "
                    f"{HEAD}; {key} must be {words}")


def test_a_zero_allowed_quantity_in_a_spec_says_its_range():
    r = run_cli([*INFER, "--fabric", "single-switch:n=2,latency=1e-320s"])
    assert r.exit_code == 2
    assert one_line_error(r) == ("error: --fabric 'single-switch:n=2,latency=1e-320s': "
                                 "single-switch: latency '1e-320s' is "
                                 f"{HEAD}; single-switch: latency must be a finite number >= 0")


@pytest.mark.parametrize("argv, says", [
    (["topology", "show", "lite-groups:length=1e-320"],   # limits.PHYSICAL_MAX's length
     f"fabric 'lite-groups:length=1e-320': lite-groups: length '1e-320' is {HEAD}; "
     "lite-groups: length must be a number from 0 to 100,000 m"),
    (["availability", "--scenario", "lite-flat", "--model", "Llama-3-70B", "--detection",
      "1e-320s"], f"--detection '1e-320s' is {HEAD}; --detection must be a duration from 0 to "
                   f"100 y"),
    (["availability", "--scenario", "lite-flat", "--model", "Llama-3-70B", "--rate",
      "gpu=1e-320"],
     f"--rate gpu '1e-320' is {HEAD}; --rate gpu must be a finite number >= 0 per hour"),
])
def test_a_zero_allowed_option_or_spec_value_says_its_range(argv, says):
    r = run_cli(argv)
    assert r.exit_code == 2
    assert one_line_error(r) == f"error: {says}"
