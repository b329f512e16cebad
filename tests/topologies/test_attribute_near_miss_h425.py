"""A fabric attribute that is a near miss of one the schema reads is refused: a file may carry
attributes of its own (kept unread), so a misspelt optional attribute was read as nothing
without a word ('link': 2 on an edge was one cable, 'serve': 0 on a GPU no server label,
'gpu_type' on the graph no GPU types)."""

from __future__ import annotations

import json

import pytest

from compute.errors import UserError
from topologies import build
from topologies.io import read_graph, write_graph
from topologies.schema import GRAPH_TYPES, READ_ATTRIBUTES, near_miss, validate


def _ring_json(tmp_path, edit):
    path = tmp_path / "ring.json"
    write_graph(build("ring:n=4"), path)
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))
    return path


def _said(what: str, key: str, match: str) -> str:
    return (f"invalid fabric graph: {what} has attribute {key!r}, which the schema does not "
            f"read; did you mean {match!r}? (other attributes are kept unread: rename one of "
            f"your own that looks like a misspelling)")


@pytest.mark.parametrize(("edit", "what", "key", "match"), [
    (lambda d: d["edges"][0].update(link=2), "edge 'gpu0'-'gpu3'", "link", "links"),
    (lambda d: d["edges"][0].update(Links=2), "edge 'gpu0'-'gpu3'", "Links", "links"),
    (lambda d: d["edges"][0].update(via_lane="2,1"), "edge 'gpu0'-'gpu3'", "via_lane",
     "via_lanes"),
    (lambda d: d["nodes"][1].update(serve=0), "node 'gpu1'", "serve", "server"),
    (lambda d: d["nodes"][1].update(Rack=0), "node 'gpu1'", "Rack", "rack"),
    (lambda d: d["graph"].update(gpu_type={}), "the graph", "gpu_type", "gpu_types"),
    (lambda d: d["graph"].update(edge_built=4), "the graph", "edge_built", "edges_built"),
])
def test_a_misspelt_attribute_of_a_file_is_refused(tmp_path, edit, what, key, match):
    path = _ring_json(tmp_path, edit)
    with pytest.raises(UserError) as err:
        read_graph(path)
    assert str(err.value) == f"{path}: {_said(what, key, match)}"


def test_a_misspelt_attribute_of_a_graph_made_in_code_is_refused():
    g = build("ring:n=4")
    g.nodes["gpu2"]["in-network-reduction"] = True
    with pytest.raises(UserError) as err:
        validate(g)
    assert str(err.value) == _said("node 'gpu2'", "in-network-reduction", "in_network_reduction")


def test_attributes_of_a_files_own_still_load(tmp_path):
    def edit(d):
        d["nodes"][0].update(label="first", x=1.5, colour="red")
        d["edges"][0].update(note="spare cable", weight=3)
        d["graph"].update(description="lab", owner="me")
    g = read_graph(_ring_json(tmp_path, edit))
    assert g.nodes["gpu0"]["label"] == "first" and g.edges["gpu0", "gpu3"]["weight"] == 3
    assert g.graph["owner"] == "me"


@pytest.mark.parametrize("spec", ["ring:n=4", "rail-optimized:domains=2,nics_per_server=4",
                                  "ocs:gpus=8", "nvl72:racks=2", "lite-groups",
                                  "fat-tree:k=4,oversubscription=2", "torus:dims=4x2"])
def test_every_attribute_a_builder_writes_is_read(spec):
    """No builder writes an attribute the schema does not read (so none is a near miss)."""
    g = build(spec)
    names = {k for _, d in g.nodes(data=True) for k in d} | \
        {k for _, _, d in g.edges(data=True) for k in d}
    assert names <= READ_ATTRIBUTES, names - READ_ATTRIBUTES
    assert set(g.graph) <= set(GRAPH_TYPES)


def test_a_realized_circuit_fabric_validates():
    from topologies.optical import ocs, realize

    g = realize(ocs(gpus=4, ports=2, ocs_ports=4), [("gpu0", "gpu1")] * 2)
    assert validate(g, check_connected=False) is g   # gpu2 and gpu3 have no circuit


@pytest.mark.parametrize(("name", "match"), [("link", "links"), ("lanes ", "lanes"),
                                              ("Bandwidth", "bandwidth"), ("tiers", "tier"),
                                              ("label", None), ("x", None), ("note", None),
                                              ("links", None), (7, None)])
def test_near_miss(name, match):
    assert near_miss(name, READ_ATTRIBUTES) == match
