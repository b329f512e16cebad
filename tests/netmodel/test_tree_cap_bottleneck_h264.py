"""Where NCCL's per-channel tree cap binds, the cost names it, not a link, as the bottleneck
(h264).

2 x 8 B200 on 8 rails of 400 Gb/s (50 GB/s a direction), a forced tree of 16 GPUs, 16 GiB:
reduce and broadcast run at once (one step); each sends ``n / 16`` a direction on a GPU's
rail link (the two mirrored trees split the data), so the step ``n / 8``, at 50 GB/s x the
scale-out efficiency 0.94 (collective_defaults.toml): ``1 / (8 x 47e9)`` = 2.6596e-12 s/B of
``n``. NCCL's cap on 2 nodes is 8 channels x perChMaxTreeBws[Blackwell][2 nodes] 42.8 GB/s =
342.4 GB/s busbw, algbw half of it: ``2 / (8 x 42.8e9)`` = 5.8411e-12 s/B. The cap binds, by
752 / 342.4 = 2.1963x.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from netmodel.cli.main import cli
from netmodel.collectives.model import FabricCostModel
from topologies import rail_optimized

AR = "all-reduce"
N = 2.0 ** 34
FABRIC = "rail-optimized:domains=2,gpu=B200-HGX"


def test_a_capped_tree_names_the_cap_not_a_link():
    m = FabricCostModel(rail_optimized(domains=2, gpu="B200-HGX"), algorithms="nccl")
    r = m.cost(AR, N, 16, algorithm="tree")
    assert r.protocol == "Simple"
    cap = r.tree_cap
    assert (cap.channels, cap.channel_bandwidth, cap.nodes, cap.protocol_factor) == \
        (8, 42.8e9, 2, 1.0)
    assert cap.slowdown == pytest.approx(752 / 342.4, rel=1e-12)   # 2.1963
    assert cap.busbw == pytest.approx(342.4e9, rel=1e-15)
    assert r.bottleneck == ()                          # no link bounds the costliest steps
    assert len(r.steps) == 1
    for s in r.steps:
        assert s.tree_cap == r.tree_cap and s.bottleneck == () and s.bottleneck_bandwidth == 0
        assert s.serialization == pytest.approx(2 * N / (8 * 42.8e9), rel=1e-12)
    d = r.as_dict()
    assert d["bottleneck"] == [] and d["tree_cap"]["channels"] == 8
    assert d["steps"][0]["tree_cap"]["channel_bandwidth"] == 42.8e9


def test_where_the_links_bind_a_tree_names_its_link():
    # 100 Gb/s rails (12.5 GB/s): the links, 1 / (8 x 12.5e9 x 0.94) = 1.064e-11 s/B
    # (both phases at once), are slower than the cap's 5.84e-12: the rail link is the
    # bottleneck
    m = FabricCostModel(rail_optimized(domains=2, gpu="B200-HGX", nic_bandwidth=12.5e9),
                        algorithms="nccl")
    r = m.cost(AR, N, 16, algorithm="tree")
    assert r.tree_cap is None and r.bottleneck == (("gpu0", "leaf0"),)
    assert all(s.tree_cap is None and s.bottleneck_bandwidth == 12.5e9 for s in r.steps)
    assert r.steps[0].serialization == pytest.approx(N / (8 * 12.5e9 * 0.94), rel=1e-12)
    ring = FabricCostModel(rail_optimized(domains=2, gpu="B200-HGX"),
                           algorithms="nccl").cost(AR, N, 16, algorithm="ring")
    assert ring.tree_cap is None and ring.bottleneck


def test_the_cli_names_the_cap_with_its_figure():
    out = CliRunner().invoke(cli, ["collective", AR, "--fabric", FABRIC, "--group", "16",
                                   "--size", "16GiB", "--algorithm", "tree"])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    heads = [x for x in lines if x.startswith("bottleneck:")]
    assert heads == ["bottleneck: NCCL's per-channel tree cap, 8 channels x 42.8 GB/s = 342.4 "
                     "GB/s busbw on 2 nodes (perChMaxTreeBws; algbw at most half, 171.2 GB/s); "
                     "the links alone: 2.2x as fast"]
    steps = [x for x in lines if x.lstrip().startswith("reduce and broadcast (")]
    assert len(steps) == 1 and steps[0].endswith("tree cap 8 x 42.8 GB/s")
    js = CliRunner().invoke(cli, ["collective", AR, "--fabric", FABRIC, "--group", "16",
                                  "--size", "16GiB", "--algorithm", "tree", "--json"])
    d = json.loads(js.output)
    assert d["bottleneck"] == [] and d["tree_cap"]["nodes"] == 2
    assert d["tree_cap"]["slowdown"] == pytest.approx(752 / 342.4, rel=1e-12)


# NCCL's LL128 tree: "busBw = std::min(busBw * (nNodes == 1 ? 7.0/9.0 : 120.0/128.0),
# graphs[a]->nChannels*perChMaxTreeLL128Bw)" after the perChMaxTreeBws cap
# (src/graph/tuning.cc); the model: a channel at min(perChMaxTreeBws x 0.92, LL128's table).
@pytest.mark.parametrize(("domains", "gpu", "old", "new"), [
    (2, "B200-HGX", 42.8e9 * 0.92, 31.67e9),     # 39.38 -> 31.67 GB/s a channel
    (4, "B200-HGX", 24.0e9 * 0.92, 20.0e9),      # 22.08 -> 20.0
    (4, "H100-SXM", 36.0e9 * 0.92, 29.0e9),      # 33.12 -> 29.0
    (2, "H100-SXM", 41.4e9 * 0.92, 36.7e9),      # 38.09 -> 36.7
    (2, "A100-SXM-80GB", 23.6e9 * 0.92, 20.0e9),  # 21.71 -> 20.0
])
def test_an_ll128_tree_meets_its_own_channel_cap(domains, gpu, old, new):
    m = FabricCostModel(rail_optimized(domains=domains, gpu=gpu), algorithms="nccl")
    group = m.group(8 * domains)
    lines = [b for _, p, _, b, _ in m.candidates(AR, group, "tree") if p == "LL128"]
    assert lines[-1] == pytest.approx(2 / (8 * new), rel=1e-12)       # algbw 8 x new / 2
    assert lines[-1] > 2 / (8 * old) * (1 + 1e-3)                      # slower than before
    # the step breakdown names LL128's table where it binds
    comp = next(c for _, p, _, _, c in m.candidates(AR, group, "tree") if p == "LL128")
    proto = m.calibration.protocol("LL128")
    steps = comp.timings(proto, m.calibration, N)
    assert all(s.tree_cap.table == "perChMaxTreeLL128Bws" and s.tree_cap.protocol_factor == 1
               and s.tree_cap.channel_bandwidth == new and s.bottleneck == () for s in steps)
    # an LL128 cap far above the Simple one times 0.92 leaves the old line, to the last bit
    cal = m.calibration.with_(tree_ll128_channel_bandwidth=(1e18,) * 3)
    free = FabricCostModel(rail_optimized(domains=domains, gpu=gpu), algorithms="nccl",
                           calibration=cal)
    b = [b for _, p, _, b, _ in free.candidates(AR, free.group(8 * domains), "tree")
         if p == "LL128"][-1]
    assert b == pytest.approx(2 / (8 * old), rel=1e-12)
