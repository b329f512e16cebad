"""A fabric file saved before the cabling recorded its fibres is priced at the fibre length
the file itself records (h521).

Such a file's ``ocs_cabling`` holds its medium, cables and lanes only. Its fibres' length
was read back from its circuits' latency alone, so a file saved while a co-packaged fibre's
latency counted two optical engines (before 33de305) read every fibre 1 m long, though
the file records the ``ocs`` builder's ``length`` in its ``args``; and where no circuit's
latency tells a length, 0 m was priced under a note saying it was the circuits' fibres'.
Now the builder's parameters come first (its default 10 m where the args give none), then
the circuits' latency (said so), then nothing (said so).

Hand-derived, each file written here by hand as such a file was: 4 Lites x 2 co-packaged
ports on ocs0/ocs1 (4 ports, 0 s), a ring of 4 circuits of 56.25 GB/s on 5 lanes; the
cabling 8 fibres, 40 lanes, so 56.25e9 / 5 x 40 / 8 = 56.25 GB/s a fibre. Saved before
33de305 a fibre of L m took L x 5 ns/m + 2 x 5 ns, a circuit twice that: 23 m 250 ns,
which reads back as 125 - 5 = 120 ns / 5 = 24 m; 10 m 120 ns, read back 11 m.
netmodel/data/network_costs.toml: a cable 50 USD + 1 USD/m: 8 x 73 = 584 USD at 23 m.
"""

from __future__ import annotations

import json

import pytest

from netmodel.study.network_bill import (
    INFERRED_CABLING,
    INFERRED_FROM_CIRCUITS,
    LENGTH_NOT_KNOWN,
    network_bill,
    ocs_cabling_ports,
)
from topologies.io import read_graph

RATE = 56.25e9


def _legacy_file(tmp_path, circuit_latency: float, args: dict | None) -> object:
    """A realized 4-Lite ring as a fabric file saved before the cabling's fibres."""
    graph = {"name": "4 Lite x 2 ports on 2 OCS as ring", "spec": "", "gpus": 4,
             "ocs_cabling": {"medium": "co-packaged-optics", "cables": 8, "lanes": 40},
             "logical": "ring", "circuits": 4, "reconfiguration_time": 0.01}
    if args is not None:
        graph.update(builder="ocs", args=args)
    nodes = [{"id": f"gpu{i}", "kind": "gpu", "gpu": "Lite"} for i in range(4)] + [
        {"id": f"ocs{p}", "kind": "ocs", "ports": 4, "reconfiguration_time": 0.01,
         "latency": 0.0} for p in range(2)]
    edges = [{"source": u, "target": v, "bandwidth": RATE, "latency": circuit_latency,
              "medium": "ocs-circuit", "lanes": 5, "via": o, "optics": "co-packaged-optics"}
             for u, v, o in (("gpu0", "gpu1", "ocs0"), ("gpu0", "gpu3", "ocs1"),
                             ("gpu1", "gpu2", "ocs1"), ("gpu2", "gpu3", "ocs0"))]
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"directed": False, "multigraph": False, "graph": graph,
                                "nodes": nodes, "edges": edges}))
    return read_graph(path)


def _cables(graph) -> dict:
    return {i.what: (i.count, i.capex) for i in network_bill(graph).items
            if i.category == "cable"}


ARGS = {"gpus": 4, "ports": 2, "ocs_ports": 4, "gpu": "Lite", "logical": "ring"}


def test_the_builders_length_in_the_file_is_its_fibres_length(tmp_path):
    g = _legacy_file(tmp_path, 250e-9, {**ARGS, "length": 23.0})
    assert "fibres" not in g.graph["ocs_cabling"]
    assert ocs_cabling_ports(g) == ("co-packaged-optics", 8, pytest.approx(RATE), 23.0)  # was 24
    assert _cables(g) == {"co-packaged-optics cable 23 m": (8.0, pytest.approx(584))}
    assert network_bill(g).notes == (INFERRED_CABLING,)


def test_args_without_a_length_take_the_builders_default(tmp_path):
    g = _legacy_file(tmp_path, 120e-9, ARGS)
    assert ocs_cabling_ports(g)[3] == 10.0   # was 11.0
    assert _cables(g) == {"co-packaged-optics cable 10 m": (8.0, pytest.approx(8 * 60))}


def test_without_the_builders_parameters_the_circuits_say_it(tmp_path):
    g = _legacy_file(tmp_path, 250e-9, None)
    assert ocs_cabling_ports(g)[3] == pytest.approx(24.0)   # no way to tell it apart
    assert network_bill(g).notes == (INFERRED_FROM_CIRCUITS,)


def test_nothing_in_the_file_tells_the_length_and_the_bill_says_so(tmp_path):
    # each circuit 10 ns: 5 ns a fibre, the GPU's engine alone; no builder's parameters
    g = _legacy_file(tmp_path, 10e-9, None)
    assert ocs_cabling_ports(g)[3] == 0.0
    assert network_bill(g).notes == (LENGTH_NOT_KNOWN,)
    assert _cables(g) == {"co-packaged-optics cable 0 m": (8.0, pytest.approx(8 * 50))}


def test_a_length_the_args_cannot_give_leaves_it_to_the_circuits(tmp_path):
    g = _legacy_file(tmp_path, 250e-9, {**ARGS, "length": "far"})
    assert ocs_cabling_ports(g)[3] == pytest.approx(24.0)
    assert network_bill(g).notes == (INFERRED_FROM_CIRCUITS,)
