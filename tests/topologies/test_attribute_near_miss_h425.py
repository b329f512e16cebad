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
from topologies.schema import GRAPH_TYPES, READ_ATTRIBUTES, validate
from topologies.schema_text import near_miss


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
    (lambda d: (d["graph"].pop("edges_built"), d["graph"].update(edge_built=4)), "the graph",
     "edge_built", "edges_built"),
    (lambda d: d["nodes"][1].update(rial=0), "node 'gpu1'", "rial", "rail"),
])
def test_a_misspelt_attribute_of_a_file_is_refused(tmp_path, edit, what, key, match):
    path = _ring_json(tmp_path, edit)
    with pytest.raises(UserError) as err:
        read_graph(path)
    assert str(err.value) == f"{path}: {_said(what, key, match)}"


def test_a_misspelt_attribute_of_a_graph_made_in_code_is_refused():
    g = build("ring:n=4")
    g.nodes["gpu2"]["Server "] = 1
    with pytest.raises(UserError) as err:
        validate(g)
    assert str(err.value) == _said("node 'gpu2'", "Server ", "server")


def test_a_near_miss_of_what_only_another_kind_of_node_reads_is_a_label():
    """A GPU's 'in-network-reduction' or 'port': a GPU reads neither that nor the switch's
    in_network_reduction or the OCS's ports, so it is a label of its own, kept unread."""
    g = build("ring:n=4")
    g.nodes["gpu2"].update({"in-network-reduction": True, "port": 2})
    assert validate(g) is g


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


def _foreign(d):
    """Labels other tools' files carry, each a schema name and something of its own."""
    d["nodes"][0].update(server_id="s-17", device_id=3, rack_name="A1", rank=0, port=2,
                         tier2="gold", kinds="gpu", Type="GPU",
                         size=30.0, color="#ff0000", label="gpu0", x=1.0, y=2.0)
    d["edges"][0].update(latency_ms=0.01, uplinks=4, planes=2, links2=1, links_note="spare",
                         bandwidths="25,25", lane=4, rate="400G", type="nvlink", weight=1.0)
    d["graph"].update(Name="lab 7", gpus_=4, dims2="4x1", description="yEd export")


def test_foreign_attributes_near_a_schema_name_still_load(tmp_path):
    """Not near misses: a word of its own around a schema name (server_id, latency_ms,
    uplinks, planes), a number or '_' added (tier2, links2, gpus_), a letter changed
    (rank, not rack), an attribute beside the one it is near (kinds beside kind,
    bandwidths beside bandwidth, Name beside name: the schema's own is read), or near one
    only a node of another kind reads (a GPU's port, an OCS's ports). The rule of f63b0e7
    (difflib ratio >= 0.8 against every attribute) refused each of these files."""
    g = read_graph(_ring_json(tmp_path, _foreign))
    assert g.nodes["gpu0"]["server_id"] == "s-17" and g.nodes["gpu0"]["rank"] == 0
    assert g.edges["gpu0", "gpu3"]["uplinks"] == 4 and g.graph["Name"] == "lab 7"


@pytest.mark.parametrize("key", ["server_id", "device_id", "rack_name", "rank", "tier2",
                                 "latency_ms", "latency_us", "uplinks", "planes",
                                 "links2", "links_note", "bandwidth_gbps", "port_id"])
def test_a_foreign_attribute_of_its_own_words_is_not_a_near_miss(key):
    assert near_miss(key, READ_ATTRIBUTES) is None


def test_a_near_miss_beside_the_attribute_it_is_near_is_read_as_its_own(tmp_path):
    """'link' beside 'links': the edge's links are read, the other kept."""
    g = read_graph(_ring_json(tmp_path, lambda d: d["edges"][0].update(links=2, link=1)))
    assert g.edges["gpu0", "gpu3"]["links"] == 2 and g.edges["gpu0", "gpu3"]["link"] == 1
