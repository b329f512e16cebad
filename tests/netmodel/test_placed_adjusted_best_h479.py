"""A pipeline-staged instance of a ``circuits = "best"`` OCS scenario, re-scored with its
links adjusted (:class:`~netmodel.study.adjusted_comm.PlacedAdjusted`: the crossovers' and
sweeps' per-hop latency), costs what the scenario compiled at those links costs: each
stage's slice takes the layout faster at the adjusted links, as the compiled instance sets
its circuits (:func:`~netmodel.study.placed_graph.pipeline_circuits`), not the layout
chosen at the scenario's own links. (In 4 stages a stage keeps 2 of its 4 ports beside
its stage links: a ring either way, no torus.)

The case (tests/netmodel/test_ocs_best_circuits_h464.py's): 8 Lites of lite-ocs are set as
a ring at 1.5 us a hop (14 latency steps against the 2 x 4 torus's 8, but 2 circuits a
neighbour against 1: the bandwidth wins) and as a torus at 3.5 us (the 6 steps saved
win). An instance of 32 Lites in stages of 8 runs its tensor-parallel all-reduce on each
stage's 8. Before, its re-scoring kept the stages' rings: 19.6% slower than compiled at
1 kB, 17% faster at 1 GB.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from netmodel.study.adjusted_comm import AdjustedComm, PlacedAdjusted, hop_latency_slopes
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_collectives import ScenarioCollectives
from netmodel.study.scenario_fabric import set_layout

OWN, D = 1.5e-6, 2e-6
N = np.array([1e3, 1e5, 1e7, 1e9])


def _best(hop: float, scale: float = 1.0):
    s = replace(get_scenario("lite-ocs"), circuits="best").with_param("adjust.hop_latency",
                                                                      hop)
    return s if scale == 1.0 else s.with_param("adjust.bandwidth_scale", scale)


@pytest.mark.parametrize("scale", [1.0, 2.0])
def test_stages_choose_their_layout_at_the_adjusted_links(scale):
    s = _best(OWN)
    coll = ScenarioCollectives(s)
    comm = AdjustedComm(coll, scale, D, hop_latency_slopes(s, coll, {}))
    compiled = ScenarioCollectives(_best(OWN + D, scale))
    # the case: the 8 GPUs' layout flips between the own links and the adjusted ones
    assert (coll.layout(8), compiled.layout(8)) == ("ring", "torus")
    placed = comm.for_instance(32, 8)
    assert isinstance(placed, PlacedAdjusted)
    own = compiled.for_instance(32, 8)
    for op, size in (("all-reduce", 8), ("all-gather", 8), ("reduce-scatter", 8),
                     ("all-gather", 4), ("send-recv", 2), ("all-reduce", 16),
                     ("all-reduce", 32)):
        np.testing.assert_allclose(placed.collective_time(op, N, size),
                                   own.collective_time(op, N, size), rtol=1e-9,
                                   err_msg=f"{op} of {size}")
    reach = lambda units: np.minimum(units, 2.0)   # noqa: E731
    np.testing.assert_allclose(placed.moe_all_to_all_time(N, 8, 2, reach),
                               own.moe_all_to_all_time(N, 8, 2, reach), rtol=1e-9)
    # the stages' groups run on the instance's one set of circuits: each stage's ring on
    # the 2 ports its links to the stages before and after leave (a torus needs 4)
    groups = placed.groups("all-reduce", 8)
    assert [set_layout(m, tuple(g)) for m, g in groups] == ["ring"] * len(groups)


def test_at_the_own_links_the_stages_keep_the_own_choice():
    """No adjustment: the re-scoring is the scenario's own costing of the instance (each
    stage's ring at 1.5 us a hop)."""
    s = _best(OWN)
    coll = ScenarioCollectives(s)
    placed = AdjustedComm(coll, 1.0, 0.0).for_instance(32, 8)
    own = coll.for_instance(32, 8)
    for op, size in (("all-reduce", 8), ("all-gather", 4), ("send-recv", 2)):
        np.testing.assert_allclose(placed.collective_time(op, N, size),
                                   own.collective_time(op, N, size), rtol=1e-12)
    groups = placed.groups("all-reduce", 8)
    assert [set_layout(m, tuple(g)) for m, g in groups] == ["ring"] * len(groups)


@pytest.mark.parametrize("circuits", ["ring", "best"])
def test_a_best_instance_on_ports_of_two_media_is_refused_not_lost(circuits):
    """circuits = "best" on a cell whose ports mix two media: no layout can be set, and
    that is the fabric's error, said in one line as for a fixed ring
    (tests/topologies/test_circuit_optics_h404.py), not an instance lost to a failure
    (instance_circuits None), which the blast radius would count as down."""
    from compute.errors import UserError
    from netmodel.study.placed_graph import instance_circuits
    from topologies.optical import ocs

    mixed = ocs(gpus=2, ports=2, ocs_ports=2)
    mixed.edges["gpu1", "ocs0"]["medium"] = "pluggable-optics"
    s = replace(get_scenario("lite-ocs"), circuits=circuits)
    s = replace(s, fabric={**s.fabric, "ports": 2})
    with pytest.raises(UserError, match=r"two media, co-packaged-optics \(gpu0-ocs0\) and "
                                        r"pluggable-optics \(gpu1-ocs0\)"):
        instance_circuits(s, mixed, ["gpu0", "gpu1"])


def test_shipped_lite_ocs_sets_the_faster_layout():
    """The shipped lite-ocs sets each instance's circuits as the faster layout
    (circuits = "best"), 10 ms to re-set either way. By shape: 2 and 3 Lites have no 2D
    torus, 9 (3x3) and 10 (2x5) have odd sides that 4 ports cannot colour: rings. 16 Lites:
    the 4x4 torus on one circuit a neighbour moves the same bytes a port as the ring's two
    copies (15/32 n / B either way) in 12 steps instead of 30
    (tests/netmodel/test_ocs_best_circuits_h464.py), so the torus."""
    from netmodel.study.scenario_collectives import ScenarioCollectives

    s = get_scenario("lite-ocs")
    assert s.circuits == "best"
    coll = ScenarioCollectives(s)
    assert {p: coll.layout(p) for p in (2, 3, 9, 10, 16)} == {
        2: "ring", 3: "ring", 9: "ring", 10: "ring", 16: "torus"}
    assert coll.reconfiguration_time(16) == coll.reconfiguration_time(8) == 0.010
