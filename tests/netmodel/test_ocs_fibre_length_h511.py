"""A co-packaged fibre from a GPU to an OCS is priced at the length it was cabled at: its
latency less ONE optical engine's delay, the GPU's (the OCS end is mirrors), not two (h511).

Since 33de305 the ``ocs`` builder charges such a fibre one chiplet
(``cable_latency(length, medium, chiplets=1)``), but the network bill (its edges, and the
circuits of a fabric file without the cabling's record) and ``topologies.optical.ocs_cabling``
still took two engines' delay off, so lite-ocs's 10 m fibres were priced as 9 m.

Hand-derived from netmodel/data/scenarios/lite-ocs.toml: 128 Lites x 4 co-packaged ports,
``length = 10.0`` m Lite to OCS, ``latency = "0s"`` through the OCS; its source: "2 x 10 m of
fibre at 5 ns/m plus 2 optical chiplets of 5 ns" a circuit, so a fibre 10 x 5 + 5 = 55 ns.
netmodel/data/network_costs.toml: a cable 50 USD + 1 USD/m, so 512 x 60 = 30,720 USD
(512 x 59 = 30,208 USD at 9 m). A fabric cabled at 23 m reads 23 m (22 m before).
"""

from __future__ import annotations

import pytest

from netmodel.study.network_bill import INFERRED_CABLING, network_bill, ocs_cabling_ports
from netmodel.study.scenario_fabric import build_fabric
from topologies import build
from topologies.optical import ocs_cabling, realize

FIBRES = 128 * 4


def _cables(graph) -> dict[str, tuple[float, float]]:
    return {i.what: (i.count, i.capex) for i in network_bill(graph).items
            if i.category == "cable"}


def _legacy(graph):
    """``graph`` as a fabric file written before realize recorded the fibres."""
    graph.graph["ocs_cabling"] = {k: v for k, v in graph.graph["ocs_cabling"].items()
                                  if k != "fibres"}
    return graph


def test_the_scenario_cables_10_m_at_55_ns_a_fibre():
    g = build_fabric("lite-ocs")
    fibres = [d for u, v, d in g.edges(data=True) if "ocs" in {g.nodes[u]["kind"],
                                                                 g.nodes[v]["kind"]}]
    assert len(fibres) == FIBRES
    assert {round(d["latency"] * 1e9, 6) for d in fibres} == {55.0}
    assert {d["medium"] for d in fibres} == {"co-packaged-optics"}


def test_lite_ocs_fibres_are_priced_at_10_m():
    g = build_fabric("lite-ocs")
    assert _cables(g) == {"co-packaged-optics cable 10 m": (FIBRES, pytest.approx(30_720))}
    assert ocs_cabling(g)["fibres"]["length"] == (10.0,) * FIBRES


@pytest.mark.parametrize("circuits", ["ring", [("gpu0", "gpu1")]])
def test_a_realized_lite_ocs_is_priced_at_10_m(circuits):
    r = realize(build_fabric("lite-ocs"), circuits)
    assert _cables(r) == {"co-packaged-optics cable 10 m": (FIBRES, pytest.approx(30_720))}
    assert ocs_cabling_ports(r)[3] == 10.0


def test_a_fabric_file_without_the_record_reads_its_circuits_at_10_m():
    # a circuit: 2 x 55 ns of fibre + the OCS's 1 us; less the OCS's, half a fibre: 55 ns,
    # less the GPU's engine (5 ns) at 5 ns/m: 10 m
    g = _legacy(build("ocs:gpus=8,ports=4,ocs_ports=8,gpu=Lite,latency=1us,logical=ring"))
    d = g.edges["gpu0", "gpu1"]
    assert d["latency"] == pytest.approx(1e-6 + 110e-9)
    assert ocs_cabling_ports(g) == ("co-packaged-optics", 32, pytest.approx(112.5e9 / 4), 10.0)
    assert network_bill(g).notes == (INFERRED_CABLING,)
    assert _cables(g) == {"co-packaged-optics cable 10 m": (32.0, pytest.approx(32 * 60))}


@pytest.mark.parametrize("logical", ["", ",logical=ring"])
def test_a_fibre_cabled_at_23_m_reads_23_m(logical):
    g = build("ocs:gpus=4,ports=2,ocs_ports=4,gpu=Lite,length=23" + logical)
    # 8 fibres x (50 + 23) USD
    assert _cables(g) == {"co-packaged-optics cable 23 m": (8.0, pytest.approx(8 * 73))}
    if logical:
        assert _cables(_legacy(g)) == {"co-packaged-optics cable 23 m":
                                       (8.0, pytest.approx(8 * 73))}
