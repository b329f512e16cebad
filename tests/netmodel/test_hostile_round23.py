"""Hostile round 23 (scripts/hostile_round23.py): GPU, model and profile files that agree
in name and differ in content, outputs given twice, files of odd encodings and numbers,
the newest options of each command.

Found wrong, each checked here:

(a) ``serve --prefill-gpu a.toml --decode-gpu b.toml``, two GPU files that each define a
GPU named ``Mine`` differently, costed the decode pool on the prefill GPU's fabric model
(the pools' collectives were kept by the scenario's label, ``h100-dgx@Mine``, one for
both) and printed both pools as ``Mine``: a decode GPU of a hundredth of the network
bandwidth served at TBT 16.21 ms with TP 4, where alone it serves at 42.97 ms with TP 2,
and the KV transfer took 41.9 ms per prefill batch, not 523 ms. compare and sweep refuse
two GPUs of one name; serve now does too, naming both flags. Its ``collectives`` cache
(by label, across calls) gave a later call an earlier call's GPU's fabric model alike: a
cached model of another scenario of the label is now made again, as compare's.

(b) ``costs --format vidur -o d --plot d/x.png`` over an earlier ``-o d`` drew the figure
into the folder, then refused the folder as holding a file its manifest does not list:
exit 2 with ``d/x.png`` written, and every later ``-o d`` refused. A figure inside the
folder is now refused before anything is computed.

(c) ``study lite-gpu --gpus g.toml,h.toml`` (both GPU ``Mine``, one of twice the FLOP/s)
ran both as two rows named ``Mine``, the second's ideal-network figure the first's (521.909
tokens/s/SM where its own is twice that), and ``--models a.toml,b.toml`` (both ``M``) as
two rows of one name, with ``--no-fabric`` (with the fabric part, refused without naming
``--models``). compare and sweep refuse both; the study now does too, naming the flag.

(d) ``infer``/``search --gpu A100-SXM-80GB --scenario h100-dgx@Lite`` ran on
``h100-dgx@A100-SXM-80GB`` without a word: ``--gpu`` swapped the scenario's GPU again over
the one ``@`` had swapped in (with ``--fabric h100-dgx@Lite`` the same is refused). Now
refused naming both; the same GPU twice, or ``--gpu`` with a scenario without ``@``, is
taken as before.

(e) ``compare``/``sweep --scenarios lite-flat@Lite+NetBW --gpus Lite`` ran ``lite-flat@Lite``
alone: ``--gpus`` runs every scenario on its GPUs instead of the scenario's own, so the GPU
``@`` named was never run, without a word. Refused now, naming both flags (the baseline,
run as given beside its copies, is taken as before). ``study lite-gpu --scenarios
lite-flat@Lite+NetBW`` the same: every scenario not on the H100 runs on each GPU of
``--gpus`` (its default list too); refused alike. ``api.compare`` and ``api.sweep``
read the scenarios before passing them on, so the text was gone: they pass it on now.

(f) ``MPLCONFIGDIR=/etc/passwd netmodel costs ... --plot t.png`` (a set MPLCONFIGDIR that
cannot be a folder) printed matplotlib's two warnings ('mkdir -p failed ...', 'Matplotlib
created a temporary cache directory ...') after the output, and rebuilt its font cache
each run: netmodel's own folder was made only where MPLCONFIGDIR was unset. Now such a
value is not used (the user's folders, else netmodel's own).

(g) ``topology plot --title`` of 10,001 characters was refused as ``figure: title must be
text ...``, naming no flag (a title with a newline named ``--title``), after the fabric
was built. Now checked first, with the flag.

(h) ``topology export lite-ocs -o a.yml`` (ASTRA-sim) was refused as ``an optical
circuit-switched fabric cannot be expressed ...``, naming neither the fabric typed nor a
flag. Now ``spec 'lite-ocs': ...``.

(i) ``sweep --param cost.lifetime=1e-300s,1y`` was refused as ``cost parameters
lifetime=1e-300 (SI) make the capex per year ... overflow to infinity``, naming no flag.
Now with the ``--param`` (each cost one) in front. Likewise ``unknown parameter
'cost.PUE' for scenario 'h100-dgx'`` (which of two --param?) and ``parameter 'cost.pue' is
given twice`` named no flag; now the --param typed, both where one axis is given twice.

(j) ``topology show --json`` of a fabric file whose NIC ports each take ``links = 1e-300``
of a cable printed numpy's overflow warning (the port's rate infinite) and ``0 NICs'
worth`` beside 128 GPUs with a NIC port: a link's share of a cable had no least. Now at
least 0.001 (a breakout gives a port an eighth of a cable or more).

(k) ``calibrate -o ' vllm-h100-2024.toml'`` (or ``--name 'vllm-h100-2024 '``) fitted, then
was refused as ``profile name ' vllm-h100-2024' must be ...``, naming neither flag. Now
checked before the fit, with the flag (or ``--out``'s file stem) in front.
"""

from __future__ import annotations

import os

from tests.netmodel.cli_helpers import ROOT, one_line_error, run_cli

GPU = '[gpu."Mine"]\nderive_from = "H100-SXM"\nsource = "test"\n'
SLOW = GPU.replace("source", "network_bandwidth_multiplier = 0.01\nsource")
SERVE = ["serve", "--scenario", "h100-dgx", "--model", "Llama-3-70B", "--max-batch", "64",
         "--tp-only"]


def test_serve_refuses_two_pool_gpus_of_one_name(tmp_path):
    (tmp_path / "a.toml").write_text(GPU)
    (tmp_path / "b.toml").write_text(SLOW)
    r = run_cli([*SERVE, "--prefill-gpu", "a.toml", "--decode-gpu", "b.toml"], cwd=tmp_path)
    assert one_line_error(r) == (
        "error: --prefill-gpu 'a.toml' and --decode-gpu 'b.toml' are two different GPUs "
        "named 'Mine' (scaleup_bandwidth 450000000000.0 and 4500000000.0); give each its "
        "own name")


def test_serve_refuses_a_pool_gpu_named_as_the_scenarios(tmp_path):
    (tmp_path / "a.toml").write_text(GPU)
    (tmp_path / "b.toml").write_text(SLOW)
    dgx = (ROOT / "netmodel/data/scenarios/h100-dgx.toml").read_text()
    (tmp_path / "s.toml").write_text(dgx.replace('gpu = "H100-SXM"', 'gpu = "a.toml"', 1))
    r = run_cli(["serve", "--scenario", "s.toml", *SERVE[3:], "--decode-gpu", "b.toml"],
                cwd=tmp_path)
    assert one_line_error(r) == (
        "error: the GPU of --scenario 's.toml' and --decode-gpu 'b.toml' are two different "
        "GPUs named 'Mine' (scaleup_bandwidth 450000000000.0 and 4500000000.0); give each "
        "its own name")


def test_costs_refuses_a_figure_inside_the_vidur_folder(tmp_path):
    costs = ["costs", "--fabric", "ring:n=8", "--groups", "8", "--sizes", "1MiB", "--format",
             "vidur", "-o", "d"]
    assert run_cli(costs, cwd=tmp_path).exit_code == 0
    before = sorted(p.name for p in (tmp_path / "d").iterdir())
    r = run_cli([*costs, "--plot", "d/x.png"], cwd=tmp_path)
    assert one_line_error(r) == ("error: --plot 'd/x.png' is inside --output 'd', the folder "
                                 "--format vidur replaces whole with its tables; give a "
                                 "figure path outside it")
    # nothing added (the figure was drawn there, then the folder refused as holding it)
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == before
    assert run_cli(costs, cwd=tmp_path).exit_code == 0   # the folder still netmodel's


MODEL = ('[model."M"]\nlayers = 32\nhidden = 4096\nheads = 32\nkv_heads = 8\nhead_dim = 128\n'
         'ffn = 14336\nvocab = 128256\ngated_mlp = true\nmax_context = 8192\nsource = "t"\n')
STUDY = ["study", "lite-gpu", "--no-plot", "--no-sweep", "--no-paper", "--no-reliability",
         "--no-cost", "--no-crossovers", "--no-serving", "--no-packed", "--no-fabric", "--out",
         "o"]


def test_study_refuses_two_gpus_or_models_of_one_name(tmp_path):
    (tmp_path / "g.toml").write_text(GPU)
    (tmp_path / "h.toml").write_text(GPU.replace("source", "flops_multiplier = 2\nsource"))
    (tmp_path / "a.toml").write_text(MODEL)
    (tmp_path / "b.toml").write_text(MODEL.replace("layers = 32", "layers = 16"))
    r = run_cli([*STUDY, "--gpus", "g.toml,h.toml", "--models", "Llama-3-8B"], cwd=tmp_path)
    assert one_line_error(r) == ("error: --gpus 'g.toml,h.toml': two different GPUs are named "
                                 "'Mine' (flops_bf16 989400000000000.0 and "
                                 "1978800000000000.0); give each its own name")
    r = run_cli([*STUDY, "--gpus", "Lite", "--models", "a.toml,b.toml"], cwd=tmp_path)
    assert one_line_error(r, "--models 'a.toml,b.toml': two different models are named 'M' "
                             "(layers 32 and 16;")
    assert not (tmp_path / "o").exists()


INFER = ["infer", "--model", "Llama-3-8B", "--batch", "4", "--tp", "1"]


def test_a_scenarios_gpu_swap_and_another_gpu_are_refused(tmp_path):
    r = run_cli([*INFER, "--gpu", "A100-SXM-80GB", "--scenario", "h100-dgx@Lite"])
    assert one_line_error(r) == (
        "error: --scenario 'h100-dgx@Lite' swaps in GPU 'Lite' and --gpu 'A100-SXM-80GB' names "
        "'A100-SXM-80GB'; give the GPU once: h100-dgx@Lite alone, or --scenario h100-dgx with "
        "--gpu 'A100-SXM-80GB'")
    (tmp_path / "g.toml").write_text(GPU)
    (tmp_path / "h.toml").write_text(GPU.replace("source", "flops_multiplier = 2\nsource"))
    r = run_cli(["search", *INFER[1:3], "--max-batch", "4", "--gpu", "g.toml", "--scenario",
                 "h100-dgx@h.toml"], cwd=tmp_path)
    assert one_line_error(r, "--scenario 'h100-dgx@h.toml' swaps in GPU 'Mine' and --gpu "
                             "'g.toml' names another of that name")
    # the same GPU twice is one question; a scenario without '@' takes --gpu, as documented
    assert run_cli([*INFER, "--gpu", "Lite", "--scenario", "h100-dgx@Lite"]).exit_code == 0
    assert run_cli([*INFER, "--gpu", "Lite", "--scenario", "h100-dgx"]).exit_code == 0


def test_compare_and_sweep_refuse_a_swapped_gpu_beside_gpus():
    words = ("error: --scenarios 'lite-flat@Lite+NetBW' swaps in GPU 'Lite+NetBW', and --gpus "
             "(Lite) runs every scenario on each of its GPUs instead of the scenario's own; "
             "give 'lite-flat' and put 'Lite+NetBW' in --gpus, or leave out --gpus")
    common = ["--scenarios", "lite-flat@Lite+NetBW", "--gpus", "Lite", "--models",
              "Llama-3-8B", "--max-batch", "8", "-q", "--no-plot"]
    assert one_line_error(run_cli(["compare", *common])) == words
    assert one_line_error(run_cli(["sweep", *common, "--param", "cost.pue=1.1,1.2"])) == words


def test_the_study_refuses_a_swapped_gpu_it_would_not_run(tmp_path):
    study = [*STUDY[:-3], "--models", "Llama-3-8B", "--out", "o", "--gpus", "Lite"]
    r = run_cli([*study, "--scenarios", "lite-flat@Lite+NetBW"], cwd=tmp_path)
    assert one_line_error(r) == (
        "error: --scenarios 'lite-flat@Lite+NetBW' swaps in GPU 'Lite+NetBW', and --gpus "
        "(Lite) runs every scenario on each of its GPUs instead of the scenario's own (those "
        "on H100-SXM aside); give 'lite-flat' and put 'Lite+NetBW' in --gpus")
    assert not (tmp_path / "o").exists()


def test_an_mplconfigdir_that_cannot_be_a_folder_is_not_used(monkeypatch, tmp_path):
    from netmodel.cli import process as cli_process

    home = tmp_path / "home"
    home.mkdir()
    for var in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("MPLCONFIGDIR", str(tmp_path / "a-file"))
    cli_process.matplotlib_folder()   # matplotlib said 'mkdir -p failed' in two lines
    assert "MPLCONFIGDIR" not in os.environ   # the home's folders will do
    monkeypatch.setenv("MPLCONFIGDIR", str(tmp_path / "mine"))   # one it can make: kept
    cli_process.matplotlib_folder()
    assert os.environ["MPLCONFIGDIR"] == str(tmp_path / "mine")


def test_a_title_past_its_length_names_the_flag(tmp_path):
    r = run_cli(["topology", "plot", "ring:n=8", "-o", "x.png", "--title", "x" * 10001],
                cwd=tmp_path)
    assert one_line_error(r) == ("error: --title must be text of at most 10,000 characters, "
                                 "got '" + "x" * 57 + "...'")
    assert list(tmp_path.iterdir()) == []


def test_serve_does_not_reuse_a_cached_fabric_model_of_another_gpu(tmp_path):
    from compute.hardware import load_gpu_file
    from netmodel.study.serving import serve

    (tmp_path / "a.toml").write_text(GPU)
    (tmp_path / "b.toml").write_text(SLOW)
    fast, slow = (load_gpu_file(tmp_path / n)["Mine"] for n in ("a.toml", "b.toml"))
    kw = dict(dimensions="tp", max_batch=64)
    alone = serve("Llama-3-70B", "h100-dgx", decode_gpu=slow, **kw)
    cache: dict = {}
    serve("Llama-3-70B", "h100-dgx", decode_gpu=fast, collectives=cache, **kw)
    again = serve("Llama-3-70B", "h100-dgx", decode_gpu=slow, collectives=cache, **kw)
    assert again.decode.latency == alone.decode.latency   # 42.97 ms at TP 2, not 16.21 ms


def test_an_astra_sim_export_refusal_names_the_fabric(tmp_path):
    r = run_cli(["topology", "export", "lite-ocs", "-o", "a.yml"], cwd=tmp_path)
    assert one_line_error(r) == (
        "error: spec 'lite-ocs': an optical circuit-switched fabric cannot be expressed in "
        "ASTRA-sim's analytical network: its circuits are set per job; export the logical "
        "topology instead (e.g. ring:n=..., torus:dims=...)")
    assert list(tmp_path.iterdir()) == []


def test_cost_parameters_that_overflow_are_said_with_their_param(tmp_path):
    r = run_cli(["sweep", "--scenarios", "h100-dgx", "--models", "Llama-3-8B", "--max-batch",
                 "8", "-q", "--no-plot", "--param", "cost.lifetime=1e-300s,1y", "--out", "o"],
                cwd=tmp_path)
    assert one_line_error(r) == (
        "error: --param 'cost.lifetime=1e-300s,1y': cost parameters lifetime=1e-300 (SI) make "
        "the capex per year of h100-dgx@H100-SXM overflow to infinity; give values nearer a "
        "real system's")
    assert list(tmp_path.iterdir()) == []


def test_the_library_refuses_a_swapped_gpu_beside_gpus_too():
    import pytest

    from compute.errors import UserError
    from netmodel import api

    for call in (lambda: api.compare(["Llama-3-8B"], ["lite-flat@Lite+NetBW"], gpus=["Lite"],
                                     max_batch=8),
                 lambda: api.sweep(["lite-flat@Lite+NetBW"], ["cost.pue=1.1,1.2"],
                                   ["Llama-3-8B"], gpus=["Lite"], max_batch=8)):
        with pytest.raises(UserError, match=r"^scenarios 'lite-flat@Lite\+NetBW' swaps in GPU "
                                            r"'Lite\+NetBW', and gpus \(Lite\) runs every"):
            call()


def test_a_sweep_parameter_refused_names_its_param():
    sweep = ["sweep", "--scenarios", "h100-dgx", "--models", "Llama-3-8B", "--max-batch", "8",
             "-q", "--no-plot"]
    r = run_cli([*sweep, "--param", "cost.pue=1.1,1.2", "--param", "cost.PUE=1.3,1.4"])
    assert one_line_error(r).startswith("error: --param 'cost.PUE=1.3,1.4': unknown parameter "
                                        "'cost.PUE' for scenario 'h100-dgx'; known: ")
    r = run_cli([*sweep, "--param", "cost.pue=1.1,1.2", "--param", "cost.pue=1.3,1.4"])
    assert one_line_error(r) == ("error: --param 'cost.pue=1.1,1.2' and --param "
                                 "'cost.pue=1.3,1.4' both sweep cost.pue; give each parameter "
                                 "once (one axis each)")


def test_a_fabric_file_refuses_a_cable_share_too_small(tmp_path):
    import json

    assert run_cli(["topology", "export", "lite-direct", "-o", tmp_path / "f.json"]
                   ).exit_code == 0
    fabric = json.loads((tmp_path / "f.json").read_text())
    for edge in fabric["edges"]:
        if edge.get("links") == 0.25:   # lite-direct's NIC ports: a quarter of a cable each
            edge["links"] = 1e-300
    (tmp_path / "f.json").write_text(json.dumps(fabric))
    r = run_cli(["topology", "show", "f.json", "--json"], cwd=tmp_path)
    assert r.exit_code == 2
    assert one_line_error(r) == (
        "error: f.json: invalid fabric graph: edge 'gpu0'-'leaf0' links must be at least "
        "0.001 cables (a breakout cable gives a port at least an eighth of it; two 144-port "
        "switches share at most 144 cables), got 1e-300")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.json"]


def test_calibrate_names_the_flag_of_a_name_with_a_blank(tmp_path):
    words = ("must be non-empty text of at most 200 characters without control or format "
             "characters (such as U+202E) or '$', and no blank at either end")
    calibrate = ["calibrate", "--measurements",
                 ROOT / "compute" / "data" / "vllm_h100_2024_measurements.csv",
                 "--scenario", "h100-dgx"]
    r = run_cli([*calibrate, "-o", " vllm-h100-2024.toml"], cwd=tmp_path)
    assert r.exit_code == 2   # the path itself refused first (compute.output_paths: no reader
    # could read a file of a blank at either end back)
    assert one_line_error(r) == ("error: --out ' vllm-h100-2024.toml': profile file ' vllm-h100-"
                                 "2024.toml' starts or ends with a blank, which the commands "
                                 "that read files drop: give the path without it")
    r = run_cli([*calibrate, "-o", "p.toml", "--name", "vllm-h100-2024 "], cwd=tmp_path)
    assert r.exit_code == 2
    assert one_line_error(r) == f"error: --name: profile name 'vllm-h100-2024 ' {words}"
    assert list(tmp_path.iterdir()) == []
