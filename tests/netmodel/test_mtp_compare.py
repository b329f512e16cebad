"""Multi-token prediction (``--mtp-tokens K --mtp-acceptance A``) in ``compare`` and
``sweep``: the fabric-aware search there costs an MTP decode step as ``search --scenario``
does (the same configuration, step, TPOT and tokens/s/SM to 1e-12), rows carry
``tpot_s``, ``mtp_expected_tokens`` and ``mtp_draft_s``, and what is not modelled is
refused in one line before any search. The old code refused the option in both commands
('options.mtp_tokens 1 is not modelled by compare or sweep'), and neither had the flags."""

from __future__ import annotations

import json

import pytest

import netmodel
from compute.errors import UserError
from compute.hardware import get_gpu
from compute.roofline_options import RooflineOptions, option_help
from netmodel.study.compare import COMPARE_COLUMNS, CompareRow
from netmodel.study.fabric_search import fabric_search
from tests.netmodel.cli_helpers import one_line_error, run_cli

MTP = RooflineOptions(mtp_tokens=1)
MTP_FIELDS = ("tpot_s", "mtp_expected_tokens", "mtp_draft_s")


def _json(*args):
    r = run_cli(args)
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def _expected(k: int, a: float) -> float:
    """Tokens a sequence emits a step, by hand: 1 + a + ... + a^K."""
    return sum(a ** i for i in range(k + 1))


@pytest.mark.parametrize("scenario,flags", [
    ("h100-dgx", ("--mtp-tokens", "1")),
    ("lite-flat", ("--mtp-tokens", "1")),
    ("lite-direct", ("--mtp-tokens", "2", "--mtp-acceptance", "0.8")),
    ("h100-dgx", ("--mtp-tokens", "3", "--mtp-acceptance", "0.6", "--dense-mlp-tp", "1")),
])
def test_compare_row_is_search_on_the_scenario(scenario, flags):
    found = _json("search", "--model", "DeepSeek-V3", "--scenario", scenario, "--phase",
                  "decode", "--ep", "all", "--attention-dp", "all", "--max-batch", 256,
                  *flags, "--json")["best"]
    cmp = _json("compare", "--models", "DeepSeek-V3", "--scenarios", scenario, "--phase",
                "decode", "--max-batch", 256, *flags, "--json", "-q")
    assert (found["prompt_tokens"], found["context_tokens"]) == \
        (cmp["settings"]["prompt_tokens"], cmp["settings"]["context_tokens"])
    row = cmp["rows"][0]
    assert (row["tp"], row["ep"], row["attention_dp"], row["batch"]) == \
        (found["tp"], found["ep"], found["attention_dp"], found["batch"])
    assert row["attention_dp"] > 1   # an MoE model with attention DP
    assert row["latency_s"] == pytest.approx(found["latency_s"], rel=1e-12)
    assert row["tpot_s"] == pytest.approx(found["mtp"]["tpot_s"], rel=1e-12)
    assert row["mtp_draft_s"] == pytest.approx(found["mtp"]["draft_time_s"], rel=1e-12)
    assert row["tokens_per_s_per_sm"] == pytest.approx(found["tokens_per_s_per_sm"], rel=1e-12)
    k = int(flags[1])
    a = float(flags[3]) if "--mtp-acceptance" in flags else 0.9
    assert cmp["settings"]["options"]["mtp_tokens"] == k
    assert cmp["settings"]["options"]["mtp_acceptance"] == a
    assert row["mtp_expected_tokens"] == pytest.approx(_expected(k, a), rel=1e-12)


def test_throughput_arithmetic_by_hand():
    # DeepSeek-V3 decode on h100-dgx, K = 2 drafts accepted with 0.8 each: a sequence
    # emits 1 + 0.8 + 0.64 = 2.44 tokens a step
    o = RooflineOptions(mtp_tokens=2, mtp_acceptance=0.8)
    r = netmodel.compare(["DeepSeek-V3"], ["h100-dgx"], ["decode"], options=o,
                         max_batch=128).rows[0]
    e = 1 + 0.8 + 0.8 ** 2
    assert r.mtp_expected_tokens == pytest.approx(2.44, rel=1e-12)
    assert r.tokens_per_s * r.latency_s / r.batch == pytest.approx(e, rel=1e-12)
    assert r.tpot_s == pytest.approx(r.latency_s / e, rel=1e-12)
    sms = r.instance_gpus * get_gpu("H100-SXM").sms
    assert r.tokens_per_s_per_sm == pytest.approx(r.batch * e / r.latency_s / sms, rel=1e-12)
    # the step: the verification pass (compute, memory, network) and the draft passes
    assert r.compute_s + r.memory_s + r.network_s + r.mtp_draft_s == \
        pytest.approx(r.latency_s, rel=1e-12)
    assert 0 < r.mtp_draft_s < r.latency_s
    assert r.tpot_s <= r.latency_limit_s   # the SLO checks TPOT


def test_drafts_never_accepted_cost_throughput():
    # acceptance 0: one token a step for the draft and the wider verification pass, so no
    # configuration does better than without MTP (the search's best can only lose)
    for scen in ("h100-dgx", "lite-flat"):
        off = netmodel.compare(["DeepSeek-V3"], [scen], ["decode"], max_batch=128).rows[0]
        zero = netmodel.compare(["DeepSeek-V3"], [scen], ["decode"], max_batch=128,
                                options=RooflineOptions(mtp_tokens=1, mtp_acceptance=0.0)
                                ).rows[0]
        assert zero.mtp_expected_tokens == 1.0 and zero.tpot_s == zero.latency_s
        assert zero.tokens_per_s_per_sm < off.tokens_per_s_per_sm


def test_prefill_untouched_and_columns_only_with_mtp():
    on = netmodel.compare(["DeepSeek-V3"], ["h100-dgx"], ["prefill", "decode"], options=MTP,
                          max_batch=64)
    off = netmodel.compare(["DeepSeek-V3"], ["h100-dgx"], ["prefill", "decode"],
                           max_batch=64)
    pre_on, pre_off = (r.row("DeepSeek-V3", "h100-dgx@H100-SXM", "prefill") for r in (on, off))
    assert pre_on.latency_s == pre_off.latency_s and pre_on.batch == pre_off.batch
    assert pre_on.tpot_s is None
    header_on = on.to_csv().splitlines()[0].split(",")
    header_off = off.to_csv().splitlines()[0].split(",")
    assert header_off == list(COMPARE_COLUMNS)
    # every column but two-batch overlap's (a column only with that option)
    assert header_on == [c for c in CompareRow.columns() if c != "two_batch_hidden_s"]
    assert [c for c in header_on if c not in header_off] == list(MTP_FIELDS)
    rows_off = json.loads(off.to_json())["rows"]
    assert not any(f in d for d in rows_off for f in MTP_FIELDS)
    rows_on = json.loads(on.to_json())["rows"]   # every row the same keys, prefill's null
    assert all(list(d) == header_on for d in rows_on)
    assert [d["phase"] for d in rows_on if d["tpot_s"] is None] == ["prefill"]


def test_table_says_tpot_and_prefill():
    text = netmodel.compare(["DeepSeek-V3"], ["h100-dgx"], ["decode"], options=MTP,
                            max_batch=64).table()
    assert "the SLO checks TPOT = step / 1.9" in text
    assert "prefill is costed as without MTP" in text
    assert "  TPOT: h100-dgx@H100-SXM DeepSeek-V3 " in text


@pytest.mark.parametrize("param,own", [("adjust.hop_latency=0us,1us", 0.0),
                                       ("adjust.bandwidth_scale=1,2", 1.0),
                                       ("fabric.domains=2,4", 4)])
def test_sweep_point_is_compare_row(param, own):
    # hop latency and bandwidth scale re-score the base fabric's costs
    # (crossovers.AdjustedComm) through the same search; the scenario's own value is
    # compare's row
    o = RooflineOptions(mtp_tokens=2, mtp_acceptance=0.7)
    sw = netmodel.sweep(["h100-dgx"], [param], ["DeepSeek-V3"], ["decode"], options=o,
                        max_batch=128)
    row = netmodel.compare(["DeepSeek-V3"], ["h100-dgx"], ["decode"], options=o,
                           max_batch=128).rows[0]
    (point,) = [p for p in sw.rows if p.x == own]
    assert (point.tp, point.ep, point.attention_dp, point.batch) == \
        (row.tp, row.ep, row.attention_dp, row.batch)
    for f in ("latency_s", "tpot_s", "mtp_draft_s", "tokens_per_s_per_sm", "network_s"):
        assert getattr(point, f) == pytest.approx(getattr(row, f), rel=1e-12), f
    assert sw.settings["options"]["mtp_tokens"] == 2
    assert "tpot_s" in sw.to_csv().splitlines()[0].split(",")
    assert "the SLO checks TPOT" in sw.table()


@pytest.mark.parametrize("cmd", ["compare", "sweep"])
@pytest.mark.parametrize("extra,needles", [
    (("--models", "Llama-3-70B", "--mtp-tokens", "1"),
     ("Llama-3-70B has no multi-token-prediction module", "give --mtp-tokens 0")),
    (("--models", "DeepSeek-V3", "--mtp-tokens", "1", "--parallelism", "all"),
     ("--parallelism 'all' searches pipeline stages, which MTP decode does not model",
      "give --parallelism 'auto' or 'tp' with --mtp-tokens")),
    (("--models", "DeepSeek-V3", "--mtp-tokens", "1", "--profile", "vllm-dgx-h100"),
     ("MTP decode (--mtp-tokens 1) is modelled on the roofline", "'vllm-dgx-h100'",
      "give no profile or --mtp-tokens 0")),
    (("--models", "DeepSeek-V3", "--mtp-tokens", "1", "--two-batch-overlap"),
     ("MTP decode with two-batch overlap is not modelled",
      "give one of --mtp-tokens and --two-batch-overlap")),
    (("--models", "DeepSeek-V3", "--mtp-acceptance", "0.8"),
     ("--mtp-acceptance needs --mtp-tokens K >= 1",)),
    (("--models", "DeepSeek-V3", "--mtp-tokens", "1", "--mtp-acceptance", "1.5"),
     ("must be a probability from 0 to 1, got 1.5",)),
])
def test_refused_in_one_line(cmd, extra, needles):
    where = ("--scenarios", "h100-dgx") if cmd == "compare" else \
        ("--scenario", "h100-dgx", "--param", "fabric.domains=2,4")
    one_line_error(run_cli([cmd, *where, "--phase", "decode", *extra, "-q"]), *needles)


def test_refusals_said_before_any_search_through_the_api():
    # a sweep said a model without an MTP module as 'no point of the sweep can be built'
    # (each point refused as if its fabric were): now the model's own line, as compare's
    for call in (lambda o: netmodel.compare(["DeepSeek-V3", "Mixtral-8x7B"], ["h100-dgx"],
                                            ["decode"], options=o),
                 lambda o: netmodel.sweep(["h100-dgx"], ["fabric.domains=4,8"],
                                          ["DeepSeek-V3", "Mixtral-8x7B"], ["decode"],
                                          options=o)):
        with pytest.raises(UserError, match="^Mixtral-8x7B has no multi-token-prediction"):
            call(MTP)
    with pytest.raises(UserError, match="^parallelism 'all' searches pipeline stages, which "
                                        "MTP decode"):
        fabric_search("DeepSeek-V3", "h100-dgx", "decode", options=MTP, parallelism="all")


def test_a_dense_model_in_prefill_alone_is_not_refused():
    # prefill is costed as without MTP: nothing to refuse, the same row as without it
    on = netmodel.compare(["Llama-3-8B"], ["h100-dgx"], ["prefill"], options=MTP,
                          max_batch=32).rows[0]
    off = netmodel.compare(["Llama-3-8B"], ["h100-dgx"], ["prefill"], max_batch=32).rows[0]
    assert on.to_dict() == off.to_dict()


def test_evaluate_many_still_refuses():
    from compute.evaluate_many import evaluate_many
    from compute.parallel import Parallelism

    with pytest.raises(UserError, match="^MTP decode is not modelled by evaluate_many; use "
                                        "evaluate or evaluate_grid"):
        evaluate_many("DeepSeek-V3", "H200-SXM", [Parallelism(8)], [8], "decode", options=MTP)


@pytest.mark.parametrize("cmd", ["compare", "sweep"])
def test_help_is_the_one_declaration(cmd):
    # compare and sweep show the options infer, search and serve show: one declaration
    # (netmodel.cli.options.mtp_options), the help the RooflineOptions field's, which says
    # that prefill is untouched
    import click

    from netmodel.cli.main import cli

    ctx = click.Context(cli)

    def opts(name):
        return {p.name: p for p in cli.get_command(ctx, name).params
                if p.name.startswith("mtp_")}

    mine, search = opts(cmd), opts("search")
    assert set(mine) == {"mtp_tokens", "mtp_acceptance"} == set(search)
    for name in mine:
        assert mine[name].get_help_record(ctx) == search[name].get_help_record(ctx)
        assert mine[name].metavar == search[name].metavar
    assert "prefill is costed as without it" in option_help("mtp_tokens")
    assert "prefill" in " ".join(run_cli([cmd, "--help"]).output.split())
