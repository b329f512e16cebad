"""summary.md under the study's other options (--parallelism all, --gpus H100-SXM,Lite,
--profile): each sentence must stay true of what ran. Hand-made rows, hand-written answers."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from netmodel.cli.refusals import flag_of
from netmodel.study.run_words import parameters_named_by
from netmodel.study.summary import _notes, summary_markdown
from netmodel.study.summary_claims import _claim_custom
from netmodel.study.summary_fabrics import _tp_dependence, packed_section
from netmodel.study.summary_serving import moe_section, serving_section


def _row(label, *, tp=4, pp=1, ep=1, dp=1, batch=8, v=1.0, phase="decode", model="m"):
    name, gpu = label.split("@")
    return SimpleNamespace(model=model, label=label, scenario=name, gpu=gpu, phase=phase,
                           tp=tp, pp=pp, ep=ep, attention_dp=dp, instance_gpus=tp * pp,
                           batch=batch, feasible=True, tokens_per_s_per_sm=10 * v,
                           vs_baseline=v, network_share=0.1, instances=4,
                           packed_fraction=1.0)


@pytest.fixture(autouse=True)
def _said_as_the_command_line_says_it():
    # summary.md is written by `netmodel study`, whose reports name the run's parameters by
    # its flags (the library by their names: test_the_library_names_parameters)
    with parameters_named_by(flag_of):
        yield


class _Fab:
    def __init__(self, rows, baseline="base@H", parallelism="all"):
        self.rows, self.baseline = rows, baseline
        self.phases = tuple(dict.fromkeys(r.phase for r in rows))
        self.models = tuple(dict.fromkeys(r.model for r in rows))
        self.labels = tuple(dict.fromkeys(r.label for r in rows))
        self.scenarios = []
        self.settings = {"parallelism": parallelism, "max_batch": 1024}

    def row(self, model, label, phase):
        return next(r for r in self.rows if (r.model, r.label, r.phase) == (model, label, phase))


def test_moe_part_shows_pipeline_stages_and_ties():
    # --parallelism all: Mixtral prefill took PP 8 on every Lite fabric, PP 2 on the
    # baseline; the table had no PP column (TP 1, EP 1, DP 1 on 2 or 8 GPUs) and the best
    # line named 'EP 1, attention DP 1' for one of two equal rows
    moe = _Fab([_row("base@H", tp=1, pp=2, phase="prefill"),
                _row("a@G", tp=1, pp=8, v=0.99, phase="prefill"),
                _row("b@G", tp=1, pp=8, v=0.99, phase="prefill")])
    text = "\n".join(moe_section(moe))
    assert "as well as tensor parallelism and pipeline stages (--parallelism all)" in text
    assert "| scenario | phase | TP | PP | EP | attention DP | GPUs |" in text
    assert "| a@G | prefill | 1 | 8 | 1 | 1 | 8 | 8 |" in text
    assert "best a@G (PP 8, EP 1, attention DP 1), tied within 0.5% by b@G." in text


def test_moe_part_without_stages_keeps_its_table():
    moe = _Fab([_row("base@H", tp=2, ep=2, dp=2), _row("a@G", tp=8, ep=8, dp=8, v=0.9)],
               parallelism="auto")
    text = "\n".join(moe_section(moe))
    assert "| scenario | phase | TP | EP | attention DP | GPUs |" in text
    assert "(--parallelism all)" not in text
    assert "best a@G (EP 8, attention DP 8)." in text


def test_fabric_dependence_counts_pipeline_stages():
    # the same TP degree with other pipeline stages is another configuration, not 'only
    # the batch': 1 of 1 case, each named with its stages
    fab = _Fab([_row("base@H"), _row("a@G", tp=3, pp=8), _row("b@G", tp=3, pp=4)])
    line = _tp_dependence(fab, ["a", "b"], ["G"])[0]
    assert line.startswith("- The best configuration depends on the fabric in 1 of 1 ")
    assert "(e.g. m decode on G: a TP 3 x PP 8 batch 8, b TP 3 x PP 4 batch 8)" in line
    plain = _Fab([_row("base@H"), _row("a@G", tp=8), _row("b@G", tp=16)])
    assert _tp_dependence(plain, ["a", "b"], ["G"])[0].startswith(
        "- The best TP degree depends on the fabric in 1 of 1 ")


def test_packed_change_names_the_stages():
    alone = _Fab([_row("a@G", tp=3, pp=8)])
    packed = _Fab([_row("a@G", tp=4, pp=8)])
    text = "\n".join(packed_section(alone, packed))
    assert "m decode on a@G: TP 3 x PP 8 -> TP 4 x PP 8 (4 instances" in text
    text = "\n".join(packed_section(_Fab([_row("a@G", tp=6)]), _Fab([_row("a@G", tp=8)])))
    assert "m decode on a@G: TP 6 -> 8 (4 instances" in text


def test_customized_claim_not_assessed_without_a_customized_lite():
    # --gpus H100-SXM,Lite: no customized Lite ran; 'no customized Lite is feasible'
    # said they ran and failed
    fab = _Fab([_row("base@H100-SXM"), _row("a@Lite", v=0.5)], baseline="base@H100-SXM")
    assert _claim_custom(fab, "Lite").startswith("not assessed: this run has no customized")
    none_fit = _Fab([_row("base@H100-SXM"), _row("a@Lite", v=0.5),
                     _row("a@Lite+BW")], baseline="base@H100-SXM")
    none_fit.rows[-1].vs_baseline = None   # ran, nothing met the SLO
    assert _claim_custom(none_fit, "Lite") == "no customized Lite is feasible"


def test_one_gpu_takes_a_singular_verb():
    from netmodel.study.lite_gpu import FullStudy, ideal_network, run_lite_gpu_study

    s = run_lite_gpu_study(["Llama-3-8B", "Llama-3-70B"], ["H100-SXM", "Lite"],
                           ["prefill", "decode"], comm_factory=ideal_network, network="ideal")
    text = summary_markdown(FullStudy(s))
    assert not any(f"**: Lite {v}" in text for v in ("fall short", "depend on", "match or"))
    assert any(f"**: Lite {v}" in text for v in ("falls short", "depends on", "matches or"))


def test_notes_name_the_engine_profile():
    profile = {"name": "vllm-dgx-h100", "fitted_on": "6 vLLM step latencies"}
    study = SimpleNamespace(ideal=SimpleNamespace(settings={"options": {"profile": profile}},
                                                  networks=("ring", "ideal")), fabric=None)
    text = "\n".join(_notes(study))
    assert "- Calibrated mode (--profile vllm-dgx-h100): " in text
    assert "(fitted on 6 vLLM step latencies)." in text
    plain = SimpleNamespace(ideal=SimpleNamespace(settings={"options": {}},
                                                  networks=("ring", "ideal")), fabric=None)
    assert "Calibrated mode" not in "\n".join(_notes(plain))


def test_notes_without_fabrics_describe_part_one_only():
    # --no-fabric: the notes described collectives 'routed over each fabric graph' and
    # part 2d, neither of which ran
    plain = SimpleNamespace(ideal=SimpleNamespace(settings={"options": {}},
                                                  networks=("ring", "ideal")), fabric=None)
    text = "\n".join(_notes(plain))
    assert "fabric graph" not in text and "part 2d" not in text
    assert ("- Collectives: part 1's networks only (no fabric ran): ring (alpha-beta rings "
            "over each GPU's own scale-up bandwidth) and ideal (every collective free).") in text


def test_a_tiny_kv_share_is_not_at_most_zero():
    row = {"model": "m", "workload": "coding", "scenario": "base@H", "feasible": True,
           "transfer_visible_s": 1e-5, "ttft_s": 0.9, "prompt": 1500, "output": 13,
           "vs_baseline": 1.0, "decode_gpus_per_prefill_gpu": 0.1}
    part = SimpleNamespace(rows=lambda: [row], baseline="base@H")
    text = "\n".join(serving_section(part))
    assert "under 0.05% of a TTFT" in text and "0.0%" not in text


def test_serving_says_how_its_pools_were_spread():
    # the study serves a dense model by TP alone, `netmodel serve` searches TP x PP x EP x
    # attention DP by default: Llama-3-70B coding on lite-flat@Lite gets 30.7 tokens/s/SM
    # (0.63x of h100-dgx) from the one, 47.4 (0.89x) from the other; section 6 said only
    # 'each at its own best configuration'
    row = {"model": "m", "workload": "coding", "scenario": "base@H", "feasible": True,
           "transfer_visible_s": 1e-5, "ttft_s": 0.9, "prompt": 1500, "output": 13,
           "vs_baseline": 1.0, "decode_gpus_per_prefill_gpu": 0.1}
    said = {}
    for dims in ("tp", "all"):
        part = SimpleNamespace(rows=lambda: [row], baseline="base@H", dimensions=dims)
        said[dims] = "\n".join(serving_section(part))
    assert ("each at its own best configuration of tensor parallelism alone (the study's "
            "--parallelism for a dense model; `netmodel serve` without --tp-only also "
            "searches pipeline stages and attention data parallelism), each request's KV "
            "cache") in said["tp"]
    assert ("each at its own best configuration of TP x PP x EP x attention DP, each "
            "request's KV cache") in said["all"]


def test_serving_part_records_its_search_space():
    from netmodel.study.lite_gpu_parts import serving_part

    fab = SimpleNamespace(settings={"parallelism": "auto"}, rows=[], searches=[], scenarios=[],
                          baseline="base@H")
    dense = serving_part(fab, "Llama-3-70B", workloads=())
    moe = serving_part(fab, "Mixtral-8x7B", workloads=())
    assert (dense.dimensions, moe.dimensions) == ("tp", "all")
    fab.settings["parallelism"] = "all"
    assert serving_part(fab, "Llama-3-70B", workloads=()).dimensions == "all"


def test_crossovers_say_when_a_variant_already_ties():
    # --models Llama-3-8B: the plain Lite reaches 521.33 of h100-dgx's 521.91 tokens/s/SM
    # (0.9989x, a match within 0.5% in part 2) and never above it; part 2c said 'do not
    # match it even at 64x', part 2 'match or beat ... 1.00x'
    from netmodel.study.summary_crossings import crossovers_section

    rows = [SimpleNamespace(model="m", phase="prefill", fabric=f, gpu="Lite",
                            baseline="base@H", baseline_tokens_per_s_per_sm=521.91,
                            tokens_per_s_per_sm=521.33, bandwidth_bound="never",
                            bandwidth_to_match=None, latency_bound="no match",
                            hop_latency_to_match=None) for f in ("a", "b")]
    text = "\n".join(crossovers_section(SimpleNamespace(rows=rows)))
    assert ("- **m, prefill**: Lite is within 0.5% of it already (a match in part 2) but "
            "never above it, even at 64x.") in text
    for r in rows:
        r.tokens_per_s_per_sm = 500.0   # 0.958x: short, as before
    text = "\n".join(crossovers_section(SimpleNamespace(rows=rows)))
    assert "- **m, prefill**: Lite does not match it even at 64x." in text


def test_die_comparison_says_when_the_run_prices_no_lite():
    # --gpus B200-HGX,GB300-NVL72: the rows are h100-dgx and the B200-HGX fabrics, and the
    # bullet compared a Lite die with an H100's as if this run had priced one
    from netmodel.study.summary_costs import cost_section

    pkg = {"H100-SXM": SimpleNamespace(die=SimpleNamespace(cost_per_good_sm=2.0), per_sm=20.0,
                                       hbm=4.0, packaging=2.0, test=3.0, sms_enabled=4),
           "Lite": SimpleNamespace(die=SimpleNamespace(cost_per_good_sm=1.6), per_sm=25.0,
                                   hbm=1.0, packaging=1.0, test=1.0, sms_enabled=1)}

    def row(scenario, gpu):
        return SimpleNamespace(scenario=scenario, gpu=gpu, model="m", phase="decode",
                               tokens_per_s_per_w=1.0, usd_per_mtoken=1.0,
                               network_share_capex=0.3, network_share_power=0.1)

    fab = SimpleNamespace(scenarios=[], baseline="base@H100-SXM")
    for gpus, want in ((("Lite",), "- **Per good SM**, a Lite die costs 0.80x an H100 die"),
                       (("B200-HGX",), "- **Per good SM** (for reference: the rows above "
                                       "price no plain Lite, but B200-HGX), a Lite die")):
        cost = SimpleNamespace(summaries=[row("base@H100-SXM", "H100-SXM")]
                               + [row(f"a@{g}", g) for g in gpus], marks=pkg, notes={})
        assert want in "\n".join(cost_section(cost, fab))


def test_no_feasible_fabric_row_is_said_not_ranked_as_dashes():
    # --tbt 1us --ttft 1us: 'fabrics ranked ...: lite-direct -, lite-flat -, ...' and 'The
    # fabric decides: fewer than two fabrics per GPU' (there were five)
    from netmodel.study.summary_claims import _claim_fabric
    from netmodel.study.summary_fabrics import fabric_section

    rows = [_row("base@H"), _row("a@G"), _row("b@G")]
    for r in rows:
        r.feasible, r.vs_baseline, r.tokens_per_s_per_sm = False, None, None
        r.vs_ideal, r.reconfiguration_s, r.reason = None, 0.0, "SLO"
    fab = _Fab(rows)
    fab.scenarios = [SimpleNamespace(name=n, gpu=g, label=f"{n}@{g}", home_gpu=None)
                     for n, g in (("base", "H"), ("a", "G"), ("b", "G"))]
    text = "\n".join(fabric_section(fab))
    assert "- **decode**: no fabric has a decode row with a ratio to base@H" in text
    assert " -," not in text
    assert _claim_fabric(fab, "G").startswith("not assessed: no GPU has rows with a ratio")


def test_overlap_gain_does_not_claim_the_same_configurations():
    # the bullet said '(never less: the same configurations, each step no longer)' while
    # the shipped study's overlapped search picks another TP degree or batch in 66 of 156
    # rows; it now counts them
    from netmodel.study.summary_claims import claims_section

    def fab(batch, v):
        return _Fab([_row("base@H100-SXM", batch=8), _row("a@Lite", batch=batch, v=v),
                     _row("b@Lite", batch=8, v=v)], baseline="base@H100-SXM")

    study = SimpleNamespace(fabric=fab(8, 0.5), paper=fab(16, 0.6),
                            ideal=SimpleNamespace(baseline="H100-SXM"))
    text = "\n".join(claims_section(study))
    assert ("- Overlapping the collectives gives 1.00x-1.20x the tokens/s/SM of serializing "
            "them (never less: no configuration's step gets longer; the best configuration "
            "or batch moves in 1 of 3 rows).") in text


def test_moe_part_under_tp_only_names_no_expert_parallelism():
    # --parallelism tp: the MoE rows are plain TP (EP 1), and the intro said 'the search
    # spreads the model with expert and attention data parallelism ... (dispatch and
    # combine all-to-alls costed on the fabric)'; '1 of 12 rows (decode) sit'
    moe = _Fab([_row("base@H", tp=4, batch=1024), _row("a@G", tp=8, v=0.5)],
               parallelism="tp")
    text = "\n".join(moe_section(moe))
    assert "the search spreads the model by tensor parallelism alone (--parallelism tp" in text
    assert "all-to-alls costed" not in text
    assert "- 1 of 2 rows (decode) sits at the search's largest batch (1024)" in text


def test_plain_lite_claim_is_the_papers_falls_short():
    # issue 2 states the paper's first claim as 'the plain Lite can fall short of the H100'
    # (Lites with more bandwidth match or beat it); summary 2b stated it as 'a plain Lite
    # matches the H100 cluster without extra network' and answered 'does not hold' where the
    # study confirms the paper. Hand case: on its best fabric (a, geometric mean 0.6) the
    # plain Lite is 0.9x and 0.4x: short in both cases.
    from netmodel.study.summary_claims import _claim_plain

    rows = [_row("base@H", model="m1"), _row("base@H", model="m2"),
            _row("a@Lite", model="m1", v=0.9), _row("a@Lite", model="m2", v=0.4),
            _row("b@Lite", model="m1", v=0.5), _row("b@Lite", model="m2", v=0.5)]
    text = _claim_plain(_Fab(rows), "Lite")
    assert text == ("holds: on its best fabric (a) a plain Lite falls short in 2 of 2 model x "
                    "phase cases and reaches 0.60x of the baseline (geometric mean over models "
                    "and phases; 0.40x-0.90x)")
    # within 5% everywhere (0.96x, 1.02x): the claim does not hold
    rows = [_row("base@H", model="m1"), _row("base@H", model="m2"),
            _row("a@Lite", model="m1", v=0.96), _row("a@Lite", model="m2", v=1.02)]
    assert _claim_plain(_Fab(rows), "Lite").startswith(
        "does not hold: on its best fabric (a) a plain Lite falls short in 0 of 2 ")


def test_the_library_names_parameters():
    # outside the command line the summary names the run's parameters, not its flags
    profile = {"name": "vllm-dgx-h100", "fitted_on": "6 vLLM step latencies"}
    study = SimpleNamespace(ideal=SimpleNamespace(settings={"options": {"profile": profile}},
                                                  networks=("ring", "ideal")), fabric=None)
    with parameters_named_by(lambda p: p):
        text = "\n".join(_notes(study))
    assert "- Calibrated mode (profile vllm-dgx-h100): " in text
    moe = _Fab([_row("base@H", tp=1, pp=2, phase="prefill"),
                _row("a@G", tp=1, pp=8, v=0.99, phase="prefill")])
    with parameters_named_by(lambda p: p):
        assert "pipeline stages (parallelism all)" in "\n".join(moe_section(moe))
