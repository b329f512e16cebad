"""An OCS circuit's optics are one medium at both ends, whichever end is named first.

realize wrote a circuit edge's ``optics`` (counted and priced at both of its ends by the
bill of materials) from the first-named GPU's port alone, so where the two ends' ports
differ (a fabric file may give each fibre its own medium) circuit ``gpu0-gpu1`` came out
co-packaged and ``gpu1-gpu0`` pluggable. An OCS passes light: a circuit is one optical link
between a port of each GPU, its rate already the slower port's; this model gives a link
one kind of optics at both ends, so mixed ends are refused, naming both.
"""

from __future__ import annotations

import pytest

from compute.errors import UserError
from topologies.optical import ocs, realize


@pytest.fixture
def mixed():
    """2 GPUs x 2 ports, co-packaged but gpu1's port on ocs0 a pluggable module."""
    g = ocs(gpus=2, ports=2, ocs_ports=2)
    g.edges["gpu1", "ocs0"]["medium"] = "pluggable-optics"
    return g


@pytest.mark.parametrize("pair", [("gpu0", "gpu1"), ("gpu1", "gpu0")])
def test_mixed_ends_are_refused_either_way_round(mixed, pair):
    with pytest.raises(UserError, match="through 'ocs0' joins a (co-packaged|pluggable)-"
                                        "optics port .* one kind of optics") as err:
        realize(mixed, [pair])
    assert "co-packaged-optics" in str(err.value) and "pluggable-optics" in str(err.value)


def test_a_pair_on_planes_of_two_media_is_refused(mixed):
    mixed.edges["gpu0", "ocs0"]["medium"] = "pluggable-optics"   # ocs0 pluggable at both
    assert realize(mixed, [("gpu0", "gpu1")]).edges["gpu0", "gpu1"]["optics"] in (
        "pluggable-optics", "co-packaged-optics")   # one circuit: one plane, one medium
    with pytest.raises(UserError, match="hold ports of co-packaged-optics and "
                                        "pluggable-optics"):
        realize(mixed, [("gpu0", "gpu1")] * 2)


@pytest.mark.parametrize("medium", ["co-packaged-optics", "pluggable-optics", "fibre"])
def test_one_medium_is_the_circuits_optics(medium):
    g = ocs(gpus=4, ports=2, ocs_ports=4, medium=medium)
    out = realize(g, "ring")
    assert {d["optics"] for _, _, d in out.edges(data=True)} == {medium}


def test_a_study_instance_on_mixed_ports_is_refused_not_lost(mixed):
    """The study tried each copy count and took a refusal as 'none fits': a ring on a
    cell with one pluggable port set no circuit (instance_circuits None: an instance
    lost to a fibre failure) or fewer copies; it is the fabric's error, said once (h413)."""
    from dataclasses import replace

    from netmodel.study.placed_graph import instance_circuits
    from netmodel.study.scenario_catalog import get_scenario
    from netmodel.study.scenario_fabric import instance_graph

    s = get_scenario("lite-ocs")
    s = replace(s, fabric={**s.fabric, "ports": 2})
    with pytest.raises(UserError, match=r"two media, co-packaged-optics \(gpu0-ocs0\) and "
                                        r"pluggable-optics \(gpu1-ocs0\)"):
        instance_circuits(s, mixed, ["gpu0", "gpu1"])
    with pytest.raises(UserError, match=r"^scenario 'lite-ocs': the OCS ports of these GPUs "
                                        r"are of two media"):
        instance_graph(s, mixed, 2)
