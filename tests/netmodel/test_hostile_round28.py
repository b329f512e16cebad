"""Hostile round 28 (scripts/hostile_round28.py): an engine profile's moe_exchanges list, an
EngineProfile made in code, calibrate over GPUs of long names, saved fabrics and the
choices no round had typed in look-alike letters.

Found wrong, each checked here:

(a) ``[profile] moe_exchanges = [" all-to-all "]`` was refused where every other file
choice drops the blanks at either end, and a name in look-alike letters ('аll-to-all', a
Cyrillic а) was refused beside the list alone. Now read as the choice; asked about.

(b) An EngineProfile made in code took what a profile file's reader refuses: a GEMM
efficiency curve of efficiency 2 ran Llama-3-70B's prefill in 0.448 s against the
roofline's 0.669 s (the calibrated mode only adds time), a negative efficiency, a NaN
intensity or one point were kept, moe_exchanges 0, '' or [] kept ([] made the profile
unhashable), an engine of 5 kept and written by to_toml as no reader takes it. Now one
line each naming the parameter.

(c) calibrate over ten GPUs of a GPU file named in 193 characters each wrote a profile
every command then refused ('fitted_on must be text of at most 2,000 characters'); fifteen
were refused as 'gpu must be text of at most 2,000 characters', a text no option gives.
Now the profile is written and read back.

(d) A saved fabric's GPU node naming its type in look-alike letters ('Н100-SXM'), a GPU
file's die process ('Ν4', a Greek Nu), a failure class of ``--rate``/``--repair-time``, a
fabric spec's key, ``--tuner`` and ``sweep --param`` were refused as unknown beside a list
showing the name alike. Now each asks 'did you mean ...?'.
"""

from __future__ import annotations

import json

import pytest

from compute.errors import UserError
from compute.profiles import EngineProfile
from tests.netmodel.cli_helpers import ROOT, one_line_error, run_cli

PROFILE = (ROOT / "compute/data/profiles/vllm-dgx-h100.toml").read_text().replace(
    'name = "vllm-dgx-h100"', 'name = "mine"')
EXCHANGES = '["all-to-all", "all-reduce", "vllm-gather"]'
INFER = ["infer", "--model", "DeepSeek-V3", "--gpu", "H100-SXM", "--tp", "8", "--batch", "1",
         "--profile"]
ALLOWED = ("moe_exchanges must be a list of 'all-reduce', 'all-to-all', 'sglang-dp-gather', "
           "'vllm-gather', each at most once, 'all-to-all' among them")


def _profile(tmp_path, exchanges):
    path = tmp_path / "p.toml"
    path.write_text(PROFILE.replace(EXCHANGES, exchanges))
    return path


def test_moe_exchanges_blanks_around_are_read_as_the_choice(tmp_path):
    r = run_cli([*INFER, _profile(tmp_path, '[" all-to-all ", "vllm-gather "]'), "--json"])
    assert r.exit_code == 0, r.output
    bare = run_cli([*INFER, _profile(tmp_path, '["all-to-all", "vllm-gather"]'), "--json"])
    assert json.loads(r.output)["latency_s"] == json.loads(bare.output)["latency_s"]


@pytest.mark.parametrize("typed, hint", [
    ("\u0430ll-to-all", "'\u0430', U+0430 CYRILLIC SMALL LETTER A"),
    ("all-to-all\\u200b", "'\\u200b', U+200B ZERO WIDTH SPACE"),
])
def test_moe_exchanges_in_lookalike_letters_are_asked_about(tmp_path, typed, hint):
    path = _profile(tmp_path, f'["{typed}"]')
    assert one_line_error(run_cli([*INFER, path])) == (   # the TOML escape as the line shows it
        f"error: {path}: [profile]: {ALLOWED}; got ['{typed}']; did you mean 'all-to-all'? "
        f"(it has {hint})")


@pytest.mark.parametrize("kw, said", [
    (dict(gemm_curve=((1, 2.0), (1000, 2.0))),
     "gemm_curve efficiency must be a number from 0.0001 to 1, got 2.0"),
    (dict(gemm_curve=((10, -0.5), (100, 0.5))),
     "gemm_curve efficiency must be a number from 0.0001 to 1, got -0.5"),
    (dict(gemm_curve=((float("nan"), 0.5), (10, 0.5))),
     "gemm_curve intensity must be a number from 1e-06 to 1,000,000,000 FLOP/B, got nan"),
    (dict(gemm_curve=((10, 0.5),)),
     "gemm_curve must be 2 to 64 (intensity FLOP/B, efficiency) pairs by increasing "
     "intensity, got ((10, 0.5),)"),
    (dict(gemm_curve="x"),
     "gemm_curve must be 2 to 64 (intensity FLOP/B, efficiency) pairs by increasing "
     "intensity, got 'x'"),
    (dict(moe_exchanges=0), f"{ALLOWED}; got 0"),
    (dict(moe_exchanges=[]), f"{ALLOWED}; got []"),
    (dict(moe_exchanges=""), f"{ALLOWED}; got ''"),
    (dict(engine=5), "engine must be text of at most 2,000 characters, got 5"),
])
def test_a_profile_made_in_code_is_checked_as_a_file_is(kw, said):
    with pytest.raises(UserError) as err:
        EngineProfile("x", **kw)
    assert str(err.value) == f"profile 'x': {said}"


def test_a_profile_made_in_code_reads_its_defaults_and_lists():
    p = EngineProfile("x", moe_exchanges=None, gemm_curve=[[1, 0.5], [2, 0.6]])
    assert p.moe_exchanges == () and p.gemm_curve == ((1.0, 0.5), (2.0, 0.6))
    assert hash(p) == hash(EngineProfile("x", gemm_curve=((1.0, 0.5), (2.0, 0.6))))
    assert EngineProfile("x", moe_exchanges=[" all-to-all "]).moe_exchanges == ("all-to-all",)


@pytest.mark.parametrize("count", [10, 15])
def test_calibrate_over_gpus_of_long_names_writes_a_profile_it_reads(tmp_path, count):
    names = [f"G{i:02d}" + "x" * 190 for i in range(count)]
    (tmp_path / "g.toml").write_text("".join(
        f'[gpu."{n}"]\nderive_from = "H100-SXM"\nfraction = 1\nsource = "what-if: mine"\n\n'
        for n in names))
    (tmp_path / "m.csv").write_text("model,gpu,tp,batch,phase,prompt,context,latency_s\n" + "".join(
        f"Llama-3-8B,{n},1,8,decode,,96,0.0078\n" for n in names))
    r = run_cli(["calibrate", "--measurements", "m.csv", "--gpu-file", "g.toml", "-o", "p.toml",
                 "--fit", "layer_overhead_s"], tmp_path)
    assert r.exit_code == 0, r.output
    r = run_cli(["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "1", "--batch",
                 "1", "--profile", "p.toml"], tmp_path)
    assert r.exit_code == 0, r.output
    from compute.profiles import read_profile

    p = read_profile(tmp_path / "p.toml")
    assert p.fitted_on == f"{count} measured steps of Llama-3-8B on {names[0]} ({count} GPUs, " \
                          f"{count - 1} more) (TP 1): {count} decode"
    assert p.fitted_gpus == tuple(names)   # from the profile's gpu, or its measurements


def test_a_saved_fabric_node_gpu_in_lookalike_letters_is_asked_about(tmp_path):
    assert run_cli(["topology", "export", "ring:n=4", "-o", tmp_path / "f.json"]).exit_code == 0
    doc = json.loads((tmp_path / "f.json").read_text())
    for node in doc["nodes"]:
        node["gpu"] = "\u041d100-SXM"
    (tmp_path / "f.json").write_text(json.dumps(doc))
    line = one_line_error(run_cli(["topology", "show", tmp_path / "f.json"]))
    assert line.startswith(
        f"error: {tmp_path / 'f.json'}: invalid fabric graph: gpu node 'gpu0' names GPU type "
        f"'\u041d100-SXM', which is neither one of the graph's gpu_types nor in the catalog; "
        f"did you mean 'H100-SXM'? (it has '\u041d', U+041D CYRILLIC CAPITAL LETTER EN); "
        f"known: 'A100-SXM-80GB'"), line


SWEEP = ["sweep", "--scenarios", "h100-dgx", "-q", "--no-plot", "--models", "Llama-3-8B",
         "--max-batch", "8", "--param"]


@pytest.mark.parametrize("argv, start", [
    (["availability", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--rate",
      "tr\u0430nsceiver=1e-5"],
     "error: --rate: unknown component class 'tr\u0430nsceiver'; did you mean 'transceiver'? "
     "(it has '\u0430', U+0430 CYRILLIC SMALL LETTER A); known: 'copper-end', "),
    (["availability", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--repair-time",
      "gpu-di\u0435=7d"],
     "error: --repair-time: unknown component class 'gpu-di\u0435'; did you mean 'gpu-die'? "
     "(it has '\u0435', U+0435 CYRILLIC SMALL LETTER IE); known: "),
    (["topology", "show", "ring:n=4,g\u0440u=Lite"],
     "error: fabric 'ring:n=4,g\u0440u=Lite': unknown key 'g\u0440u' for fabric 'ring'; "
     "did you mean 'gpu'? (it has '\u0440', "
     "U+0440 CYRILLIC SMALL LETTER ER); known: 'bandwidth', 'gpu', 'length', 'medium', 'n'"),
    (["collective", "all-reduce", "--fabric", "ring:n=8", "--tuner", "n\u0441\u0441l"],
     "error: --tuner 'n\u0441\u0441l': unknown tuner 'n\u0441\u0441l'; did you mean 'nccl'? "
     "(it has '\u0441', U+0441 CYRILLIC SMALL LETTER ES); known: 'aws-ofi-nccl:p5', 'nccl', "
     "'none'"),
    ([*SWEEP, "\u0430djust.hop_latency=1us"],
     "error: --param '\u0430djust.hop_latency=1us': unknown parameter '\u0430djust.hop_latency' "
     "for scenario 'h100-dgx'; did you mean 'adjust.hop_latency'? (it has '\u0430', U+0430 "
     "CYRILLIC SMALL LETTER A); known: 'adjust.bandwidth_scale', "),
    ([*SWEEP, "cost.pu\u0435=1.3,1.4"],
     "error: --param 'cost.pu\u0435=1.3,1.4': unknown parameter 'cost.pu\u0435' for scenario "
     "'h100-dgx'; did you mean 'cost.pue'? (it has '\u0435', U+0435 CYRILLIC SMALL LETTER IE); "
     "known: 'cost.alpha', "),
])
def test_a_choice_in_lookalike_letters_is_asked_about(tmp_path, argv, start):
    line = one_line_error(run_cli(argv, tmp_path))
    assert line.startswith(start), line
    assert list(tmp_path.iterdir()) == []


def test_a_gpu_file_die_process_in_lookalike_letters_is_asked_about(tmp_path):
    catalog = (ROOT / "compute/data/gpus.toml").read_text()
    die = catalog[catalog.index('[gpu."B200-HGX".die]'):]
    die = die[:die.index("\n\n")].replace('[gpu."B200-HGX".die]', '[gpu."Mine".die]')
    path = tmp_path / "g.toml"
    path.write_text('[gpu."Mine"]\nderive_from = "B200-HGX"\nfraction = 1\nsource = "what-if"\n\n'
                    + die.replace('process = {value = "N4"', 'process = {value = "\u039d4"'))
    line = one_line_error(run_cli(["yield", "--gpu", path]))
    assert line.startswith(
        f"error: {path}: GPU 'Mine' die: process '\u039d4' has no wafer price; did you mean "
        f"'N4'? (it has '\u039d', U+039D GREEK CAPITAL LETTER NU); known: '4N', 'N3', "), line
