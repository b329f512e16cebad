"""Hostile-input round 11: uneven pipelines, expert groups and the node-deduplicated MoE
dispatch (commits 0ccddd3..c86e6fc). Each test fails on the code before its fix."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

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
