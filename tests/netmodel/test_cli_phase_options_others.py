"""cost, blast-radius, availability, compare and sweep refuse an option none of their
chosen phases reads, as infer and search do (test_cli_phase_options.py): the TTFT SLO
limits a prefill, the TBT SLO a decode step (compute.phases.Slo.limit, the one place the
searches read them), and MTP drafts only in decode (compute.roofline.evaluate_grid;
netmodel.study.search_options.check_fabric_options checks them only where decode is
costed). Before, such an option was silently ignored and the run went ahead."""

from __future__ import annotations

import pytest

from tests.netmodel.cli_helpers import one_line_error, run_cli

LLAMA = ["--model", "Llama-3-8B"]
COST = ["cost", "--scenario", "h100-dgx", *LLAMA, "--max-batch", "8"]
BLAST = ["blast-radius", "--scenario", "h100-dgx", *LLAMA, "--max-batch", "8"]
AVAIL = ["availability", "--scenario", "h100-dgx", *LLAMA, "--max-batch", "8",
         "--trials", "10", "-q"]
COMPARE = ["compare", "--models", "Llama-3-8B", "--scenarios", "h100-dgx", "--max-batch", "8",
           "-q", "--no-plot"]
SWEEP = ["sweep", "--scenario", "h100-dgx", "--param", "adjust.hop_latency=1us",
         "--models", "Llama-3-8B", "--max-batch", "8", "-q", "--no-plot"]

TTFT_IN_DECODE = ["--ttft '2s' is the prefill SLO", "with --phase decode give --tbt"]
TBT_IN_PREFILL = ["--tbt '20ms' is the decode SLO", "with --phase prefill give --ttft"]
LIST_TTFT_IN_DECODE = ["--ttft '2s' is the prefill SLO", "with --phases decode give --tbt"]
LIST_TBT_IN_PREFILL = ["--tbt '20ms' is the decode SLO", "with --phases prefill give --ttft"]


@pytest.mark.parametrize("args, needles", [
    (COST + ["--phase", "decode", "--ttft", "2s"], TTFT_IN_DECODE),
    (COST + ["--phase", "prefill", "--tbt", "20ms"], TBT_IN_PREFILL),
    (BLAST + ["--ttft", "2s"], TTFT_IN_DECODE),            # decode is blast-radius's default
    (BLAST + ["--phase", "prefill", "--tbt", "20ms"], TBT_IN_PREFILL),
    (BLAST + ["--phase", "decode", "--ttft", "1s"],        # the default's value, but typed
     ["--ttft '1s'", "give --tbt"]),
    (AVAIL + ["--ttft", "2s"], TTFT_IN_DECODE),
    (AVAIL + ["--phase", "prefill", "--tbt", "20ms"], TBT_IN_PREFILL),
    # compare and sweep take a list, --phases (typed here by its other name, --phase)
    (COMPARE + ["--phase", "decode", "--ttft", "2s"], LIST_TTFT_IN_DECODE),
    (COMPARE + ["--phase", "prefill", "--tbt", "20ms"], LIST_TBT_IN_PREFILL),
    (COMPARE + ["--phases", "prefill", "--mtp-tokens", "1"],
     ["--mtp-tokens '1' drafts tokens in decode steps",
      "with --phases prefill drop it (a prefill is costed as without MTP) or give --phases decode"]),
    (SWEEP + ["--ttft", "2s"], LIST_TTFT_IN_DECODE),       # decode is sweep's default
    (SWEEP + ["--phases", "prefill", "--tbt", "20ms"], LIST_TBT_IN_PREFILL),
    (SWEEP + ["--phase", "prefill", "--mtp-tokens", "1", "--mtp-acceptance", "0.5"],
     ["--mtp-tokens '1'", "with --phases prefill"]),
])
def test_option_no_chosen_phase_reads_refused(args, needles):
    one_line_error(run_cli(args), *needles)


def test_bad_value_named_before_the_phase():
    # a value no phase takes keeps its own line
    one_line_error(run_cli(COST + ["--phase", "decode", "--ttft", "0"]),
                   "--ttft must be a time from 1 us to 600 s, got '0'")
    one_line_error(run_cli(BLAST + ["--ttft", "2s", "--max-batch", "0"]), "--max-batch")


@pytest.mark.parametrize("args", [
    COST + ["--phase", "decode", "--tbt", "20ms"],
    COST + ["--ttft", "2s", "--tbt", "20ms"],               # both phases: each read by one
    BLAST + ["--phase", "prefill", "--ttft", "2s"],
    COMPARE + ["--phase", "both", "--ttft", "2s", "--tbt", "20ms"],
    COMPARE + ["--phase", "prefill,decode", "--ttft", "2s"],
    SWEEP + ["--phase", "prefill", "--ttft", "2s"],
])
def test_options_a_chosen_phase_reads_still_run(args):
    r = run_cli(args)
    assert r.exit_code == 0, r.output


def test_ttft_still_moves_the_prefill_of_both():
    # with --phase both, --ttft limits the prefill search: a TTFT no prefill meets makes
    # that row infeasible, so the value is read (not refused)
    runs = [run_cli(COST + ["--json", *extra]) for extra in ([], ["--ttft", "1us"])]
    assert runs[0].exit_code == 0, runs[0].output
    assert runs[0].output != runs[1].output
