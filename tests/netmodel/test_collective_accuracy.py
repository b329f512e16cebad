"""The collective model against published nccl-tests measurements.

Two sources: ``../shared/reference`` (8xH200 and 8xA100 sweeps, H100 by GPU count, small
message times; tests skip where it is absent) and the results cited, each with its source,
in ``tests/netmodel/data/nccl_allreduce_published.csv`` (8xH100, 4xGB200, 4xGB300, 8xB200,
8xB300, 8 GB200 and 8 GB300 of two NVL72 trays, a GB200 NVL72 rack, 64 GPUs of a GB300 rack,
16 to 1,440 GPUs across nodes, 128 and 192 of them GB200 or GB300 on 2-3 racks over RoCE). The model runs with its shipped defaults (NCCL's constants, taken once) on each
system's fabric and chooses among NCCL's algorithms. No number here is fitted to these
measurements.

Targets (issue 11): 8-GPU NVLink systems within 10% at >= 256 MiB, 25% from 1 to 128 MiB,
2x below; across nodes within 25% at >= 64 MiB. Where the model misses one, the test pins the
gap (docs/accuracy.md says why) so that a change is noticed.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from netmodel.collectives.model import FabricCostModel
from topologies import build, single_switch

PUBLISHED = Path(__file__).parent / "data" / "nccl_allreduce_published.csv"
MIB = 2 ** 20


def _rows(path):
    with open(path) as fh:
        return list(csv.DictReader(line for line in fh if not line.startswith("#")))


def _curve(reference_dir, system_prefix):
    rows = [r for r in _rows(reference_dir / "nccl_allreduce_busbw_8gpu.csv")
            if r["system"].startswith(system_prefix)]
    assert len(rows) == 24
    return (np.array([float(r["bytes"]) for r in rows]),
            np.array([float(r["busbw_GBps"]) * 1e9 for r in rows]))


def _cited(case):
    rows = [r for r in _rows(PUBLISHED) if r["case"] == case]
    assert rows, case
    r0 = rows[0]
    return (r0["fabric"], int(r0["gpus"]), r0["model_algorithm"],
            np.array([float(r["bytes"]) for r in rows]),
            np.array([float(r["busbw_GBps"]) * 1e9 for r in rows]))


def _model(gpu, nvls, n=8):
    return FabricCostModel(single_switch(n, gpu=gpu, in_network_reduction=nvls),
                           algorithms="nccl")


def _busbw(model, sizes, p=8, algorithm=None):
    return model.sweep("all-reduce", sizes, p, algorithm).busbw


def cited_model(fabric, model_algorithm):
    """The model and the algorithm to ask it for, for a cited row's ``model_algorithm``:
    ``auto`` (NCCL's algorithms), ``auto:A,B`` (auto over those of NCCL's algorithms the run
    left enabled) or one algorithm."""
    kind, _, names = model_algorithm.partition(":")
    model = FabricCostModel(build(fabric), validated=True,
                            algorithms=tuple(names.split(",")) if names else "nccl")
    return model, None if kind == "auto" else model_algorithm


def _ratio_cited(case):
    fabric, p, alg, sizes, measured = _cited(case)
    model, alg = cited_model(fabric, alg)
    return sizes, _busbw(model, sizes, p, alg) / measured


# ------------------------------------------------------------------ ../shared/reference


def test_h200_sweep_meets_every_target(reference_dir):
    sizes, measured = _curve(reference_dir, "8xH200")
    model = _model("H200-SXM", nvls=True)
    ratio = _busbw(model, sizes) / measured
    big, mid, small = sizes >= 256 * MIB, (sizes >= MIB) & (sizes <= 128 * MIB), sizes < MIB
    assert np.all(np.abs(ratio[big] - 1) < 0.10), ratio[big]
    assert np.all(np.abs(ratio[mid] - 1) < 0.25), ratio[mid]
    assert np.all((ratio[small] > 0.5) & (ratio[small] < 2.0)), ratio[small]
    # auto follows NCCL's choice: ring/LL for small messages, NVLS for large ones
    sweep = model.sweep("all-reduce", sizes, 8)
    assert sweep.algorithm[0] == "ring" and sweep.protocol[0] == "LL"
    assert sweep.algorithm[-1] == "in-network"


def test_a100_sweep(reference_dir):
    sizes, measured = _curve(reference_dir, "8xA100")
    model = _model("A100-SXM-80GB", nvls=False)
    ratio = _busbw(model, sizes) / measured
    big = sizes >= 256 * MIB
    assert np.all(np.abs(ratio[big] - 1) < 0.10), ratio[big]
    # Known gaps (docs/accuracy.md): from 4 to 128 MiB the measured ring runs at 55-80% of
    # its peak while the model's LL128/Simple lines reach 75-95% (+29% to +53%); below
    # 512 KiB Azure's A100 node takes ~45 us whatever the size, 3x NCCL's own latency model
    # and 3.6x the 8xH20 floor (2.0x-2.6x). Pinned so that a change is noticed.
    mid = (sizes >= 4 * MIB) & (sizes <= 128 * MIB)
    assert np.all((ratio[mid] > 1.25) & (ratio[mid] < 1.6)), ratio[mid]
    small = sizes < 512 * 1024
    assert np.all((ratio[small] > 2.0) & (ratio[small] < 2.7)), ratio[small]
    assert set(model.sweep("all-reduce", sizes, 8).algorithm) == {"ring"}


def test_h100_ring_large_messages(reference_dir):
    rows = _rows(reference_dir / "nccl_allreduce_h100_by_gpu_count.csv")
    ring = [r for r in rows if r["algorithm"].startswith("Ring")]
    assert len(ring) == 1 and ring[0]["gpus"] == "8"
    measured = float(ring[0]["busbw_GBps"]) * 1e9  # 370 GB/s
    model = _model("H100-SXM", nvls=True)
    bus = _busbw(model, 2.0 ** np.arange(30, 34), algorithm="ring")
    assert np.all(np.abs(bus / measured - 1) < 0.10)


def test_h100_nvls_by_gpu_count(reference_dir):
    rows = [r for r in _rows(reference_dir / "nccl_allreduce_h100_by_gpu_count.csv")
            if r["algorithm"] == "NVLS"]
    assert [int(r["gpus"]) for r in rows] == [5, 6, 7, 8]
    for r in rows:
        p = int(r["gpus"])
        model = _model("H100-SXM", nvls=True, n=p)
        bus = _busbw(model, [2.0 ** 30, 2.0 ** 33], p=p, algorithm="in-network")
        assert np.all(np.abs(bus / (float(r["busbw_GBps"]) * 1e9) - 1) < 0.10), p


def test_small_message_latency_floor(reference_dir):
    rows = _rows(reference_dir / "nccl_small_message_latency.csv")
    checked = 0
    for r in rows:
        p = int(r["gpus"])
        lo, _, hi = r["bytes"].partition("-")
        sizes = [float(lo), float(hi or lo)]
        t_lo, _, t_hi = r["time_us"].partition("-")
        measured = np.array([float(t_lo), float(t_hi or t_lo)]) * 1e-6
        # NVLink4 NVSwitch (H20 has H100's NVLink); NVLS where the row says so
        model = FabricCostModel(single_switch(p, gpu="H100-SXM"), algorithms="nccl")
        t = model.collective_time("all-reduce", sizes, p)
        ratio = t / measured
        assert np.all((ratio > 0.5) & (ratio < 2.0)), (r, t)
        checked += 1
    assert checked == 4


# ------------------------------------------------------------------ cited (always here)


def test_the_cited_data_names_its_sources():
    rows = _rows(PUBLISHED)
    assert len({r["case"] for r in rows}) == 108
    for r in rows:
        assert r["source"] and float(r["busbw_GBps"]) > 0 and int(r["bytes"]) > 0
        assert r["target"] in ("yes", "no") and (r["target"] == "yes" or r["note"] or
                                                  r["source"] == "same")


def test_h100_8gpu_sweep():
    sizes, ratio = _ratio_cited("h100-8")
    big, mid = sizes >= 256 * MIB, (sizes >= 2 * MIB) & (sizes <= 128 * MIB)
    assert np.all(np.abs(ratio[big] - 1) < 0.10), ratio[big]
    assert np.all(np.abs(ratio[mid] - 1) < 0.25), ratio[mid]
    # Known gap: Azure's H100 node (NCCL 2.18.5) takes 42 us from 32 KiB to 1 MiB, 2.8x
    # NCCL's ring/LL latency model; the model is up to 2.3x faster there (+38% at 1 MiB)
    small = sizes <= MIB
    assert np.all((ratio[small] > 1.0) & (ratio[small] < 2.4)), ratio[small]


def test_b200_8gpu_peak():
    _, ratio = _ratio_cited("b200-8")
    assert abs(ratio[0] - 1) < 0.10, ratio


def test_gb200_4gpu_sweep():
    sizes, ratio = _ratio_cited("gb200-4")
    # within 2x below 1 MiB and 16% at >= 1 GiB; known gaps: +27-28% at 2-4 MiB (LL, whose
    # ceiling NCCL sets for 8 GPUs) and +14-15% at 128-512 MiB, where the measured ring is
    # still ramping up (10% below its 8 GiB figure at 512 MiB)
    assert np.all((ratio[sizes < MIB] > 0.5) & (ratio[sizes < MIB] < 2.0)), ratio
    assert np.all(np.abs(ratio[sizes >= 2 ** 30] - 1) < 0.11), ratio
    assert np.all(np.abs(ratio - 1) < 0.5), ratio


def test_gb300_4gpu_sweep():
    # Blackwell Ultra keeps the B200's NVLink5 and NCCL's SM100 constants (the blackwell
    # generation of collective_generations.toml), so the model gives 4 GB300 the 4-GB200 curve;
    # the two Azure hosts measure within 2% of each other from 1 GiB up (680 GB/s at 8 GiB)
    sizes, ratio = _ratio_cited("gb300-4")
    fabric, p, alg, _, gb300 = _cited("gb300-4")
    gb200_sizes, gb200 = _cited("gb200-4")[3:]
    assert np.array_equal(sizes, gb200_sizes)
    model, alg = cited_model(fabric, alg)
    like_b200, _ = cited_model("single-switch:n=4,gpu=B200-HGX", "auto")
    assert np.array_equal(_busbw(model, sizes, p, alg), _busbw(like_b200, sizes, p))
    big = sizes >= 2 ** 30
    assert np.all(np.abs(gb300[big] / gb200[big] - 1) < 0.02)
    # within 2x below 1 MiB and 11% at >= 1 GiB; known gaps as on GB200: +21-25% at 1-4 MiB
    # (LL, whose ceiling NCCL sets for 8 GPUs) and +13-15% at 128-512 MiB, where the measured
    # ring is still ramping up (8% below its 8 GiB figure at 512 MiB)
    assert np.all((ratio[sizes < MIB] > 0.5) & (ratio[sizes < MIB] < 2.0)), ratio
    assert np.all(np.abs(ratio[big] - 1) < 0.11), ratio
    gap = (sizes >= MIB) & (sizes <= 4 * MIB)
    assert np.all((ratio[gap] > 1.20) & (ratio[gap] < 1.26)), ratio[gap]
    gap = (sizes >= 128 * MIB) & (sizes <= 512 * MIB)
    assert np.all((ratio[gap] > 1.12) & (ratio[gap] < 1.16)), ratio[gap]
    assert np.all(np.abs(ratio - 1) < 0.5), ratio


@pytest.mark.parametrize(("case", "choice"), [("b300-8", {"in-network"}),
                                              ("b300-8-nonvls", {"ring", "tree"}),
                                              ("gb200-2x4-mnnvl", {"in-network"})])
def test_published_blackwell_peaks_without_a_size(case, choice):
    # Peak busbw published without its message size (8 B300 with NVLS on and off, NVIDIA/nccl
    # issue 2140: 845 and 695 GB/s; 2 GB200 trays of an NVL72 over MNNVL, 811 GB/s): compared
    # at 8 GiB and not counted as targets (the data file's target column), but within 5%:
    # -2%, +4%, +2%. With NVLS the model is in-network at NVLink5's in-switch ceiling
    # (0.933 x 900 GB/s); without, ring at 18 x 40.1 GB/s.
    rows = [r for r in _rows(PUBLISHED) if r["case"] == case]
    assert [r["target"] for r in rows] == ["no"] and rows[0]["note"]
    sizes, ratio = _ratio_cited(case)
    assert np.all(np.abs(ratio - 1) < 0.05), (case, ratio)
    fabric, p, alg, _, _ = _cited(case)
    model, alg = cited_model(fabric, alg)
    assert set(model.sweep("all-reduce", sizes, p, alg).algorithm) <= choice


def test_gb300_two_trays_over_mnnvl():
    # 8 GB300 of two p6e-gb300r trays over multi-node NVLink, NVLS, 16 GiB: 841 GB/s (NVIDIA/aicr
    # issue 1256); the model is in-network at NVLink5's in-switch ceiling, 1.4% below
    sizes, ratio = _ratio_cited("gb300-2x4-mnnvl")
    assert list(sizes) == [2.0 ** 34] and np.all(np.abs(ratio - 1) < 0.10), ratio
    assert abs(ratio[0] - 1) < 0.02, ratio
    fabric, p, alg, _, _ = _cited("gb300-2x4-mnnvl")
    model, alg = cited_model(fabric, alg)
    assert set(model.sweep("all-reduce", sizes, p, alg).algorithm) == {"in-network"}


@pytest.mark.parametrize("case", ["gb200-2x4-mnnvl", "gb300-2x4-mnnvl"])
def test_mnnvl_subset_spans_two_compute_trays(case):
    # the 8 GPUs of an MNNVL pair are two trays of 4 (2 OS nodes) of one NVLink domain
    fabric, p, *_ = _cited(case)
    g = build(fabric)
    assert p == 8 and sorted({g.nodes[f"gpu{i}"]["server"] for i in range(p)}) == [0, 1]


def test_nvl72_rack_is_capped_by_the_in_switch_ceiling():
    sizes, ratio = _ratio_cited("nvl72-1")
    assert np.all(np.abs(ratio[sizes >= 2 ** 31] - 1) < 0.10), ratio
    assert np.all(np.abs(ratio - 1) < 0.25), ratio
    # without the ceiling NVLS's link loads alone would allow 2 (p-1)/(p+1) x the payload
    # rate: 1,039 GB/s on 72 GPUs; the generation's ceiling holds it to 0.933 x 900 GB/s
    model = FabricCostModel(build("nvl72"), algorithms="nccl", validated=True)
    bus = float(model.sweep("all-reduce", [2.0 ** 36], 72).busbw[0])
    assert bus == pytest.approx(0.933 * 900e9, rel=0.005)


@pytest.mark.parametrize("case", ["h100-2x8-ib", "b200-2x8-ib", "hopper-2x8-ib",
                                  "hopper-4x8-ib", "h100-8x8-sharp", "gb200-2racks",
                                  "gb200-oci-2racks", "gb200-oci-3racks",
                                  "gb200-oke-2racks-nonvls", "gb300-oci-1rack",
                                  "b200-64x8-ring", "b200-64x8-collnetdirect",
                                  "b200-4x8-collnetdirect", "b200-64x8-collnetchain",
                                  "h100-2x8-roce-nvls-on", "h100-2x8-roce-nvls-off",
                                  "h100-4x8-roce-nvls-on", "h100-4x8-roce-nvls-off",
                                  "b300-2x8-ring-roce", "b300-4x8-ring-roce", "b300-8x8-ring-roce",
                                  "b300-16x8-ring-roce", "b300-2x8-nvlstree-roce", "h800-2x8-nvls"])
def test_across_nodes_within_25_percent_at_64_mib_and_above(case):
    sizes, ratio = _ratio_cited(case)
    big = sizes >= 64 * MIB
    assert big.any() and np.all(np.abs(ratio[big] - 1) < 0.25), (case, ratio)


def test_twenty_nvl72_racks_ran_without_nvls():
    # The 20-rack run had NVLS off (NCCL_NVLS_ENABLE=0, coreweave/nccl-tests pull requests
    # 47, 48, 60; the data file's note): NCCL 2.26.2 then has no NVLS and no NVLSTree
    # (src/enqueue.cc updateCollCostTable skips both without nvlsSupport), so the model
    # chooses between ring and tree. Compared with NVLSTree the model was 2.0-2.5x fast.
    fabric, p, alg, sizes, _ = _cited("gb200-20racks")
    assert alg == "auto:ring,tree"
    model, alg = cited_model(fabric, alg)
    assert set(model.sweep("all-reduce", sizes, p, alg).algorithm) <= {"ring", "tree"}


def test_twenty_nvl72_racks_known_gap():
    # Known gap (docs/accuracy.md): 1,440 GPUs measure 151-406 GB/s; the model's tree (the
    # faster of ring and tree in the model) is 1.7-1.9x that, its ring 1.05-1.5x.
    _, ratio = _ratio_cited("gb200-20racks")
    assert np.all((ratio > 1.6) & (ratio < 1.9)), ratio


@pytest.mark.parametrize(("case", "domains", "nic"), [("gb200-oci-2racks", 2, 50e9),
                                                       ("gb200-oci-3racks", 3, 50e9),
                                                       ("gb200-oke-2racks-nonvls", 2, 50e9),
                                                       ("gb300-oci-2racks", 2, 100e9)])
def test_oci_racks_as_built(case, domains, nic):
    # OCI's 32- and 48-tray runs fill 16 of each NVL72 rack's 18 trays: NVLink domains of 64
    # GPUs, 4 a tray; RoCE NICs 4 x 400 Gb/s a GB200 tray, 8 x 400 Gb/s a GB300 tray (the
    # quick starts' hardware tables): 50 and 100 GB/s a GPU
    fabric, p, *_ = _cited(case)
    g = build(fabric)
    assert p == 64 * domains == g.graph["gpus"]
    for d in range(domains):
        gpus = [f"gpu{i}" for i in range(64 * d, 64 * (d + 1))]
        assert {n for u in gpus for n in g[u] if n.startswith("nvs")} == {f"nvs{d}"}
        assert len({g.nodes[u]["server"] for u in gpus}) == 16
    out = [g.edges[u, v]["bandwidth"] for u in (f"gpu{i}" for i in range(p))
           for v in g[u] if not v.startswith("nvs")]
    assert len(out) == p and set(out) == {nic}


def test_gb300_two_racks_known_gap():
    # Known gap: 2 GB300 NVL72 racks (OCI, NCCL 2.28.7, NVLS on, RoCE 800 Gb/s a GPU). The
    # model's auto takes NVLSTree at every size but 512 MiB and is 2.0x, 1.6x and 1.5x the
    # measurement at 64, 128 and 256 MiB, 2-17% above from 512 MiB. The measured curve is the
    # model's ring within 5% at every size but 256 MiB (where it dips: 1.27x): NCCL ran ring
    # or something no faster, where on GB200 racks with 400 Gb/s NICs (2.27.3) it reached the
    # model's NVLSTree to 1% at 4-8 GiB. Why NCCL 2.28 does not choose or attain NVLSTree here is
    # not established (NCCL's own NVLSTree estimate is not modelled), so the gap is pinned.
    sizes, ratio = _ratio_cited("gb300-oci-2racks")
    assert [s / MIB for s in sizes[:3]] == [64, 128, 256]
    assert 1.95 < ratio[0] < 2.10 and 1.58 < ratio[1] < 1.70 and 1.42 < ratio[2] < 1.55, ratio
    assert np.all(np.abs(ratio[3:] - 1) < 0.18), ratio
    fabric, p, alg, _, measured = _cited("gb300-oci-2racks")
    model, _ = cited_model(fabric, alg)
    ring = _busbw(model, sizes, p, "ring") / measured
    other = sizes != 256 * MIB
    assert np.all(np.abs(ring[other] - 1) < 0.05), ring
    assert 1.2 < ring[~other][0] < 1.3, ring


def test_four_h100_nodes_dip_at_256_mib():
    # Voltage Park's 4 x 8 H100 (NCCL 2.24.3): busbw falls from 275 to 240 GB/s between 128
    # and 256 MiB and rises again; the model's auto (ring/LL128 there) is 29% above at 256 MiB
    # and within 16% at every other size from 64 MiB. Its tree and NVLSTree are within 15% at
    # 256 MiB: the dip is consistent with NCCL's tuner leaving ring there for an algorithm that
    # the model finds slower (the run has no NCCL_DEBUG output to say which).
    sizes, ratio = _ratio_cited("h100-4x8-ib-vp")
    dip = sizes == 256 * MIB
    assert 1.25 < ratio[dip][0] < 1.33, ratio
    assert np.all(np.abs(ratio[~dip] - 1) < 0.16), ratio
    fabric, p, alg, _, measured = _cited("h100-4x8-ib-vp")
    model, _ = cited_model(fabric, alg)
    for name in ("tree", "in-network-tree"):
        other = _busbw(model, sizes[dip], p, name) / measured[dip]
        assert abs(other[0] - 1) < 0.15, (name, other)


def test_oke_one_gib_point_is_not_monotone():
    # The OKE run's 1 GiB point (its own case, not a target): twice the data of 512 MiB in 2.9x
    # the time, and 2 GiB in 4% more time than 1 GiB. With NVLS off (the manifest's
    # NCCL_NVLS_ENABLE=0) the model chooses between ring and tree and is within 21% at every
    # other size from 64 MiB.
    rows = [r for r in _rows(PUBLISHED) if r["case"].startswith("gb200-oke-2racks-nonvls")]
    p = int(rows[0]["gpus"])
    t = {int(r["bytes"]): int(r["bytes"]) * 2 * (p - 1) / p / float(r["busbw_GBps"])
         for r in rows}
    assert t[2 ** 30] > 2.5 * t[2 ** 29] and t[2 ** 30] > 0.95 * t[2 ** 31]
    assert [r["target"] for r in rows if int(r["bytes"]) == 2 ** 30] == ["no"]
    fabric, p, alg, sizes, _ = _cited("gb200-oke-2racks-nonvls")
    assert alg == "auto:ring,tree" and 2 ** 30 not in sizes
    model, alg = cited_model(fabric, alg)
    assert set(model.sweep("all-reduce", sizes, p, alg).algorithm) <= {"ring", "tree"}
    _, ratio = _ratio_cited("gb200-oke-2racks-nonvls")
    assert np.all(np.abs(ratio - 1) < 0.22), ratio


def test_two_h200_nodes_shown():
    # 2 x 8 H200 on CoreWeave (SkyPilot's example, NCCL 2.26.2, CollNet off): the source does
    # not state the NICs, so the row is shown with the builder's 8 x 400 Gb/s and not counted;
    # the model's NVLSTree, at NCCL's perChMaxNVLSTreeBws cap (8 heads x 57.7 GB/s busbw on 2
    # nodes, h268; +1-6% without it), is 5-8% below from 512 MiB to 8 GiB: the run measured
    # 481 GB/s at 8 GiB, above the cap's 461.6 (its release's table is not read)
    rows = [r for r in _rows(PUBLISHED) if r["case"] == "h200-2x8-ib-cw"]
    assert {r["target"] for r in rows} == {"no"} and rows[0]["note"]
    _, ratio = _ratio_cited("h200-2x8-ib-cw")
    assert np.all((ratio > 0.91) & (ratio < 0.96)), ratio


def test_thousand_h100_forced_ring_shown():
    # 1,024 H100 with NCCL_ALGO=Ring (nccl-tests issue 322; network not stated, so shown and not
    # counted). The measurement is latency-bound at 1-2 GiB (19.4 and 20.2 ms: about 9.5 us
    # for each of 2 x 1,023 ring steps) and reaches 365-367 GB/s at 8-16 GiB. The model's
    # ring, which adds each step's latency to its transfer, is 1.7x the measurement at 1 GiB
    # and 9-16% below it at 4-16 GiB (a gap, pinned).
    rows = [r for r in _rows(PUBLISHED) if r["case"] == "h100-128x8-ring"]
    assert {r["target"] for r in rows} == {"no"} and rows[0]["note"]
    sizes, ratio = _ratio_cited("h100-128x8-ring")
    assert list(sizes) == [2.0 ** k for k in range(30, 35)]
    assert 1.6 < ratio[0] < 1.8 and 1.05 < ratio[1] < 1.2, ratio
    assert np.all((ratio[2:] > 0.8) & (ratio[2:] < 0.93)), ratio


def test_b200_forced_tree_meets_nccls_channel_cap_at_scale():
    # On 64 x 8 B200 (Together's slinky cluster, NCCL 2.28.9) a forced NCCL_ALGO=Tree measures
    # 195.9 GB/s at 32 GiB, half its ring (389.8, which the model's ring meets to 6%). The
    # model's tree was 373.7 GB/s (+91%), bound by the same NICs as its ring; NCCL caps a tree
    # at its channels (one per NIC) x perChMaxTreeBws and counts half of that as its algbw
    # (netmodel/data/collective_generations.toml, tree_channel_bandwidth: 8 x 24.0 GB/s on
    # 3+ nodes): now 191.2 GB/s (-2%). The 1,440-GPU NVLS-off run's tree is unchanged: its
    # 72-GPU domains give 72 rails, whose cap is far above the links' rate.
    _, tree = _ratio_cited("b200-64x8-tree")
    _, ring = _ratio_cited("b200-64x8-ring")
    assert 0.96 < tree[0] < 0.99 and abs(ring[0] - 1) < 0.07, (tree, ring)
    tree_bus = tree[0] * _cited("b200-64x8-tree")[4][0]
    ring_bus = ring[0] * _cited("b200-64x8-ring")[4][0]
    assert 0.5 < tree_bus / ring_bus < 0.53  # the tree at about half its ring, as measured


def _nccl_2_18_tuner_busbw_8xa100(n: float) -> float:
    """All-reduce busbw that NCCL's own cost model (NCCL <= 2.19: ncclTopoTuneModel and
    ncclTopoGetAlgoTime in src/graph/tuning.cc, NVIDIA/nccl commit b6475625) predicts on one
    node of 8 A100 over NVSwitch, from its constants by hand: the ring graph has 12 channels
    of 20 GB/s (SM80 NVLink, search.cc's channel duplication), so busBw = 240 GB/s; ring LL
    min(llMaxBws[Ampere][1 node] 87.7, 240 / 4) = 60, LL128 min(240 x 0.92, 12 x
    perChMaxRingLL128Bws 20.0) = 220.8, Simple 240; latencies baseLat + 14 x hwLat[NVLink]
    (6.6 + 0.6, 14 + 1.9, 8.4 + 3.4 us per step); algbw = busBw x 8 / 14. Trees lose at every
    size here (Simple pays 2 x 7 x 28 us; LL/LL128 carry treeCorrectionFactor <= 1 on half
    the busBw), so the fastest ring protocol is NCCL's choice."""
    steps, p = 14, 8
    lines = ((6.6 + steps * 0.6, 60.0), (14.0 + steps * 1.9, 220.8), (8.4 + steps * 3.4, 240.0))
    t = min(lat * 1e-6 + n / (bus * 1e9 * p / steps) for lat, bus in lines)
    return n / t * steps / p


def test_a100_mid_range_gap_is_nccls_own_model_gap(reference_dir):
    # The A100 curve was measured with NCCL 2.18.5. From 4 to 128 MiB netmodel agrees with
    # what NCCL 2.18.5's own tuner predicts (within 4%), and that prediction is itself 29% to
    # 55% above the measurement: the miss is not a constant or a structure netmodel lacks
    # from NCCL's model (docs/accuracy.md, "known to be wrong").
    sizes, measured = _curve(reference_dir, "8xA100")
    mid = (sizes >= 4 * MIB) & (sizes <= 128 * MIB)
    nccl = np.array([_nccl_2_18_tuner_busbw_8xa100(n) for n in sizes[mid]])
    # by hand at 16 MiB: LL128, 40.6 us + 16 MiB / 126.17 GB/s = 173.6 us -> 169.2 GB/s
    assert _nccl_2_18_tuner_busbw_8xa100(16 * MIB) == pytest.approx(169.2e9, rel=1e-3)
    ours = _busbw(_model("A100-SXM-80GB", nvls=False), sizes[mid])
    assert np.all(np.abs(ours / nccl - 1) < 0.04), ours / nccl
    assert np.all(nccl / measured[mid] > 1.28), nccl / measured[mid]



def _nccl_pipeline_ring_busbw_8xa100(n: float) -> float:
    """All-reduce busbw that NCCL's pipeline model of a ring (the 2026 source, which NCCL
    applies on Rubin only: src/tuning/platforms/rubin.h; src/tuning/pipeline_model/
    pipeline_model.cc and ring.cc, src/tuning/model.h, src/include/coll_sizes.h) gives on one
    node of 8 A100, by hand. Each of the ring graph's 12 channels (20 GB/s; NCCL's 24 running
    channels are the 12 doubled, 10 GB/s each, which gives the same times) carries n / 12
    bytes in slices of s (chunk = min(nominal, n / 12 / 8); LL128 a slice per chunk, nominal
    4,915,200 / 8 x 120/128 = 576,000 B; Simple two, nominal 4 x 512 KiB, a slice at least
    1 MiB / 32); a channel takes 14 x (hwLat / 2 + s / bw) for the first slice to cross the
    2(8-1) steps plus (C - 1) x s / bw for the others, C = ceil(slices x 14 / 8) - 1 (a
    link's slices, less NCCL's ghost slice), bw = 20 GB/s x 120/128 (LL128: at most
    perChMaxRingLL128Bws 20.0) or x 1; algbw = softmin(12 channels' rate, 12 x bw x 8 / 14,
    softness a tenth of that); time = baseLat + n / algbw; the faster of LL128 and Simple
    (LL, which NCCL's model also has, is left out: the comparison starts at 4 MiB)."""
    steps, p, ch, bw_intra = 14, 8, 12, 20e9

    def softmin(x, c, s):
        return c - s * np.log1p((np.exp(c / s) - 1) * np.exp(-x / s))

    best = np.inf
    for f, lat, base, nominal, per_chunk in ((120 / 128, 1.9e-6, 14e-6, 576000, 1),
                                             (1.0, 3.4e-6, 8.4e-6, 4 * 2 ** 19, 2)):
        bw = min(bw_intra * f, 20e9 if per_chunk == 1 else np.inf)
        size = n / ch
        chunk = min(nominal, size / p)
        s = chunk if per_chunk == 1 else min(chunk, max(chunk / per_chunk, 2 ** 20 / 32))
        slices = np.ceil(np.ceil(size / s - 1e-9) * steps / p) - 1
        t = steps * (lat / 2 + s / bw) + (slices - 1) * s / bw
        most = ch * bw * p / steps
        algbw = softmin(size / t * ch, most, 0.1 * most)
        best = min(best, base + n / algbw)
    return n / best * steps / p


def test_a100_nccls_pipeline_ring_model_misses_the_other_way():
    # NCCL's own pipeline model of a ring (2026 source, applied by NCCL on Rubin only) puts
    # a fill of 14 slices on every channel: on 8 A100 it is within 10% of the 8-MPI-rank run
    # from 4 to 32 MiB (-4% to +9%), where netmodel (NCCL's alpha-beta tuner) is 7-25% high,
    # but 14-18% low from 64 to 256 MiB, where netmodel is 10-14% high: neither of NCCL's
    # two models follows the measured ramp, so netmodel adopts neither change
    # (docs/accuracy.md, "Mechanisms checked"). By hand at 16 MiB: Simple, chunk 174,763 B,
    # slice 87,381.3 B (4.369 us at 20 GB/s), 27 slices a link: 14 x (1.7 + 4.369) + 26 x
    # 4.369 = 198.6 us a channel, 12 channels 84.5 GB/s, softmin with 137.1: 84.2 GB/s,
    # 8.4 us + 199.3 us -> 141.3 GB/s busbw
    assert _nccl_pipeline_ring_busbw_8xa100(16 * MIB) == pytest.approx(141.3e9, rel=2e-3)
    sizes, r_mpi = _ratio_cited("a100-8-mpi")
    measured = _cited("a100-8-mpi")[4]
    nccl = np.array([_nccl_pipeline_ring_busbw_8xa100(n) for n in sizes])
    mid = (sizes >= 4 * MIB) & (sizes <= 32 * MIB)
    ramp = (sizes >= 64 * MIB) & (sizes <= 256 * MIB)
    assert np.all(np.abs(nccl[mid] / measured[mid] - 1) < 0.10), nccl[mid] / measured[mid]
    assert np.all(nccl[ramp] / measured[ramp] < 0.87), nccl[ramp] / measured[ramp]
    assert np.all(r_mpi[mid] > 1.06) and np.all(r_mpi[ramp] > 1.09), r_mpi

# ------------------------------------------------------------------ single servers, other sources
# Issue 11: single-server sweeps the model was not built on (OCI, Together, public how-tos),
# to tell the model's errors from one platform's. 'one process driving 8 GPUs (-g 8)' runs
# pay one thread's serial kernel launches at every size (docs/collectives.md, Limits).


def _regions(sizes):
    return sizes < MIB, (sizes >= MIB) & (sizes <= 128 * MIB), sizes >= 256 * MIB


@pytest.mark.parametrize("case", ["h100-8-nvls", "h100-8-ring"])
def test_h100_servers_elsewhere_meet_the_large_and_mid_targets(case):
    # Together's 8xH100 (NCCL 2.26.2, -g 8): with NVLS within 6% at >= 256 MiB and 14% from
    # 2 to 128 MiB; where NVLS did not engage (the NVLS file equals the ring file, 369 GB/s),
    # ring within 2% and -17%..+4%. Known gap at 1 MiB, where the -g 8 floor (35 us at
    # 1 KiB-64 KiB, the model's ring/LL 17.4 us) is still most of the time: +37% / +39%.
    sizes, ratio = _ratio_cited(case)
    small, mid, big = _regions(sizes)
    assert np.all(np.abs(ratio[big] - 1) < 0.10), ratio[big]
    assert np.all(np.abs(ratio[mid & (sizes >= 2 * MIB)] - 1) < 0.25), ratio[mid]
    assert 1.35 < ratio[sizes == MIB][0] < 1.42, ratio
    if small.any():  # 2.06x at 1-4 KiB, the -g 8 floor; 1.7x-2.06x below 1 MiB
        assert np.all((ratio[small] > 1.65) & (ratio[small] < 2.1)), ratio[small]


@pytest.mark.parametrize(("case", "size", "lo", "hi"), [("b300-8-oci", 2 ** 33, -0.02, 0.0),
                                                        ("gb200-4-oci", 2 ** 32, 0.08, 0.10),
                                                        ("gb200-4-oci", 2 ** 33, 0.08, 0.10)])
def test_blackwell_large_points_elsewhere(case, size, lo, hi):
    # OCI's 8xB300 (NCCL 2.28.9) 834.84 GB/s at 8 GiB: the model's in-network 828.5, -0.8%;
    # OCI's GB200 tray 657.31 / 663.34 GB/s at 4 / 8 GiB: the model's ring 719.4 / 720.6,
    # +9.4% / +8.6%, inside the 10% target as Azure's GB200 host (+6-8% at 4-8 GiB)
    sizes, ratio = _ratio_cited(case)
    assert lo < ratio[sizes == size][0] - 1 < hi, (case, ratio)


def test_gb300_tray_elsewhere():
    # OCI's GB300 tray (4 MPI ranks, NCCL 2.28.7, 512 KiB-16 GiB): within 2x below 1 MiB
    # (1.28x), 23% from 1 to 128 MiB, 9% from 2 GiB; known: +11% at 256 MiB-1 GiB, where the
    # measured ring still ramps (7% below its 16 GiB figure at 1 GiB), as on Azure's host
    sizes, ratio = _ratio_cited("gb300-4-oci")
    small, mid, big = _regions(sizes)
    assert np.all((ratio[small] > 0.5) & (ratio[small] < 2.0)), ratio[small]
    assert np.all(np.abs(ratio[mid] - 1) < 0.25), ratio[mid]
    assert np.all(np.abs(ratio[sizes >= 2 ** 31] - 1) < 0.10), ratio
    ramp = big & (sizes < 2 ** 31)
    assert np.all((ratio[ramp] > 1.10) & (ratio[ramp] < 1.12)), ratio[ramp]


def test_a100_launcher_not_the_model_sets_the_small_message_miss():
    # One 8xA100 node, one NCCL, two launchers (host 'thanos'): one process driving 8 GPUs
    # takes 38-42 us per all-reduce of 8 B-32 KiB, 8 MPI ranks 18-30 us. The model (ring/LL,
    # 17.4 us) is within 2x of the MPI run below 1 MiB (1.70x at most) and 2.1-2.6x above the
    # -g 8 runs: those of OCI, 'dkh' (NCCL 2.19.3), 'thanos' and Azure (2.57x). The -g 8
    # run is also 13-27% slower from 4 to 64 MiB, so the launcher is in the mid range too.
    sizes, r_mpi = _ratio_cited("a100-8-mpi")
    _, r_one = _ratio_cited("a100-8-1proc")
    small = sizes < MIB
    assert np.max(r_mpi[small]) < 1.75 and np.min(r_mpi[small]) > 1.0, r_mpi[small]
    assert np.max(r_one[small]) > 2.5, r_one[small]
    for case in ("a100-8-oci", "a100-8-dkh"):
        s, r = _ratio_cited(case)
        assert 2.1 < np.max(r[s < MIB]) < 2.2, (case, r)
    mpi, one = _cited("a100-8-mpi")[4], _cited("a100-8-1proc")[4]
    mid = (sizes >= 4 * MIB) & (sizes <= 64 * MIB)
    assert np.all((mpi[mid] / one[mid] > 1.12) & (mpi[mid] / one[mid] < 1.28))


def test_a100_mid_range_is_optimistic_on_every_a100_server():
    # From 4 to 32 MiB the model (ring LL128, then Simple at 32 MiB) is above all five A100
    # measurements: +7% to +25% on the MPI run, +35% to +76% on the -g 8 runs (NCCL 2.18's
    # own tuner predicts what the model does: test_a100_mid_range_gap_is_nccls_own_model_gap).
    # The MPI run meets the 25% target there (24.6% at 32 MiB); the 2-64 MiB LL128/Simple
    # ramp of A100 is a known gap with no published constant behind a change.
    for case, lo, hi in (("a100-8-mpi", 1.06, 1.25), ("a100-8-1proc", 1.35, 1.50),
                         ("a100-8-oci", 1.30, 1.77), ("a100-8-dkh", 1.39, 1.56)):
        sizes, ratio = _ratio_cited(case)
        mid = (sizes >= 4 * MIB) & (sizes <= 32 * MIB)
        assert np.all((ratio[mid] > lo) & (ratio[mid] < hi)), (case, ratio[mid])
    # At >= 256 MiB: OCI within 6%, the MPI run +10.0% at 256 MiB and <= 7% above, the -g 8
    # 'thanos' run +16-19% at 256-512 MiB (where its in-place column is 9% faster than its
    # out-of-place one) and <= 5% from 1 GiB
    sizes, ratio = _ratio_cited("a100-8-oci")
    assert np.all(np.abs(ratio[sizes >= 256 * MIB] - 1) < 0.06), ratio
    sizes, ratio = _ratio_cited("a100-8-mpi")
    assert 1.095 < ratio[sizes == 256 * MIB][0] < 1.105, ratio
    assert np.all(np.abs(ratio[sizes >= 512 * MIB] - 1) < 0.07), ratio


@pytest.mark.parametrize("case", ["b200-8-vultr", "gb300-2x4-oci"])
def test_blackwell_eight_gpus_measure_ring_like_until_1_gib(case):
    # Two Blackwell 8-GPU NVLink domains from two sources, 8xB200 HGX (Vultr) and 2 GB300 trays
    # over MNNVL (OCI, NCCL 2.28.7), measure the same curve within 2% from 128 MiB on: the
    # model's ring (within 3%) up to 1 GiB, its in-network (within 2%) from 2 GiB. The model's
    # auto takes in-network from 4 MiB (ring LL128 at 16 and 32 MiB), so it is 11-13% above
    # them at 128 MiB-1 GiB and 29-37% at 4-8 and 32-64 MiB, with NCCL's 24 NVLS channels of
    # Blackwell in one NVLink domain (h279: 12-18% and 36-44% with 16). Hopper's NVLS
    # curves (Azure H100/H200, Together H100) are met within 6%. The ring-like magnitude is
    # not NCCL choosing ring: NCCL runs NVLS there with a chunk that grows with the size (64
    # KiB from 96 MiB, 128 KiB from 1.5 GiB on 8 Blackwell GPUs: 24 NVLS channels x 8 heads),
    # and the curves step exactly at those sizes; docs/collectives.md (Limits) has the source.
    fabric, p, _, sizes, measured = _cited(case)
    auto = cited_model(fabric, "auto")[0].sweep("all-reduce", sizes, p)
    ring = cited_model(fabric, "auto:ring,tree")[0].sweep("all-reduce", sizes, p).busbw
    r_auto, r_ring = auto.busbw / measured, ring / measured
    early, late = (sizes >= 128 * MIB) & (sizes <= 2 ** 30), sizes >= 2 ** 31
    assert np.all(np.abs(r_ring[early] - 1) < 0.03), r_ring[early]
    assert np.all(np.abs(r_auto[late] - 1) < 0.02), r_auto[late]
    assert np.all((r_auto[early] > 1.10) & (r_auto[early] < 1.14)), r_auto[early]
    gap = np.isin(sizes, [4 * MIB, 8 * MIB, 32 * MIB, 64 * MIB])
    assert np.all((r_auto[gap] > 1.28) & (r_auto[gap] < 1.38)), r_auto[gap]
    assert auto.algorithm[list(sizes).index(4 * MIB)] == "in-network"
    other = _cited("gb300-2x4-oci" if case == "b200-8-vultr" else "b200-8-vultr")
    common = np.isin(sizes, other[3]) & (sizes >= 128 * MIB)
    theirs = other[4][np.isin(other[3], sizes[common])]
    assert np.all(np.abs(measured[common] / theirs - 1) < 0.02)


# ------------------------------------------------------------------ nccl-tests' launch (-g N)
# A run with '-g N' has one host thread launch the N GPUs' kernels in turn every iteration
# (nccl-tests src/common.cu startColl; NCCL src/group.cc doLaunches), iterations issued back
# to back: an iteration takes the longer of the collective and N launches of ~5 us each
# (NCCL's maintainer, nccl-tests issue 123; tests/netmodel/data/nccl_tests_launch.toml). The
# accuracy script shows the model with that floor beside the plain model; the library's
# collective model does not include it.


def _accuracy_script():
    import importlib.util
    import sys

    path = Path(__file__).resolve().parents[2] / "scripts" / "accuracy_collectives.py"
    spec = importlib.util.spec_from_file_location("accuracy_collectives_h159", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_launch_floor_of_one_thread_driving_8_gpus_by_hand():
    acc = _accuracy_script()
    assert acc.launch_cost() == 5e-6
    (c,) = [c.run() for c in acc.cited_curves() if c.key == "a100-8-1proc"]
    assert c.gpus_per_thread == 8
    # the plain model is the library's, unchanged: ring/LL, 17.4 us at 1 KiB
    model, _ = cited_model(c.fabric, c.algorithm)
    plain = model.sweep("all-reduce", np.array([1024.0]), 8)
    assert c.model[0] == pytest.approx(plain.busbw[0] / 1e9, rel=1e-12)
    assert 17.0e-6 < plain.time[0] < 17.8e-6
    # with the launch: 8 launches x 5 us = 40 us an iteration; busbw = 2 x 7/8 x 1 KiB / 40 us
    assert c.harness[0] == pytest.approx(2 * 7 / 8 * 1024 / 40e-6 / 1e9, rel=1e-9)
    # measured 0.04 GB/s at 1 KiB: the plain model 2.57x above it, with the launch +12%
    assert c.model[0] / c.measured[0] > 2.5 and 1.0 < c.harness[0] / c.measured[0] < 1.15
    # where the collective takes longer than the launches (>= 2 MiB here) nothing changes
    sizes = np.array(c.sizes)
    assert np.all(np.array(c.time)[sizes >= 2 * MIB] > 40e-6)
    assert np.array_equal(c.harness[sizes >= 2 * MIB], c.model[sizes >= 2 * MIB])


def test_launch_floor_moves_every_one_thread_run_and_no_other():
    acc = _accuracy_script()
    curves = [c.run() for c in acc.shared_curves() + acc.cited_curves()
              if c.gpus <= 8 and c.gpus_per_thread is not None]
    one_thread = [c for c in curves if c.gpus_per_thread > 1]
    assert len(one_thread) >= 9
    small, mid = acc.REGIONS_8GPU[0], acc.REGIONS_8GPU[1]
    for c in curves:
        if c.gpus_per_thread == 1:  # one process per GPU: its one launch is hidden
            assert np.array_equal(c.harness, c.model), c.key
            continue
        for _, lo, hi, _bound, kind in (small, mid):
            plain, adj = c.worst(lo, hi, kind), c.worst(lo, hi, kind, c.harness)
            if plain is not None and (c.key, lo) not in (("h200-8", mid[1]),
                                                         ("h200-8-nccl226", mid[1])):
                assert adj <= plain + 1e-12, (c.key, plain, adj)
        adj_small = c.worst(small[1], small[2], "factor", c.harness)
        assert adj_small is None or adj_small < 2.0, (c.key, adj_small)  # all within 2x
    by_key = {c.key: c for c in curves}
    # Azure's H200 (NCCL 2.20.5, whose ring LL runs at 87.7 GB/s): 1-128 MiB 9% plain, 13%
    # with the floor: its 1 MiB point (34.6 us measured) lies under 8 launches x 5 us, so the
    # floor takes the model's 31.8 us (+9%) to 40 us (-13%)
    h200 = by_key["h200-8"]
    assert 0.08 < h200.worst(mid[1], mid[2], "rel") < 0.10
    assert 0.13 < h200.worst(mid[1], mid[2], "rel", h200.harness) < 0.14
    # the same system on NCCL 2.26.2 (a newer driver and CUDA) does it again: its 1 MiB point,
    # 57.15 GB/s, is 2 x 7/8 x 1 MiB / 57.15 GB/s = 32.1 us, under the 40 us of 8 launches;
    # 1-128 MiB 7.5% plain, 19.7% with the floor (the 1 MiB point, ring/LL)
    h226 = by_key["h200-8-nccl226"]
    assert h226.measured[h226.sizes.index(MIB)] == 57.15
    assert 2 * 7 / 8 * MIB / 57.15e9 < 8 * acc.launch_cost()
    assert 0.07 < h226.worst(mid[1], mid[2], "rel") < 0.08
    # with the floor the 1 MiB point is 40 us, 2 x 7/8 x 1 MiB / 40 us = 45.88 GB/s: 19.7%
    # under the measured, the region's worst
    floor = 2 * 7 / 8 * MIB / (8 * acc.launch_cost()) / 1e9
    assert h226.harness[h226.sizes.index(MIB)] == pytest.approx(floor, rel=1e-12)
    assert h226.worst(mid[1], mid[2], "rel", h226.harness) == pytest.approx(
        1 - floor / 57.15, rel=1e-12)
    # Azure's H100 (NVLS) and Together's H100 (ring, NVLS): 1-128 MiB 32% / 39% / 37% -> 12%
    # / 17% / 10%, the 1 MiB point on the launch floor; A100's mid-range gap stays (53%)
    for key, hi in (("h100-8", 0.13), ("h100-8-ring", 0.18), ("h100-8-nvls", 0.11)):
        assert by_key[key].worst(mid[1], mid[2], "rel", by_key[key].harness) < hi, key
    assert by_key["a100-8-mpi"].worst(small[1], small[2], "factor") < 1.75


def test_cited_runs_name_their_launch():
    # gpus_per_thread follows what the source says: '-g N' in the system text, MPI ranks 1,
    # Azure's guide the host's GPUs (its NCCLBandwidth.py: all_reduce_perf -g <GPUs>)
    seen = {}
    for r in _rows(PUBLISHED):
        seen.setdefault(r["case"], r)
    for case, r in seen.items():
        g, system = r["gpus_per_thread"], r["system"]
        if f"(-g {r['gpus']})" in system:
            assert g == r["gpus"], case
        elif "MPI ranks" in system:
            assert g == "1", case
        elif "Azure/AI-benchmarking-guide" in r["source"]:
            assert g == r["gpus"], case
        else:
            assert g == "", case


# ------------------------------------------------------------------ held out: EFA and TCPXO


def test_efa_and_tcpxo_clouds_known_gap():
    # Held out (h254): 2-32 p5.48xlarge (EFA, 400 Gb/s a GPU, AWS's tuner plugin choosing the
    # algorithm) and 2 GCP A3 Mega (GPUDirect-TCPXO, 200 Gb/s a GPU), nothing fitted. At 8 GiB
    # the model is within 3-15% of every run; below 1-4 GiB it is above, up to 2.4x on
    # TCPXO (a ~1 ms fixed cost from 1 to 8 GiB that the model's InfiniBand alpha lacks) and
    # 1.5-2.0x on 4-32 EFA nodes at 32 MiB-1 GiB, where the tuner's flat spans (4 and 8
    # nodes: 272-280 GB/s from 512 MiB to 1-2 GiB) are not NCCL's choice. Not claimed met.
    # These ratios are NCCL's auto; the accuracy table costs the p5 rows with the plugin's
    # published choice instead (h290: tests/netmodel/test_collective_tuner_h290.py).
    for case, big in (("h100-p5-4x8-efa", 0.05),
                      ("h100-p5-8x8-efa", 0.05), ("h100-p5-16x8-efa", 0.05),
                      ("h100-p5-32x8-efa", 0.16)):
        sizes, ratio = _ratio_cited(case)
        assert sizes[-1] == 8 * 2 ** 30 and np.all(ratio[sizes >= 2 ** 30] > 1.0), (case, ratio)
        assert abs(ratio[-1] - 1) < big, (case, ratio)
    # 2 nodes: the model's NVLSTree at NCCL's perChMaxNVLSTreeBws cap (8 x 57.7 GB/s busbw,
    # h268) is 1-5% below from 1 to 8 GiB (+6-10% without it)
    sizes, ratio = _ratio_cited("h100-p5-2x8-efa")
    big = sizes >= 2 ** 30
    assert sizes[-1] == 8 * 2 ** 30 and np.all((ratio[big] > 0.94) & (ratio[big] < 1.0)), ratio
    # A3 Mega (NCCL_ALGO=Ring,Tree): the model's tree, at NCCL's 2-node cap (8 x 41.4 GB/s),
    # is 2-9% below from 1 to 8 GiB (1.57x at 64 MiB, where TCPXO's fixed cost weighs)
    sizes, ratio = _ratio_cited("h100-a3mega-2x8")
    assert 1.5 < ratio[sizes == 64 * MIB][0] < 1.65, ratio
    assert np.all((ratio[sizes >= 2 ** 30] > 0.9) & (ratio[sizes >= 2 ** 30] < 1.0)), ratio
    sizes, ratio = _ratio_cited("h100-p5-32x8-efa")
    assert 1.9 < ratio[sizes == 512 * MIB][0] < 2.05, ratio  # NVLSTree 310 against 156.83


def test_b200_cluster_scaling_held_out():
    # Held out (h254): Together's slinky B200 cluster, 8 x 400G NDR rails a node, 32 GiB, 2 to
    # 64 nodes. All-reduce with NCCL's defaults (NVLS on, CollNet off: NVLSTree 719.70 GB/s on
    # 2 nodes, the ring's 388-390 from 4) and ring all-gather (371-383 GB/s) and reduce-scatter
    # (4 nodes, NCCL 2.30.7: 383.7): the model is within 5% at every node count, below the
    # measurement from 4 nodes (its ring's 8 x 47 GB/s against NCCL's ~48.7 a rail).
    for n in (2, 4, 8, 16, 32, 64):
        _, ratio = _ratio_cited(f"b200-{n}x8-nvlstree")
        assert 0.95 < ratio[0] < 1.0, (n, ratio)
    ops = [r for r in _rows(Path(__file__).parent / "data" / "nccl_ops_published.csv")
           if r["case"].startswith("slinky-") and int(r["gpus"]) > 8]
    assert len(ops) == 7
    for r in ops:
        model = FabricCostModel(build(r["fabric"]), validated=True, algorithms="nccl")
        res = model.cost(r["op"], float(r["bytes"]), int(r["gpus"]))
        assert res.algorithm == "ring", r["case"]
        assert abs(res.busbw / (float(r["busbw_GBps"]) * 1e9) - 1) < 0.05, r["case"]


#: NCCL's per-channel tree busbw cap for Blackwell on 1 / 2 / 3+ nodes (GB/s): NVIDIA/nccl
#: v2.28.7-1 src/graph/tuning.cc, perChMaxTreeBws (tuning: busBw = min(busBw x .92,
#: nChannels x perChMaxTreeBw)); the model applies it (collective_generations.toml).
NCCL_TREE_PER_CHANNEL_BLACKWELL = (70.0, 42.8, 24.0)


def test_second_b200_cluster_held_out():
    # Held out (h254): Together's use3a-ss B200 cluster (8 x 400G NDR a node, SHARP, NCCL
    # 2.29.7), 16 GiB, 2 to 46 nodes. NCCL's choice with CollNet (NVLS off) is the model's
    # CollNetChain to 3% (on 2 nodes the model took its uncapped tree, 701 GB/s against 533:
    # +32%, before NCCL's tree cap; NCCL's tree does not reach it: 335.2 forced). The cluster's own ring falls
    # with scale (344.7 -> 291.4 GB/s) where slinky's holds 388-390 on the same fabric model:
    # +9% -> +24%, and so do its NVLSTree (+26-36% from 4 nodes) and NCCL's choice with NVLS.
    nodes = (2, 4, 8, 16, 32, 46)
    col = {k: np.array([_ratio_cited(f"b200-dgxc-{n}x8-{k}")[1][0] for n in nodes])
           for k in ("ring", "nvls", "nvlstree", "collnet", "tree")}
    assert np.all(np.abs(col["collnet"] - 1) < 0.03), col["collnet"]
    assert np.all((col["ring"] > 1.08) & (col["ring"] < 1.26)), col["ring"]
    assert np.all(np.diff(col["ring"][[0, 1, 2, 3, 5]]) > 0), col["ring"]  # grows with nodes
    assert abs(col["nvlstree"][0] - 1) < 0.03 and np.all(col["nvlstree"][1:] > 1.25)
    assert abs(col["nvls"][0] - 1) < 0.03
    # forced tree: the model was 1.9-2.1x on both clusters; NCCL's own cap, 8 channels (one
    # per NIC) x perChMaxTreeBws, is within 3% of every measurement, and the model's tree,
    # which now applies it with NCCL's algbw = busbw / 2, within 5%
    assert np.all((col["tree"] > 0.95) & (col["tree"] < 1.0)), col["tree"]
    per_ch = NCCL_TREE_PER_CHANNEL_BLACKWELL
    for case in [f"b200-dgxc-{n}x8-tree" for n in nodes] + ["b200-64x8-tree"]:
        _, p, _, _, measured = _cited(case)
        cap = 8 * (per_ch[1] if p == 16 else per_ch[2]) * 1e9
        assert abs(cap / measured[0] - 1) < 0.03, (case, measured)
    # all-gather: NCCL's choice with CollNet (376-385 GB/s; NCCL's CollNetDirect all-gather is
    # not modelled) is the model's ring to 6%; the cluster's forced ring is 9-23% below it
    ops = {r["case"]: r for r in _rows(Path(__file__).parent / "data" / "nccl_ops_published.csv")
           if r["case"].startswith("use3a-")}
    assert len(ops) == 12
    for case, r in ops.items():
        model = FabricCostModel(build(r["fabric"]), validated=True, algorithms="nccl")
        ratio = model.cost(r["op"], float(r["bytes"]), int(r["gpus"])).busbw / (
            float(r["busbw_GBps"]) * 1e9)
        lo, hi = (0.93, 1.01) if case.endswith("collnet") else (1.08, 1.25)
        assert lo < ratio < hi, (case, ratio)


def test_hopper_forced_tree_below_ring_by_nccls_cap():
    # Held out (h254): 5 x 8 H100 with 4 x 400G RoCE a node (NVIDIA/nccl issue 1368): ring 190
    # GB/s (the model's 181.9: -4%), tree 150. NCCL's tuner caps the tree at 4 channels (one
    # per NIC) x perChMaxTreeBws Hopper 3+ nodes 36.0 = 144 GB/s, within 4% of the
    # measurement. Built with its 4 NICs (nics_per_server=4, h406) the model caps it so too:
    # 133.0 (-11%); built as 8 rails of 200 Gb/s before, its cap fell at 8 x 36.0 (+14%).
    _, ring = _ratio_cited("h100-5x8-roce4-ring")
    _, tree = _ratio_cited("h100-5x8-roce4-tree")
    assert 0.94 < ring[0] < 0.98 and 0.86 < tree[0] < 0.91, (ring, tree)
    assert abs(4 * 36.0 / 150 - 1) < 0.05


def test_a100_two_nodes_tree_cap_held_out():
    # Held out (h254): Azure NDm A100 v4 (NCCL 2.17.1, 8 x 200G HDR a node), in-place busbw.
    # One node at 1 GiB: all-reduce +3%. Two nodes: the model took its uncapped tree, 241-253
    # GB/s, +31-34% over 183.82 / 188.18; NCCL's tree cap there, 8 channels x perChMaxTreeBws
    # Ampere 2 nodes 23.6 = 188.8 GB/s, meets the measurement to 3% (as its ring, 8 x 23.5):
    # the fourth system (after B200 on two clusters and H100 on RoCE) where the missing cap
    # is the gap.
    _, one = _ratio_cited("a100-ndv4-8")
    assert abs(one[0] - 1) < 0.05, one
    sizes, two = _ratio_cited("a100-ndv4-2x8")
    assert np.all(np.abs(two - 1) < 0.02), two   # capped, the tree loses to the ring (1.31-1.34x before)
    measured = _cited("a100-ndv4-2x8")[4]
    assert np.all(np.abs(8 * 23.6e9 / measured - 1) < 0.03), measured


def test_two_a100_nodes_with_four_nics():
    # Held out (h406): 2 x 8 A100 with 4 x 200G HDR a node (NVIDIA/nccl-tests issue 100), 91
    # GB/s busbw at 1-8 GiB. NCCL lays a channel on each of the 4 NICs: its tree is capped at
    # 4 x perChMaxTreeBws (Ampere, 2 nodes: 23.6) = 94.4 GB/s, its ring at 4 x 23.5, both
    # within 4% of the measurement. Built with its 4 NICs (nics_per_server=4) the model's
    # auto picks its ring, +3%; its tree is held to the 4 channels' cap (nccl-tests' busbw
    # of it: 94.4 / 2 x 2 (n - 1) / n). Built as 8 rails of 100 Gb/s a GPU (nic_bandwidth
    # 12.5e9, the only way before), the tree took 8 channels and auto picked it at +92%.
    fabric, p, _, sizes, measured = _cited("a100-2x8-nic4")
    assert "nics_per_server=4" in fabric
    model = FabricCostModel(build(fabric), validated=True, algorithms="nccl")
    auto = model.sweep("all-reduce", sizes, p)
    assert list(auto.algorithm) == ["ring"] and abs(auto.busbw[0] / measured[0] - 1) < 0.05
    tree = _busbw(model, sizes, p, "tree")[0]
    assert tree == pytest.approx(4 * 23.6e9 / 2 * 2 * (p - 1) / p, rel=0.01)
    eight = FabricCostModel(build(fabric.replace("nic_bandwidth=25e9,nics_per_server=4",
                                                 "nic_bandwidth=12.5e9")),
                            validated=True, algorithms="nccl")
    assert _busbw(eight, sizes, p)[0] / measured[0] > 1.8   # the 8-rail stand-in's +92%
