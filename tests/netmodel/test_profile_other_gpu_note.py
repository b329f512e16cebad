"""A profile fitted on one GPU (and model) and used on another says so. Before, ``infer``, ``search``
and ``serve`` applied vllm-dgx-h100 (fitted on H100-SXM) to a B200, an A100 or an H200 pool
without a word: its per-layer and per-sequence overheads and its efficiencies were measured
on an H100 and are carried over, not measured."""

from click.testing import CliRunner

from netmodel.cli.main import cli

NOTE = ("note: profile vllm-dgx-h100 was fitted on model Llama-2-70B on GPU H100-SXM; this is "
        "model")


def _run(*args):
    out = CliRunner().invoke(cli, list(args))
    assert out.exit_code in (0, 3), out.output
    return out.output


def test_infer_on_another_gpu_notes_it_and_not_on_its_own():
    base = ["infer", "--model", "Llama-2-70B", "--tp", "8", "--batch", "8", "--phase", "decode",
            "--context", "1024", "--profile", "vllm-dgx-h100"]
    other = _run(*base, "--gpu", "B200-HGX")
    assert (f"{NOTE} Llama-2-70B on GPU B200-HGX: an extrapolation (on B200-HGX its "
            f"efficiencies and fixed overheads are H100-SXM's, carried over") in other
    assert "measurements on B200-HGX)" in other
    assert NOTE not in _run(*base, "--gpu", "H100-SXM", "--scenario", "h100-dgx")


def test_search_and_serve_note_the_gpu_they_run_on():
    assert f"{NOTE} Llama-3-70B on GPU A100-SXM-80GB: an extrapolation (" in _run(
        "search", "--model", "Llama-3-70B", "--gpu", "A100-SXM-80GB", "--profile",
        "vllm-dgx-h100")
    serve = ["serve", "--model", "Llama-2-70B", "--scenario", "h100-dgx", "--profile",
             "vllm-dgx-h100"]
    assert f"{NOTE} Llama-2-70B on GPUs H100-SXM, H200-SXM: an extrapolation (on H200-SXM " \
        in _run(*serve, "--decode-gpu", "H200-SXM")
    assert NOTE not in _run(*serve)


def test_roofline_runs_have_no_profile_note():
    assert "fitted on" not in _run("infer", "--model", "Llama-3-70B", "--tp", "8", "--batch",
                                   "8", "--gpu", "B200-HGX")


def test_serve_with_nothing_feasible_still_notes_the_scenarios_gpu():
    # 3eaea00 read scen.gpu.name (a str: AttributeError) when neither pool is feasible
    out = CliRunner().invoke(cli, ["serve", "--model", "Llama-3-70B", "--scenario",
                                   "h100-dgx", "--decode-gpu", "H200-SXM", "--tbt", "1us",
                                   "--profile", "vllm-dgx-h100"])
    assert out.exit_code == 3, out.output
    assert "calibrated mode: engine profile vllm-dgx-h100" in out.output
