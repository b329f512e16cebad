"""What the Lite-GPU study compares by default (used by the study, its figures and the
command line; said here once)."""

from __future__ import annotations

__all__ = ["BASELINE", "BASELINE_SCENARIO", "DEFAULT_GPUS", "DEFAULT_MODELS", "MOE_MODEL",
           "PARALLELISM", "PARALLELISM_MEANING",
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
#: How a model may be spread over its instance (the search's dimensions:
#: :func:`netmodel.study.search_options.parallel_dimensions`; ``auto`` is the default).
PARALLELISM = ("auto", "tp", "all")
#: What each of :data:`PARALLELISM` searches, said once (the command line's --parallelism
#: help is written from it; tests check it against ``parallel_dimensions``).
PARALLELISM_MEANING = {
    "auto": "tensor parallelism for dense models; also expert and attention data "
            "parallelism for mixture-of-experts models",
    "tp": "tensor parallelism only",
    "all": "also pipeline stages (1, 2, 4, 8 up to the layers) and attention data "
           "parallelism for every model, and expert parallelism for mixture-of-experts "
           "models",
}
