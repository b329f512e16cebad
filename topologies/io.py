"""Fabrics to and from files: node-link JSON (``.json``) and GraphML (``.graphml``).

Both keep every node, edge and graph attribute of the schema with its type, the GPU types
that are not the catalog's own (``gpu_types``, as their SI fields) and the units of every
quantity (:data:`~topologies.schema.UNITS`: a ``units`` graph attribute in JSON, and in
GraphML a ``<desc>`` in each attribute's ``<key>``). A graph read back is validated, so a
user's own fabric that passes :func:`~topologies.schema.validate` works everywhere a built
one does. Files are written atomically (:func:`compute.outputs.atomic_write`): a failed
write leaves nothing behind.

The JSON shape is networkx's node-link format with the key ``edges`` (``links``, the key of
older networkx versions, is read too)::

    {"directed": false, "multigraph": false,
     "graph": {"name": ..., "spec": ..., "gpus": N, "builder": ..., "args": {...},
               "units": {"bandwidth": "bytes/s per direction", "latency": "s", ...}},
     "nodes": [{"id": "gpu0", "kind": "gpu", "gpu": "H100-SXM", ...}, ...],
     "edges": [{"source": "gpu0", "target": "nvs0", "bandwidth": 4.5e11, ...}, ...]}

netmodel reads and writes this itself (not with ``networkx.node_link_data``, whose
``edges=``/``link=`` keyword changed between networkx 3.2 and 3.4), so every networkx
version the project allows reads and writes the same files. ``networkx.node_link_graph``
reads them too, told the key: ``node_link_graph(data, edges="edges")`` (networkx 3.4 and
later; 3.2 and 3.3 spell it ``link="edges"``). Without the keyword only networkx 3.6 and
later read them: earlier versions look for ``links`` (3.4 and 3.5 with a FutureWarning) and
fail with ``KeyError: 'links'``. ``networkx.read_graphml`` reads the GraphML files as they
are, every number and boolean typed. In GraphML, graph attributes that are tables (``args``, ``gpu_types``,
``units``) are stored as JSON text.

GraphML is read by :func:`topologies.graphml.parse` in one streaming expat pass that
builds no tree of elements (networkx's reader took 4x JSON's time and 5x its memory); the
graph is the one ``networkx.read_graphml`` reads.

Hostile files get one-line UserErrors that name the file, never a traceback: a file over
:func:`~topologies.limits.max_file_bytes` is refused before it is read, JSON nested deeper
than :data:`~topologies.limits.MAX_DEPTH` before it is parsed (so deep nesting cannot
exhaust the stack; these and JSON's other guards are :mod:`topologies.io_guards`'); the
GraphML pass refuses a DOCTYPE (entity expansion), elements nested
deeper than MAX_DEPTH and the GraphML parts no fabric has as it meets them; node and edge
counts are checked against the size limits before a graph is made, a number past a
float's range (``1e400``, which Python reads as inf) is named as typed
(:func:`compute.config_files.finite_float`, as in every other file), a JSON document's
key other than node-link's (``edge`` for ``edges``) and a ``units`` entry for a quantity
netmodel has none for are refused, and wrong types anywhere are named by :func:`~topologies.schema.validate` or the reader.

>>> import tempfile, os
>>> from topologies import ring
>>> folder = tempfile.mkdtemp()
>>> path = os.path.join(folder, "ring.graphml")
>>> write_graph(ring(4), path) == path
True
>>> read_graph(path).edges["gpu0", "gpu1"]["bandwidth"]
225000000000.0
"""

from __future__ import annotations

import gc
import json
from contextlib import contextmanager
from os import PathLike
from pathlib import Path

import networkx as nx

from compute.errors import UserError, find_name
from compute.gpu_facts import note_gpu_file_facts
from compute.hardware import GpuSpec, catalog
from compute.outputs import atomic_write
from compute.validate import MAX_TEXT_LENGTH, describe, file_values
from topologies.graphml import ONCE
from topologies.graphml import parse as parse_graphml
from topologies.io_guards import check_file_size, fabric_file, load_json, read_file_bytes
from topologies.limits import check_size
from topologies.schema import (
    HOP_LATENCY,
    LATENCY_SCALE,
    UNITS,
    check_switches_linked,
    validate,
)
from topologies.schema_gpu import check_gpu_type, gpu_spec_from_dict
from topologies.schema_text import check_node_ids, invalid, text_problem

__all__ = ["DESCRIPTIONS", "FORMATS", "JSON_ATTRIBUTES", "read_fabric_bytes", "read_graph",
           "write_graph"]

FORMATS = (".json", ".graphml")
#: Graph attributes that are tables: JSON text in GraphML.
JSON_ATTRIBUTES = ("args", "gpu_types", "gpu_file_facts", "units", "ocs_cabling")
_BOOKKEEPING = ("node_default", "edge_default")  # the GraphML reader's


def _format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise UserError(f"{path}: unknown fabric file type {suffix or '(none)'!r}; "
                        f"allowed: {', '.join(FORMATS)}")
    return suffix


# ---------------------------------------------------------------- writing

def _graph_attributes(graph: nx.Graph) -> dict:
    """Graph attributes as a file holds them: GPU types as SI dicts, units added."""
    attrs = {k: v for k, v in graph.graph.items() if k not in _BOOKKEEPING}
    if attrs.get("gpu_types"):
        attrs["gpu_types"] = {n: s.to_dict() for n, s in attrs["gpu_types"].items()}
    else:
        attrs.pop("gpu_types", None)
    attrs["units"] = dict(UNITS)
    return attrs


def _json_document(graph: nx.Graph) -> dict:
    return {
        "directed": False, "multigraph": False, "graph": _graph_attributes(graph),
        "nodes": [{"id": n, **d} for n, d in graph.nodes(data=True)],
        "edges": [{"source": u, "target": v, **d} for u, v, d in graph.edges(data=True)],
    }


def _json_lines(graph: nx.Graph):
    """The text ``json.dump(_json_document(graph), fh, indent=1)`` writes, in pieces.

    With ``indent`` json encodes in Python, value by value (3.0 s for a 131,072-GPU fat
    tree); here a node's or edge's scalar attributes become lines cached per (name, type,
    value), each scalar written as json writes it (``encode_basestring_ascii``,
    ``int.__repr__``, ``float.__repr__``, NaN and Infinity, true/false/null). An item with
    anything else (a table, a subclass, a key that is not a string, an attribute named
    like its id) is encoded by json itself, its lines indented to its place (json writes a
    newline only between items, never inside a string)."""
    from json.encoder import encode_basestring_ascii as quote

    head = json.dumps({"directed": False, "multigraph": False,
                       "graph": _graph_attributes(graph)}, indent=1)
    yield head[:-2]   # without its closing "\n}"
    known: dict = {}   # (name, type, value) -> '   "name": value'; not for zeros (-0.0)
    ends: dict = {}    # the same for the id, source and target (an attribute may share a name)
    scalars = {str: quote, int: int.__repr__, bool: lambda v: "true" if v else "false",
               type(None): lambda v: "null",
               float: lambda v: ("NaN" if v != v else "Infinity" if v == float("inf") else
                                 "-Infinity" if v == -float("inf") else float.__repr__(v))}

    def item(own: tuple, data: dict) -> str:
        lines = []
        for at in own:
            line = ends.get(at)
            if line is None:
                if at[1] not in scalars:   # a node id json writes its way
                    return whole(own, data)
                line = f"   {quote(at[0])}: {scalars[at[1]](at[2])}"
                if at[2] != 0:
                    ends[at] = line
            lines.append(line)
        for k, v in data.items():
            at = (k, type(v), v)
            try:
                line = known.get(at)
            except TypeError:   # unhashable: a table
                break
            if line is None:
                if type(k) is not str or at[1] not in scalars or k in own_names:
                    break
                line = f"   {quote(k)}: {scalars[at[1]](v)}"
                if v != 0:
                    known[at] = line
            lines.append(line)
        else:
            return "{\n" + ",\n".join(lines) + "\n  }"
        return whole(own, data)

    def whole(own: tuple, data: dict) -> str:
        """The item as json writes it, at its place: two levels in."""
        return json.dumps({name: value for name, _, value in own} | data,
                          indent=1).replace("\n", "\n  ")

    for name, pairs in (
            ("nodes", (((("id", type(n), n),), d) for n, d in graph.nodes(data=True))),
            ("edges", (((("source", type(u), u), ("target", type(v), v)), d)
                       for u, v, d in graph.edges(data=True)))):
        own_names = ("id",) if name == "nodes" else ("source", "target")
        first = True
        for own, data in pairs:
            yield (f',\n "{name}": [\n  ' if first else ",\n  ") + item(own, data)
            first = False
        yield f',\n "{name}": []' if first else "\n ]"
    yield "\n}\n"


#: What each schema attribute is (GraphML key descriptions; units from UNITS are added).
DESCRIPTIONS = {
    "kind": "node kind: gpu, switch or ocs",
    "gpu": "GPU type: a gpu_types entry or a catalog name",
    "tier": "switch tier: 0 scale-up, 1 leaf, 2 spine, 3 core",
    "radix": "switch ports",
    "in_network_reduction": "the switch can reduce data itself",
    "ports": "OCS ports",
    "reconfiguration_time": "time to set up a new set of circuits",
    "bandwidth": "per edge, summed over its cables",
    "latency": "propagation and port overhead (edge); traversal (switch, OCS)",
    "medium": "link medium (board and on-package: traces, not cables)",
    "lanes": "electrical/optical lanes, summed over cables",
    "links": "physical cables the edge stands for",
    "gpus": "GPU nodes",
    "spec": "display spec string",
    "builder": "the builder that made the fabric",
    "args": "JSON text: the builder's non-default arguments",
    "gpu_types": "JSON text: GPU types not in the catalog, by name",
    "gpu_file_facts": "JSON text: what GPU files say of the GPU types beside their specs "
                      "(derive_from, fraction, die, host_power_W), by name",
    "units": "JSON text: the unit of every quantity",
}


def _key_description(name: str) -> str | None:
    what = DESCRIPTIONS.get(name)
    unit = UNITS.get(name)
    if what is None and unit is None:
        return None
    return f"{name}: {what or name}" + (f" [{unit}]" if unit else "")


def _write_graphml(graph: nx.Graph, tmp: str, path: Path) -> None:
    """Write ``graph`` as GraphML into ``tmp``: the bytes networkx's ``GraphMLWriter``
    (pretty-printed, through ElementTree) writes, with each key's ``<desc>``, streamed
    line by line (:func:`_graphml_lines`) instead of built as a tree of elements first: a
    131,072-GPU fat tree's 2.7 million elements took 14.5 s and 1.6 GB that way. A graph
    attribute ``id`` (which networkx makes the ``<graph>`` element's id) goes the tree's
    way (:func:`_write_graphml_tree`)."""
    attrs = _graphml_attributes(graph)
    if "id" in attrs:
        if not isinstance(attrs["id"], str):   # ElementTree raised TypeError, a traceback
            raise UserError(f"cannot write {path} as GraphML: graph attribute 'id' must be "
                            f"text (GraphML writes it as the <graph> element's id), got "
                            f"{describe(attrs['id'])}; write .json instead")
        _write_graphml_tree(graph, tmp, path)
        return
    # ElementTree's own file wrapper: UTF-8, characters it cannot encode as references
    with open(tmp, "w", encoding="utf-8", errors="xmlcharrefreplace", newline="\n") as fh:
        fh.writelines(_graphml_lines(graph, attrs, path))


def _graphml_attributes(graph: nx.Graph) -> dict:
    """The graph attributes a GraphML file holds: tables as JSON text."""
    attrs = _graph_attributes(graph)
    for key in JSON_ATTRIBUTES:
        if key in attrs:
            attrs[key] = json.dumps(attrs[key], sort_keys=False)
    return attrs


def _graphml_lines(graph: nx.Graph, attrs: dict, path: Path):
    """The lines of the GraphML document of ``graph`` with graph attributes ``attrs``, as
    ``GraphMLWriter(prettyprint=True)`` and ElementTree write it (networkx 3.2-3.6): keys
    named ``d0, d1, ...`` in the order their (name, type, scope) first appears (graph
    attributes, then nodes, then edges) and listed last first, each with its
    :func:`_key_description`; the graph's own data after its edges; every value as
    ``str(value)``, escaped as ElementTree escapes text and attributes."""
    from xml.etree.ElementTree import _escape_attrib, _escape_cdata

    from networkx.readwrite.graphml import GraphML

    types = GraphML()
    types.construct_types()
    xml_type = types.xml_type  # python type -> GraphML type, numpy's included
    keys: dict = {}        # (name, xml type, scope) -> key id
    prefix: dict = {}      # (name, python type, scope) -> '<data key="dN">'

    def key_of(name, kind, scope):
        hit = prefix.get((name, kind, scope))
        if hit is None:
            if kind not in xml_type:
                raise UserError(f"cannot write {path} as GraphML: GraphML writer does not "
                                f"support {kind} as data values. GraphML holds only text, "
                                "numbers and booleans; write .json instead")
            entry = (str(name), xml_type[kind], scope)
            kid = keys.get(entry)
            if kid is None:
                kid = keys[entry] = f"d{len(keys)}"
            hit = prefix[(name, kind, scope)] = f'<data key="{kid}">'
        return hit

    # the keys, in the order networkx makes them
    for k, v in attrs.items():
        key_of(k, type(v), "graph")
    for scope, datas in (("node", (d for _, d in graph.nodes(data=True))),
                         ("edge", (d for _, _, d in graph.edges(data=True)))):
        for d in datas:
            for k, v in d.items():
                if (k, type(v), scope) not in prefix:
                    key_of(k, type(v), scope)
    yield "<?xml version='1.0' encoding='utf-8'?>\n"
    yield ('<graphml xmlns="http://graphml.graphdrawing.org/xmlns" '
           'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
           'xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns '
           'http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">\n')
    for (name, kind, scope), kid in reversed(keys.items()):
        head = (f'  <key id="{kid}" for="{scope}" attr.name="{_escape_attrib(name)}" '
                f'attr.type="{kind}"')
        text = _key_description(name)
        yield (f"{head} />\n" if text is None else
               f"{head}>\n    <desc>{_escape_cdata(text)}</desc>\n  </key>\n")

    def data(indent, head, value):
        text = str(value)
        return f"{indent}{head}{_escape_cdata(text)}</data>\n" if text else \
            f"{indent}{head[:-1]} />\n"  # ElementTree's empty element

    graph_data = [data("    ", key_of(k, type(v), "graph"), v) for k, v in attrs.items()]
    empty = not graph_data and not graph.number_of_nodes() and not graph.number_of_edges()
    kind = "directed" if graph.is_directed() else "undirected"
    if empty:
        yield f'  <graph edgedefault="{kind}" />\n</graphml>\n'
        return
    yield f'  <graph edgedefault="{kind}">\n'

    # a data line per (name, type, value); not for zeros (0.0 == -0.0, printed apart)
    lines_of: dict = {"node": {}, "edge": {}}

    def body(head, items, scope):
        if not items:
            return f"    {head} />\n"
        lines, known = [f"    {head}>\n"], lines_of[scope]
        for k, v in items.items():
            at = (k, type(v), v)
            line = known.get(at)
            if line is None:
                line = data("      ", prefix[at[:2] + (scope,)], v)
                if v != 0:
                    known[at] = line
            lines.append(line)
        lines.append(f"    </{head[1:5]}>\n")
        return "".join(lines)

    for n, d in graph.nodes(data=True):
        yield body(f'<node id="{_escape_attrib(str(n))}"', d, "node")
    for u, v, d in graph.edges(data=True):
        yield body(f'<edge source="{_escape_attrib(str(u))}" '
                   f'target="{_escape_attrib(str(v))}"', d, "edge")
    yield from graph_data
    yield "  </graph>\n</graphml>\n"


def _write_graphml_tree(graph: nx.Graph, tmp: str, path: Path) -> None:
    """:func:`_write_graphml` through networkx's ``GraphMLWriter`` and ElementTree (the
    whole document as a tree of elements first); the reference the streamed writer is
    tested against."""
    from networkx.readwrite.graphml import GraphMLWriter

    view = graph.copy(as_view=True)  # shares nodes and edges; its graph dict is its own
    view.graph = _graphml_attributes(graph)
    writer = GraphMLWriter(encoding="utf-8", prettyprint=True)
    try:
        writer.add_graph_element(view)
    except nx.NetworkXError as exc:
        raise UserError(f"cannot write {path} as GraphML: {exc} GraphML holds only text, "
                        "numbers and booleans; write .json instead") from None
    for key in writer.xml.iter("key"):
        text = _key_description(key.get("attr.name", ""))
        if text:
            desc = writer.myElement("desc")
            desc.text = text
            key.insert(0, desc)
    with open(tmp, "wb") as fh:
        writer.dump(fh)


def write_graph(graph: nx.Graph, path: str | PathLike[str]) -> str:
    """Validate ``graph`` and write it to ``path`` (``.json`` or ``.graphml``); return the
    path."""
    validate(graph, check_connected=False)
    if not isinstance(path, str | PathLike):   # None or 5 raised TypeError from Path()
        raise UserError(f"fabric file must be a path, got {describe(path)}")
    path = Path(path)
    kind = _format(path)
    for spec in (graph.graph.get("gpu_types") or {}).values():   # what the file could not
        check_gpu_type(f"{path}: gpu_types", spec)                # read back, unwritten

    def write(tmp: str) -> None:
        if kind == ".json":
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.writelines(_json_lines(graph))
        else:
            _write_graphml(graph, tmp, path)

    return atomic_write(path, write, what="fabric file")


# ---------------------------------------------------------------- reading: documents

def _node_id(value: object, where: str, what: str) -> str | int:
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise UserError(f"{where}: {what} must be a string or an integer node id, got "
                    f"{describe(value)}")


def _at(items: list, item: object) -> int:
    """The position of ``item`` itself (not an equal one) in ``items``."""
    return next(i for i, other in enumerate(items) if other is item)


#: The keys of a node-link document (``links``: older networkx's name for ``edges``).
_DOCUMENT_KEYS = ("directed", "multigraph", "graph", "nodes", "edges", "links")


def _graph_from_json(data: object, where: str) -> nx.Graph:
    if not isinstance(data, dict) or "nodes" not in data:
        raise UserError(f"{where}: expected a node-link JSON object with 'nodes' and 'edges'")
    unknown = [k for k in data if k not in _DOCUMENT_KEYS]
    if unknown:   # 'edge' for 'edges' read as a fabric of no links ('cannot reach')
        raise UserError(f"{where}: unknown key(s) {', '.join(map(describe, unknown[:5]))} in "
                        f"the node-link document; allowed: {', '.join(_DOCUMENT_KEYS)}")
    if "edges" in data and "links" in data:   # 'links' was dropped without a word
        raise UserError(f"{where}: gives both 'edges' and 'links' (older networkx's name for "
                        "them); give one")
    for key in ("directed", "multigraph"):
        if data.get(key, False) is not False:
            raise UserError(f"{where}: a fabric is an undirected simple graph ({key} must be "
                            f"false, got {describe(data.get(key))})")
    attrs = data.get("graph", {})
    nodes = data["nodes"]
    edges_key = "edges" if "edges" in data else "links"
    edges = data.get(edges_key, [])
    for name, value, kind in (("graph", attrs, dict), ("nodes", nodes, list),
                              (edges_key, edges, list)):
        if not isinstance(value, kind):
            raise UserError(f"{where}: '{name}' must be a JSON "
                            f"{'object' if kind is dict else 'array'}, got {describe(value)}")
    check_size(where, len(nodes), len(edges))
    graph = nx.Graph()
    graph.graph.update(attrs)
    # The parsed objects become the graph's own dicts, their ids taken out (as
    # topologies.graphml fills its graph): add_node and add_edge copied each of them, and
    # the copies lived beside the document until it was let go.
    seen, adj = graph._node, graph._adj
    for item in nodes:
        if not isinstance(item, dict) or "id" not in item:
            raise UserError(f"{where}: every node must be an object with an 'id', got "
                            f"{describe(item)}")
        node = item["id"]
        if type(node) is not str and type(node) is not int:
            _node_id(node, where, "a node's id")   # refused: not a string or an integer
        if node in seen:   # positions found only now: no count kept in the loop
            first, again = list(seen).index(node), _at(nodes, item)
            raise UserError(f"{where}: node {describe(node)} is listed twice "
                            f"(nodes[{first}] and nodes[{again}]); {ONCE['node']}")
        del item["id"]
        seen[node] = item
        adj[node] = {}
    for item in edges:
        if not isinstance(item, dict) or "source" not in item or "target" not in item:
            raise UserError(f"{where}: every edge must be an object with 'source' and "
                            f"'target', got {describe(item)}")
        u, v = item["source"], item["target"]
        if type(u) is not str and type(u) is not int:
            _node_id(u, where, "an edge's source")
        if type(v) is not str and type(v) is not int:
            _node_id(v, where, "an edge's target")
        row = adj.get(u)
        if row is None or v not in adj:
            end = v if row is not None else u
            raise UserError(f"{where}: edge {describe(u)}-{describe(v)} names node {describe(end)}, "
                            "which is not in 'nodes'")
        if v in row:
            first, again = _at(edges, row[v]), _at(edges, item)
            raise UserError(f"{where}: edge {describe(u)}-{describe(v)} is listed twice "
                            f"({edges_key}[{first}] and {edges_key}[{again}]); {ONCE['edge']}")
        del item["source"], item["target"]
        row[v] = item
        adj[v][u] = item
    return graph


def _graph_from_graphml(raw: bytes, where: str) -> nx.Graph:
    # one streaming pass: checks, then the graph in bulk; an edge to a node no <node>
    # declares refused, as in JSON (networkx added it, and the schema told it 'kind None'),
    # and a <key> id declared twice (networkx kept the last)
    graph = parse_graphml(raw, where, fabric=True)
    for key in _BOOKKEEPING:
        graph.graph.pop(key, None)
    for key in JSON_ATTRIBUTES:
        if isinstance(graph.graph.get(key), str):
            graph.graph[key] = load_json(graph.graph[key], f"{where}: graph attribute {key!r}")
    return graph


def _check_title(graph: nx.Graph, where: str, stem: str) -> None:
    """Refuse a graph ``name`` or ``spec`` with a :func:`~topologies.schema_text.text_problem`
    before the schema does, to say where a name the file does not give came from
    (``stem``); a non-text or overlong one is left to the schema's message."""
    for key in ("name", "spec"):
        value = graph.graph[key]
        if isinstance(value, str) and len(value) <= MAX_TEXT_LENGTH \
                and (problem := text_problem(value)):
            raise UserError(f"{where}: the fabric's {key} {describe(value)}"
                            f"{stem if key == 'name' else ''} {problem}")


def _finish(graph: nx.Graph, path: Path, where: str) -> nx.Graph:
    check_node_ids(graph, where)   # named as the file's, before the schema's other checks
    attrs = graph.graph
    units = attrs.pop("units", None)
    if units is not None:
        if not isinstance(units, dict):
            raise UserError(f"{where}: 'units' must be a table of quantity: unit, got "
                            f"{describe(units)}")
        unknown = [k for k in units if k not in UNITS]
        if unknown:   # 'bandwith': 'Gbps' was passed over, the values read as bytes/s
            raise UserError(f"{where}: 'units' names quantity(ies) "
                            f"{', '.join(map(describe, unknown[:5]))} netmodel has no unit "
                            f"for; allowed: {', '.join(UNITS)}")
        for key, unit in units.items():
            if unit != UNITS[key]:
                raise UserError(f"{where}: {key} is in {describe(unit)}; netmodel reads "
                                f"{UNITS[key]!r} (convert the file)")
    cabling = attrs.get("ocs_cabling")
    if isinstance(cabling, dict) and isinstance(cabling.get("fibres"), dict):
        # the record's columns as realize keeps them (tuples, one object shared); the
        # schema checks them
        attrs["ocs_cabling"] = {**cabling, "fibres": {
            k: tuple(v) if isinstance(v, list) else v for k, v in cabling["fibres"].items()}}
    own = attrs.get("gpu_types")
    if own is not None:
        if not isinstance(own, dict):
            raise UserError(f"{where}: 'gpu_types' must be a table of GPU name: fields, got "
                            f"{describe(own)}")
        attrs["gpu_types"] = {name: spec if isinstance(spec, GpuSpec) else
                              gpu_spec_from_dict(name, spec, f"{where}: gpu_types")
                              for name, spec in own.items()}
    _gpu_names_looked_up(graph, attrs.get("gpu_types") or {})
    named = "name" in attrs
    attrs.setdefault("name", path.stem)
    attrs.setdefault("spec", "")
    _check_title(graph, where, "" if named else " (the file's stem: it gives none)")
    try:
        validate(graph)
        check_switches_linked(graph)
        _check_hop_latency(graph)
    except UserError as exc:   # the file named once, here, for every command that reads it
        raise UserError(f"{where}: {exc}") from None
    # what GPU files say of its GPU types (derivation, die table, host power), known from
    # here on as if their GPU file had been read: the collective calibration's generation,
    # the price, package cost and host power, an instance rebuilt from its builder's args
    if "gpu_file_facts" in attrs:
        note_gpu_file_facts(attrs.get("gpu_types") or {}, attrs["gpu_file_facts"],
                            f"{where}: gpu_file_facts")
    return graph


def _gpu_names_looked_up(graph: nx.Graph, own: dict) -> None:
    """Each GPU node's type read as a GPU named anywhere else is
    (:func:`~compute.errors.find_name`: blanks at either end dropped, case aside), and
    written as the graph's ``gpu_types`` or the catalog spell it: ``'h100-sxm'`` or
    ``'H100-SXM '`` is the catalog's ``'H100-SXM'``, as ``--gpu`` and a scenario file's
    ``gpu`` read them. A name of neither is left for the schema to refuse."""
    table = {**catalog(), **own}
    read: dict = {}   # each name typed, once
    for data in graph._node.values():
        t = data.get("gpu")
        if t.__class__ is str and t not in table and data.get("kind") == "gpu":
            if t not in read:
                read[t] = find_name(table, t) if len(t) <= MAX_TEXT_LENGTH else None
            if read[t] is not None:
                data["gpu"] = read[t]


def _check_hop_latency(graph: nx.Graph) -> None:
    """Refuse a file's ``hop_latency`` (the latency an adjustment added to each of its
    links, :func:`topologies.common.note_latency_adjustment`) above a link's latency: each
    is its as-built one times ``latency_scale`` plus the hop, so at least the hop. A file's
    hop of 1 s beside links of 100 ns read every cable back as 0 m long
    (:func:`topologies.common.cable_length`), its network bill the cheaper."""
    hop = graph.graph.get(HOP_LATENCY, 0.0)
    if not hop:
        return
    u, v, least = min(graph.edges(data="latency"), key=lambda e: e[2])
    if hop > least * (1 + 1e-9):
        invalid(f"graph attribute {HOP_LATENCY!r} is {describe(hop)} s but edge "
                f"{describe(u)}-{describe(v)} has a latency of {describe(least)} s; each "
                f"link's latency is its as-built one times {LATENCY_SCALE!r} plus the hop, "
                f"so at least the hop")


def _fabric_path(path: object) -> tuple[Path, str]:
    """``path`` of a fabric file to read, and its format (:data:`FORMATS`); refused in one
    line where it is no path or its suffix no format's."""
    if not isinstance(path, str | Path) or not str(path).strip():
        raise UserError(f"a fabric file must be a path, got {describe(path)}")
    path = Path(path)
    return path, _format(path)


def read_fabric_bytes(path: str | Path) -> bytes:
    """The bytes of the fabric file ``path`` as :func:`read_graph` reads them: refused (one
    line, naming the file) for an unknown suffix, a missing path, a directory or a file over
    :func:`~topologies.limits.max_file_bytes`, before it is read. For a caller that keys a
    cache by the file's content (pass them back to :func:`read_graph` as ``raw``)."""
    return read_file_bytes(_fabric_path(path)[0])


def read_graph(path: str | Path, raw: bytes | None = None) -> nx.Graph:

    """The fabric saved in ``path`` (``.json`` or ``.graphml``), validated; ``raw``: its
    bytes when already read (:func:`read_fabric_bytes`).

    Raises UserError (one line, naming the file) for a missing, oversized, too deeply
    nested, malformed or invalid file.
    """
    path, kind = _fabric_path(path)
    where = str(path)
    with _collector_paused(), file_values(path):   # a JSON file's null said as null
        if raw is None:
            raw = read_file_bytes(path)
        elif isinstance(raw, bytes | bytearray):   # read by the caller: the same limit
            check_file_size(path, len(raw))
        else:
            raise UserError(f"raw: the bytes of {fabric_file(path)} must be bytes, "
                            f"got {describe(raw)}")
        if kind == ".json":   # in a list, so that load_json lets the bytes go once decoded
            box, raw = [raw], None
            graph = _graph_from_json(load_json(box, where), where)
        else:
            graph = _graph_from_graphml(raw, where)
        return _finish(graph, path, where)


@contextmanager
def _collector_paused():
    """Python's cyclic garbage collector off for the block: reading makes a dict and a
    tuple per node and edge, none of them garbage, and the collector went through the
    growing lists of them again and again (0.4-0.5 s of 3.8 s CPU for the 131,072-GPU fat
    tree's GraphML; the same peak memory). What the block leaves is collected as usual
    once it is on again."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
