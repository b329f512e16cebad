#!/usr/bin/env python
"""Benchmark of `netmodel calibrate` at its cap: `python scripts/bench_calibrate.py [ROWS]
[--pipelined FRACTION]`.

Fits the default parameter set (and all six of gemm_efficiency, attention_efficiency,
hbm_fraction and the layer, decode-sequence and token overheads) to ROWS (default
10,000, :data:`compute.measurements.MAX_MEASUREMENTS`) synthetic measured steps: catalog
models on catalog GPUs at TP 1-8, decode and prefill at varied batches, prompts and
contexts, a ``--pipelined`` fraction (default 0.02) at PP 2; each 'measured' as a known
profile gives it, times a fixed log-normal scatter (seed 1). Prints the CPU seconds of
``fit_profile`` on one pinned core (reading and writing files excluded); target < 30 s.
Pipelined steps are evaluated whole (their latency is not a sum of stage times), so each
costs about as much per trial profile as a few hundred plain steps.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODELS = ("Llama-3-8B", "Llama-3-70B", "Llama-3.1-405B", "GPT-3-175B", "Llama-2-70B",
          "BLOOM-176B", "Mixtral-8x7B", "Qwen1.5-MoE-A2.7B", "gpt-oss-120b", "gpt-oss-20b")
GPUS = ("A100-SXM-80GB", "H100-SXM", "H200-SXM", "B200-HGX", "GB200-NVL72", "B300-HGX")
SIX = ("gemm_efficiency", "attention_efficiency", "hbm_fraction", "layer_overhead_s",
       "decode_sequence_overhead_s", "token_overhead_s")


def measurements(n: int, pipelined: float, seed: int = 1) -> list:
    """``n`` runnable steps (those whose weights and cache fit the GPU), 'measured'."""
    from compute.errors import UserError
    from compute.measurements import Measurement
    from compute.profile_fit import _all_components, _Batch, _grid_of, _model_of, neutral_with

    truth = neutral_with(gemm_efficiency=0.6, attention_efficiency=0.4, hbm_fraction=0.85,
                         layer_overhead_s=4e-5, step_overhead_s=1e-3,
                         decode_sequence_overhead_s=3e-5, token_overhead_s=2e-11)
    rng = random.Random(seed)
    ms: list = []
    while len(ms) < n:
        model, gpu, tp = rng.choice(MODELS), rng.choice(GPUS), rng.choice((1, 2, 4, 8))
        pp = 2 if rng.random() < pipelined else 1
        if rng.random() < 0.5:
            kw = {"phase": "prefill", "prompt": rng.choice((128, 256, 512, 1024, 2048, 4096))}
            batches = rng.sample((1, 2, 4, 8), 2)
        else:
            kw = {"phase": "decode", "context": rng.choice((256, 512, 1000, 1500, 2048, 4096))}
            batches = rng.sample((1, 2, 4, 8, 16, 32, 64, 128, 256), 3)
        rows = [Measurement(model, gpu, tp, batch=b, latency_s=1.0, pp=pp, **kw)
                for b in batches]
        try:
            g = _grid_of(rows[0], _model_of(rows[0]), batches, None, None, None)
        except UserError:   # a TP degree the model refuses
            continue
        ms += [m for m, fits in zip(rows, g.fits[0], strict=True) if fits]
    ms = ms[:n]
    lat = _Batch(_all_components(ms, [None] * n, {})).latencies(truth, in_order=True)
    return [Measurement(**{**m.__dict__, "latency_s": float(t) * rng.lognormvariate(0, 0.1)})
            for m, t in zip(ms, lat, strict=True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", nargs="?", type=int, default=10_000)
    parser.add_argument("--pipelined", type=float, default=0.02)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from compute.profile_fit import fit_profile

    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    ms = measurements(args.rows, args.pipelined)
    piped = sum(m.pp > 1 for m in ms)
    for label, fit in (("default fit", None), ("6 parameters", SIX)):
        c0 = time.process_time()
        r = fit_profile(ms, fit=fit)
        cpu = time.process_time() - c0
        print(f"calibrate {len(ms):,} rows ({piped} pipelined), {label}: {cpu:.1f} s CPU "
              f"(target < 30 s); rms {r.rms_relative_error:.2%}")


if __name__ == "__main__":
    main()
