"""FabricCostModel as compute's protocol; bad input; placement; calibration file checks."""

from __future__ import annotations

import re

import numpy as np
import pytest

from compute.comm import OPERATIONS, CollectiveCostModel, RingAlphaBeta
from compute.errors import UserError
from netmodel.collectives.calibration import DEFAULTS_PATH, Calibration
from netmodel.collectives.calibration_files import default_calibration, load_calibration
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.placement import partition, place
from topologies import fat_tree, rail_optimized, ring, single_switch


@pytest.fixture(scope="module")
def nvswitch():
    return single_switch(8)


def test_implements_compute_protocol(nvswitch):
    m = FabricCostModel(nvswitch)
    assert isinstance(m, CollectiveCostModel)
    sizes = np.array([[1e3, 1e6], [1e8, 1e9]])
    for op in OPERATIONS:
        t = m.collective_time(op, sizes, 8)
        assert t.shape == (2, 2) and np.all(t > 0) and np.all(np.diff(t.ravel()) > 0)
        assert float(m.collective_time(op, 1e6, 1)) == 0.0


def test_array_of_sizes_equals_size_by_size(nvswitch):
    m = FabricCostModel(nvswitch)
    sizes = 2.0 ** np.arange(10, 40)
    t = m.collective_time("all-reduce", sizes, 8)
    assert t == pytest.approx([float(m.collective_time("all-reduce", s, 8)) for s in sizes])


def test_agrees_with_compute_ring_default_on_one_switch():
    # compute's RingAlphaBeta is ring-only over one bandwidth: with an ideal calibration,
    # zero-latency links and the ring algorithm the two models coincide
    g = single_switch(8, latency=0.0, length=0.0)
    m = FabricCostModel(g, algorithm="ring", calibration=Calibration.ideal(2e-6))
    ref = RingAlphaBeta(bandwidth=450e9, step_latency=2e-6, efficiency=1.0)
    sizes = np.array([1e3, 1e6, 1e9])
    for op in ("all-reduce", "reduce-scatter", "all-gather", "broadcast", "reduce"):
        assert m.collective_time(op, sizes, 8) == pytest.approx(
            ref.collective_time(op, sizes, 8)), op


def test_result_fields(nvswitch):
    r = FabricCostModel(nvswitch, algorithm="ring").cost("all-reduce", 2.0 ** 30, 8)
    assert r.algorithm == "ring" and r.protocol == "Simple"
    assert r.busbw == pytest.approx(r.algbw * 7 / 4)
    assert r.time == pytest.approx(r.base_latency + sum(s.time for s in r.steps))
    assert [s.name for s in r.steps] == ["reduce-scatter", "all-gather"]
    assert all(s.repeat == 7 and s.transfers == 8 for s in r.steps)
    assert r.bottleneck and "nvs0" in r.bottleneck[0]  # every GPU link is equally loaded
    d = r.as_dict()
    assert d["group_size"] == 8 and d["steps"][0]["repeat"] == 7


def test_placement_policies():
    g = rail_optimized(domains=4)  # 4 servers of 8, rails 0..7
    assert place(g, 8) == tuple(f"gpu{i}" for i in range(8))
    assert place(g, 4, "rail-aligned") == ("gpu0", "gpu8", "gpu16", "gpu24")
    assert place(g, 4, "spread") == ("gpu0", "gpu8", "gpu16", "gpu24")
    a, b = place(g, 8, "random", seed=1), place(g, 8, "random", seed=1)
    assert a == b and len(set(a)) == 8 and a != place(g, 8, "random", seed=2)
    groups = partition(g, 8, "random", seed=3)
    assert sorted(x for grp in groups for x in grp) == sorted(f"gpu{i}" for i in range(32))
    with pytest.raises(UserError, match="rail"):
        place(fat_tree(4), 4, "rail-aligned")


def test_placement_changes_the_cost():
    # TP-8 inside one NVLink domain versus one GPU per server over 50 GB/s NICs
    m_in = FabricCostModel(rail_optimized(domains=4), placement="contiguous")
    m_out = FabricCostModel(rail_optimized(domains=4), placement="spread")
    assert m_out.collective_time("all-reduce", 2.0 ** 30, 4) > \
        5 * m_in.collective_time("all-reduce", 2.0 ** 30, 4)


@pytest.mark.parametrize("call, match", [
    (lambda m: m.collective_time("all-reduce", 0, 8), "message size"),
    (lambda m: m.collective_time("all-reduce", -5, 8), "message size"),
    (lambda m: m.collective_time("all-reduce", float("nan"), 8), "message size"),
    (lambda m: m.collective_time("all-reduce", [1e3, np.inf], 8), "message size"),
    (lambda m: m.collective_time("allreduce", 1e3, 8), "unknown collective operation"),
    (lambda m: m.collective_time("all-reduce", 1e3, 9), "larger than the fabric"),
    (lambda m: m.collective_time("all-reduce", 1e3, 0), "integer >= 1"),
    (lambda m: m.cost("all-reduce", 1e3, ["gpu0", "gpu0"]), "more than once"),
    (lambda m: m.cost("all-reduce", 1e3, ["gpu0", "nvs0"]), "not a GPU"),
    (lambda m: m.cost("all-reduce", 1e3, ["gpu0", "gpu99"]), "not a node"),
    (lambda m: m.cost("all-reduce", 1e3, 8, algorithm="magic"), "unknown algorithm"),
    (lambda m: m.cost("all-to-all", 1e3, 8, algorithm="ring"), "does not implement"),
    (lambda m: m.cost("all-reduce", 1e3, 8, algorithm="hierarchical"), "two scale-up"),
    (lambda m: m.cost("reduce-scatter", 1e3, 6, algorithm="halving-doubling"), "power-of-two"),
])
def test_bad_input(nvswitch, call, match):
    with pytest.raises(UserError, match=match):
        call(FabricCostModel(nvswitch))


def test_in_network_without_capable_switch():
    m = FabricCostModel(fat_tree(4))
    with pytest.raises(UserError, match="in_network_reduction"):
        m.cost("all-reduce", 1e6, 4, algorithm="in-network")
    with pytest.raises(UserError, match="in_network_reduction"):
        FabricCostModel(fat_tree(4), algorithm="in-network").collective_time("all-reduce", 1e6,
                                                                              4)
    # auto simply skips it
    assert m.cost("all-reduce", 1e6, 4).algorithm != "in-network"


def test_constructor_checks(nvswitch):
    with pytest.raises(UserError, match="placement"):
        FabricCostModel(nvswitch, placement="diagonal")
    with pytest.raises(UserError, match="unknown algorithm"):
        FabricCostModel(nvswitch, algorithm="fastest")
    with pytest.raises(UserError, match="unknown algorithm"):
        FabricCostModel(nvswitch, algorithms=("ring", "bogus"))
    with pytest.raises(UserError, match="ring_order"):
        FabricCostModel(nvswitch, ring_order="zigzag")


def test_nccl_candidates_only(nvswitch):
    m = FabricCostModel(nvswitch, algorithms="nccl")
    names = {c[0] for c in m.candidates("all-reduce", m.group(8))}
    assert names == {"ring", "tree", "in-network"}


def test_direct_connect_ring_fabric():
    # a ring fabric: the ring algorithm follows the cables, one-shot crosses up to 4 hops
    g = ring(8, bandwidth=200e9)
    m = FabricCostModel(g, algorithm="ring", calibration=Calibration.ideal(0.0))
    B = g.edges["gpu0", "gpu1"]["bandwidth"]  # 100 GB/s per port
    n = 1e9
    assert float(m.collective_time("all-reduce", n, 8)) == pytest.approx(
        14 * g.edges["gpu0", "gpu1"]["latency"] + 2 * 7 / 8 * n / B)


def test_default_calibration_sources():
    cal = default_calibration()
    assert cal.scaleup_efficiency == pytest.approx(20.6 / 25)
    assert cal.scaleout_efficiency == pytest.approx(47 / 50)
    assert cal.protocol("LL").bandwidth_factor == 0.5
    assert cal.protocol("LL128").step_latency_scaleup == pytest.approx(1.9e-6)
    assert cal.in_network.step_latency_scaleup == pytest.approx(25e-6)
    text = DEFAULTS_PATH.read_text()
    assert text.count("[T]") >= 12 and "[F]" in text


def test_calibration_file_errors(tmp_path):
    text = DEFAULTS_PATH.read_text()
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace("scaleout_efficiency = 0.94", "scaleout_eficiency = 0.94"))
    with pytest.raises(UserError, match="unknown key.*scaleout_eficiency"):
        load_calibration(bad)
    bad.write_text(text.replace("base_latency = 6.6e-6", ""))
    with pytest.raises(UserError, match="missing key.*base_latency"):
        load_calibration(bad)
    bad.write_text(text.replace("bandwidth_factor = 0.5 ", "bandwidth_factor = 1.5 "))
    with pytest.raises(UserError, match="bandwidth_factor"):
        load_calibration(bad)
    bad.write_text("links = [")
    with pytest.raises(UserError, match="malformed TOML"):
        load_calibration(bad)
    with pytest.raises(UserError, match="does not exist"):
        load_calibration(tmp_path / "none.toml")


def test_inapplicable_algorithm_keeps_no_callers_alive(nvswitch):
    """A cached 'cannot run here' used to be the exception itself: raised again on every
    later call, its traceback collected each raise's frames, so the callers' locals (a
    search's grid arrays: 0.3 GB in the study's MoE part) lived as long as the model."""
    import gc
    import weakref

    from netmodel.collectives.steps import NotApplicable

    m = FabricCostModel(nvswitch)
    group = m.group(8)

    class Big:
        pass

    def caller():
        big = Big()
        with pytest.raises(NotApplicable, match="at least two scale-up domains"):
            m.compiled("all-reduce", "hierarchical", group)
        return weakref.ref(big)

    refs = [caller() for _ in range(3)]   # the first call compiles, the others hit the cache
    gc.collect()
    assert [r() for r in refs] == [None, None, None]


@pytest.mark.parametrize("calibration", ["default", 3, 0, "", {"pxn": False}])
def test_a_calibration_that_is_no_calibration_is_named(calibration):
    """Hostile pass 219: FabricCostModel(g, calibration='default') raised AttributeError
    ('str' object has no attribute 'pxn') at the router; 0 and '' ran the shipped defaults
    silently."""
    from topologies import build

    with pytest.raises(UserError, match=r"^calibration must be a netmodel\.collectives\."
                                        r"calibration\.Calibration \(e\.g\. Calibration\.ideal"
                                        r"\(alpha=1e-6\)\) or None for the defaults, got "):
        FabricCostModel(build("single-switch:n=4"), calibration=calibration)


def test_ring_order_as_an_array_is_named():
    from topologies import build

    with pytest.raises(UserError, match=r"^ring_order must be 'given' or 'greedy', got an "
                                        r"array of shape \(2,\)$"):
        FabricCostModel(build("single-switch:n=4"), ring_order=np.array(["given", "greedy"]))


@pytest.mark.parametrize("old, new, said", [
    ("pxn = true", 'pxn = "false"', "[p2p].pxn must be true or false, got 'false'"),
    ("pxn = true", "pxn = 0", "[p2p].pxn must be true or false, got 0"),
    ("channels = 16", "channels = 100000", "channels must be a whole number in 1..1024, got "
                                           "100000"),
    ("scaleup_efficiency = 0.824", "scaleup_efficiency = nan",
     "scaleup_efficiency must be in (0, 1], got nan"),
    ("scaleup_efficiency = 0.824", 'scaleup_efficiency = "x"',
     "[links].scaleup_efficiency must be a number, got 'x'"),
])
def test_a_calibration_files_values_are_named_with_the_file(tmp_path, old, new, said):
    """Hostile pass 219: a calibration file's [p2p].pxn = "false" was refused as 'pxn must
    be true or false' naming no file (so were channels and the efficiencies), and a word for
    [links].scaleup_efficiency raised ValueError from float('x')."""
    text = DEFAULTS_PATH.read_text()
    assert old in text
    bad = tmp_path / "cal.toml"
    bad.write_text(text.replace(old, new, 1))
    with pytest.raises(UserError) as err:
        load_calibration(bad)
    assert str(err.value) == f"{bad}: {said}"


@pytest.mark.parametrize("value", ["[]", '["hopper"]', "{}", "3"])
def test_a_generations_files_default_that_is_no_name_is_named(tmp_path, value):
    """Hostile pass 219: default = [] (or a table) in a generations file raised TypeError
    ('unhashable type: 'list'') looking it up among the generations."""
    from netmodel.collectives.calibration import GENERATIONS_PATH
    from netmodel.collectives.calibration_files import load_generations

    text = GENERATIONS_PATH.read_text()
    assert 'default = "hopper"' in text
    bad = tmp_path / "gens.toml"
    bad.write_text(text.replace('default = "hopper"', f"default = {value}", 1))
    with pytest.raises(UserError, match=rf"^{re.escape(str(bad))}: default generation .* is "
                                        r"not one of 'ampere', "):
        load_generations(bad)
