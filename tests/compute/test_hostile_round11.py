"""Hostile-input round 11: uneven pipelines, expert groups and the node-deduplicated MoE
dispatch (commits 0ccddd3..c86e6fc). Each test fails on the code before its fix."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from compute.errors import UserError
from compute.hf_config import load_hf_config
from compute.models import get_model
from compute.moe_routing import expected_units_touched, node_dedup_traffic

MIXTRAL = get_model("Mixtral-8x7B")


# --- a token reaches at most k units: EP over the experts (redundant copies) -------------

def test_more_units_than_experts_reach_k_units():
    """EP 16 over Mixtral's 8 experts: a GPU holds one expert or a copy of one, and a
    token's 2 distinct experts sit on 2 GPUs (one copy each). The uniform formula with
    half an expert a unit said 16 (1 - C(7.5, 2) / C(8, 2)) = 2.0714 GPUs (EP 32: 2.107,
    DeepSeek-V3 EP 512: 8.065 of its 8 experts)."""
    assert expected_units_touched(MIXTRAL, 16) == 2.0
    assert expected_units_touched(MIXTRAL, 32) == 2.0
    v3 = get_model("DeepSeek-V3")
    assert expected_units_touched(v3, 256) == expected_units_touched(v3, 512) == 8.0
    # at exactly E units the formula already gave k: continuous there
    assert abs(expected_units_touched(MIXTRAL, 8) - 2.0) < 1e-12


def test_node_dedup_nvlink_bytes_with_redundant_experts_by_hand():
    """Mixtral EP 16 on servers of 8, 4096 tokens of 4096 bf16 elements: NVLink fan-out
    4096 x 2 GPUs x 7/8 x 8192 B = 58,720,256 B (was 60,817,408: 2.0714 GPUs); the
    network part, 2 servers, D(2) = 2 (1 - C(4, 2) / C(8, 2)) = 11/7, is unchanged:
    4096 x 11/7 x 1/2 x 8192 B."""
    net, nvl = node_dedup_traffic(MIXTRAL, 4096, 16, 8, 2)
    assert nvl == 4096 * 2 * 7 / 8 * 8192 == 58_720_256
    assert abs(net - 4096 * 11 / 7 / 2 * 8192) < 1e-6 * net


@st.composite
def _moe(draw):
    e = draw(st.sampled_from([2, 3, 4, 6, 8, 16, 32, 60, 64, 128, 256, 384]))
    k = draw(st.integers(1, min(e, 16)))
    groups = [g for g in (2, 4, 8, 16, 32) if e % g == 0]
    g = draw(st.sampled_from([0, *groups]))
    t = 0
    if g:
        low = -(-k // (e // g))                        # k fits the picked groups' experts
        if low > g:
            g = 0
        else:
            t = draw(st.integers(low, g))
    return dataclasses.replace(MIXTRAL, name="X", experts=e, experts_per_token=k,
                               expert_groups=g, groups_per_token=t)


@settings(max_examples=400, deadline=None)
@given(_moe(), st.sampled_from([1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 128, 256, 512,
                                1024, 4096]))
def test_units_reached_lie_between_one_and_k_and_the_units(model, units):
    d = expected_units_touched(model, units)
    assert 1.0 - 1e-9 <= d <= min(units, model.experts_per_token) + 1e-9


# --- HF config.json: n_group / topk_group / interleave_moe_layer_step ------------------

KIMI = Path(__file__).parent / "data" / "hf_families" / "kimi-k2-instruct.json"
MAVERICK = (Path(__file__).parent / "data" / "hf_families"
            / "llama-4-maverick-17b-128e-instruct.json")


def _hf(tmp_path, base, **over):
    cfg = json.loads(base.read_text())
    text = cfg.get("text_config", cfg)
    for key, value in over.items():
        if value is ...:
            text.pop(key, None)
        else:
            text[key] = value
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg, allow_nan=True))
    return path


@pytest.mark.parametrize("topk", [-1, float("nan"), "4", 1.5, True, [1]])
def test_a_bad_topk_group_is_refused_where_n_group_is_one(tmp_path, topk):
    """Kimi-K2 (n_group 1): topk_group was read only when n_group > 1, so -1, NaN, a
    string or a list passed silently."""
    with pytest.raises(UserError, match=r"topk_group must be a whole number"):
        load_hf_config(_hf(tmp_path, KIMI, topk_group=topk))


@pytest.mark.parametrize("groups, topk", [(1, 4), (4, 8), (8, 9)])
def test_topk_group_over_n_group_is_refused(tmp_path, groups, topk):
    """A token cannot pick more groups than there are (n_group 1, topk_group 4 passed)."""
    with pytest.raises(UserError, match=rf"topk_group {topk} exceeds n_group {groups}; "
                                        rf"allowed: 1 to {groups}"):
        load_hf_config(_hf(tmp_path, KIMI, n_group=groups, topk_group=topk))


@pytest.mark.parametrize("topk", [..., None, 0])
def test_n_group_without_topk_group_is_refused(tmp_path, topk):
    """n_group 8 without topk_group dropped the groups silently (the model then routed
    uniformly, 6.6 servers of 8 for a V3-shaped token instead of at most 4)."""
    with pytest.raises(UserError, match=r"n_group 8 needs topk_group.*allowed: 1 to 8"):
        load_hf_config(_hf(tmp_path, KIMI, n_group=8, topk_group=topk))


def test_groups_still_read(tmp_path):
    m = load_hf_config(_hf(tmp_path, KIMI, n_group=8, topk_group=4))
    assert (m.expert_groups, m.groups_per_token) == (8, 4)
    m = load_hf_config(_hf(tmp_path, KIMI))                     # n_group 1: none
    assert (m.expert_groups, m.groups_per_token) == (0, 0)
    m = load_hf_config(_hf(tmp_path, KIMI, n_group=None, topk_group=4))   # null: none
    assert (m.expert_groups, m.groups_per_token) == (0, 0)


@pytest.mark.parametrize("step", [0, -1, float("nan"), "2", 1.5, [2]])
def test_a_bad_interleave_step_is_refused_beside_moe_layers(tmp_path, step):
    """Llama-4 Maverick lists moe_layers, which win over interleave_moe_layer_step; the
    step was then not read at all, so 0, NaN or a string passed silently."""
    with pytest.raises(UserError, match=r"interleave_moe_layer_step must be a whole number"):
        load_hf_config(_hf(tmp_path, MAVERICK, interleave_moe_layer_step=step))


def test_a_bad_hf_group_key_exits_2_with_one_line(tmp_path):
    from click.testing import CliRunner

    from netmodel.cli.main import cli
    path = _hf(tmp_path, KIMI, topk_group=float("nan"))
    r = CliRunner().invoke(cli, ["infer", "--hf-config", str(path), "--gpu", "H200-SXM",
                                 "--tp", "8", "--batch", "1"])
    assert r.exit_code == 2 and isinstance(r.exception, SystemExit)
    assert r.output.count("\n") == 1 and "topk_group must be a whole number" in r.output


# --- evaluate, evaluate_many and the grid agree: uneven PP, grouped MoE, once a server --

_GROUPED = dataclasses.replace(MIXTRAL, name="Mixtral-grouped", expert_groups=4,
                               groups_per_token=2)
_STEPPED = dataclasses.replace(get_model("Qwen1.5-MoE-A2.7B"), name="Qwen-stepped",
                               moe_layer_step=2, dense_layers=12, dense_ffn=5632)
_MODELS = ["DeepSeek-V3", "gpt-oss-20b", "Llama-3-8B", _GROUPED, _STEPPED]
_COMMS = {}


def _comm(name):
    if name is None:
        return None
    if name not in _COMMS:
        from netmodel.study.scenario_collectives import ScenarioCollectives
        _COMMS[name] = ScenarioCollectives(name)
    return _COMMS[name]


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(_MODELS), st.sampled_from(["H200-SXM", "Lite"]),
       st.sampled_from([1, 2, 4, 8, 16]), st.sampled_from(["prefill", "decode"]),
       st.sampled_from([None, "h100-dgx", "lite-flat"]), st.sampled_from([1.0, 1.7]),
       st.data())
def test_one_many_and_the_grid_agree_on_uneven_pipelines(model, gpu, tp, phase, comm,
                                                         skew, data):
    """The same configuration scored three ways gives the same bits: PP from 1 to the
    layers (most uneven), batches below, at and above PP, EP and attention DP, group-limited
    routing and interleaved dense layers, on the default ring and on fabrics whose prefill
    dispatch crosses once a server."""
    from compute.evaluate_many import evaluate_many
    from compute.evaluate_one import evaluate
    from compute.parallel import Parallelism
    from compute.roofline import evaluate_grid, make_workload

    m = get_model(model) if isinstance(model, str) else model
    pp = data.draw(st.sampled_from(sorted({1, 2, 3, 5, 7, m.layers - 1, m.layers})))
    divisors = [d for d in (1, 2, 4, 8, 16) if tp % d == 0]
    ep = data.draw(st.sampled_from(divisors)) if m.is_moe else 1
    adp = data.draw(st.sampled_from(divisors))
    batch = data.draw(st.sampled_from(sorted({1, 2, max(pp - 1, 1), pp, pp + 1, 37})))
    c = _comm(comm)
    try:      # TP 16: EP over two servers (once a server), where attention groups fit one
        r = evaluate(m, gpu, tp, batch, phase, pp=pp, ep=ep, attention_dp=adp, comm=c,
                     expert_skew=skew)
    except UserError:
        assume(False)
    par = Parallelism(tp, pp, ep, adp)
    e = evaluate_many(m, gpu, [par], [batch], phase, comm=c, expert_skew=skew)
    g = evaluate_grid(m, gpu, [par], [batch], make_workload(phase), comm=c,
                      expert_skew=skew)
    want = (r.latency, r.memory.weights, r.memory.kv_cache, r.memory.fits)
    assert (float(e.latency[0]), float(e.weights[0]), float(e.kv_cache[0]),
            bool(e.fits[0])) == want
    assert float(g.latency[0, 0]) == r.latency


# --- expert skew: the busiest group takes at most every copy it can hold ---------------

def test_a_skew_beyond_every_copy_on_one_group_is_that_bound():
    """Mixtral-8x7B at EP 2 (4 experts a group, top-2): the busiest group can take at most
    both copies of every token, 2x the mean. A skew of 5 had its GPUs process 2.5x every
    routed copy there is: TP 2 x EP 2 prefill batch 8 on an H100 took 0.74848 s (skew 2:
    0.31547 s); now skew 5 and 100 are skew 2's."""
    from compute.evaluate_one import evaluate
    from compute.parallel import layout
    from compute.stage_mlp import busiest_share

    at = {s: evaluate("Mixtral-8x7B", "H100-SXM", 2, 8, "prefill", ep=2,
                      expert_skew=s).latency for s in (1.5, 2.0, 5.0, 100.0)}
    assert at[5.0] == at[100.0] == at[2.0] > at[1.5]
    sh = layout(MIXTRAL, [_par(2, 1, 2, 1), _par(8, 1, 8, 1), _par(16, 1, 16, 2)])
    # EP 2: 2 x min(2, 4) / 2 = 2; EP 8: 8 x min(2, 1) / 2 = 4; EP 16 (a copy a GPU) 8
    assert busiest_share(MIXTRAL, sh, 100.0).ravel().tolist() == [2.0, 4.0, 8.0]
    assert busiest_share(MIXTRAL, sh, 1.5).ravel().tolist() == [1.5, 1.5, 1.5]


def _par(*dims):
    from compute.parallel import Parallelism
    return Parallelism(*dims)


# --- moe_layer_step in a model file: the message names the value and what is allowed ----

@pytest.mark.parametrize("step, dense, words", [
    (1, 0, "moe_layer_step 1 would make every layer MoE; allowed: 0 (the dense layers "
           "first) or 2 to 32"),
    (40, 0, "moe_layer_step 40 would make no layer MoE; allowed: 0 (the dense layers "
             "first) or 2 to 32"),
    (3, 0, "moe_layer_step 3 (layer i MoE when i + 1 is a multiple of 3) leaves 22 of the 32 "
           "layers dense, but dense_layers is 0; give dense_layers 22 or moe_layer_step 0"),
])
def test_moe_layer_step_messages(step, dense, words):
    """Before: 'moe_layer_step 3 (every 3-th layer MoE) needs dense_layers = layers - layers
    // moe_layer_step = 22 and a step of at least 2, got dense_layers 0', one message for
    three mistakes, and a step over the layers was told to set dense_layers = layers, which
    is refused in turn."""
    with pytest.raises(UserError) as exc:
        dataclasses.replace(MIXTRAL, name="X", moe_layer_step=step, dense_layers=dense)
    assert words in str(exc.value)


# --- evaluate_many: a Parallelism whose degree is no number -----------------------------

@pytest.mark.parametrize("pp, shown", [("2", "'2'"), (None, "None"), ([2], "[2]"),
                                       (2.5, "2.5"), (float("nan"), "nan")])
def test_evaluate_many_names_a_bad_degree_of_a_parallelism(pp, shown):
    """Parallelism(8, '2') said 'configs must be TP degrees, Parallelism objects or rows of
    (tp, pp, ep, attention_dp), got an array of shape (1, 4) and type <U21' (it was a
    Parallelism object); 2.5 said 'got np.float64(2.5)'."""
    from compute.evaluate_many import evaluate_many
    from compute.parallel import Parallelism

    with pytest.raises(UserError) as exc:
        evaluate_many("DeepSeek-V3", "H200-SXM", [Parallelism(8, pp)], [4])
    assert str(exc.value) == f"pp degree must be a whole number >= 1, got {shown}"


# --- moe_routing's public functions refuse what is no count ------------------------------

@pytest.mark.parametrize("args, words", [
    ((4096, 0, 8, 1), "ep must be a whole number from 1"),            # was ZeroDivisionError
    ((4096, -8, 8, 1), "ep must be a whole number from 1"),           # was negative bytes
    ((float("nan"), 16, 8, 1), "tokens must be a number from 0"),     # was (nan, nan)
    ((-1, 16, 8, 1), "tokens must be a number from 0"),
    ((4096, True, 1, 1), "ep must be a whole number from 1"),         # was (0.0, 0.0)
    ((4096, 16, 8, float("inf")), "element_bytes must be a number from 0 to 64"),
])
def test_node_dedup_traffic_refuses_what_is_no_count(args, words):
    with pytest.raises(UserError, match=words):
        node_dedup_traffic(get_model("DeepSeek-V3"), *args)


@pytest.mark.parametrize("units", [float("nan"), float("inf"), -1, "8", None])
def test_units_reached_refuses_what_is_no_count(units):
    """NaN raised ValueError ('cannot convert float NaN to integer'), inf gave 8.0, -1 gave
    1.0."""
    with pytest.raises(UserError, match="units must be a number from 0"):
        expected_units_touched(get_model("DeepSeek-V3"), units)
