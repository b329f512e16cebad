"""The MoE exchanges an expert-parallel layer may take, by name: the registry that
:mod:`compute.moe_exchange` chooses among (a grid's ``exchange`` holds each cell's code, its
index here) and an engine profile's ``moe_exchanges`` names (:mod:`compute.profiles`), in a
module of its own that imports nothing (the profiles are read without the grid's modules).
"""

from __future__ import annotations

__all__ = ["EXCHANGES"]

#: The exchanges an EP layer may take, by the code a grid's ``exchange`` holds per cell:
#: the all-to-alls, the all-reduce, vLLM's all-gather/reduce-scatter and SGLang's
#: DP-attention gather (:mod:`compute.moe_dp_gather`); the name a cell's ``moe_exchange``
#: gives it.
EXCHANGES = ("all-to-all", "all-reduce", "vllm-gather", "sglang-dp-gather")
