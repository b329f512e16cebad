"""What the step-invariant tests share about one step's result."""

from __future__ import annotations


def dp_gather_ops(result) -> list[str]:
    """The collectives DP attention's ``dp_gather`` runs in ``result``'s step (none without
    attention DP). SGLang chooses between an all-reduce (``SUM_LEN``) and an all-gather
    (``MAX_LEN``) by bytes, not by time (compute.dp_collectives.sum_len), so a step can get
    faster where a larger batch turns the one into the other (Llama-3-8B, H100, TP 8 x
    DP-attention 8, decode batch 3 -> 4; test_layout_invariants_h567 checks it by hand):
    "more sequences never make a step faster" holds where these are equal."""
    return [s.collective for s in result.stages if s.name == "dp_gather"]
