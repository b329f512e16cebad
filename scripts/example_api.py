"""netmodel's Python API in one page (docs/api.md walks through it; a test runs it).

    python scripts/example_api.py

Builds a fabric, costs an all-reduce on it with the shipped model and with a function of
your own, searches the best configuration of a model on a scenario's fabric, puts a GPU of
your own (a file derived from the Lite) on a fabric, and compares scenarios.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

import netmodel


def main() -> None:
    # 1. A fabric: a spec string, or a builder name and its parameters (SI units).
    fabric = netmodel.build_fabric("fat-tree", {"k": 8, "gpu": "Lite"})
    print(f"fabric: {fabric.graph['spec']} with {fabric.graph['gpus']} GPUs")

    # 2. The cost of an all-reduce over 32 GPUs of it, for three sizes at once.
    sizes = np.array([64e3, 16e6, 1e9])
    seconds = netmodel.collective_time(fabric, "all-reduce", sizes, 32)
    for n, t in zip(sizes, seconds, strict=True):
        print(f"  all-reduce {n / 1e6:8.3f} MB over 32 Lites: {t * 1e6:10.1f} us")

    # 3. The best TP degree and batch of Llama-3-70B decode on the lite-flat scenario: the
    #    same search `netmodel compare` runs.
    best = netmodel.search("Llama-3-70B", phase="decode", scenario="lite-flat").best
    print(f"lite-flat, Llama-3-70B decode: TP {best.tp}, batch {best.batch}, "
          f"TBT {best.latency * 1e3:.1f} ms, {best.tokens_per_s_per_sm:.2f} tokens/s/SM")

    # 4. Collectives from a plain function (op, nbytes_array, group_size) -> seconds.
    def flat_network(op, nbytes, group_size):
        return 5e-6 + 2 * (group_size - 1) / group_size * nbytes / 200e9

    mine = netmodel.search("Llama-3-70B", "Lite", "decode", comm=flat_network).best
    print(f"own network function: TP {mine.tp}, {mine.tokens_per_s_per_sm:.2f} tokens/s/SM")

    # 5. A GPU of your own, derived from the Lite, on a shipped fabric, beside the H100
    #    cluster and the plain Lite.
    with tempfile.TemporaryDirectory() as tmp:
        gpu_file = Path(tmp) / "lite_plus.toml"
        gpu_file.write_text('[gpu."Lite-2xHBM"]\nderive_from = "Lite"\n'
                            'hbm_capacity_multiplier = 2.0\nsource = "example"\n')
        result = netmodel.compare(["Llama-3-70B"], ["h100-dgx", "lite-flat"], ["decode"],
                                  gpus=None)
        own = netmodel.compare(["Llama-3-70B"], ["lite-flat"], ["decode"], gpus=[gpu_file])
    base = result.row("Llama-3-70B", "h100-dgx@H100-SXM", "decode").tokens_per_s_per_sm
    for row in result.rows + own.rows:
        print(f"  {row.label:<24} {row.tokens_per_s_per_sm:6.2f} tokens/s/SM "
              f"({row.tokens_per_s_per_sm / base:.2f}x the H100 cluster)")


if __name__ == "__main__":
    main()
