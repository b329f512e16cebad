"""GraphML is read by topologies.graphml.parse (one expat pass, straight into the graph),
not by networkx.read_graphml: the graph must be the one networkx reads (node ids, order of
nodes and of each node's neighbours, attributes, their order and types) on every file
networkx reads that netmodel accepts; what netmodel refuses, it refuses in one line."""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compute.errors import UserError
from netmodel.study.scenario_fabric import build_fabric
from topologies import build, builders
from topologies.graphml import parse
from topologies.io import read_graph, write_graph


def _typed(data: dict) -> list:
    # the value's type and repr: 0.0 and -0.0 apart, NaN equal to NaN
    return [(k, type(v), repr(v)) for k, v in data.items()]


def _networkx(path: Path) -> nx.Graph:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # 'No key type for id ...'
        graph = nx.read_graphml(path)
    for key in ("node_default", "edge_default"):
        graph.graph.pop(key)
    return graph


def assert_same(mine: nx.Graph, theirs: nx.Graph) -> None:
    assert type(mine) is type(theirs) is nx.Graph
    assert _typed(mine.graph) == _typed(theirs.graph)
    assert list(mine.nodes) == list(theirs.nodes)
    for n in theirs:
        assert type(n) is str and _typed(mine.nodes[n]) == _typed(theirs.nodes[n]), n
        assert list(mine.adj[n]) == list(theirs.adj[n]), n   # neighbour order
        for m, data in theirs.adj[n].items():
            assert _typed(mine.adj[n][m]) == _typed(data), (n, m)
    assert list(mine.edges) == list(theirs.edges)


def _check(path: Path) -> nx.Graph:
    mine = parse(path.read_bytes(), str(path))
    assert_same(mine, _networkx(path))
    return mine


@pytest.mark.parametrize("name", sorted(b.name for b in builders()))
def test_every_builders_file_reads_as_networkx_reads_it(tmp_path, name):
    path = tmp_path / "f.graphml"
    write_graph(build(name), path)   # each builder's defaults: a small instance
    _check(path)
    assert nx.utils.graphs_equal(read_graph(path), build(name))


@pytest.mark.parametrize("fabric", ["lite-flat", "lite-ocs", "lite-direct", "h100-dgx",
                                    "fat-tree:k=8,gpu=Lite", "torus:dims=4x4x2"])
def test_scenario_and_larger_fabrics_read_as_networkx_reads_them(tmp_path, fabric):
    path = tmp_path / "f.graphml"
    g = build_fabric(fabric) if ":" not in fabric else build(fabric)
    write_graph(g, path)
    _check(path)
    assert nx.utils.graphs_equal(read_graph(path), g)


HAND = """<?xml version="1.0" encoding="UTF-8"?>
<!-- a comment before the root -->
<graphml xmlns="http://graphml.graphdrawing.org/xmlns" xmlns:o="http://example.com/other">
  <desc>hand-written: every attribute type, defaults, missing values</desc>
  <key id="i" for="node" attr.name="count" attr.type="int"><default>7</default></key>
  <key id="l" for="edge" attr.name="lanes" attr.type="long"/>
  <key id="n" for="node" attr.name="integer" attr.type="integer"/>
  <key id="f" for="edge" attr.name="bandwidth" attr.type="float"><desc>x</desc>
    <default>1.5</default><default>not read</default></key>
  <key id="d" for="all" attr.name="latency" attr.type="double"/>
  <key id="b" for="node" attr.name="flag" attr.type="boolean"><default>TRUE</default></key>
  <key id="s" for="graph" attr.name="name" attr.type="string"><default/></key>
  <key id="u" for="node" attr.name="untyped"/>
  <key id="y" yfiles.type="nodegraphics"/>
  <key attr.name="keyless" attr.type="string"/>
  <key id="s" for="node" attr.name="label" attr.type="string"/>
  <o:key id="zz" attr.name="ignored" attr.type="int"/>
  <graph id="G" edgedefault="undirected">
    <data key="d">2.5e-7</data>
    <node id="c"><data key="i"> 12 </data><data key="b">False</data><desc>skip</desc>
      <data key="n">-3</data></node>
    <node id="a"><data key="b">1</data><data key="s">a &amp; b &lt;c&gt; &#9731;</data>
      <data key="u">4.5</data></node>
    <node id="b"><data key="i"/><data key="b"></data><data key="y">text</data>
      <data>no key attribute: the key without an id</data></node>
    <o:node id="ghost"/>
    <node id="d"><data key="s"><![CDATA[<raw> & ]]>more<!-- c -->text<?pi x?></data>
      <data key="b">0</data>
      <o:data key="i">9</o:data></node>
    <edge source="b" target="c" id="e0"><data key="f">4.5e11</data><data key="l"> +1000 </data>
    </edge>
    <edge source="a" target="d"><data key="d">nan</data><data key="f">-0.0</data>
      <data key="d">inf</data></edge>
    <edge id="" source="c" target="z"><data key="f">Infinity</data></edge>
    <edge source="y" target="x" directed="false"/>
    <edge source="a" target="a" id="loop"/>
    <edge source="d" target="c"><data key="f">+1.0</data><desc>e</desc></edge>
    <edge source="c" target="a" id="7"><data key="l">0</data></edge>
    <data key="s">the graph</data>
    <data key="i">5</data>
  </graph>
  <data key="i">99</data>
</graphml>
"""


def test_a_hand_written_file_with_every_type_default_and_gap(tmp_path):
    path = tmp_path / "hand.graphml"
    path.write_text(HAND)
    g = _check(path)
    # by hand, what networkx's conventions give (the comparison above checks the rest):
    assert list(g) == ["c", "a", "b", "d", "z", "y", "x"]   # edge-only nodes last
    assert g.nodes["c"] == {"count": 12, "flag": False, "integer": -3}
    # booleans: '1' here, 'False' in c, '0' in d
    assert g.nodes["a"] == {"flag": True, "label": "a & b <c> \u2603", "untyped": "4.5"}
    # empty <data>: the empty string whatever the type; defaults are not applied
    assert g.nodes["b"] == {"count": "", "flag": "", "nodegraphics": "text",
                            "keyless": "no key attribute: the key without an id"}
    assert g.nodes["d"] == {"label": "<raw> & moretext", "flag": False}   # CDATA, comment, PI
    assert g.edges["b", "c"] == {"bandwidth": 4.5e11, "lanes": 1000, "id": "e0"}
    assert math.isinf(g.edges["c", "z"]["bandwidth"]) and g.edges["a", "a"] == {"id": "loop"}
    assert g.edges["a", "d"]["latency"] == math.inf   # the later of two values
    assert math.copysign(1, g.edges["a", "d"]["bandwidth"]) == -1
    assert g.graph == {"latency": 2.5e-7, "label": "the graph", "count": 5}
    # neighbours in nx.Graph(MultiGraph)'s order: by the endpoint met first, not file order
    assert list(g.adj["c"]) == ["b", "z", "d", "a"] and list(g.adj["a"]) == ["c", "d", "a"]


_KEYS = {"i": "int", "l": "long", "f": "float", "d": "double", "b": "boolean", "s": "string",
         "n": None}
_TEXTS = {"i": st.integers(-10**20, 10**20).map(str) | st.sampled_from([" 5 ", "+3", "1_0"]),
          "f": st.floats().map(repr) | st.sampled_from(["1e400", "-0.0", "NaN", " 2.5", "7"]),
          "b": st.sampled_from(["true", "false", "0", "1", "True", "FALSE", "tRuE"]),
          "s": st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")),
                       max_size=6)}
_TEXTS.update(l=_TEXTS["i"], d=_TEXTS["f"], n=_TEXTS["s"])


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


@st.composite
def _document(draw) -> str:
    keys = draw(st.lists(st.sampled_from(sorted(_KEYS)), min_size=1, max_size=7, unique=True))
    lines = ['<graphml xmlns="http://graphml.graphdrawing.org/xmlns">']
    for k in keys:
        kind = f' attr.type="{_KEYS[k]}"' if _KEYS[k] else ""
        default = (f"<default>{_escape(draw(_TEXTS[k]))}</default>"
                   if k != "n" and draw(st.booleans()) else "")
        lines.append(f'<key id="{k}" for="{draw(st.sampled_from(["node", "edge", "all"]))}" '
                     f'attr.name="{draw(st.sampled_from("abcde"))}"{kind}>{default}</key>')
    lines.append('<graph edgedefault="undirected">')

    def data() -> str:
        out = []
        for k in draw(st.lists(st.sampled_from(keys), max_size=4)):
            text = draw(st.none() | _TEXTS[k])
            out.append(f'<data key="{k}"/>' if text is None else
                       f'<data key="{k}">{_escape(text)}</data>')
        return "".join(out)

    names = draw(st.lists(st.sampled_from("pqrstuvw"), max_size=6))
    items = [f'<node id="{n}">{data()}</node>' for n in names]
    ends = st.sampled_from("pqrstuvwxy")
    pairs = draw(st.lists(st.tuples(ends, ends), max_size=10, unique_by=frozenset))
    ids = st.sampled_from(["", ' id="e"', ' id=""'])
    items += [f'<edge source="{u}" target="{v}"{draw(ids)}>{data()}</edge>' for u, v in pairs]
    lines += draw(st.permutations(items))   # nodes and edges in any order
    lines.append(data())
    lines.append("</graph></graphml>")
    return "\n".join(lines)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_document())
def test_random_documents_read_as_networkx_reads_them(text):
    """Keys of every type (or none), defaults, empty values, nodes listed twice or named
    only by edges, nodes and edges interleaved: the graph networkx reads, or, where networkx
    refuses a value (ValueError, a boolean not in its table), a one-line refusal; where
    networkx reads a number past a float's range as inf or merges a node listed twice,
    netmodel's refusal naming it."""
    path = Path(FOLDER) / "random.graphml"
    path.write_text(text)
    try:
        theirs = _networkx(path)
    except (ValueError, KeyError, TypeError) as exc:   # a value or default its type refuses
        with pytest.raises(UserError) as err:
            parse(path.read_bytes(), str(path))
        assert "\n" not in str(err.value), exc
        return
    try:
        ours = parse(path.read_bytes(), str(path))
    except UserError as err:   # what netmodel refuses and networkx reads:
        twice = re.search(r"node '(\w)' is listed twice \(lines (\d+) and (\d+)\); give "
                          r"each node once$", str(err))
        if twice:   # a node listed twice (networkx merged its data), on the lines named
            lines = text.splitlines()
            assert all(lines[int(at) - 1].startswith(f'<node id="{twice[1]}">')
                       for at in twice.groups()[1:]), str(err)
            assert int(twice[2]) < int(twice[3])
            return
        # digits grouped by '_' (networkx's int read '1_0' as 10): the one number grammar's
        grouped = re.search(r"a value of key '\w' '(\S+)' groups its digits with '_'", str(err))
        if grouped:
            assert "_" in grouped[1] and int(grouped[1]) == int(grouped[1].replace("_", ""))
            return
        # not zero, below the smallest normal float (networkx read it as 0.0 or a subnormal)
        below = re.search(r"key '\w' holds the number (\S+), below the smallest number "
                          r"netmodel reads", str(err))
        if below:
            assert below[1] in text and abs(float(below[1])) < 2.2250738585072014e-308, str(err)
            return
        # a float past its range
        number = re.search(r"holds the number (\S+), beyond the range of a float", str(err))
        assert number and number[1] in text and math.isinf(float(number[1])), str(err)
        assert "inf" not in number[1].lower()   # networkx read it as inf
        return
    assert_same(ours, theirs)


FOLDER = __import__("tempfile").mkdtemp(prefix="netmodel-graphml-read-")


def test_repeated_values_are_one_object(tmp_path):
    """A fabric repeats a few values over all its nodes and links: each key converts a text
    once and every element shares the value (networkx made a new str or float per element;
    the 65,536-GPU fat tree read in 0.26 GB, against 0.30 GB as JSON and 1.15 GB before)."""
    path = tmp_path / "f.graphml"
    write_graph(build("fat-tree:k=4"), path)
    g = read_graph(path)
    kinds = {id(d["kind"]) for _, d in g.nodes(data=True) if d["kind"] == "gpu"}
    bandwidths = {id(b) for *_, b in g.edges(data="bandwidth")}
    assert len(kinds) == 1 and len(bandwidths) == len(set(nx.get_edge_attributes(
        g, "bandwidth").values())) == 1


def _fabric_text(tmp_path: Path) -> str:
    path = tmp_path / "base.graphml"
    write_graph(build("single-switch:n=4"), path)
    return path.read_text()


@pytest.mark.parametrize("edit, said", [
    # networkx read these, other than the file says (or as GraphML does not mean them)
    (lambda t: t.replace('<data key="d8">switch</data>',
                         '<data key="d8"><y:ShapeNode xmlns:y="http://www.yworks.com/xml/'
                         'graphml"/></data>', 1),   # networkx dropped the node's kind
     ": a <data> or <default> holds an element <ShapeNode>; a fabric's values are text"),
    (lambda t: t.replace("</graphml>", '<key id="d8" for="node" attr.name="kind" '
                         'attr.type="int" /></graphml>'),   # networkx retyped every kind
     " is not a readable graphml fabric: a <key> after the <graph>; GraphML declares its keys "
     "first"),
    (lambda t: t.replace('<edge source="nvs0" target="gpu0">',
                         '<edge source="nvs0" target="gpu0" directed="true">'),
     ": a fabric is an undirected simple graph: edge 'nvs0'-'gpu0' is directed='true'"),
    # networkx read a MultiGraph (refused without naming the edge)
    (lambda t: t.replace("  </graph>", '    <edge source="gpu1" target="nvs0" />\n  </graph>'),
     ": edge 'gpu1'-'nvs0' is listed twice (lines 86 and 112); a fabric is an undirected "
     "simple graph: merge parallel cables into one edge with 'links'"),
    # networkx merged a node listed twice: here gpu1's data went into gpu0 (h247)
    (lambda t: t.replace('<node id="gpu1">', '<node id="gpu0">'),
     ": node 'gpu0' is listed twice (lines 60 and 65); give each node once"),
    # networkx failed, and the line said 'data refers to key 'short', which no <key> declares'
    (lambda t: t.replace('attr.type="long"', 'attr.type="short"', 1),
     " is not a readable graphml fabric: <key> 'd18' has attr.type 'short'; GraphML's types "
     "are float, int, integer, yfiles, string, long, double, boolean"),
    (lambda t: t.replace('attr.name="lanes" ', ""),
     " is not a readable graphml fabric: <key> 'd18' has no attr.name"),
    # networkx read a node 'None' and edges from it
    (lambda t: t.replace('<node id="gpu0">', "<node>"),
     " is not a readable graphml fabric: a <node> has no id"),
    (lambda t: t.replace('<edge source="nvs0" target="gpu0">', '<edge target="gpu0">'),
     " is not a readable graphml fabric: an <edge> has no source"),
    # a default its type cannot hold (networkx: ValueError, or TypeError for an empty one)
    (lambda t: t.replace('attr.name="group" attr.type="long" />',
                         'attr.name="group" attr.type="long"><default>many</default></key>'),
     " is not a readable graphml fabric: a value of key 'group' (attr.type 'long') is 'many', "
     "not a whole number (a number is ASCII digits 0-9 "),
    (lambda t: t.replace('attr.name="group" attr.type="long" />',
                         'attr.name="group" attr.type="long"><default /></key>'),
     " is not a readable graphml fabric: the <default> of key 'group' is empty"),
])
def test_what_networkx_reads_otherwise_is_refused_in_one_line(tmp_path, edit, said):
    path = tmp_path / "f.graphml"
    text = edit(_fabric_text(tmp_path))
    assert text != _fabric_text(tmp_path)
    path.write_text(text)
    with pytest.raises(UserError) as err:
        read_graph(path)
    assert str(err.value).startswith(f"{path}{said}"), str(err.value)
    assert "\n" not in str(err.value)


def test_graphml_counts_are_checked_before_the_graph_is_made(tmp_path, monkeypatch):
    path = tmp_path / "f.graphml"
    write_graph(build("single-switch:n=4"), path)
    monkeypatch.setenv("NETMODEL_MAX_FABRIC_EDGES", "3")
    with pytest.raises(UserError, match=re.escape(f"{path}: the fabric would have about 5 "
                                                  "nodes and 4 edges, over the limit")):
        read_graph(path)


@pytest.mark.parametrize("encoding, said", [
    ("UT", "its encoding: unknown encoding: UT"),
    ("shift_jis", "its encoding: multi-byte encodings are not supported"),
    ("rot13", "its encoding: 'rot13' is not a text encoding"),
])
def test_an_encoding_expat_cannot_use_is_one_line(tmp_path, encoding, said):
    """expat asks Python's codecs for an encoding it does not know itself: LookupError or
    ValueError came out of the reader as a traceback (found by fuzzing the new reader; the
    old pre-pass was the same expat call)."""
    path = tmp_path / "f.graphml"
    path.write_text(f"<?xml version='1.0' encoding='{encoding}'?><graphml "
                    "xmlns='http://graphml.graphdrawing.org/xmlns'><graph/></graphml>")
    with pytest.raises(UserError) as err:
        read_graph(path)
    assert str(err.value).startswith(f"{path} is not a readable graphml fabric: {said}")


_HEAD = ('<graphml xmlns="http://graphml.graphdrawing.org/xmlns">'
         '<key id="b" for="node" attr.name="flag" attr.type="boolean"/>'
         '<key id="i" for="node" attr.name="n" attr.type="int"/>'
         '<graph edgedefault="undirected">')
_MAYBE = ("a value of a boolean <key> is 'maybe', not true, false, 1 or 0 (key 'flag')")


@pytest.mark.parametrize("body, said", [
    # a value's end tag is read at the next start tag (h243): a value met before an XML
    # error is still the error named, as when each end tag had its handler
    ('<node id="a"><data key="b">maybe</data></wrong></node></graph></graphml>', _MAYBE),
    ('<node id="a"><data key="b">maybe</data>&bogus;</node></graph></graphml>', _MAYBE),
    ('<node id="a"><data key="i">1</data><data key="b">maybe</data></node></graph></graphml>x',
     _MAYBE),
    ('<node id="a"><data key="b">maybe</data></node></graph>', _MAYBE),   # no root end
    # not met: the XML error
    # (expat's columns count from 0: the end of the text; where '<x/>' begins)
    ('<node id="a"><data key="b">maybe',
     f"no element found: line 1, column {len(_HEAD) + 32}"),
    ('<node id="a"><data key="i">4</data></node></graph></graphml><x/>',
     f"junk after document element: line 1, column {len(_HEAD) + 60}"),
])
def test_a_value_before_an_xml_error_is_named_first(body, said):
    with pytest.raises(UserError) as err:
        parse((_HEAD + body).encode(), "f")
    assert str(err.value) == f"f is not a readable graphml fabric: {said}"


@pytest.mark.parametrize("body, nodes, edges", [
    # the last item's end, its graph's and root's are read after the document's end
    ('<node id="a"><data key="i">4</data></node></graph></graphml>', [("a", {"n": 4})], []),
    # no blank text anywhere; an empty item; an edge after nodes; items after an element
    # netmodel skips (<desc>) and an empty <data>
    ('<node id="a"><data key="i">4</data><desc>d</desc><data key="b"/></node><node id="b"/>'
     '<edge source="a" target="b"><data key="i">5</data></edge></graph></graphml>',
     [("a", {"n": 4, "flag": ""}), ("b", {})], [("a", "b", {"n": 5})]),
    # text that spells the <data> tag's name is text, not an end tag
    ('<node id="a"><data key="i">7</data>\n<data key="b">true</data>'
     'http://graphml.graphdrawing.org/xmlns}data</node></graph></graphml>',
     [("a", {"n": 7, "flag": True})], []),
])
def test_items_end_wherever_their_end_tags_are(body, nodes, edges):
    g = parse((_HEAD + body).encode(), "f")
    assert list(g.nodes(data=True)) == nodes and list(g.edges(data=True)) == edges
