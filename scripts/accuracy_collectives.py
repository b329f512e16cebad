#!/usr/bin/env python
"""Print the collective model's error against published nccl-tests measurements.

`python scripts/accuracy_collectives.py [--markdown]`

Reads ../shared/reference (beside the project root). The model: the topologies builder's
8-GPU single-switch domain (H100/H200 450 GB/s per direction per GPU with NVLS; A100
300 GB/s without), the shipped defaults (NCCL's tuning constants, taken once), and auto
choosing among NCCL's algorithms (ring, tree, in-network).
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT.parent / "shared" / "reference"


def _rows(name):
    with open(REFERENCE / name) as fh:
        return list(csv.DictReader(line for line in fh if not line.startswith("#")))


def _fmt_size(n: float) -> str:
    from compute.units import format_bytes

    return format_bytes(n).replace(" ", "")


def sweep_table(markdown: bool) -> list[str]:
    import numpy as np

    from netmodel.collectives.model import FabricCostModel
    from topologies import single_switch

    rows = _rows("nccl_allreduce_busbw_8gpu.csv")
    systems = {"H200": ("8xH200", "H200-SXM", True), "A100": ("8xA100", "A100-SXM-80GB", False)}
    data = {}
    for key, (prefix, gpu, nvls) in systems.items():
        sel = [r for r in rows if r["system"].startswith(prefix)]
        sizes = np.array([float(r["bytes"]) for r in sel])
        meas = np.array([float(r["busbw_GBps"]) for r in sel])
        model = FabricCostModel(single_switch(8, gpu=gpu, in_network_reduction=nvls),
                                algorithms="nccl")
        sw = model.sweep("all-reduce", sizes, 8)
        data[key] = (sizes, meas, sw.busbw / 1e9, sw.algorithm, sw.protocol, sw.time)
    out = []
    head = ["size", "H200 meas", "H200 model", "err", "model choice",
            "A100 meas", "A100 model", "err", "model choice"]
    if markdown:
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "---|" * len(head))
    else:
        out.append("all-reduce busbw (GB/s), 8 GPUs, model vs nccl-tests")
        out.append(f"{'size':>7} | {'H200':>7} {'model':>7} {'err':>6}  {'choice':<18}| "
                   f"{'A100':>7} {'model':>7} {'err':>6}  choice")
    sizes = data["H200"][0]
    for i, n in enumerate(sizes):
        cells = [_fmt_size(n)]
        for key in ("H200", "A100"):
            _, meas, model, alg, proto, _ = data[key]
            err = model[i] / meas[i] - 1
            cells += [f"{meas[i]:.2f}", f"{model[i]:.2f}", f"{err:+.0%}", f"{alg[i]}/{proto[i]}"]
        if markdown:
            out.append("| " + " | ".join(cells) + " |")
        else:
            out.append(f"{cells[0]:>7} | {cells[1]:>7} {cells[2]:>7} {cells[3]:>6}  "
                       f"{cells[4]:<18}| {cells[5]:>7} {cells[6]:>7} {cells[7]:>6}  {cells[8]}")
    for key in ("H200", "A100"):
        sizes, meas, model, *_ = data[key]
        ratio = model / meas
        big = sizes >= 2 ** 28
        worst = max(ratio.max(), 1 / ratio.min())
        out.append(f"{key}: worst factor {worst:.2f} over 1 KiB..8 GiB; worst error at >= 256 "
                   f"MiB {np.abs(ratio[big] - 1).max():.1%}")
    return out


def point_table(markdown: bool) -> list[str]:
    from netmodel.collectives.model import FabricCostModel
    from topologies import single_switch

    out = []
    lines = []
    for r in _rows("nccl_allreduce_h100_by_gpu_count.csv"):
        p = int(r["gpus"])
        alg = "ring" if r["algorithm"].startswith("Ring") else \
            ("in-network" if r["algorithm"] == "NVLS" else None)
        model = FabricCostModel(single_switch(p), algorithms="nccl")
        res = model.cost("all-reduce", 2.0 ** 32, p, alg)
        meas = float(r["busbw_GBps"])
        lines.append((f"{p} H100, {r['algorithm']}", meas, res.busbw / 1e9,
                      f"{res.algorithm}/{res.protocol}"))
    for r in _rows("nccl_small_message_latency.csv"):
        p = int(r["gpus"])
        lo = float(r["bytes"].split("-")[0])
        t_meas = float(r["time_us"].split("-")[0])
        model = FabricCostModel(single_switch(p), algorithms="nccl")
        res = model.cost("all-reduce", lo, p)
        lines.append((f"{p} GPUs all-reduce {int(lo)} B time (us)", t_meas, res.time * 1e6,
                      f"{res.algorithm}/{res.protocol}"))
    if markdown:
        out += ["| case | measured | model | err | model choice |", "|---|---|---|---|---|"]
        out += [f"| {c} | {m:g} | {v:.1f} | {v / m - 1:+.0%} | {a} |" for c, m, v, a in lines]
    else:
        out.append("large-message busbw (GB/s, 4 GiB) and small-message time (us)")
        out += [f"  {c:<44} measured {m:>7g}  model {v:>7.1f}  err {v / m - 1:+.0%}  {a}"
                for c, m, v, a in lines]
    return out


def main(argv=()) -> None:
    if not REFERENCE.is_dir():
        print(f"reference data folder {REFERENCE} is absent; nothing to compare")
        return
    markdown = "--markdown" in argv
    for line in sweep_table(markdown) + [""] + point_table(markdown):
        print(line)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main(sys.argv[1:])
