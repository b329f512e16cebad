"""A number below the smallest float (``1e-320``: it underflows) in a profile, a GPU file or
a model file, where the key's range leaves out 0, is told what the key must be (its
reader's range), not to write 0 for zero; where 0 is in the range (a profile's overheads, a
model's dense_layers, a latency) it is told that range too (once 'write 0 for zero'). Every
case runs through the command line: exit status 2 and one line."""

from __future__ import annotations

import pytest

from compute.profiles import PARAMETERS
from compute.validate import limits, range_words
from tests.netmodel.cli_helpers import one_line_error, refused_file, run_cli

HEAD = "below the smallest number netmodel reads (2.225e-308)"
ZERO = f"{HEAD}; write 0 for zero"
INFER = ["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "1", "--batch", "1"]


def _range(section: str, key: str) -> str:
    r = limits(section)[key]
    return range_words(r.minimum, r.maximum, integer=r.integer, unit=r.unit)


def _says(key: str, allowed: str | None) -> str:
    """The words for ``key``: its range, 0 in it or not (``ZERO`` where none is given)."""
    if allowed is None:
        return ZERO
    if " from 0 " in allowed or " 0 or " in allowed:
        return f"{HEAD}; {key} must be {allowed}"
    return f"{HEAD}, and {key} may not be 0: it must be {allowed}"




@pytest.mark.parametrize("key, allowed", [
    ("gemm_efficiency", "a number from 0.0001 to 1"),
    ("attention_efficiency", "a number from 0.0001 to 1"),
    ("hbm_fraction", "a number from 0.0001 to 1"),
    ("step_overhead_s", "a number from 0 to 10 s"),   # an overhead may be 0
])
def test_profile_parameter_says_its_range(tmp_path, key, allowed):
    p = PARAMETERS[key]   # the range the reader checks
    assert allowed == range_words(p.minimum, p.maximum, unit=p.unit)
    text = (f'[profile]\nname = "p"\n[parameters]\n'
            f'{key} = {{ value = 1e-320, source = "s" }}\n')
    line, path = refused_file(tmp_path, "p.toml", text, [*INFER, "--profile", "FILE"])
    assert line == (f"error: {path} holds the number 1e-320 at line 4 ([parameters] {key}), "
                    f"{_says(key, allowed)}")


def test_profile_curve_efficiency_says_its_range(tmp_path):
    text = ('[profile]\nname = "p"\n[parameters.gemm_efficiency]\nsource = "s"\n'
            'intensity = [1.0, 2.0]\nefficiency = [1e-320, 0.5]\n')
    line, path = refused_file(tmp_path, "p.toml", text, [*INFER, "--profile", "FILE"])
    assert line.endswith(f"{HEAD}, and efficiency may not be 0: it must be a number from "
                         "0.0001 to 1"), line


@pytest.mark.parametrize("key, allowed", [
    ("layers", "a whole number from 1 to 10,000"),
    ("hidden", _range("model", "hidden")),
    ("dense_layers", _range("model", "dense_layers")),   # 0: every layer a MoE layer
])
@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_model_file_says_its_range(tmp_path, key, allowed, suffix):
    assert _range("model", "layers") == "a whole number from 1 to 10,000"
    if suffix == ".toml":
        text = f"[model.X]\n{key} = 1e-320\n"
    else:
        text = f'{{"model": {{"X": {{"{key}": 1e-320}}}}}}'
    line, path = refused_file(tmp_path, f"m{suffix}", text,
                      ["infer", "--model-file", "FILE", "--model", "X", "--gpu", "H100-SXM",
                       "--tp", "1", "--batch", "1"])
    at = f"line 2 ([model.X] {key})" if suffix == ".toml" else \
        f'line 1 ("model" > "X" > "{key}")'
    assert line == f"error: {path} holds the number 1e-320 at {at}, {_says(key, allowed)}"


@pytest.mark.parametrize("key", ["hbm_bandwidth_TBps", "sms", "tdp_W"])
def test_gpu_file_says_its_range(tmp_path, key):
    allowed = _range("gpu", key)
    line, path = refused_file(tmp_path, "g.toml", f"[gpu.X]\n{key} = 1e-320\n",
                      ["infer", "--gpu-file", "FILE", "--gpu", "X", "--model", "Llama-3-8B",
                       "--tp", "1", "--batch", "1"])
    assert line == (f"error: {path} holds the number 1e-320 at line 2 ([gpu.X] {key}), "
                    f"{HEAD}, and {key} may not be 0: it must be {allowed}")


SCENARIO = "netmodel/data/scenarios/lite-ocs.toml"
COLLECTIVE = ["collective", "all-reduce", "--size", "1MiB", "--scenario", "FILE"]


def _scenario(change) -> str:
    from pathlib import Path

    return change(Path(__file__).parents[2].joinpath(SCENARIO).read_text())


@pytest.mark.parametrize("change, at, says", [
    (lambda t: t + "\n[adjust]\nbandwidth_scale = 1e-320\n", "[adjust] bandwidth_scale",
     _says("bandwidth_scale", "a number from 1e-09 to 1,000,000,000,000,000")),
    (lambda t: t.replace('bandwidth = "$scaleup"', "bandwidth = 1e-320", 1),
     "[fabric] bandwidth", _says("bandwidth", "a finite number > 0")),
    (lambda t: t + "\n[adjust]\nlatency_scale = 1e-320\n", "[adjust] latency_scale",
     # a latency scaled to 0: the bandwidth term alone
     _says("latency_scale", "a number from 0 to 1,000,000")),
    (lambda t: t.replace("length = 10.0", "length = 1e-320"), "[fabric] length",
     _says("length", "a number from 0 to 100,000 m")),   # limits.PHYSICAL_MAX
])
def test_scenario_file_says_its_range(tmp_path, change, at, says):
    from netmodel.study.scenarios import ADJUST_RANGES

    assert ADJUST_RANGES["bandwidth_scale"][:2] == (1e-9, 1e15)   # the range named above
    text = _scenario(change)
    line_no = next(i for i, s in enumerate(text.splitlines(), 1) if "1e-320" in s)
    line, path = refused_file(tmp_path, "s.toml", text, COLLECTIVE)
    assert line == f"error: {path} holds the number 1e-320 at line {line_no} ({at}), {says}"


def test_scenario_scale_factor_k_says_its_range(tmp_path):
    text = _scenario(lambda t: t.replace('bandwidth = "$scaleup"',
                                         'bandwidth = "1e-320*$scaleup"', 1))
    line, path = refused_file(tmp_path, "s.toml", text, COLLECTIVE)
    what = "fabric value '1e-320*$scaleup': K"
    assert line == (f"error: {path}: [fabric] bandwidth: {what} '1e-320' is "
                    f"{_says(what, 'a finite number > 0')}")


@pytest.mark.parametrize("path, says", [
    ("adjust.bandwidth_scale",
     _says("adjust.bandwidth_scale value", "a number from 1e-09 to 1,000,000,000,000,000")),
    ("adjust.latency_scale", _says("adjust.latency_scale value", "a number from 0 to 1,000,000")),
])
def test_sweep_value_says_its_range(path, says):
    r = run_cli(["sweep", "--scenarios", "lite-flat", "--model", "Llama-3-8B", "--param",
                 f"{path}=1e-320,1"])
    assert r.exit_code == 2
    assert one_line_error(r) == f"error: --param '{path}=1e-320,1': {path} value '1e-320' " \
                                f"is {says}"


@pytest.mark.parametrize("key, says", [
    ("bandwidth_scale",
     _says("adjust.bandwidth_scale", "a number from 1e-09 to 1,000,000,000,000,000")),
    ("latency_scale", _says("adjust.latency_scale", "a number from 0 to 1,000,000")),
])
def test_scenario_param_says_its_range(key, says):
    from compute.errors import UserError
    from netmodel.study.scenario_catalog import get_scenario

    with pytest.raises(UserError) as err:
        get_scenario("lite-flat").with_param(f"adjust.{key}", "1e-320")
    assert str(err.value) == f"adjust.{key} '1e-320' is {says}"


@pytest.mark.parametrize("argv, says", [
    # an acceptance of 0 is a probability (every draft refused): 0 is allowed
    ([*INFER, "--mtp-tokens", "1", "--mtp-acceptance", "1e-320"],
     f"--mtp-acceptance '1e-320' is {HEAD}; --mtp-acceptance must be a probability from 0 "
     "to 1"),
    ([*INFER, "--reserve", "1e-320"],   # a share of memory held back: 0 holds none
     f"--reserve '1e-320' is {HEAD}; --reserve must be a fraction in [0, 1)"),
    # 0% spares is the default
    (["availability", "--scenario", "lite-flat", "--model", "Llama-3-70B", "--spares",
      "1e-320%"], f"--spares '1e-320' is {HEAD}; --spares must be a percentage >= 0"),
])
def test_zero_allowed_option_says_its_range(argv, says):
    r = run_cli(argv)
    assert r.exit_code == 2
    assert one_line_error(r) == f"error: {says}"
