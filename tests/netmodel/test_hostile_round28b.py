"""Hostile round 28, the refusals it left inconsistent (scripts/hostile_round28.py).

Found wrong, each checked here:

(a) A GPU named in a saved fabric's node ('h100-sxm', 'H100-SXM '), a scenario file's
``gpu`` ('H100-SXM ') or a GPU file's ``derive_from`` ('h100-sxm') was refused, where
``--gpu`` reads each as 'H100-SXM' (compute.errors.find_name: blanks at either end
dropped, case aside). Now each is read as the catalog's GPU.

(b) ``calibrate --base p.toml -o p.toml`` fitted, then said 'profile file 'p.toml' is a
file this command reads', naming neither flag. Now refused before the fit, naming both
(--measurements, --gpu-file and a scenario's file or NAME@GPU's GPU file alike).

(c) ``--scenario 'h100-dgx@'`` said 'scenario 'h100-dgx@' names no GPU after '@'', naming
no flag (the text quoted whole, the command line added nothing); likewise ``--fabric`` with
a spec ending in ',' ('spec parameter '' must be KEY=VALUE (in 'ring:n=8,')'), a key twice,
'@' or '@0.5x' after a builder's spec. Now the library quotes the scenario or the builder
and its parameters, and the command line says the flag and the text typed in front.

(d) The library's economics parameter (compute.rows.parameter), a GPU's peak_flops dtype,
a calibration's NCCL protocol and default generation (and a generations file's default)
refused a name in look-alike letters ('d\u0435fect_density', 'Simpl\u0435') beside a list
showing it alike. Now each asks 'did you mean ...?' (compute.errors.lookalike) and drops
blanks at either end (compute.errors.chosen), as every other choice.
"""

from __future__ import annotations

import json

import pytest

from tests.netmodel.cli_helpers import ROOT, one_line_error, run_cli

BLAST = ["--model", "Llama-3-8B", "--max-batch", "8"]
SCENARIO = (ROOT / "netmodel/data/scenarios/h100-dgx.toml").read_text().replace(
    'name = "h100-dgx"', 'name = "mine"')


def _fabric(tmp_path, gpu, suffix=".json"):
    """ring:n=4 saved as ``f{suffix}``, each GPU node's type ``gpu``."""
    path = tmp_path / f"f{suffix}"
    assert run_cli(["topology", "export", "ring:n=4", "-o", path]).exit_code == 0
    if suffix == ".json":
        doc = json.loads(path.read_text())
        for node in doc["nodes"]:
            node["gpu"] = gpu
        path.write_text(json.dumps(doc))
    else:
        path.write_text(path.read_text().replace(">H100-SXM<", f">{gpu}<"))
    return path


@pytest.mark.parametrize("suffix", [".json", ".graphml"])
@pytest.mark.parametrize("gpu", ["h100-sxm", "H100-SXM ", " h100-SXM "])
def test_a_saved_fabric_node_gpu_is_looked_up_as_gpu_is(tmp_path, gpu, suffix):
    path = _fabric(tmp_path, gpu, suffix)
    r = run_cli(["topology", "show", path])
    assert r.exit_code == 0, r.output
    assert "GPUs:        4 (4 x H100-SXM)" in r.output
    r = run_cli(["blast-radius", "--fabric", path, *BLAST, "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["scenario"] == f"{path}@H100-SXM"


def test_a_saved_fabric_node_gpu_unknown_is_still_refused(tmp_path):
    path = _fabric(tmp_path, "H100")
    assert one_line_error(run_cli(["topology", "show", path])) == (
        f"error: {path}: invalid fabric graph: gpu node 'gpu0' names GPU type 'H100', which is "
        f"neither one of the graph's gpu_types nor in the catalog; known: 'A100-SXM-80GB', "
        f"'B200-HGX', 'B300-HGX', 'GB200-NVL72', 'GB300-NVL72', 'H100-SXM', 'H200-SXM', "
        f"'Lite', 'Lite+BW', 'Lite+BW+FLOPS', 'Lite+MemBW', 'Lite+NetBW'")


@pytest.mark.parametrize("gpu", ["h100-sxm", "H100-SXM ", " h100-sxm "])
def test_a_scenario_file_gpu_is_looked_up_as_gpu_is(tmp_path, gpu):
    (tmp_path / "s.toml").write_text(SCENARIO.replace('gpu = "H100-SXM"', f'gpu = "{gpu}"'))
    r = run_cli(["blast-radius", "--scenario", "s.toml", *BLAST, "--json"], tmp_path)
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["scenario"] == "mine@H100-SXM"


def test_a_scenario_file_gpu_blank_is_refused(tmp_path):
    (tmp_path / "s.toml").write_text(SCENARIO.replace('gpu = "H100-SXM"', 'gpu = "  "'))
    assert one_line_error(run_cli(["blast-radius", "--scenario", "s.toml", *BLAST],
                                  tmp_path)) == (
        "error: s.toml: gpu name '  ' must be non-empty text of at most 200 characters "
        "without control or format characters (such as U+202E) or '$', and no blank at "
        "either end")


GPU_FILE = ('[gpu."Mine"]\nderive_from = "{}"\nfraction = 0.25\nmax_instance = 32\n'
            'source = "what-if: mine"\n')


@pytest.mark.parametrize("base", ["h100-sxm", " H100-SXM "])
def test_a_gpu_file_derive_from_is_looked_up_as_gpu_is(tmp_path, base):
    (tmp_path / "g.toml").write_text(GPU_FILE.format(base))
    r = run_cli(["hardware", "g.toml", "--json"], tmp_path)
    assert r.exit_code == 0, r.output
    exact = tmp_path / "h.toml"
    exact.write_text(GPU_FILE.format("H100-SXM"))
    assert json.loads(r.output) == json.loads(run_cli(["hardware", exact, "--json"]).output)


def test_a_gpu_file_derive_from_in_lookalike_letters_is_asked_about(tmp_path):
    (tmp_path / "g.toml").write_text(GPU_FILE.format("\u041d100-SXM"))
    assert one_line_error(run_cli(["hardware", "g.toml"], tmp_path)) == (
        "error: g.toml: GPU 'Mine' derives from unknown GPU '\u041d100-SXM'; did you mean "
        "'H100-SXM'? (it has '\u041d', U+041D CYRILLIC CAPITAL LETTER EN); known: "
        "'A100-SXM-80GB', 'B200-HGX', 'B300-HGX', 'GB200-NVL72', 'GB300-NVL72', 'H100-SXM', "
        "'H200-SXM', 'Lite', 'Lite+BW', 'Lite+BW+FLOPS', 'Lite+MemBW', 'Lite+NetBW'")


PROFILE = (ROOT / "compute/data/profiles/vllm-dgx-h100.toml").read_text().replace(
    'name = "vllm-dgx-h100"', 'name = "mine"')
MEASURED = str(ROOT / "compute/data/vllm_h100_2024_measurements.csv")
CALIBRATE = ["calibrate", "--measurements", MEASURED, "--fit", "layer_overhead_s"]


@pytest.mark.parametrize("argv, said", [
    (["--base", "p.toml", "-o", "p.toml"],
     "error: --out 'p.toml' is the file --base 'p.toml' reads; the profile written would "
     "replace it: give another path"),
    (["--base", "./p.toml", "--out", "p.toml"],
     "error: --out 'p.toml' is the file --base './p.toml' reads; the profile written would "
     "replace it: give another path"),
    (["--scenario", "p.toml@H100-SXM", "-o", "p.toml"],
     "error: --out 'p.toml' is the file --scenario 'p.toml@H100-SXM' reads; the profile "
     "written would replace it: give another path"),
    (["--scenario", "h100-dgx@p.toml", "-o", "p.toml"],   # its GPU file
     "error: --out 'p.toml' is the file --scenario 'h100-dgx@p.toml' reads; the profile "
     "written would replace it: give another path"),
])
def test_calibrate_out_over_an_input_names_both_flags(tmp_path, argv, said):
    (tmp_path / "p.toml").write_text(PROFILE)
    assert one_line_error(run_cli([*CALIBRATE, *argv], tmp_path)) == said
    assert (tmp_path / "p.toml").read_text() == PROFILE   # nothing written


def test_calibrate_out_over_its_measurements_names_both_flags(tmp_path):
    (tmp_path / "m.toml").write_text((ROOT / MEASURED).read_text())
    assert one_line_error(run_cli(["calibrate", "--measurements", "m.toml", "-o", "m.toml"],
                                  tmp_path)) == (
        "error: --out 'm.toml' is the file --measurements 'm.toml' reads; the profile written "
        "would replace it: give another path")


SERVE = ["serve", "--model", "Llama-3-8B", "--max-batch", "8", "--tp-only"]
COLLECTIVE = ["collective", "all-reduce", "--size", "1MiB"]


@pytest.mark.parametrize("argv, said", [
    ([*SERVE, "--scenario", "h100-dgx@"],
     "error: --scenario 'h100-dgx@': scenario 'h100-dgx' names no GPU after '@' (NAME@GPU "
     "swaps the scenario's GPU)"),
    ([*COLLECTIVE, "--fabric", "lite-flat@ "],
     "error: --fabric 'lite-flat@ ': scenario 'lite-flat' names no GPU after '@' (NAME@GPU "
     "swaps the scenario's GPU)"),
    ([*COLLECTIVE, "--fabric", "ring:n=8,"],
     "error: --fabric 'ring:n=8,': ring: spec parameter '' must be KEY=VALUE (in 'n=8,')"),
    ([*COLLECTIVE, "--fabric", "ring:n=8,N=4"],
     "error: --fabric 'ring:n=8,N=4': ring: spec parameter 'n' is given twice (in 'n=8,N=4')"),
    ([*COLLECTIVE, "--fabric", "ring:n=8@"],
     "error: --fabric 'ring:n=8@': '@GPU' re-types a scenario, and 'ring' is a fabric "
     "builder; give the GPU as its parameter (ring:n=8,gpu=GPU)"),
    ([*COLLECTIVE, "--fabric", "ring:n=8@0.5x"],
     "error: --fabric 'ring:n=8@0.5x': '@0.5x' marks a GPU at another clock, which fabric "
     "builder 'ring' does not take; give a catalog GPU or a GPU file as its gpu (e.g. "
     "gpu=H100-SXM)"),
])
def test_a_spec_string_refused_for_its_end_names_the_flag(tmp_path, argv, said):
    assert one_line_error(run_cli(argv, tmp_path)) == said
    assert list(tmp_path.iterdir()) == []


def test_the_library_names_the_scenario_and_the_builder():
    from compute.errors import UserError
    from netmodel.study.scenario_catalog import get_scenario
    from topologies.spec_grammar import parse_spec

    with pytest.raises(UserError, match=r"^scenario 'h100-dgx' names no GPU after '@'"):
        get_scenario("h100-dgx@")
    with pytest.raises(UserError, match=r"^ring: spec parameter '' must be KEY=VALUE \(in "
                                        r"'n=8,,'\)$"):
        parse_spec("ring:n=8,,")


def _parameter(name):
    from compute.rows import parameter

    return parameter(name)


def _calibration():
    from netmodel.collectives.calibration_files import default_calibration

    return default_calibration()


def _gpu():
    from compute.hardware import get_gpu

    return get_gpu("H100-SXM")


def _generations_file(tmp_path, default):
    from netmodel.collectives.calibration import GENERATIONS_PATH
    from netmodel.collectives.calibration_files import load_generations

    path = tmp_path / "g.toml"
    path.write_text(GENERATIONS_PATH.read_text().replace('default = "hopper"',
                                                         f'default = "{default}"'))
    return load_generations(path)


@pytest.mark.parametrize("call, said", [
    (lambda _: _parameter("d\u0435fect_density"),
     "unknown economics parameter 'd\u0435fect_density'; did you mean 'defect_density'? (it "
     "has '\u0435', U+0435 CYRILLIC SMALL LETTER IE); known: 'clock_core_share', "),
    (lambda _: _gpu().peak_flops("f\u04408"),
     "unknown compute dtype 'f\u04408'; did you mean 'fp8'? (it has '\u0440', U+0440 CYRILLIC "
     "SMALL LETTER ER); known: 'bf16', 'fp4', 'fp8', 'int8'"),
    (lambda _: _calibration().protocol("Simpl\u0435"),
     "unknown protocol 'Simpl\u0435'; did you mean 'Simple'? (it has '\u0435', U+0435 CYRILLIC "
     "SMALL LETTER IE); known: 'LL', 'LL128', 'Simple'"),
    (lambda _: _calibration().protocol("LL12\uff18"),
     "unknown protocol 'LL12\uff18'; did you mean 'LL128'? (it has '\uff18', U+FF18 FULLWIDTH "
     "DIGIT EIGHT); known: 'LL', 'LL128', 'Simple'"),
    (lambda _: _calibration().with_(default_generation="h\u043epper"),
     "default generation 'h\u043epper' is not one of the generations; did you mean 'hopper'? "
     "(it has '\u043e', U+043E CYRILLIC SMALL LETTER O); known: 'ampere', 'blackwell', "
     "'hopper'"),
    (lambda d: _generations_file(d, "h\u043epper"),
     "{d}/g.toml: default generation 'h\u043epper' is not one of 'ampere', 'blackwell', 'hopper'; "
     "did you mean 'hopper'? (it has '\u043e', U+043E CYRILLIC SMALL LETTER O)"),
])
def test_a_library_choice_in_lookalike_letters_is_asked_about(tmp_path, call, said):
    from compute.errors import UserError

    with pytest.raises(UserError) as err:
        call(tmp_path)
    assert str(err.value).startswith(said.replace("{d}", str(tmp_path))), str(err.value)


def test_a_library_choice_with_blanks_around_is_the_choice():
    assert _parameter(" defect_density ") == _parameter("defect_density") == 1000.0   # 0.1/cm^2
    assert _gpu().peak_flops(" fp8 ") == _gpu().peak_flops("fp8") == 1978.9e12   # H100 dense
    cal = _calibration()
    assert cal.protocol(" LL128 ") is cal.protocol("LL128")
    assert cal.with_(default_generation=" hopper ").default_generation == "hopper"
