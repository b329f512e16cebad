"""``study lite-gpu`` took an SLO its parts never read and exited 0: its serving part reads
both SLOs but serves only the scenarios with decode rows, so with ``--phases prefill`` the
TBT is read by nothing (the outputs are byte-identical whatever it is), and with ``--phases
decode`` the TTFT is read by the serving part alone. Refused in one line now, as
check_phase_options refuses them on the other commands; the SLOs that are read still run."""

from tests.netmodel.cli_helpers import one_line_error, run_cli

FAST = ["study", "lite-gpu", "--no-sweep", "--no-paper", "--no-packed", "--no-reliability",
        "--no-cost", "--no-crossovers", "--moe-model", "none", "--models", "Llama-3-8B",
        "--gpus", "H100-SXM,Lite", "--scenarios", "h100-dgx,lite-flat", "--no-plot", "-q"]


def test_tbt_with_prefill_only_is_refused(tmp_path):
    one_line_error(run_cli([*FAST, "--phases", "prefill", "--tbt", "10ms", "--out", tmp_path]),
                   "--tbt", "--phases prefill")
    assert not any(tmp_path.iterdir())


def test_ttft_with_decode_and_no_serving_is_refused(tmp_path):
    for skip in ("--no-serving", "--no-fabric"):
        one_line_error(run_cli([*FAST, "--phases", "decode", "--ttft", "300ms", skip,
                                "--out", tmp_path]), "--ttft", skip)


def test_ttft_with_decode_reaches_the_serving_pools(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for out, extra in ((a, []), (b, ["--ttft", "300ms"])):
        r = run_cli([*FAST, "--phases", "decode", *extra, "--out", out])
        assert r.exit_code == 0, r.output
    # the decode rows are the same; the serving part's prefill pools follow the TTFT
    assert (a / "compare.csv").read_bytes() == (b / "compare.csv").read_bytes()
    assert (a / "serving.csv").read_bytes() != (b / "serving.csv").read_bytes()
