"""Files both ways: JSON and GraphML keep every attribute; user graphs; atomic writes."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import networkx as nx
import pytest

from compute.errors import UserError
from compute.hardware import get_gpu
from topologies import UNITS, build, validate
from topologies.analysis import summary
from topologies.io import read_graph, write_graph


@pytest.mark.parametrize("suffix", [".json", ".graphml"])
@pytest.mark.parametrize("spec", ["superpod", "lite-groups:base=[ring:n=3],lites=3",
                                  "ocs:gpus=6,ports=2,logical=ring", "torus:dims=3x2"])
def test_round_trip_keeps_everything(tmp_path, spec, suffix):
    g = build(spec)
    path = tmp_path / f"fabric{suffix}"
    write_graph(g, path)
    back = read_graph(path)
    assert nx.utils.graphs_equal(g, back)  # nodes, edges and all attributes, with types
    assert type(back.nodes["gpu0"]["gpu"]) is str and type(back.graph["gpus"]) is int
    assert summary(back) == summary(g)  # closed forms still apply: counts unchanged


@pytest.mark.parametrize("suffix", [".json", ".graphml"])
def test_board_traces_survive_both_formats(tmp_path, suffix):
    # a DGX H100 SuperPOD's NVLinks are baseboard traces (medium 'board'): written and read
    # back as such, still traces in the bill (4,464 = 248 GPUs x 18), no copper cable
    path = tmp_path / f"fabric{suffix}"
    write_graph(build("superpod"), path)
    back = read_graph(path)
    assert back.edges["gpu0", "nvs0"]["medium"] == "board"
    bom = summary(back).bom
    assert bom.traces == {"board": 4464} and "copper" not in bom.cables


def _users_graph():
    g = nx.Graph(name="my lab", gpus=3)
    for i in range(3):
        g.add_node(f"a{i}", kind="gpu", gpu="H100-SXM", server=0)
    g.add_node("sw", kind="switch", tier=1, radix=4, latency=2e-7, in_network_reduction=False)
    for i in range(3):
        g.add_edge(f"a{i}", "sw", bandwidth=25e9, latency=1e-8, medium="copper", lanes=2)
    return g


def test_users_own_graph_works_everywhere(tmp_path):
    path = tmp_path / "lab.json"
    write_graph(_users_graph(), path)
    g = build(str(path))  # a file path is a spec too
    assert g.graph["spec"] == "" and g.graph["name"] == "my lab"
    s = summary(g)
    assert (s.gpus, s.diameter, s.bisection_bandwidth) == (3, 2, 25e9)
    assert s.bisection_method == "max-flow" and s.diameter_method == "breadth-first search"


def test_links_key_of_older_networkx_is_read(tmp_path):
    path = tmp_path / "new.json"
    write_graph(_users_graph(), path)
    data = json.loads(path.read_text())
    data["links"] = data.pop("edges")  # what networkx < 3.4 writes by default
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    assert validate(read_graph(path)).number_of_edges() == 3


def test_bad_files(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(UserError, match="bad.json is not a readable json fabric"):
        read_graph(bad)
    with pytest.raises(UserError, match="does not exist"):
        read_graph(tmp_path / "missing.graphml")
    with pytest.raises(UserError, match="unknown fabric file type '.txt'"):
        write_graph(build("ring"), tmp_path / "x.txt")
    g = _users_graph()
    g.add_node("lonely", kind="gpu", gpu="H100-SXM")
    g.graph["gpus"] = 4
    path = tmp_path / "cut.json"
    path.write_text(json.dumps({"nodes": [{"id": n, **d} for n, d in g.nodes(data=True)],
                                "edges": [{"source": u, "target": v, **d}
                                          for u, v, d in g.edges(data=True)],
                                "graph": g.graph}))
    with pytest.raises(UserError, match="GPU 'lonely' cannot reach GPU 'a0'"):
        read_graph(path)


def test_failed_write_leaves_nothing(tmp_path):
    g = build("ring")
    g.edges["gpu0", "gpu1"]["bandwidth"] = float("nan")
    with pytest.raises(UserError, match="bandwidth must be finite"):
        write_graph(g, tmp_path / "x.json")
    g.edges["gpu0", "gpu1"]["bandwidth"] = 1e9
    g.graph["odd"] = object()  # json cannot encode it: the write fails midway
    with pytest.raises(TypeError):
        write_graph(g, tmp_path / "x.json")
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- units and versions

def test_files_carry_their_units(tmp_path):
    g = build("ring:n=3")
    data = json.loads(Path(write_graph(g, tmp_path / "r.json")).read_text())
    assert data["graph"]["units"]["bandwidth"] == "bytes/s per direction"
    assert data["graph"]["units"]["latency"] == "s" and data["graph"]["units"] == UNITS
    assert data["graph"]["builder"] == "ring" and data["graph"]["args"] == {"n": 3}
    text = Path(write_graph(g, tmp_path / "r.graphml")).read_text()
    root = ET.fromstring(text)
    ns = "{http://graphml.graphdrawing.org/xmlns}"
    descs = {k.get("attr.name"): k.find(f"{ns}desc").text for k in root.iter(f"{ns}key")
             if k.find(f"{ns}desc") is not None}
    assert descs["bandwidth"].endswith("[bytes/s per direction]")
    assert descs["latency"].endswith("[s]") and descs["lanes"].endswith("[lanes]")
    assert "JSON text" in descs["args"]
    assert "units" not in read_graph(tmp_path / "r.graphml").graph  # file metadata only


def test_a_file_in_other_units_is_refused(tmp_path):
    path = tmp_path / "gbps.json"
    write_graph(build("ring:n=3"), path)
    data = json.loads(path.read_text())
    data["graph"]["units"]["bandwidth"] = "Gb/s"
    path.write_text(json.dumps(data))
    with pytest.raises(UserError, match="bandwidth is in 'Gb/s'; netmodel reads 'bytes/s per "
                                        "direction'"):
        read_graph(path)


def test_networkx_3_2_style_node_link_functions_are_not_needed(tmp_path, monkeypatch):
    """networkx 3.2-3.3 spell the edge key ``link=`` and refuse ``edges=`` (3.4+ the other way
    round); netmodel writes and reads node-link JSON itself, so either works."""
    def node_link_data(G, *, source="source", target="target", name="id", key="key",
                       link="links"):
        raise AssertionError("netmodel must not call node_link_data")

    def node_link_graph(data, directed=False, multigraph=True, *, source="source",
                        target="target", name="id", key="key", link="links"):
        raise AssertionError("netmodel must not call node_link_graph")

    monkeypatch.setattr(nx, "node_link_data", node_link_data)
    monkeypatch.setattr(nx, "node_link_graph", node_link_graph)
    with pytest.raises(TypeError):
        nx.node_link_data(nx.Graph(), edges="edges")  # the 3.2 signature, pinned
    g = build("fat-tree:k=4")
    back = read_graph(write_graph(g, tmp_path / "f.json"))
    assert nx.utils.graphs_equal(g, back)
    assert "edges" in json.loads((tmp_path / "f.json").read_text())
    monkeypatch.undo()
    # and networkx itself reads what netmodel writes
    other = nx.node_link_graph(json.loads((tmp_path / "f.json").read_text()), edges="edges")
    assert other.number_of_edges() == g.number_of_edges()


# ---------------------------------------------------------------- hostile files

def _doc():
    return json.loads(json.dumps({"directed": False, "multigraph": False,
                                  "graph": {"name": "t", "gpus": 2},
                                  "nodes": [{"id": "a", "kind": "gpu", "gpu": "H100-SXM"},
                                            {"id": "b", "kind": "gpu", "gpu": "H100-SXM"}],
                                  "edges": [{"source": "a", "target": "b", "bandwidth": 1e9,
                                             "latency": 0.0, "medium": "copper",
                                             "lanes": 1}]}))


def _set(doc, path, value):
    target = doc
    for k in path[:-1]:
        target = target[k]
    target[path[-1]] = value
    return doc


@pytest.mark.parametrize("path, value, message", [
    (("graph",), [], "'graph' must be a JSON object, got []"),
    (("nodes",), {}, "'nodes' must be a JSON array"),
    (("edges",), "ab", "'edges' must be a JSON array"),
    (("nodes", 0), "a", "every node must be an object with an 'id', got 'a'"),
    (("nodes", 0, "id"), ["a"], "a node's id must be a string or an integer node id"),
    (("nodes", 1, "id"), "a", "node 'a' is listed twice"),
    (("edges", 0), [1, 2], "every edge must be an object with 'source' and 'target'"),
    (("edges", 0, "target"), "c", "edge 'a'-'c' names node 'c', which is not in 'nodes'"),
    (("edges", 0, "target"), "a", "edge 'a'-'a' joins a node to itself"),
    (("directed",), True, "directed must be false, got True"),
    (("multigraph",), "no", "multigraph must be false, got 'no'"),
    (("graph", "gpus"), 10**300, "graph attribute 'gpus' is an integer of 301 digits"),
    (("graph", "gpus"), 2.0, "graph attribute 'gpus' must be a whole number, got 2.0"),
    (("graph", "gpu_types"), {"X": {"sms": 1}}, "gpu_types: GPU type 'X' lacks field(s)"),
    (("graph", "gpu_types"), [], "'gpu_types' must be a table of GPU name: fields"),
    (("graph", "units"), "SI", "'units' must be a table of quantity: unit"),
    (("nodes", 0, "gpu"), "MyLite", "names GPU type 'MyLite', which is neither"),
    (("edges", 0, "lanes"), None, "lanes must be a whole number >= 1, got null"),
])
def test_wrong_types_inside_valid_json_are_named(tmp_path, path, value, message):
    doc = _set(_doc(), path, value)
    file = tmp_path / "bad.json"
    file.write_text(json.dumps(doc))
    with pytest.raises(UserError, match=re.escape(message)) as info:
        read_graph(file)
    assert "\n" not in str(info.value)


def test_a_twice_listed_edge_and_gpu_types_with_bad_fields(tmp_path):
    doc = _doc()
    doc["edges"].append(dict(doc["edges"][0], source="b", target="a"))
    file = tmp_path / "twice.json"
    file.write_text(json.dumps(doc))
    with pytest.raises(UserError, match="edge 'b'-'a' is listed twice"):
        read_graph(file)
    fields = get_gpu("Lite").to_dict()
    for key, bad, rule in (("sms", 1.5, "whole number from 1 to 100,000"), ("tdp", -1, "finite number > 0"),
                           ("hbm_bandwidth", "fast", "finite number > 0"),
                           ("name", "Other", "has the name 'Other'")):
        doc = _set(_doc(), ("graph", "gpu_types"), {"Lite": dict(fields, **{key: bad})})
        file.write_text(json.dumps(doc))
        with pytest.raises(UserError, match=re.escape(rule)):
            read_graph(file)


def test_deep_nesting_huge_numbers_and_size_are_refused_before_parsing(tmp_path, monkeypatch):
    deep = tmp_path / "deep.json"
    deep.write_text('{"nodes": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(UserError, match="JSON nested 100001 deep; at most 32"):
        read_graph(deep)
    strings = tmp_path / "strings.json"  # brackets inside strings do not count
    doc = _doc()
    doc["graph"]["note"] = "[" * 1000 + '\\"{'
    strings.write_text(json.dumps(doc))
    assert read_graph(strings).graph["note"].startswith("[[[")
    big = tmp_path / "bigint.json"
    big.write_text(json.dumps(_doc()).replace('"gpus": 2', '"gpus": ' + "9" * 5000))
    # hostile pass 219: the number is named, not Python's advice ('use
    # sys.set_int_max_str_digits() to increase the limit'), in JSON and GraphML alike
    with pytest.raises(UserError, match="bigint.json holds a number of more than 4,300 "
                                        "digits$"):
        read_graph(big)
    big_xml = tmp_path / "bigint.graphml"
    write_graph(build("ring:n=3"), big_xml)
    big_xml.write_text(re.sub(r'(<data key="d\d+">)3(</data>)', r"\g<1>" + "9" * 5000 + r"\2",
                              big_xml.read_text(), count=1))
    with pytest.raises(UserError, match=r"bigint.graphml: key '\w+' holds the number 9{40}"
                                        r"\.\.\.9+, beyond the range of a whole number \(at "
                                        r"most 4,300 digits\); give a number within it$"):
        read_graph(big_xml)
    xml_deep = tmp_path / "deep.graphml"
    xml_deep.write_text('<graphml xmlns="http://graphml.graphdrawing.org/xmlns">' + "<a>" * 5000 + "</a>" * 5000 + "</graphml>")
    with pytest.raises(UserError, match="elements nested more than 32 deep"):
        read_graph(xml_deep)
    bomb = tmp_path / "bomb.graphml"
    bomb.write_text('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">]>'
                    "<graphml>&lol;</graphml>")
    with pytest.raises(UserError, match="a DOCTYPE is not allowed"):
        read_graph(bomb)
    monkeypatch.setenv("NETMODEL_MAX_FABRIC_FILE_BYTES", "100")
    with pytest.raises(UserError, match=r"strings.json' is \d[\d,]* bytes, over the limit of 100; "
                                        "raise NETMODEL_MAX_FABRIC_FILE_BYTES"):
        read_graph(strings)
    monkeypatch.setenv("NETMODEL_MAX_FABRIC_FILE_BYTES", "1000000")
    monkeypatch.setenv("NETMODEL_MAX_FABRIC_NODES", "1")
    with pytest.raises(UserError, match="the fabric would have about 2 nodes and 1 edge, over the limit of 1 node "):
        read_graph(strings)
    folder = tmp_path / "folder.json"
    folder.mkdir()
    with pytest.raises(UserError, match="folder.json' is not a file"):
        read_graph(folder)
    with pytest.raises(UserError, match="a fabric file must be a path"):
        read_graph(5)


def test_graphml_with_wrong_types_is_named(tmp_path):
    path = tmp_path / "r.graphml"
    write_graph(build("ring:n=3"), path)
    text = path.read_text()
    for old, new, message in (
            ('attr.name="lanes" attr.type="long"', 'attr.name="lanes" attr.type="double"',
             None),  # whole floats are fine
            ('attr.name="lanes" attr.type="long"', 'attr.name="lanes" attr.type="string"',
             "lanes must be a whole number >= 1, got the text '"),
            ('attr.name="lanes" attr.type="long"', 'attr.name="lanes" attr.type="int"', None),
            ('edgedefault="undirected"', 'edgedefault="directed"',
             "a fabric is an undirected simple graph"),
            ('attr.name="bandwidth" attr.type="double"', 'attr.name="bandwidth" attr.type="int"',
             None),   # its 225000000000.0 is a whole number, by the one number grammar
            ('>18<', '>1.5<', "is not a readable graphml fabric: a value of key 'lanes' "
                              "(attr.type 'long') is '1.5', not a whole number")):
        path.write_text(text.replace(old, new))
        if message is None:
            assert read_graph(path).graph["gpus"] == 3
        else:
            with pytest.raises(UserError, match=re.escape(message)):
                read_graph(path)
    path.write_text(text.replace('{"n": 3}', '[' * 50 + ']' * 50))
    with pytest.raises(UserError, match="graph attribute 'args': JSON nested 50 deep"):
        read_graph(path)


@pytest.mark.parametrize("text, said", [
    ('<?xml version="1.0"?><graphml xmlns="http://graphml.graphdrawing.org/xmlns"></graphml>',
     "no <graph> element in it"),
    ("<foo/>", "its root element is <foo>, not <graphml>"),
])
def test_graphml_without_a_graph_is_named_not_a_python_error(tmp_path, text, said):
    """A GraphML file with no <graph> (or another root) was refused as 'TypeError: a
    bytes-like object is required, not 'str'' from networkx's fallback (helper 86)."""
    path = tmp_path / "f.graphml"
    path.write_text(text)
    with pytest.raises(UserError) as err:
        build(str(path))
    assert str(err.value) == f"{path} is not a readable graphml fabric: {said}"


@pytest.mark.parametrize("root, said", [
    ("<graphml>", "declares namespace none"),
    ('<graphml xmlns="http://example.com/x">', "declares namespace 'http://example.com/x'"),
    ('<g:graphml xmlns:g="http://example.com/x">', "declares namespace 'http://example.com/x'"),
])
def test_graphml_without_its_namespace_is_named(tmp_path, root, said):
    """A GraphML file whose root does not declare GraphML's namespace (hand-written ones
    often leave it out) was refused as 'TypeError: a bytes-like object is required, not
    'str'': networkx finds elements by that namespace and so found no <graph> (hostile round
    12). Now the line names the namespace found and the one due."""
    path = tmp_path / "f.graphml"
    close = "</g:graphml>" if root.startswith("<g:") else "</graphml>"
    path.write_text(root + '<graph edgedefault="undirected"><node id="a"/></graph>' + close)
    with pytest.raises(UserError) as err:
        build(str(path))
    assert str(err.value) == (f"{path}: the root <{root[1:].split()[0].rstrip('>')}> {said}; "
                              "a GraphML fabric declares "
                              "xmlns='http://graphml.graphdrawing.org/xmlns'")


def test_graphml_key_without_type_warns_nothing(tmp_path):
    """A <key> with no attr.type (found by the GraphML fuzz test): networkx read its values
    as strings and printed 'UserWarning: No key type for id ...' on stderr beside the one
    error line; the schema check alone now speaks (bandwidth '4.5e11' is not a number)."""
    import warnings

    text = Path(write_graph(build("single-switch:n=4"), tmp_path / "a.graphml")).read_text()
    text = re.sub(r'(attr.name="bandwidth") attr.type="double"', r"\1", text)
    (tmp_path / "b.graphml").write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserError, match="bandwidth"):
            read_graph(tmp_path / "b.graphml")


def test_a_node_id_past_the_limit_is_refused_in_one_line(tmp_path):
    """A fabric file of 100,000-character node ids read, and `topology plot` then ran for
    minutes (hostile round 12): an id is a name, at most MAX_NODE_ID characters."""
    from topologies.schema_text import MAX_NODE_ID

    path = tmp_path / "f.json"
    write_graph(build("single-switch:n=2"), path)
    for ok, name in ((True, "g" * MAX_NODE_ID), (False, "g" * (MAX_NODE_ID + 1))):
        text = path.read_text().replace('"gpu0"', json.dumps(name))
        mine = tmp_path / f"{ok}.json"
        mine.write_text(text)
        if ok:
            assert name in read_graph(mine)
        else:
            with pytest.raises(UserError) as err:
                read_graph(mine)
            assert str(err.value).endswith(f"is {MAX_NODE_ID + 1:,} characters; at most "
                                           f"{MAX_NODE_ID} (a name, not data)")
