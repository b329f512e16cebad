"""GraphML fabric files read in one streaming expat pass, straight into a networkx graph.

:func:`parse` gives the graph ``networkx.read_graphml`` gives for every file it reads and
netmodel accepts (the same node ids, attributes, types, node order and adjacency order), in
a fraction of its time and memory: networkx builds the whole document as a tree of
ElementTree elements, then a ``MultiGraph`` edge by edge, then copies that into a ``Graph``
(``read_graph`` of a 65,536-GPU fat tree took 12.5 s CPU and 1.17 GB that way, a 2.5 s
safety pre-pass included; 2.9 s and 0.23 GB now, JSON 2.2 s and 0.31 GB). Here each
``<node>`` and ``<edge>`` becomes a tuple in a list as its end tag is met, its values
converted by one converter per ``<key>`` (with a small cache: a fabric repeats a few values,
and its elements share them), and the lists go into the graph in bulk.

The safety checks are made in the same pass, each a one-line :class:`UserError` naming the
file: a DOCTYPE (entity declarations could expand without bound), elements nested deeper
than :data:`~topologies.limits.MAX_DEPTH`, a root that is not ``<graphml>`` in GraphML's
namespace, a second or nested ``<graph>``, ``<port>``, ``<hyperedge>`` and ``<endpoint>``
(GraphML features no fabric has), a ``<data>`` holding elements (yEd's graphics: networkx
keeps parts of them and drops the rest), a ``<key>`` declared after the ``<graph>`` or of
a type GraphML does not define, more than :data:`MAX_KEYS` keys, a value its key's type cannot hold, a directed graph or
edge, a node or an edge listed twice (networkx merged a node's data; its lines named), a
node's, an edge's or the graph's attribute given twice (two ``<data>`` of one key or of two
keys of one ``attr.name``: networkx kept the last; refused for a fabric only; a fabric's
``<graph id>`` is its graph attribute ``id``, which networkx writes there and never read), and
node and edge counts over the size limits
(:func:`~topologies.limits.check_size`, before the graph is made).

networkx's reading, kept: values typed by their key's ``attr.type`` (``int``, ``long``,
``integer``: int; ``float``, ``double``: float; ``boolean``: true/false/1/0 in any case;
``string``, ``yfiles`` or none: str), but a number is read by the one grammar of a number
typed (:func:`compute.validate.read_number`, not Python's ``int``/``float``, which read
``1_000`` as 1000): ``16``, `` +16 ``, ``1.6e1`` (whole, so an int), ``nan`` and ``inf`` for
a float; a float past a float's range (``1e400``, which networkx reads as inf) or, not zero,
below the smallest normal float (``1e-400``, read as 0.0) is refused as typed; a ``<data>`` with no text is the empty string
whatever its type; a key's ``for`` is not checked; a ``<default>`` is checked against its
key's type but not applied to nodes or edges (networkx keeps defaults aside in
``graph['node_default']``, which netmodel drops); node ids are strings; an edge's ``id`` becomes its attribute ``id``; an edge to an
undeclared node adds that node and a ``<key>`` id declared again replaces the first (a
fabric read refuses both, naming the edge or the key: :func:`parse`'s ``fabric``);
elements of other namespaces and GraphML elements a fabric has no use for (``<desc>``) are
skipped.
"""

from __future__ import annotations

import operator
import re
import sys
import xml.parsers.expat
from decimal import Decimal, InvalidOperation
from typing import NoReturn

import networkx as nx

from compute.config_files import FloatOverflow, check_one_bom, finite_float
from compute.errors import UserError
from compute.validate import (
    NONFINITE_WORDS,
    NUMBER_PATTERN,
    NUMBER_RULE,
    ascii_digits,
    describe,
    number_text,
    read_number,
    spells_zero,
)
from topologies.limits import MAX_DEPTH, check_size, nonzero_range

__all__ = ["GRAPHML_NAMESPACE", "MAX_KEYS", "ONCE", "TYPES", "parse"]

#: The namespace a GraphML document declares on its root (http://graphml.graphdrawing.org/).
GRAPHML_NAMESPACE = "http://graphml.graphdrawing.org/xmlns"

#: What a fabric file listing a node or an edge twice is told (GraphML and JSON alike).
ONCE = {"node": "give each node once",
        "edge": "a fabric is an undirected simple graph: merge parallel cables into one edge "
                "with 'links'"}

#: A boolean ``<key>``'s words (in any case), networkx's own (its GraphML reader's
#: ``convert_bool``): no yes/no or on/off, which a spec string also reads.
_BOOLEAN = {"true": True, "false": False, "1": True, "0": False}
#: ``'true, false, 1 or 0'``: what a refusal says a boolean ``<key>`` holds.
_BOOLEAN_WORDS = ", ".join(list(_BOOLEAN)[:-1]) + f" or {list(_BOOLEAN)[-1]}"


def _boolean(text: str) -> bool:
    return _BOOLEAN[text.lower()]   # KeyError: named by the caller



def _networkx_types() -> dict:
    from networkx.readwrite.graphml import GraphML

    types = GraphML()
    types.construct_types()
    return dict(types.python_type)


#: A ``<key>``'s ``attr.type`` -> the Python type its values are read as: networkx's own
#: table (``integer`` for Gephi, ``yfiles`` for yEd), the one its writer's types come from
#: (:func:`topologies.io.write_graph`).
TYPES = _networkx_types()
_CONVERT = {int: int, float: float, bool: _boolean, str: str}   # numbers: by _number


def _number(what: str, text: str, convert) -> int | float:
    """The number of an ``int`` or ``float`` key's ``text`` by the one grammar of a number
    typed (:data:`~compute.validate.NUMBER_PATTERN`: ASCII digits, an optional sign,
    fraction and exponent, spaces around; no ``_``; a float also ``nan``/``inf``). Python's
    ``int``/``float``, which networkx reads them with, also took ``1_000`` as 1000.
    ``ValueError`` where ``text`` is no such number (named by the caller),
    :class:`~compute.errors.UserError` where the grammar refuses it by name (``1_000``), and
    where the number is out of range :class:`~compute.config_files.FloatOverflow` (a float:
    past a float's range, or not zero and below the smallest normal float, as in every data
    file: :func:`~compute.config_files.finite_float`) or :class:`_WholeOutOfRange` (an int of
    more digits than Python's ``int()`` reads), each said by the caller in one wording."""
    s = number_text(what, text).strip()
    if convert is float:
        if s.lower().lstrip("+-") in NONFINITE_WORDS:
            return float(s)   # for the schema's range to name
        if not _NUMBER.fullmatch(s):
            raise ValueError
        return finite_float(s)
    value = read_number(what, s, whole=True)
    if value is None:
        if _whole_of_too_many_digits(s):
            raise _WholeOutOfRange
        raise ValueError
    return value


class _WholeOutOfRange(ValueError):
    """A whole number of more digits than Python's ``int()`` reads."""


_NUMBER = re.compile(NUMBER_PATTERN)


def _whole_of_too_many_digits(text: str) -> bool:
    """Whether ``text``, which :func:`~compute.validate.read_number` did not read as a whole
    number, is one all the same, of more digits than Python's ``int()`` reads (``1e5000``,
    ``2.5e4305``, 4,301 nines, ``1e9999999999999999999``: an exponent past Decimal's own):
    out of range, not "not a whole number".

    >>> _whole_of_too_many_digits("1e5000"), _whole_of_too_many_digits("1.5"), _whole_of_too_many_digits("x")
    (True, False, False)
    >>> _whole_of_too_many_digits("1e9999999999999999999"), _whole_of_too_many_digits("1e-9999999999999999999")
    (True, False)
    """
    if not _NUMBER.fullmatch(text):
        return False
    try:
        d = Decimal(text)
    except InvalidOperation:   # an exponent past Decimal's (10**18): huge, or a fraction
        exponent = text.lower().partition("e")[2]
        return not exponent.startswith("-") and not spells_zero(text)
    return (d.is_finite() and d.adjusted() >= sys.get_int_max_str_digits()
            and d == d.to_integral_value())

#: Most ``<key>`` elements a GraphML fabric may declare: a fabric's schema has about 25
#: attributes, and a tool's own keys (yEd's graphics, Gephi's) a few more.
MAX_KEYS = 10_000

#: GraphML elements no fabric has: a node's ports, hyperedges and their endpoints.
_NOT_FABRIC = frozenset({"port", "hyperedge", "endpoint"})

#: Distinct texts remembered per key (a fabric has a few values per attribute; a file of
#: all-different values is converted each time, its memory bounded).
_CACHE = 4096

# What each element on the stack is: where a child's meaning comes from.
_OUTSIDE, _ROOT, _KEY, _DEFAULT, _GRAPH, _NODE, _EDGE, _DATA, _SKIP = range(9)


class _Refused(Exception):
    """A file netmodel refuses: '{file}: {message}'."""


class _Unreadable(_Refused):
    """A file that is not GraphML as networkx reads it: '{file} is not a readable graphml
    fabric: {message}'."""


class _Values(dict):
    """Text -> value for one key, converted on first sight."""

    __slots__ = ("convert", "name", "kind")

    def __init__(self, convert, name: str, kind: str) -> None:
        super().__init__()
        self.convert, self.name, self.kind = convert, name, kind

    def __missing__(self, text: str):
        if self.convert is not str and not text.isascii():
            try:
                ascii_digits(f"a value of key {describe(self.name)}", text)
            except UserError as exc:
                raise _Refused(str(exc)) from None
        try:
            if self.convert is int or self.convert is float:
                value = _number(f"a value of key {describe(self.name)}", text, self.convert)
            else:
                value = self.convert(text)
        except UserError as exc:   # '1_000': the grammar's own line
            raise _Refused(str(exc)) from None
        except FloatOverflow as exc:   # float('1e400') is inf, float('1e-400') 0.0
            raise _Refused(exc.message(f"key {describe(self.name)}", allowed=nonzero_range,
                                       key=self.name)) from None
        except _WholeOutOfRange:   # not Python's advice (sys.set_int_max_str_digits)
            raise _Refused(f"key {describe(self.name)} holds the number {text.strip()}, beyond "
                           f"the range of a whole number (at most "
                           f"{sys.get_int_max_str_digits():,} digits); give a number within "
                           "it") from None
        except KeyError:   # a boolean key's value
            raise _Unreadable(f"a value of a boolean <key> is {describe(text)}, not "
                              f"{_BOOLEAN_WORDS} (key {describe(self.name)})") from None
        except ValueError:   # int('4.5e11'), float('x')
            raise _Unreadable(f"a value of key {describe(self.name)} (attr.type {self.kind!r}) "
                              f"is {describe(text)}, not "
                              f"{'a whole number' if self.convert is int else 'a number'} "
                              f"({NUMBER_RULE})") from None
        if len(self) < _CACHE:
            self[text] = value
        return value


def parse(raw: bytes, where: str, *, fabric: bool = False) -> nx.Graph:
    """The graph in GraphML document ``raw`` (``where`` names it in errors), unvalidated:
    its graph attributes as the file holds them (tables still JSON text). An edge to a node
    no ``<node>`` declares adds that node and a ``<key>`` id declared again replaces the
    first, as networkx reads them; with ``fabric`` (every node of a fabric has a ``kind``,
    every key one meaning) both are refused, naming the edge and node or the key."""
    check_one_bom(raw, where)
    ns = GRAPHML_NAMESPACE + "}"
    key_tag, graph_tag, node_tag, edge_tag, data_tag, default_tag, root_tag = (
        ns + t for t in ("key", "graph", "node", "edge", "data", "default", "graphml"))
    parser = xml.parsers.expat.ParserCreate(namespace_separator="}")
    parser.buffer_text = True
    for tag in (key_tag, graph_tag, node_tag, edge_tag, data_tag, default_tag, root_tag):
        parser.intern[tag] = tag   # expat hands back these very strings: == is identity

    declared: dict[str, str] = {}   # the root's namespace declarations: prefix -> uri
    keys: dict[str | None, _Values] = {}
    key_of = keys.get
    stack = [_OUTSIDE]
    push, pop = stack.append, stack.pop
    chunks: list[str] = []          # text since the last start tag (a <data>'s: its value)
    join = "".join
    graph_data: dict = {}
    graph_id = False   # the graph's 'id' read from its <graph> element (a fabric's)
    nodes: list = []
    edges: list = []
    graphs = 0
    key_values: _Values | None = None   # the <key> being read
    values: _Values | None = None       # the key of the <data> or <default> being read
    item: dict = {}                     # the data of the node, edge or graph being read
    node = source = target = edge_id = item_tag = None

    def refuse(message: str) -> NoReturn:
        raise _Refused(message)

    def unreadable(message: str) -> NoReturn:
        raise _Unreadable(message)

    def given(name: str) -> NoReturn:
        """A second <data> for an attribute the item (or the graph) has: networkx kept the
        last value without a word; a fabric file is refused, as JSON's key given twice is."""
        what = ("the graph" if item is graph_data else f"node {describe(node)}"
                if item_tag is node_tag else f"edge {describe(source)}-{describe(target)}")
        if item is graph_data and name == "id" and graph_id:
            refuse("the graph has its 'id' twice: as the <graph> element's id and in a <data>; "
                   "give it once")
        refuse(f"{what} has two <data> for {describe(name)} (of one <key>, or of two keys of "
               f"that attr.name); give each attribute once")

    # Directly in a <node> or <edge> (most of a file: its <data>), ``item_start`` handles the
    # start tags and ``record`` (chunks.append, no Python frame) the end tags: an end tag
    # is recorded in ``chunks`` as its name, among the text, and read at the next start tag
    # (or at the end of the document, or before an expat error is reported: a value read
    # before the error is refused first, as it was when each end tag had a handler). A
    # recorded name is told from text by identity: expat hands back the interned tag
    # strings, and text is a new string (one of a single character may be shared, and no
    # tag recorded here is one character). Anything else goes to the general handlers,
    # which keep a stack of what each open element is. ``values`` is the open <data>'s key
    # (None between them).
    record = chunks.append

    def settle() -> bool:
        """Replay the end tags recorded in ``chunks``: False if the item has ended."""
        nonlocal values
        since = 0
        for i, c in enumerate(chunks):
            if c is data_tag or c is item_tag or c is graph_tag or c is root_tag:
                if values is not None:   # the open <data>'s end; no text: the empty string
                    if values.name in item and fabric:
                        given(values.name)
                    item[values.name] = values[join(chunks[since:i])] if i > since else ""
                    values = None
                else:   # the item's, then its graph's and root's
                    end(c)
                since = i + 1
        chunks.clear()
        return parser.EndElementHandler is record

    def item_start(name: str, attrs: dict) -> None:
        nonlocal values
        n = len(chunks)
        if values is not None:
            if n == 3 and chunks[1] is data_tag and chunks[2] is not item_tag:
                # the common case: a <data>'s text, its end, blank text; the next begins
                if values.name in item and fabric:
                    given(values.name)
                item[values.name] = values[chunks[0]]
                values = None
                chunks.clear()
            elif (n == 5 and chunks[1] is data_tag and chunks[3] is item_tag
                  and chunks[4] is not graph_tag and (name is node_tag or name is edge_tag)):
                # the last <data>'s text and end, the item's end; the next item begins
                if values.name in item and fabric:
                    given(values.name)
                item[values.name] = values[chunks[0]]
                values = None
                chunks.clear()
                close_item(pop())
                open_item(name, attrs)
                return
            elif not settle():
                start(name, attrs)
                return
        elif n == 1 and chunks[0] is not item_tag:   # blank text after the item's start tag
            chunks.clear()
        elif n and not settle():
            start(name, attrs)
            return
        if name is data_tag and values is None:
            values = key_of(attrs.get("key"))
            if values is None:
                unreadable(f"data refers to key {describe(attrs.get('key'))}, which no <key> declares")
            return
        if values is not None:   # an element in the <data>: refused by start
            push(_DATA)
        parser.StartElementHandler, parser.EndElementHandler = start, end
        start(name, attrs)

    def open_item(name: str, attrs: dict) -> None:
        """A <node> or <edge> in the graph begins."""
        nonlocal values, item, node, source, target, edge_id, item_tag
        if name is edge_tag:
            source, target = attrs.get("source"), attrs.get("target")
            if source is None or target is None:
                unreadable(f"an <edge> has no {'source' if source is None else 'target'}")
            if attrs.get("directed") == "true":
                refuse(f"a fabric is an undirected simple graph: edge "
                       f"{describe(source)}-{describe(target)} is directed='true'")
            edge_id = attrs.get("id")
            push(_EDGE)
        else:
            node = attrs.get("id")
            if node is None:
                unreadable("a <node> has no id")
            push(_NODE)
        item = {}
        values = None
        item_tag = name

    def close_item(role: int) -> None:
        """The <node> or <edge> being read (``role``) has ended."""
        if role is _NODE:
            nodes.append((node, item))
        else:
            if edge_id:
                item["id"] = edge_id
            edges.append((source, target, item))

    def start(name: str, attrs: dict) -> None:
        nonlocal values, item, key_values, graphs, graph_id
        chunks.clear()
        parent = stack[-1]
        if parent is _GRAPH and (name is edge_tag or name is node_tag):   # the next item
            open_item(name, attrs)
            parser.StartElementHandler, parser.EndElementHandler = item_start, record
            return
        depth = len(stack)
        if depth > MAX_DEPTH:
            refuse(f"elements nested more than {MAX_DEPTH} deep; a GraphML fabric needs 4")
        uri, _, local = name.rpartition("}")
        if local in _NOT_FABRIC:   # networkx ignored a <port> with a warning on stderr
            refuse(f"a GraphML fabric has no <{local}> elements (nodes, edges and their "
                   "<data> only)")
        if parent is _DATA or parent is _DEFAULT:   # networkx: yEd's graphics, partly read
            refuse(f"a <data> or <default> holds an element <{local[:40]}>; a fabric's values "
                   "are text")
        role = _SKIP
        if parent is _OUTSIDE:
            if local != "graphml":
                unreadable(f"its root element is <{local[:40]}>, not <graphml>")
            if uri != GRAPHML_NAMESPACE:   # networkx finds no <graph> and fails obscurely
                prefix = next((p for p, u in declared.items() if u == uri), "") if uri else ""
                qname = f"{prefix}:{local}" if prefix else local
                refuse(f"the root <{qname}> declares namespace "
                       f"{describe(uri) if uri else 'none'}; a GraphML fabric declares "
                       f"xmlns={GRAPHML_NAMESPACE!r}")
            role = _ROOT
        elif local == "graph":
            if graphs or parent is not _ROOT or name != graph_tag:
                refuse("a GraphML fabric holds one <graph>; this one holds another (nested in "
                       "a node or edge, or a second graph)")
            graphs = 1
            if fabric and attrs.get("id") is not None:   # networkx writes a graph's 'id' here
                graph_data["id"] = attrs["id"]   # and reads it nowhere: kept, as JSON keeps it
                graph_id = True
            if attrs.get("edgedefault") == "directed":
                refuse("a fabric is an undirected simple graph (edgedefault='undirected'; "
                       "merge parallel cables into one edge with 'links')")
            role = _GRAPH
        elif parent is _GRAPH:
            if name == data_tag:
                values = keys.get(attrs.get("key"))
                if values is None:
                    unreadable(f"data refers to key {describe(attrs.get('key'))}, which no <key> "
                               "declares")
                item = graph_data
                role = _DATA
        elif parent is _ROOT and name == key_tag:
            if graphs:   # networkx would retype what it had read before
                unreadable("a <key> after the <graph>; GraphML declares its keys first")
            kind = attrs.get("attr.type")
            label = attrs.get("attr.name")
            if attrs.get("yfiles.type") is not None:
                label, kind = attrs["yfiles.type"], "yfiles"
            if kind is None:
                kind = "string"   # networkx warns and reads strings; the schema names them
            if kind not in TYPES:
                unreadable(f"<key> {describe(attrs.get('id'))} has attr.type {describe(kind)}; GraphML's "
                           f"types are {', '.join(TYPES)}")
            if label is None:
                unreadable(f"<key> {describe(attrs.get('id'))} has no attr.name")
            if fabric and attrs.get("id") in keys:   # networkx keeps the last: data typed anew
                unreadable(f"<key> id {describe(attrs.get('id'))} is declared twice; give each "
                           "<key> its own id")
            if len(keys) >= MAX_KEYS:   # each costs memory; 2,000,000 unused: 0.8 GB, 14 s
                refuse(f"more than {MAX_KEYS:,} <key> elements; a fabric's attributes need "
                       "about 25")
            key_values = keys[attrs.get("id")] = _Values(_CONVERT[TYPES[kind]], label, kind)
            role = _KEY
        elif parent is _KEY and name == default_tag and key_values is not None:
            values, key_values = key_values, None   # the first <default> only
            role = _DEFAULT
        push(role)

    def end(name: str) -> None:
        nonlocal values
        role = pop()
        if role is _DATA:   # the graph's own
            if values.name in item and fabric:
                given(values.name)
            item[values.name] = values[join(chunks)] if chunks else ""
        elif role is _NODE or role is _EDGE:   # met by settle: the item's end
            close_item(role)
            parser.StartElementHandler, parser.EndElementHandler = start, end
        elif stack[-1] is _NODE or stack[-1] is _EDGE:   # back in a node or edge
            values = None
            parser.StartElementHandler, parser.EndElementHandler = item_start, record
        elif role is _DEFAULT:
            if chunks:   # a value its key's type cannot hold is refused
                values.__getitem__(join(chunks))
            elif values.convert is not str:   # networkx: type(None)
                unreadable(f"the <default> of key {describe(values.name)} is empty")

    def namespace(prefix: str | None, uri: str) -> None:
        if len(stack) == 1:
            declared[prefix or ""] = uri

    def doctype(*args: object) -> NoReturn:
        refuse("a DOCTYPE is not allowed in a GraphML fabric (entity declarations could "
               "expand without bound)")

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chunks.append
    parser.StartNamespaceDeclHandler = namespace
    parser.StartDoctypeDeclHandler = doctype
    parser.EntityDeclHandler = doctype
    try:
        try:
            parser.Parse(raw, True)
        except xml.parsers.expat.ExpatError:
            if parser.EndElementHandler is record:   # a value met before the error first
                settle()
            raise
        if parser.EndElementHandler is record:   # the last item's, graph's and root's ends
            settle()
    except _Unreadable as exc:
        raise UserError(f"{where} is not a readable graphml fabric: {exc}") from None
    except _Refused as exc:
        raise UserError(f"{where}: {exc}") from None
    except xml.parsers.expat.ExpatError as exc:
        raise UserError(f"{where} is not a readable graphml fabric: {exc}") from None
    except (LookupError, ValueError) as exc:   # <?xml encoding=?>: unknown, or multi-byte
        raise UserError(f"{where} is not a readable graphml fabric: its encoding: "
                        f"{str(exc)[:200]}") from None
    finally:   # the handlers hold the parser's state: let it go now
        parser.StartElementHandler = parser.EndElementHandler = None
        parser.CharacterDataHandler = None
        keys.clear()
        chunks.clear()
    if not graphs:
        raise UserError(f"{where} is not a readable graphml fabric: no <graph> element in it")
    try:
        return _graph(graph_data, nodes, edges, where, fabric)
    except _Absent as exc:
        u, v, absent = exc.args
        raise UserError(f"{where}: edge {describe(u)}-{describe(v)} names node "
                        f"{describe(absent)}, which no <node> declares") from None
    except _Twice as exc:
        what, ends = exc.args
        name = describe(ends[0]) if what == "node" else "-".join(map(describe, ends))
        lines = _lines(raw, what, ends)
        at = f" (lines {lines[0]:,} and {lines[1]:,})" if len(lines) > 1 else ""
        raise UserError(f"{where}: {what} {name} is listed twice{at}; {ONCE[what]}") from None


class _Absent(Exception):
    """An edge naming a node no ``<node>`` declares: (source, target, that node)."""


class _Twice(Exception):
    """A node or edge listed twice: ('node', (id,)) or ('edge', (source, target))."""


def _lines(raw: bytes, what: str, ends: tuple) -> list[int]:
    """The lines of the GraphML ``<node>`` (``what`` 'node') or ``<edge>`` elements of
    document ``raw`` with these ends (in either order): a second pass, made only to say
    where a node or edge listed twice is (``raw`` has been read once: no DOCTYPE in it)."""
    parser = xml.parsers.expat.ParserCreate(namespace_separator="}")
    tag, found = f"{GRAPHML_NAMESPACE}}}{what}", []
    want = sorted(ends)

    def start(name: str, attrs: dict) -> None:
        if name == tag and sorted(attrs.get(k, "") for k in
                                  (("id",) if what == "node" else ("source", "target"))) == want:
            found.append(parser.CurrentLineNumber)

    parser.StartElementHandler = start
    try:
        parser.Parse(raw, True)
    except xml.parsers.expat.ExpatError:   # read once already; what was found stands
        pass
    return found


def _graph(attrs: dict, nodes: list, edges: list, where: str,
           fabric: bool = False) -> nx.Graph:
    """The graph of these lists, as networkx's reader makes it: nodes in file order (a node
    listed twice is refused: :class:`_Twice`), then those only edges name, in the
    order edges name them (for a ``fabric``: refused, :class:`_Absent`); each node's
    neighbours in the order ``nx.Graph(multigraph)`` leaves them (edges taken by their endpoint met first, then in file order). The dicts
    go into the graph's own tables, as ``topologies.common`` fills a built fabric's:
    ``add_nodes_from`` and ``add_edges_from`` copy each of them (0.56 s for a 65,536-GPU
    fat tree, 0.11 s this way, and the copies' memory)."""
    check_size(where, len(nodes), len(edges))
    graph = nx.Graph()
    graph.graph.update(attrs)
    node, adj = graph._node, graph._adj
    node.update(nodes)
    if len(node) != len(nodes):   # a node listed twice (networkx merged its data): refused
        seen: set = set()
        raise _Twice("node", (next(n for n, _ in nodes if n in seen or seen.add(n)),))
    nodes.clear()
    adj.update((n, {}) for n in node)
    at = {n: i for i, n in enumerate(node)}
    first = []   # for each edge, the position of the endpoint met first
    for u, v, _ in edges:
        a = at.get(u)
        if a is None:   # networkx adds a node an edge names
            if fabric:   # a fabric's node has a kind: told as in JSON
                raise _Absent(u, v, u)
            a = at[u] = len(at)
            node[u], adj[u] = {}, {}
        b = at.get(v)
        if b is None:
            if fabric:
                raise _Absent(u, v, v)
            b = at[v] = len(at)
            node[v], adj[v] = {}, {}
        first.append(a if a <= b else b)
    if not all(map(operator.le, first, first[1:])):   # a file netmodel wrote is in order
        edges = [edges[i] for i in sorted(range(len(edges)), key=first.__getitem__)]
    del at, first
    for u, v, d in edges:
        row = adj[u]
        if v in row:   # networkx reads a MultiGraph: refused
            raise _Twice("edge", (u, v))
        row[v] = d
        adj[v][u] = d
    return graph
