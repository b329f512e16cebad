"""The figures in compute/data/limits.toml's [quantity.ttft] reasoning are netmodel's own
counts (helper h340): it said a 128K-token prompt of Llama-3.1-405B is ~2.5e17 FLOP with
attention 1.4e17, ~30 s at 8 H100s' peak, which is the full P^2 of query-key pairs; prefill
is causal (compute.phases.Workload: P (P + 1) / 2 pairs), 7.1e16, so ~1.8e17 and ~22 s.
"""

from __future__ import annotations

from compute.evaluate_one import evaluate
from compute.hardware import get_gpu
from compute.models import get_model
from compute.phases import Workload
from compute.validate import limits


def test_the_ttft_ceiling_reasoning_matches_the_prefill_flops():
    gpu = get_gpu("H100-SXM")
    model = get_model("Llama-3.1-405B")
    r = evaluate(model, gpu, 8, 1, Workload("prefill", prompt=131072))
    per_gpu = {s.name: s.flops * s.count for s in r.stages}
    attention = 8 * per_gpu.pop("attention")
    weights = 8 * sum(per_gpu.values())
    # causal pairs P (P + 1) / 2 x 4 x heads x head_dim x layers, by hand
    assert attention == 4 * 128 * 128 * 131072 * 131073 / 2 * 126
    peak = 8 * gpu.flops_bf16
    total = weights + attention
    why = limits("quantity")["ttft"].why

    def e(x: float, digits: int) -> str:   # 1.8e17, as the data file writes it
        return f"{x:.{digits - 1}e}".replace("e+", "e")

    assert f"~{e(total, 2)} FLOP" in why, (total, why)
    assert f"weights {e(weights, 3)}" in why and f"causal attention {e(attention, 2)}" in why
    assert f"~{total / peak:.0f} s at the peak of 8 H100s ({peak / 1e15:.1f} PFLOP/s)" in why
    assert f"~{600 / (total / peak):.0f}x that" in why


def test_the_link_range_reasoning_names_the_catalogs_slowest_and_fastest_links():
    # it said 'the catalog's slowest scale-out 200 Gb/s (A100's HDR)', but the catalog's
    # Lite has a 100 Gb/s NIC; every catalog GPU's links lie inside the range
    from compute.hardware import catalog

    gpus = catalog().values()
    slowest = min(g.scaleout_bandwidth for g in gpus)
    fastest = max(g.scaleup_bandwidth for g in gpus)
    why = limits("quantity")["link_bandwidth"]
    assert f"the Lite's {slowest * 8 / 1e9:g} Gb/s NIC ({slowest / 1e9:g} GB/s" in why.why
    assert f"NVLink5, {fastest / 1e9:g} GB/s per direction per GPU" in why.why
    assert why.minimum <= slowest and fastest * 4 <= why.maximum   # lite-direct's 4*$scaleup
