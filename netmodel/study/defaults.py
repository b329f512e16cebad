"""What the Lite-GPU study compares by default (used by the study, its figures and the
command line; said here once)."""

from __future__ import annotations

__all__ = ["BASELINE", "BASELINE_SCENARIO", "DEFAULT_GPUS", "DEFAULT_MODELS", "MOE_MODEL",
           "PARALLELISM",
           "SWEEP_GPU", "SWEEP_HOP_LATENCY"]

#: Models of the study: a GQA model, an MHA model and a 405B fp8 model.
DEFAULT_MODELS = ("Llama-3-70B", "GPT-3-175B", "Llama-3.1-405B")
#: The mixture-of-experts model of the study's MoE part (expert and attention data
#: parallelism as well as TP, on each scenario with its own GPU).
MOE_MODEL = "Mixtral-8x7B"
#: GPU types of the study: the H100 and the Lite family (compute/data/gpus.toml).
DEFAULT_GPUS = ("H100-SXM", "Lite", "Lite+NetBW", "Lite+MemBW", "Lite+BW", "Lite+BW+FLOPS")
#: The GPU every ratio of the GPU-only part divides by.
BASELINE = "H100-SXM"
#: The scenario other rows of a comparison are divided by, when it is among those compared.
BASELINE_SCENARIO = "h100-dgx"
#: GPU the fabric sweep of the full study runs the Lite scenarios with (the Lite variant
#: the paper expects to match the H100; plain Lites are in the fabric comparison).
SWEEP_GPU = "Lite+BW"
#: Per-hop latency the full study sweeps (s): 0.1 to 10 us added to every link.
SWEEP_HOP_LATENCY = "adjust.hop_latency=0.1us:10us"
#: How a model may be spread over its instance: expert and attention data parallelism for
#: mixture-of-experts models and tensor parallelism alone for dense ones (``auto``, the
#: default), tensor parallelism only (``tp``), or every dimension (``all``: also pipeline
#: stages, :func:`compute.parallel.search_pp`: 1, 2, 4, 8 up to the layers).
PARALLELISM = ("auto", "tp", "all")
