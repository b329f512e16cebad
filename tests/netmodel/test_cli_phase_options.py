"""infer and search refuse an option the chosen --phase never reads: a prefill reads the
prompt and the TTFT SLO, a decode step the context and the TBT SLO, and MTP drafts only in
decode (compute.phases.Workload, Slo.limit, compute.roofline.evaluate_grid). Before, such
an option was silently ignored and the run went ahead with the default."""

from __future__ import annotations

import pytest

from tests.netmodel.cli_helpers import one_line_error, run_cli

INFER = ["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "1", "--batch", "2"]
SEARCH = ["search", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "1",
          "--max-batch", "4"]


@pytest.mark.parametrize("base", [INFER, SEARCH], ids=["infer", "search"])
@pytest.mark.parametrize("args, needles", [
    (["--phase", "decode", "--prompt", "9000"],
     ["--prompt '9000' sets a prefill's prompt", "with --phase decode give --context"]),
    (["--prompt", "9000"],   # decode is the default phase
     ["--prompt '9000'", "with --phase decode give --context"]),
    (["--phase", "prefill", "--context", "4096"],
     ["--context '4096' sets a decode step's context", "with --phase prefill give --prompt"]),
    (["--phase", "decode", "--ttft", "2s"],
     ["--ttft '2s' is the prefill SLO", "with --phase decode give --tbt"]),
    (["--phase", "prefill", "--tbt", "20ms"],
     ["--tbt '20ms' is the decode SLO", "with --phase prefill give --ttft"]),
    (["--phase", "prefill", "--prompt", "100", "--tbt", "20ms"],   # one of them right
     ["--tbt '20ms'", "give --ttft"]),
    (["--phase", "prefill", "--mtp-tokens", "1"],
     ["--mtp-tokens '1' drafts tokens in decode steps", "with --phase prefill drop it"]),
    (["--phase", "prefill", "--mtp-tokens", "1", "--mtp-acceptance", "0.5"],
     ["--mtp-tokens '1'", "with --phase prefill"]),
    (["--phase", "decode", "--prompt", "1500"],   # the default's value, but typed
     ["--prompt '1500'", "give --context"]),
])
def test_option_of_the_other_phase_refused(base, args, needles):
    one_line_error(run_cli(base + args), *needles)


def test_bad_value_named_before_the_phase():
    # a value no phase takes gets its own line, as before
    one_line_error(run_cli(INFER + ["--phase", "decode", "--prompt", "0"]),
                   "--prompt must be a whole number from 1 to 1,000,000,000, got '0'")


@pytest.mark.parametrize("args, header", [
    (["--phase", "prefill", "--prompt", "100", "--ttft", "2s"],
     ["prefill, batch 2, prompt 100 tokens", "(SLO 2 s: met)"]),
    (["--phase", "decode", "--context", "576", "--tbt", "20ms"],
     ["decode, batch 2, context 576 tokens", "(SLO 20 ms: met)"]),
    (["--context", "576"], ["decode, batch 2, context 576 tokens", "(SLO 50 ms: met)"]),
    (["--phase", "prefill"], ["prefill, batch 2, prompt 1500 tokens", "(SLO 1 s: met)"]),
])
def test_options_of_the_phase_still_run_and_are_used(args, header):
    r = run_cli(INFER + args)
    assert r.exit_code == 0, r.output
    first, second = r.output.splitlines()[:2]
    assert header[0] in first and header[1] in second, r.output


def test_search_of_the_phase_still_runs():
    r = run_cli(SEARCH + ["--phase", "prefill", "--prompt", "100", "--ttft", "2s"])
    assert r.exit_code == 0, r.output
    assert "meet TTFT <= 2 s" in r.output.splitlines()[0], r.output


# --expert-skew X (> 1) weighs the busiest EP group's routed tokens; at EP 1 the busiest of
# one group holds every copy, so compute.stage_mlp.skew_ceiling caps it at 1, and a dense model
# routes nothing: the value was ignored (the JSON was byte-identical to the run without it).
MIXTRAL = ["--model", "Mixtral-8x7B", "--gpu", "H100-SXM", "--tp", "4"]


@pytest.mark.parametrize("args, needles", [
    (["infer", *MIXTRAL, "--batch", "16", "--expert-skew", "3"],
     ["--expert-skew 3 weighs the busiest of the EP groups", "with --ep 1 there is one group",
      "give --ep N > 1"]),
    (["infer", *MIXTRAL, "--batch", "16", "--ep", "1", "--attention-dp", "2",
      "--expert-skew", "1.5"], ["--expert-skew 1.5", "with --ep 1"]),
    (["search", *MIXTRAL, "--max-batch", "4", "--expert-skew", "2"],
     ["--expert-skew 2", "with --ep 1"]),
    (["search", *MIXTRAL, "--max-batch", "4", "--ep", "1", "--expert-skew", "2"],
     ["--expert-skew 2", "with --ep 1"]),
    (["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "1", "--batch", "2",
      "--expert-skew", "2"], ["Llama-3-8B is dense (no routed experts): drop --expert-skew"]),
    (["search", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "1", "--max-batch", "4",
      "--ep", "all", "--expert-skew", "2"], ["Llama-3-8B is dense"]),
])
def test_expert_skew_nothing_weighs_refused(args, needles):
    one_line_error(run_cli(args), *needles)


def test_expert_skew_still_taken_where_it_weighs():
    # EP 2 on Mixtral-8x7B: the skew moves the step (its bound there is 2x the mean)
    runs = [run_cli(["infer", *MIXTRAL, "--batch", "16", "--ep", "2", "--json", *extra])
            for extra in ([], ["--expert-skew", "1.5"])]
    assert [r.exit_code for r in runs] == [0, 0], [r.output for r in runs]
    assert runs[0].output != runs[1].output
    for args in (["search", *MIXTRAL, "--max-batch", "4", "--ep", "1,2", "--expert-skew", "2"],
                 ["infer", *MIXTRAL, "--batch", "16", "--expert-skew", "1"]):   # uniform
        assert run_cli(args).exit_code == 0, args


# --dense-mlp-tp 1 runs an MoE model's dense MLP layers beside attention DP; the grid
# (search, infer with EP or PP) refused it without attention DP or on a model without dense
# layers among MoE ones, but infer's plain-TP paths (scalar and two-batch) never read it:
# the result was byte-identical to the run without it.
DSV3 = ["infer", "--model", "DeepSeek-V3", "--gpu", "H200-SXM", "--tp", "8", "--batch", "8"]


@pytest.mark.parametrize("args, needles", [
    (DSV3 + ["--dense-mlp-tp", "1"],
     ["dense MLP TP 1 runs beside attention DP; TP 8 has none (give attention DP > 1, "
      "or leave --dense-mlp-tp unset)"]),
    (DSV3 + ["--dense-mlp-tp", "1", "--two-batch-overlap"], ["TP 8 has none"]),
    (DSV3 + ["--dense-mlp-tp", "1", "--json"], ["TP 8 has none"]),
    (["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "2", "--batch", "4",
      "--dense-mlp-tp", "1"], ["Llama-3-8B has no dense MLP layers among MoE ones"]),
])
def test_dense_mlp_tp_on_plain_tp_refused(args, needles):
    one_line_error(run_cli(args), *needles)


def test_dense_mlp_tp_with_attention_dp_still_runs():
    r = run_cli(["infer", "--model", "DeepSeek-V3", "--gpu", "H200-SXM", "--tp", "8", "--ep", "8",
                 "--attention-dp", "8", "--batch", "64", "--dense-mlp-tp", "1"])
    assert r.exit_code == 0, r.output
    assert "(TP 8 x EP 8 x DP-attention 8, dense MLP TP 1)" in r.output.splitlines()[0]
