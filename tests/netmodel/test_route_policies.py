"""Routing policies where a GPU pair has both a cable and a wider switch path
(netmodel.collectives.route_policies): each algorithm is costed hop-shortest, widest and
split by capacity, and runs under the fastest, so no collective gets slower.

Hand derivations (lite-direct: 4 Lites a group, 37.5 GB/s co-packaged-optics cable to each
partner, 112.5 GB/s NVSwitch port each, scale-up efficiency 0.824 of the default
calibration): a ring all-reduce of ``n`` bytes on 4 GPUs is 2 x 3 steps of ``n / 4`` bytes
a GPU to its ring neighbour, one transfer a cable and a switch port. Over the cable alone
a step's transfer takes ``(n / 4) / (0.824 x 37.5 GB/s)``; split 37.5 : 112.5 = 1 : 3 over
cable and switch, the cable carries ``n / 16`` at 37.5 GB/s and the port ``3 n / 16`` at
112.5 GB/s, both ``(n / 4) / (0.824 x 150 GB/s)``: a quarter of the time. Widest (all over
the port) would take ``(n / 4) / (0.824 x 112.5 GB/s)``, between the two.
"""

import random

import pytest

import netmodel.collectives.model as model_module
from netmodel.api import build_fabric
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.route_policies import route_policies
from netmodel.collectives.route_sharing import router_for
from topologies.registry import build

GIB = 2 ** 30
EFF = 0.824   # default calibration's scale-up efficiency (Lite)


@pytest.fixture(scope="module")
def lite_direct():
    return build_fabric("lite-direct")


def _shortest_model(graph, monkeypatch, **kw):
    """A model that costs hop-shortest routes only (the engine before the policies)."""
    monkeypatch.setattr(model_module, "route_policies", lambda router: ())
    return FabricCostModel(graph, **kw)


def test_lite_ring_split_one_to_three_by_hand(lite_direct, monkeypatch):
    m = FabricCostModel(lite_direct, algorithm="ring")
    assert m.calibration.scaleup_efficiency == EFF
    split = m.cost("all-reduce", GIB, 4)
    assert split.routing == "split"
    # widest: every step's transfer over the 112.5 GB/s port
    widest = [c for c in m.compiled_variants("all-reduce", "ring", m.group(4))
              if c.routing == "widest"]
    assert len(widest) == 1
    bneck = widest[0].steps[0]
    assert bneck.bottleneck[1].startswith("nvs")
    assert bneck.beta == pytest.approx(0.25 / (EFF * 112.5e9), rel=1e-12)
    short = _shortest_model(lite_direct, monkeypatch, algorithm="ring").cost(
        "all-reduce", GIB, 4)
    assert short.routing == "shortest"
    cable = GIB / 4 / (EFF * 37.5e9)
    both = GIB / 4 / (EFF * 150e9)
    for s_split, s_short in zip(split.steps, short.steps, strict=True):
        assert s_short.serialization == pytest.approx(cable, rel=1e-12)
        assert s_split.serialization == pytest.approx(both, rel=1e-12)
        # the switch path's latency (two cables and the NVSwitch) is the longer
        assert (s_short.latency, s_split.latency) == (3.415e-6, 3.57e-6)
    # 8.4 us start-up + 6 x (step latency + transfer): 52.15 ms -> 13.06 ms
    assert short.time == pytest.approx(8.4e-6 + 6 * (3.415e-6 + cable), rel=1e-12)
    assert split.time == pytest.approx(8.4e-6 + 6 * (3.57e-6 + both), rel=1e-12)
    assert round(short.time * 1e3, 2) == 52.15 and round(split.time * 1e3, 2) == 13.06


def test_lite_auto_all_reduce_leaves_in_network(lite_direct, monkeypatch):
    """auto took in-network (17.14 ms) beside the cable-bound ring; two-shot over cable and
    switch now leads (its all-pairs steps balanced: tests/netmodel/
    test_route_policies_together.py)."""
    after = FabricCostModel(lite_direct).cost("all-reduce", GIB, 4)
    before = _shortest_model(lite_direct, monkeypatch).cost("all-reduce", GIB, 4)
    assert (before.algorithm, round(before.time * 1e3, 2)) == ("in-network", 17.14)
    assert after.routing == "balanced" and after.time < before.time


@pytest.mark.parametrize("group, ms", [(4, 0.9566), (8, 0.6418)])
def test_lite_all_to_all_keeps_its_paths(lite_direct, monkeypatch, group, ms):
    """All-to-all of 1e8 bytes in one group (4 Lites) and over two (8): NCCL's send/recv
    gives a peer one path (src/graph/paths.cc), and the concurrent costing of groups routes
    them so, so all-to-all and send-recv keep the hop-shortest routes: as before."""
    n = 1e8
    after = FabricCostModel(lite_direct).cost("all-to-all", n, group)
    before = _shortest_model(lite_direct, monkeypatch).cost("all-to-all", n, group)
    assert after.routing == "shortest" and after.time == before.time
    assert round(after.time * 1e3, 4) == ms


@pytest.mark.parametrize("spec", ["single-switch:n=4", "rail-optimized:domains=2",
                                  "ring:n=4", "torus:dims=2x3", "full-mesh:n=4",
                                  "nvl72", "lite-groups:base=[single-switch:n=2],split=gateway",
                                  "lite-groups:base=[ring:n=3]"])
def test_no_policy_where_no_cabled_pair_has_a_switch_path(spec):
    """Fabrics without a GPU pair joined by a cable and by scale-up switches are costed as
    before: one compiled variant per algorithm."""
    g = build(spec)
    assert route_policies(router_for(g)) == ()
    m = FabricCostModel(g)
    group = m.group(min(4, m.gpus))
    assert len(m.compiled_variants("all-reduce", "ring", group)) == 1
    assert "routing" not in m.cost("all-reduce", 1e6, group).as_dict()


def test_never_slower_on_random_lite_groups(monkeypatch):
    """The chosen time is at most the hop-shortest one on random small lite-groups fabrics
    (ops, sizes, groups and mesh bandwidths at random)."""
    rng = random.Random(600)
    ops = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "broadcast",
           "reduce", "send-recv")
    cases = []
    for _ in range(12):
        base = rng.choice(["single-switch:n=1", "single-switch:n=2", "single-switch:n=3"])
        lites = rng.choice([2, 3, 4])
        mesh = rng.choice([20, 75, 112.5, 300])
        g = build(f"lite-groups:base=[{base}],lites={lites},mesh_bandwidth={mesh}GB/s")
        gpus = [x for x, d in g.nodes(data=True) if d["kind"] == "gpu"]
        for _ in range(3):
            group = rng.sample(gpus, rng.randint(2, len(gpus)))
            cases.append((g, rng.choice(ops), 10 ** rng.uniform(3, 9), group))
    after = [FabricCostModel(g).cost(op, n, grp).time for g, op, n, grp in cases]
    monkeypatch.setattr(model_module, "route_policies", lambda router: ())
    before = [FabricCostModel(g).cost(op, n, grp).time for g, op, n, grp in cases]
    assert all(a <= b for a, b in zip(after, before, strict=True))
    assert any(a < b for a, b in zip(after, before, strict=True))


@pytest.mark.parametrize("failed", [("gpu0", "gpu1"), ("gpu1", "gpu3"), ("gpu0", "nvs0")])
@pytest.mark.parametrize("op", ["all-reduce", "all-gather", "all-to-all"])
def test_failures_never_speed_a_lite_group(lite_direct, failed, op):
    """A failed mesh cable or switch port never speeds a collective up: the healthy side
    takes its fastest policy, the degraded side loses the pair's cable or port (then the
    pair has no policy: its one path)."""
    from netmodel.collectives.degraded import degraded_cost

    for n in (1e5, 1e8):
        for group in (4, 8):
            r = degraded_cost(lite_direct, op, n, group, links=[failed])
            assert r.degraded.time >= r.healthy.time
