"""Groups that are copies of one another (netmodel.collectives.group_copies) costed once
under the routing policies of groups together (netmodel.collectives.concurrent_policies).

Hand derivation of the near-copy (lite-direct: 4 Lites a group, a 37.5 GB/s cable to each
partner, a 112.5 GB/s NVSwitch port each, scale-up efficiency 0.824; the derivation of
the 8.70 ms of two-shot all-reduce under ``"balanced"`` is in
test_route_policies_balanced.py): with one group's 6 cables at half rate (C = 18.75 GB/s)
each all-pairs step sends ``S / (S + 3C) = 2/3`` of each pair's ``n / 4`` over the switch:
the port carries ``3 x 2/3 x n/4 = n/2``, ``(n/2) / (0.824 x 112.5 GB/s)``, each cable
``n/12``, ``(n/12) / (0.824 x 18.75 GB/s)``, the same, against ``(n/8) / (0.824 x 37.5
GB/s)`` on the whole cables; two such steps: ``2 n / 0.824 x (1/225 - 1/300) / GB/s`` =
2.90 ms more at 1 GiB, 8.70 -> 11.60 ms (the latencies unchanged: the cables' latency is).
"""

import numpy as np
import pytest

import netmodel.collectives.concurrent_policies as policies_module
from netmodel.api import build_fabric
from netmodel.collectives.concurrent import concurrent_cost
from netmodel.collectives.group_copies import link_map
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.routing import Router

GIB = 2 ** 30
EFF = 0.824


def _groups(size=4, gpus=128):
    return [tuple(f"gpu{i}" for i in range(k, k + size)) for k in range(0, gpus, size)]


@pytest.fixture(scope="module")
def lite_direct():
    return build_fabric("lite-direct")


def _slow_group(graph, members, factor=0.5):
    """``graph`` with the cables among ``members`` at ``factor`` of their rate (a copy)."""
    g = graph.copy()
    for i, u in enumerate(members):
        for v in members[i + 1:]:
            g.edges[u, v]["bandwidth"] *= factor
    return g


def test_lite_direct_groups_are_copies(lite_direct):
    """Each of the 32 contiguous groups of 4 is group 0 relabelled: the fabric's links onto
    its links one to one, group 0's cables onto the group's, member for member."""
    r = Router(lite_direct)
    groups = _groups()
    assert len(groups) == 32
    for k, b in enumerate(groups[1:], 1):
        image = link_map(r, groups[0], b)
        assert image is not None
        assert np.array_equal(np.sort(image), np.arange(r.n_links))
        assert r.link_name(image[r.link_id("gpu0", "gpu1")]) == (f"gpu{4 * k}",
                                                                f"gpu{4 * k + 1}")
        assert r.link_name(image[r.link_id("gpu3", "gpu2")]) == (f"gpu{4 * k + 3}",
                                                                f"gpu{4 * k + 2}")
    # members out of order, or across two Lite groups: not shown copies
    assert link_map(r, groups[0], ("gpu0", "gpu1", "gpu2", "gpu4")) is None
    assert link_map(r, groups[0], ("gpu2", "gpu3", "gpu4", "gpu5")) is None


def test_near_copies_refused(lite_direct):
    """A group with slower cables, or one cable failed, is no copy of the others; the other
    groups still are."""
    groups = _groups()
    slow = Router(_slow_group(lite_direct, groups[5]))
    assert link_map(slow, groups[0], groups[5]) is None
    assert link_map(slow, groups[5], groups[0]) is None
    assert link_map(slow, groups[0], groups[6]) is not None
    failed = lite_direct.copy()
    failed.remove_edge("gpu20", "gpu21")
    cut = Router(failed)
    assert link_map(cut, groups[0], groups[5]) is None
    # a copy is the whole fabric relabelled: group 0 shares its server with the cut group
    # (groups 0-7 on nvs0), group 31 does not, group 6 does
    assert link_map(cut, groups[0], groups[31]) is None
    assert link_map(cut, groups[0], groups[6]) is not None
    assert link_map(cut, groups[8], groups[31]) is not None


def _spy(monkeypatch):
    """The groups whose lines and links under the policies were costed, per call."""
    costed = {"variants": set(), "links": set()}
    variants, links = policies_module._variants, policies_module._links

    def spy_variants(model, op, name, members, policies):
        costed["variants"].add(members)
        return variants(model, op, name, members, policies)

    def spy_links(model, op, name, members, policies):
        costed["links"].add(members)
        return links(model, op, name, members, policies)

    monkeypatch.setattr(policies_module, "_variants", spy_variants)
    monkeypatch.setattr(policies_module, "_links", spy_links)
    return costed


def test_copies_costed_once_as_each_alone(lite_direct, monkeypatch):
    """32 groups of 4 together: the policies' lines and links costed for group 0 only, and
    every result as with every group costed on its own (to the bit)."""
    costed = _spy(monkeypatch)
    sizes = [2 ** 20, GIB]
    r = concurrent_cost(FabricCostModel(lite_direct, placement="contiguous"), 4,
                        "all-reduce", sizes)
    assert costed["variants"] == costed["links"] == {tuple(_groups()[0])}
    assert round(r.makespan[1] * 1e3, 2) == 8.70
    monkeypatch.setattr(policies_module, "_copies", lambda *a, **k: {})
    costed["variants"].clear()
    costed["links"].clear()
    each = concurrent_cost(FabricCostModel(lite_direct, placement="contiguous"), 4,
                           "all-reduce", sizes)
    assert len(costed["links"]) == 32
    for field in ("time", "alone", "algorithms", "protocols", "makespan"):
        assert np.array_equal(getattr(r, field), getattr(each, field)), field
    assert r.hotspots == each.hotspots


def test_near_copy_costed_on_its_own(lite_direct, monkeypatch):
    """Group 5 with its cables at half rate: costed on its own, 11.60 ms by hand (module
    docstring) where the other 31 take 8.70 ms; each as alone, and as with every group
    costed on its own. Copies are of the whole fabric relabelled, so the others fall in
    three kinds, one costing each: sharing group 5's server (0-4, 6, 7), its rail's leaf
    (13, 21, 29: the same Lite of another server), or neither (8 and the rest)."""
    costed = _spy(monkeypatch)
    groups = _groups()
    graph = _slow_group(lite_direct, groups[5])
    r = concurrent_cost(FabricCostModel(graph, placement="contiguous"), 4, "all-reduce", GIB)
    assert costed["variants"] == {groups[0], groups[5], groups[8], groups[13]}
    n = GIB
    more = 2 * ((n / 2) / (EFF * 112.5e9) - (n / 8) / (EFF * 37.5e9))
    assert (n / 12) / (EFF * 18.75e9) == pytest.approx((n / 2) / (EFF * 112.5e9), rel=1e-12)
    t = r.time[:, 0]
    assert round(t[0] * 1e3, 2) == 8.70 and round(more * 1e3, 2) == 2.90
    assert t[5] == pytest.approx(t[0] + more, rel=1e-9)
    assert round(t[5] * 1e3, 2) == 11.60
    assert (np.delete(t, 5) == t[0]).all()
    m = FabricCostModel(graph, placement="contiguous")
    for g in (0, 5, 13, 31):
        alone = m.cost("all-reduce", n, groups[g])
        assert (alone.algorithm, alone.routing) == ("two-shot", "balanced")
        assert alone.time == pytest.approx(t[5] if g == 5 else t[0], rel=1e-12)
        assert t[g] == pytest.approx(alone.time, rel=1e-12)
    monkeypatch.setattr(policies_module, "_copies", lambda *a, **k: {})
    each = concurrent_cost(FabricCostModel(graph, placement="contiguous"), 4, "all-reduce", GIB)
    assert np.array_equal(r.time, each.time) and np.array_equal(r.alone, each.alone)


def test_joint_splits_of_copies_reused_on_a_torus(monkeypatch):
    """A 4 x 4 torus (no switches: each group's transfers split jointly over its paths, a
    linear programme per group and step), its 4 rows together: rows are copies of row 0
    (the torus shifted), so their joint splits are row 0's mapped, and every result is
    the one with every row split on its own, to the bit."""
    import netmodel.collectives.concurrent_loads as loads_module
    from topologies import build

    torus = build("torus:dims=4x4,gpu=Lite")
    rows = [tuple(f"gpu{4 * r + c}" for c in range(4)) for r in range(4)]
    found = []
    copy_loads = loads_module._copy_loads

    def spy(*args):
        out = copy_loads(*args)
        found.append(out is not None)
        return out

    monkeypatch.setattr(loads_module, "_copy_loads", spy)
    for op in ("all-reduce", "all-to-all"):
        found.clear()
        r = concurrent_cost(FabricCostModel(torus), rows, op, [1e6, GIB])
        assert any(found)
        monkeypatch.setattr(loads_module, "COPY_TRIES", 0)
        each = concurrent_cost(FabricCostModel(torus), rows, op, [1e6, GIB])
        monkeypatch.setattr(loads_module, "COPY_TRIES", 4)
        assert np.array_equal(r.time, each.time) and np.array_equal(r.alone, each.alone)
        assert (r.algorithms == each.algorithms).all()
        assert (r.time == r.time[0]).all()



def test_a_copys_split_is_its_originals_not_its_own_solve(monkeypatch):
    """Scattered groups of 4 on a 4 x 4 torus, all-gather: group 3 is a copy of group 0
    and takes its joint split mapped, so its time alone is group 0's to the bit, and its
    lone collective's (its own programme solved) within the solver's rounding, a few ulp;
    with every group split on its own, each time alone is its lone collective's to the
    bit."""
    import netmodel.collectives.concurrent_loads as loads_module
    from topologies import build

    torus = build("torus:dims=4x4")
    groups = [("gpu2", "gpu8", "gpu0", "gpu7"), ("gpu10", "gpu5", "gpu1", "gpu15"),
              ("gpu3", "gpu13", "gpu9", "gpu14"), ("gpu12", "gpu6", "gpu11", "gpu4")]
    sizes = [1e3, 1e5, 1e6, 1e8, GIB]
    assert link_map(Router(torus), groups[0], groups[3]) is not None
    lone = np.array([[FabricCostModel(torus).cost("all-gather", n, list(g)).time
                      for n in sizes] for g in groups])
    r = concurrent_cost(FabricCostModel(torus), groups, "all-gather", sizes)
    assert np.array_equal(r.alone[3], r.alone[0])
    assert (np.abs(r.alone - lone) <= 4 * np.spacing(lone)).all()
    monkeypatch.setattr(loads_module, "COPY_TRIES", 0)
    each = concurrent_cost(FabricCostModel(torus), groups, "all-gather", sizes)
    assert np.array_equal(each.alone, lone)

def test_copies_not_looked_for_past_the_links_a_member(lite_direct, monkeypatch):
    """Where a relabelling would read more links a member than LINKS_PER_MEMBER, copies
    are not looked for: every group costed on its own, the same results."""
    import netmodel.collectives.group_copies as copies_module

    assert copies_module.worth_looking(Router(lite_direct), 4)   # 960 links: 240 a member
    sizes = [2 ** 20, GIB]
    r = concurrent_cost(FabricCostModel(lite_direct, placement="contiguous"), 4,
                        "all-reduce", sizes)
    monkeypatch.setattr(copies_module, "LINKS_PER_MEMBER", 960 // 4 - 1)
    assert not copies_module.worth_looking(Router(lite_direct), 4)
    costed = _spy(monkeypatch)
    each = concurrent_cost(FabricCostModel(lite_direct, placement="contiguous"), 4,
                           "all-reduce", sizes)
    assert len(costed["links"]) == 32
    assert np.array_equal(r.time, each.time) and np.array_equal(r.alone, each.alone)
