"""What every report of ``scripts/accuracy_inference.py`` reads: where the data files are,
the reference rows and the held-out measurements as :class:`compute.measurements.Measurement` s,
each row's collectives (:func:`scenario_comm`), and the shipped profile's recipe (the
published efficiencies it starts from, :func:`base`; the parameters it fits, :data:`FIT`;
the fit itself, :func:`fit`).
"""

from __future__ import annotations

import csv
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT.parent / "shared" / "reference"
FILE = "inference_vllm_llama2_70b_dgx_h100.csv"
#: The decode rows' context (not given by the reference file). Its three decode rows are the
#: batch 1, 32 and 64 rows of Splitwise's perf_model.csv at prompt_size 512 and token_size
#: 128 (tests/compute/data/splitwise_perf_model_medians.csv holds the same medians): the mean
#: time of a decode step over the 128 generated tokens, whose context grows from 512 to 639
#: tokens; the mean, prompt + 64 = 576 tokens, is taken. (The reference file's header assumes
#: 1,500, the Splitwise coding trace's median prompt; that is not what was run. At batch 64
#: the KV cache read is 2.6x smaller at 576 than at 1,500 tokens.)
DECODE_CONTEXT = 576
SOURCE = ("Splitwise (Patel et al., ISCA 2024, arXiv 2311.18677), vLLM FP16 median, from "
          "Mutinifni/splitwise-sim data/perf_model.csv (commit 3780880), via "
          "../shared/reference/" + FILE)
SCENARIO = "h100-dgx"
PROFILE = "vllm-dgx-h100"
#: The MoE exchanges vLLM runs (compute.profiles' module docstring: its all-to-all backends
#: and allgather_reducescatter beside data parallelism, the TP all-reduce without), named by
#: the vLLM profiles so that their expert-parallel cells take none of SGLang's
VLLM_EXCHANGES = ("all-to-all", "all-reduce", "vllm-gather")
#: Held-out measurements (in the repository: tests read it too).
HELD_OUT = ROOT / "tests" / "compute" / "data" / "splitwise_perf_model_medians.csv"
HELD_OUT_SOURCE = ("Splitwise (Patel et al., ISCA 2024, arXiv 2311.18677), vLLM FP16 median "
                   "of 5, from Mutinifni/splitwise-sim data/perf_model.csv (commit 3780880), "
                   "via tests/compute/data/splitwise_perf_model_medians.csv")
#: The issue's target for a profile predicting a model it was not fitted on.
TARGET = 0.30


def measurements():
    """The reference rows as :class:`compute.measurements.Measurement` s (Llama-2-70B on
    H100-SXM; decode rows at the assumed context)."""
    from compute.measurements import Measurement

    with open(REFERENCE / FILE) as fh:
        rows = list(csv.DictReader(line for line in fh if not line.startswith("#")))
    out = []
    for r in rows:
        decode = r["phase"] == "decode"
        note = r["note"] + (f"; context {DECODE_CONTEXT} tokens: the 512-token prompts the "
                            f"source's decode rows were run with, plus 64 (the mean over the "
                            f"128 generated tokens)" if decode else "")
        out.append(Measurement(
            model=r["model"].replace("llama2-70b", "Llama-2-70B"), gpu="H100-SXM",
            tp=int(r["tp"]), phase=r["phase"], batch=int(r["batch"]),
            latency_s=float(r["time_ms"]) / 1e3,
            prompt=None if decode else int(r["prompt_tokens"]),
            context=DECODE_CONTEXT if decode else None, source=f"{SOURCE}: {note}"))
    return out


def scenario_comm():
    """Each measurement's collectives: :data:`SCENARIO` with the measurement's GPU (its
    ``@GPU`` swap, as ``netmodel calibrate --scenario`` costs a row; ``None``: the
    scenario's own GPU)."""
    from netmodel.study.scenario_catalog import get_scenario
    from netmodel.study.scenario_collectives import ScenarioCollectives

    cache: dict = {}

    def comm(m):
        scen = get_scenario(SCENARIO)
        gpu = scen.gpu if m is None else m.gpu
        if gpu not in cache:
            cache[gpu] = ScenarioCollectives(scen if gpu == scen.gpu else scen.with_gpu(gpu))
        return cache[gpu]

    return comm


#: H100-SXM's attention forward throughput, FP16, head dimension 128, sequence length 8k,
#: FlashAttention-2: 333 TFLOP/s of 989 (Shah et al., "FlashAttention-3", arXiv 2407.08608,
#: figure "Attention forward speed, head dim 128 (H100 80GB SXM5)"). A ceiling: the engine
#: measured (vLLM, 2023) ran xFormers' kernel, no faster.
ATTENTION_EFFICIENCY = (333 / 989, "H100-SXM attention forward FLOP/s, FlashAttention-2 at "
                        "head dimension 128 and 8k tokens: 333 of 989 TFLOP/s (Shah et al., "
                        "FlashAttention-3, arXiv 2407.08608); not fitted: the measured "
                        "prefill time follows the tokens per step whatever the prompt length "
                        "(Splitwise's Llama-2-70B TP 8: 16 prompts of 512 tokens 812 ms, one "
                        "of 8192 845 ms), so the rows hold no sign of attention's cost; left "
                        "free, a fit makes attention 40x slower than peak to explain long "
                        "prompts")

#: The parameters fitted: the per-token overhead (prefill time follows the tokens of a step,
#: not the length of its prompts: 16 prompts of 512 tokens take what one of 8,192 takes),
#: and the per-layer and per-sequence overheads (decode steps). Not the attention
#: efficiency: left free, a fit on these rows makes attention 40x slower than peak to explain
#: the long prompt, and predicts batched short prompts 40-50% too fast. Not the GEMM
#: efficiency: with one model at one TP degree a GEMM's time and the per-token overhead
#: both grow with the tokens of a step, so the rows cannot tell them apart (the fit refuses
#: to try); it is set from a published measurement instead (GEMM_EFFICIENCY).
FIT = ("token_overhead_s", "layer_overhead_s", "decode_sequence_overhead_s")
#: H100-SXM's maximum achievable matmul throughput, BF16 (dense), as a fraction of its
#: 989 TFLOP/s: 792.1 TFLOP/s (CUDA 12.1, the best of a search over shapes), from the
#: "Maximum Achievable Matmul FLOPS comparison table" of Stas Bekman's ml-engineering book
#: (github.com/stas00/ml-engineering, compute/accelerator/README.md). A ceiling: the
#: engine's GEMMs, of other shapes, reach at most this.
GEMM_EFFICIENCY = (792.1 / 989, "H100-SXM's maximum achievable matmul FLOP/s (BF16, dense): "
                   "792.1 of 989 TFLOP/s, the best shape of a search (CUDA 12.1), from the "
                   "MAMF comparison table of github.com/stas00/ml-engineering (compute/"
                   "accelerator/README.md); not fitted: with one model at one TP degree the "
                   "rows cannot tell GEMM time from the per-token overhead")

#: Why the parameters not fitted keep the roofline's values (one model, one system).
NOT_FITTED = {
    "hbm_fraction": "not fitted: with one model the rows cannot tell it from the per-layer "
                    "overhead (both add a fixed time to every step); the roofline's 1",
    "step_overhead_s": "not fitted: with one model (one layer count) the rows cannot tell it "
                       "from the per-layer overhead; 0 (the per-layer overhead holds it)",
}


def base():
    """The profile the fit starts from: the roofline with the published GEMM and attention
    efficiencies."""
    from compute.profiles import neutral

    return neutral(PROFILE).with_values(
        {"gemm_efficiency": GEMM_EFFICIENCY[0], "attention_efficiency": ATTENTION_EFFICIENCY[0]},
        {"gemm_efficiency": GEMM_EFFICIENCY[1], "attention_efficiency": ATTENTION_EFFICIENCY[1]},
        moe_exchanges=VLLM_EXCHANGES)


def fit(ms):
    from compute.profile_fit import fit_profile

    result = fit_profile(
        ms, fit=FIT, base=base(), comm_for=scenario_comm(), name=PROFILE, engine="vLLM (FP16), as measured for "
        "Splitwise (2023)", system="DGX-H100: 8x H100-SXM over NVSwitch, TP 8",
        gpu="H100-SXM", collectives=f"scenario {SCENARIO}",
        fitted_on=f"{len(ms)} vLLM step latencies of Llama-2-70B on one DGX-H100 (TP 8: 3 "
        f"prefill, 3 decode) measured by the Splitwise authors (../shared/reference/{FILE}),"
        f" collectives of scenario {SCENARIO}; decode rows at context {DECODE_CONTEXT} (the "
        f"512-token prompts they were run with + 64, the mean over 128 generated tokens)")
    profile = result.profile.with_values({}, NOT_FITTED)
    return replace(result, profile=profile)


def held_out():
    """The measurements of ``tests/compute/data/splitwise_perf_model_medians.csv`` (their
    ``source`` is the file's note: ``fitted`` for the six rows the shipped profile is
    fitted on)."""
    from compute.measurements import read_measurements

    return read_measurements(HELD_OUT)


def fitted(m) -> bool:
    """True for a row of the held-out file that the shipped profile was fitted on."""
    return m.source == "fitted"


#: The held-out sets shown, in order: (title, which rows; ``fit`` says whether a row is one
#: the profile was fitted on).
GROUPS = (
    ("BLOOM-176B TP 8 (the held-out model)", lambda m, fit: m.model == "BLOOM-176B"),
    ("Llama-2-70B TP 2 (cross-TP)", lambda m, fit: m.model == "Llama-2-70B" and m.tp == 2),
    ("Llama-2-70B TP 4 (cross-TP)", lambda m, fit: m.model == "Llama-2-70B" and m.tp == 4),
    ("Llama-2-70B TP 8, rows not in the fit",
     lambda m, fit: m.model == "Llama-2-70B" and m.tp == 8 and not fit(m)),
)
