"""The builder registry and the two ways to name a fabric: a spec string (users, display,
cache keys) or a builder name with parameters (between packages).

Builders register themselves here with :func:`builder` when their module loads; this
module imports none of them, so the builder modules may call :func:`build` (a Lite group
builds its base fabric) without an import cycle. :mod:`topologies.specs` imports the
builder modules and re-exports what is here. The spec strings' grammar is read by
:mod:`topologies.spec_grammar` (:func:`parse_spec`, and each value by its parameter's kind).

**Spec strings.** Grammar (whitespace around tokens is ignored; names are case-insensitive
and ``_`` may be written for ``-``)::

    spec   := NAME [ ":" param ( "," param )* ]
    param  := KEY "=" value
    value  := text without commas | "[" text, brackets balanced "]"

KEYs are the builder's keyword names. Values are converted by the parameter's type: ints,
floats, booleans (``true/yes/on/1``, ``false/no/off/0`` in any case: :data:`SPEC_BOOLEANS`),
``auto`` for an optional parameter the builder works out, ``none`` for one whose absence
is a choice of its own (ocs's ``logical``: no circuits), each as ``netmodel topology list``
shows its default (:func:`unset_word`); keys naming a bandwidth take units (``450GB/s``,
``400Gb/s``), keys naming a latency or time take ``ns/us/ms/s``. A value holding commas (a
nested spec) is bracketed: ``lite-groups:base=[fat-tree:k=4,gpu=H100-SXM],lites=4``. A path
ending in ``.json`` or ``.graphml`` reads a saved fabric instead.

**Structured specs.** ``build(name, params)``, ``build((name, params))`` or
``build({"builder": name, **params})``: the values may already be typed, in SI units
(ints, floats in bytes/s and seconds, booleans, a :class:`~compute.hardware.GpuSpec` for a
GPU parameter, a nested fabric for ``base`` as a graph, a spec string, a pair or a table);
a string value is read as in a spec string (``"450GB/s"``).

**What a built graph records** (``graph.graph``): ``builder`` (the registered name),
``args`` (the arguments that differ from their defaults, JSON-safe: a GpuSpec as its name,
a nested fabric as ``{"builder": ..., **args}``, tuples as lists), ``spec`` (the display
string; ``""`` when an argument has no spelling, e.g. a hand-made base graph) and
``nodes_built`` / ``edges_built``. GPU types that are not the catalog's own entries are in
``gpu_types`` (see :func:`topologies.schema.gpu_spec`).

>>> parse_spec("fat-tree:k=8, oversubscription=2,gpu=Lite")
('fat-tree', {'k': '8', 'oversubscription': '2', 'gpu': 'Lite'})
>>> g = build("fat-tree", {"k": 8, "bandwidth": "100Gb/s"})
>>> g.graph["builder"], g.graph["args"], g.graph["spec"]
('fat-tree', {'k': 8, 'bandwidth': 12500000000.0}, 'fat-tree:k=8,bandwidth=12.5GB/s')
>>> build("fat-tree:k=8").graph["spec"], build("fat_tree:K=8").graph["gpus"]
('fat-tree:k=8', 128)
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import numbers
import os
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias, TypeVar

import networkx as nx

from compute.errors import UserError, chosen, find_name, known, lookalike
from compute.hardware import GpuSpec, catalog, get_gpu, unknown_gpu
from compute.units import format_bandwidth
from compute.validate import an_int, describe, flag
from topologies.builder_names import BUILDERS, NAMES
from topologies.limits import MAX_DEPTH
from topologies.schema import check_graph, edge_count, validate
from topologies.spec_grammar import (
    _ABSENT,
    SPEC_BOOLEANS,
    SPEC_UNSET,
    _convert,
    _keyword,
    _members,
    _types,
    _unit,
    canonical_name,
    parse_spec,
    unset_word,
)

__all__ = ["REGISTRY", "SPEC_BOOLEANS", "SPEC_UNSET", "BuilderInfo", "ParamInfo",
           "bound_arguments", "build", "canonical_name",
           "as_built", "build_arguments", "builder", "builders", "check_as_built", "fabric_table",
           "file_counts",
           "format_value", "get_builder", "not_as_built", "parse_spec", "unset_word"]

#: Spec name -> builder function, filled by :func:`builder` as the builder modules load.
REGISTRY: dict[str, Callable[..., nx.Graph]] = {}
#: What :func:`build` accepts: a spec string, a fabric file's path, a (builder name,
#: params) pair, a ``{"builder": name, ...}`` table or a graph.
FabricSpec: TypeAlias = str | os.PathLike[str] | tuple[str, Mapping[str, Any]] | Mapping[str, Any] | nx.Graph
_F = TypeVar("_F", bound=Callable[..., nx.Graph])


#: How deep nested fabrics are being built now (a base of a base of ...).
_NESTING: contextvars.ContextVar[int] = contextvars.ContextVar("nesting", default=0)


@dataclass(frozen=True)
class ParamInfo:
    """One keyword parameter of a builder: its name, type as written, default and unit."""

    name: str
    type: str
    default: object
    unit: str = ""
    #: The word a spec leaves it unset with (a default None): :func:`unset_word`.
    unset: str = ""


@dataclass(frozen=True)
class BuilderInfo:
    """A registered builder: spec name, the function, its one-line summary, parameters."""

    name: str
    function: object
    summary: str
    params: tuple[ParamInfo, ...]


def _signature(fn: Callable[..., Any]) -> inspect.Signature:
    return inspect.signature(inspect.unwrap(fn), eval_str=True)



# ---------------------------------------------------------------- values

def format_value(value: object) -> str | None:
    """A parameter value as it is written in a spec string, or None when it has no spelling
    (a graph without a spec).

    >>> format_value(2.5), format_value(True), format_value((4, 4)), format_value("a,b")
    ('2.5', 'true', '4x4', '[a,b]')
    """
    if isinstance(value, GpuSpec):
        value = value.name
    elif isinstance(value, nx.Graph):
        value = value.graph.get("spec") if as_built(value) else None
        if not value:
            return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        value = int(value)
    elif isinstance(value, numbers.Real):
        value = float(value)
    if isinstance(value, int | float | str):
        text = repr(value) if isinstance(value, float) else str(value)
        return f"[{text}]" if any(c in text for c in ",[]") else text
    if isinstance(value, tuple | list) and value and \
            all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in value):
        return "x".join(str(int(v)) for v in value)
    return None


def _json_safe(value: object) -> Any:
    """``value`` as JSON can hold it: a GpuSpec by name, a fabric as its builder table."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, GpuSpec):
        return value.name
    if isinstance(value, nx.Graph):
        return fabric_table(value)
    if isinstance(value, tuple | list):
        return [_json_safe(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v) for k, v in value.items()}
    return repr(value)


def as_built(graph: nx.Graph) -> bool:
    """Whether ``graph`` is still what its builder made: ``builder`` and ``args`` recorded
    and the node and edge counts those it recorded."""
    g = check_graph(graph).graph
    return isinstance(g.get("builder"), str) and isinstance(g.get("args"), dict) \
        and g.get("nodes_built") == graph.number_of_nodes() \
        and g.get("edges_built") == edge_count(graph)


def not_as_built(graph: nx.Graph) -> nx.Graph:
    """Drop what says ``graph`` is exactly what its builder made (it no longer is, or
    nothing shows it): ``spec`` emptied, ``builder``, ``args``, ``nodes_built`` and
    ``edges_built`` removed. Returns the graph."""
    graph.graph["spec"] = ""
    for key in ("builder", "args", "nodes_built", "edges_built"):
        graph.graph.pop(key, None)
    return graph


def _same_graph(a: nx.Graph, b: nx.Graph) -> bool:
    """Whether ``a`` and ``b`` have the same nodes, edges and attributes (graph attributes
    but the name and spec, labels the user may change, and ``gpu_file_facts``, which a
    builder records from the GPU files read in this process, not from its arguments: a
    file's own are what its GPU files said)."""
    if type(a) is not type(b) or a.number_of_nodes() != b.number_of_nodes() \
            or edge_count(a) != edge_count(b) or dict(a.nodes(data=True)) != dict(b.nodes(data=True)):
        return False
    skip = ("name", "spec", "gpu_file_facts")
    if {k: v for k, v in a.graph.items() if k not in skip} != \
            {k: v for k, v in b.graph.items() if k not in skip}:
        return False
    adj_b = b._adj
    return all(v in adj_b[u] and adj_b[u][v] == d for u, nbrs in a._adj.items()
               for v, d in nbrs.items())


def check_as_built(graph: nx.Graph) -> nx.Graph:
    """``graph`` (from a file) keeping its claim to be what its builder made only if that
    builder, given the recorded ``args``, makes exactly this graph (nodes, edges, every
    attribute); the builder's name is read as a spec string's (:func:`canonical_name`)
    and kept as the registry spells it. A claim that does not hold (an edited link,
    ``args`` that lie or that the builder refuses) is dropped (:func:`not_as_built`): the
    graph is then analysed as a hand-made one, as an edited graph is, rather than by
    closed forms of another fabric.
    The rebuild may not be much larger than the graph (16x: its builder refuses first).

    >>> g = build("single-switch:n=4")
    >>> check_as_built(g.copy()).graph["builder"]
    'single-switch'
    >>> g.edges["gpu3", "nvs0"]["bandwidth"] = 1e9
    >>> "builder" in check_as_built(g).graph, g.graph["spec"]
    (False, '')
    """
    from topologies.limits import capped

    if not as_built(graph):
        return graph
    # its builder named as a spec string names it, kept as the registry spells it
    name = graph.graph["builder"] = canonical_name(graph.graph["builder"])
    args = dict(graph.graph["args"])
    own = graph.graph.get("gpu_types")
    try:
        sig = _signature(get_builder(name))
        if isinstance(own, dict):   # a GPU the file defines, by its name
            for key, value in args.items():
                par = sig.parameters.get(key)
                if par is not None and GpuSpec in _members(par.annotation) \
                        and isinstance(value, str) and isinstance(own.get(value), GpuSpec):
                    args[key] = own[value]
        nodes, edges = graph.number_of_nodes(), edge_count(graph)
        with capped(16 * nodes + 4096, 16 * edges + 4096):   # estimates run over
            rebuilt = build((name, args))
    except (UserError, TypeError, ValueError, OverflowError, RecursionError):
        return not_as_built(graph)
    return graph if _same_graph(graph, rebuilt) else not_as_built(graph)


def fabric_table(graph: nx.Graph) -> dict:
    """``{"builder": name, **args}`` of a graph as its builder made it;
    ``{"builder": None, "name": ...}`` for a hand-made or edited one.

    >>> fabric_table(build("ring:n=4"))
    {'builder': 'ring', 'n': 4}
    """
    if as_built(graph):
        return {"builder": graph.graph["builder"], **graph.graph["args"]}
    return {"builder": None, "name": str(graph.graph.get("name", ""))}


#: Each builder's text parameters that name one of a set, beside every builder's
#: ``medium`` (the schema's media), as :func:`builder`'s ``choices`` declares them.
_CHOICES: dict[str, dict[str, tuple[str, ...]]] = {}


#: Each builder's count parameters (typed ``int``, not ``float``): a float given in code
#: for one is refused, 4.0 too (:func:`builder`); a file's reader takes its whole floats
#: as ints first (:func:`file_counts`).
_COUNTS: dict[str, frozenset[str]] = {}


def file_counts(name: object, params: Mapping) -> dict:
    """``params`` of builder ``name`` as read from a file (a scenario's TOML ``[fabric]``
    table), each whole float of a count parameter as its int: a file's ``n = 4.0`` builds
    the ring of 4, as its text '4.0' does, where the same float given in code is refused.
    Other values, and those of a name that is no builder's, as given.

    >>> file_counts("ring", {"n": 4.0, "latency": 1.0, "gpu": "Lite"})
    {'n': 4, 'latency': 1.0, 'gpu': 'Lite'}
    """
    counts = _COUNTS.get(canonical_name(name), frozenset()) if isinstance(name, str) else ()
    return {k: int(v) if k in counts and an_int(v) else v for k, v in params.items()}


def _as_spelled(name: str, key: str, raw: str, gpu: bool) -> str:
    """Builder ``name``'s text argument ``raw`` of parameter ``key`` as a spec and the
    graph's ``args`` write it: a catalog GPU (``gpu``) as the catalog spells it (``gpu=lite``
    is ``gpu=Lite``; a GPU file's path as typed), a medium or another of the builder's
    ``choices`` as its list does (``medium=COPPER`` is ``medium=copper``: every choice is
    read regardless of case, :func:`compute.errors.chosen`); other text as given.

    >>> _as_spelled("ring", "gpu", " lite", True), _as_spelled("ring", "medium", "COPPER", False)
    ('Lite', 'copper')
    >>> _as_spelled("ring", "gpu", "g.toml", True), _as_spelled("torus", "dims", "4x4", False)
    ('g.toml', '4x4')
    """
    from topologies.schema_links import MEDIA

    if gpu:
        return find_name(catalog(), raw) or raw
    choices = {"medium": MEDIA, **_CHOICES.get(name, {})}.get(key)
    return raw if choices is None else chosen(raw, choices) or raw


def _gpu_arg(what: str, value: object) -> GpuSpec:
    if isinstance(value, GpuSpec):
        return value
    if isinstance(value, str):
        if find_name(catalog(), value) is not None or value.lower().endswith((".toml", ".json")):
            return get_gpu(value)
        raise UserError(f"{what}: {unknown_gpu(value)}")
    raise UserError(f"{what} must be a GPU name or a GpuSpec, got {describe(value)}")


def _fabric_arg(what: str, value: object) -> nx.Graph:
    if isinstance(value, nx.Graph):
        return validate(value)
    if isinstance(value, str | os.PathLike | tuple | Mapping):
        depth = _NESTING.get()
        if depth >= MAX_DEPTH:
            raise UserError(f"{what}: fabrics nested more than {MAX_DEPTH} deep")
        token = _NESTING.set(depth + 1)
        try:
            return build(value)
        finally:
            _NESTING.reset(token)
    raise UserError(f"{what} must be a fabric: a spec string, a (builder, params) pair, a "
                    f"{{'builder': ...}} table or a graph, got {describe(value)}")


def _same(a: object, b: object) -> bool:
    if a is b:
        return True
    if type(a) is not type(b) and not (isinstance(a, numbers.Real) and isinstance(b, numbers.Real)):
        return False
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - an array or odd object: not the default
        return False


# ---------------------------------------------------------------- the decorator

def builder(name: str, *, absent: Sequence[str] = (),
            choices: Mapping[str, Sequence[str]] | None = None) -> Callable[[_F], _F]:
    """Register a builder under its spec ``name``.

    ``absent``: its optional parameters whose None means none of it (ocs's ``logical``: the
    cabling, no circuits), not a value the builder works out (every other default None):
    a spec leaves them unset with ``none``, the others with ``auto`` (:func:`unset_word`).

    ``choices``: its text parameters that name one of a set (a Lite group's ``split``), so
    its spec and ``args`` write them as the set spells them (every builder's ``medium``
    without it).

    The registered function accepts the builder's parameters typed or as names: a GPU
    parameter (annotated with :class:`~compute.hardware.GpuSpec`) a catalog name, a GPU
    file path or a GpuSpec; a fabric parameter (annotated with :class:`networkx.Graph`)
    anything :func:`build` accepts. The graph it returns records ``builder``, ``args``,
    ``spec``, ``nodes_built`` and ``edges_built`` (see the module docstring).

    ``name`` must be one of :data:`topologies.builder_names.NAMES`, the list help texts
    read without loading the builders, and the function defined in the module
    :data:`topologies.builder_names.BUILDERS` names for it, the one :mod:`topologies.specs`
    loads (ValueError otherwise, naming that file).
    """
    if name not in NAMES:
        raise ValueError(f"builder {name!r} is not in NAMES of topologies/builder_names.py, "
                         "the builders' names that help texts list without loading them: "
                         "add it to BUILDERS there, at its place in listings, with its module")

    def register(fn: _F) -> _F:
        module = f"topologies.{BUILDERS[name]}"
        if fn.__module__ != module:
            raise ValueError(f"builder {name!r} is defined in {fn.__module__}, but BUILDERS of "
                             f"topologies/builder_names.py names {module}, the module "
                             "topologies.specs loads: name its module there")
        sig = _signature(fn)
        for key in absent:
            if key not in sig.parameters or sig.parameters[key].default is not None:
                raise ValueError(f"builder {name!r}: absent names {key!r}, not a parameter "
                                 "of default None")
        _ABSENT[name] = frozenset(absent)
        _CHOICES[name] = {k: tuple(v) for k, v in (choices or {}).items()}
        kinds = {p: _members(par.annotation) for p, par in sig.parameters.items()}
        gpu_params = [p for p, ts in kinds.items() if GpuSpec in ts]
        fabric_params = [p for p, ts in kinds.items() if nx.Graph in ts]
        bool_params = [p for p, ts in kinds.items() if ts == (bool,)]
        int_params = [p for p, ts in kinds.items() if int in ts and bool not in ts]
        # counts: a float given in code, 4.0 too, is refused (an int, as range(4.0) takes);
        # text ('ring:n=4', a spec's '4.0') is read before, a file's table at its reader
        # (netmodel.study.fabric_table.table_params); a fractional one is the builder's to refuse
        count_params = [p for p in int_params if float not in kinds[p]]
        _COUNTS[name] = frozenset(count_params)

        @functools.wraps(fn)
        def build_graph(*args: Any, **kwargs: Any) -> nx.Graph:
            try:
                bound = sig.bind(*args, **kwargs)
            except TypeError as exc:
                raise UserError(f"{name}: {exc}") from None
            given = dict(bound.arguments)
            bound.apply_defaults()
            call = dict(bound.arguments)
            for key in bool_params:   # numpy's bool too (compute.validate.flag)
                call[key] = flag("", key, call[key])
            for key in count_params:
                if an_int(call[key]):
                    raise UserError(f"{name}: {key} must be a whole number (an int), got "
                                    f"{describe(call[key])}")
            for key in gpu_params:
                call[key] = _gpu_arg(key, call[key])
            for key in fabric_params:
                call[key] = _fabric_arg(key, call[key])
            graph = fn(**call)
            parts: list[str] | None = []
            recorded = {}
            for key, raw in given.items():
                default = sig.parameters[key].default
                value = call[key]
                if isinstance(raw, str) and key not in fabric_params:
                    raw = _as_spelled(name, key, raw, key in gpu_params)
                    if key not in gpu_params:
                        value = raw
                if key in gpu_params:
                    if isinstance(default, str) and value == catalog().get(default):
                        continue
                elif _same(raw, default):
                    continue
                recorded[key] = _json_safe(value)
                if parts is not None:  # a GPU file path keeps its spelling; a base its spec
                    if isinstance(raw, str) and key not in fabric_params:
                        text = format_value(raw)
                    elif _unit(key) == "bytes/s" and isinstance(value, float):
                        text = format_bandwidth(value)   # 450GB/s, not 450000000000.0
                    else:
                        text = format_value(value)
                    if text is None:
                        parts = None
                    else:
                        parts.append(f"{key}={text}")
            graph.graph["spec"] = "" if parts is None else \
                name + (":" + ",".join(parts) if parts else "")
            graph.graph["builder"] = name
            graph.graph["args"] = recorded
            # what the builder made, so analysis trusts closed forms only for this graph
            graph.graph["nodes_built"] = graph.number_of_nodes()
            graph.graph["edges_built"] = edge_count(graph)
            return graph

        REGISTRY[name] = build_graph
        return typing.cast(_F, build_graph)  # the same signature, names accepted too

    return register


def get_builder(name: str) -> Callable[..., nx.Graph]:
    """The builder function registered as ``name``; UserError listing the known ones."""
    key = canonical_name(name) if isinstance(name, str) else None
    if key not in REGISTRY:
        raise UserError(f"unknown fabric builder {describe(name)}; known: {known(REGISTRY)}")
    return REGISTRY[key]


def _keywords(name: str, params: Mapping) -> tuple[str, Callable, inspect.Signature, dict]:
    """The builder and its keyword arguments for ``params`` (string values converted)."""
    fn = get_builder(name)
    name = canonical_name(name)
    if not isinstance(params, Mapping):
        raise UserError(f"parameters of fabric {name!r} must be a table of KEY: VALUE, "
                        f"got {describe(params)}")
    sig = _signature(fn)
    kwargs, spelled = {}, {}
    for given, value in params.items():
        key = _keyword(given) if isinstance(given, str) else given
        if not isinstance(key, str) or key not in sig.parameters:
            raise UserError(f"unknown key {describe(given)} for fabric {name!r}"
                            f"{lookalike(given, sig.parameters)}; known: "
                            f"{known(sig.parameters)}")
        if key in kwargs:
            raise UserError(f"key {key!r} of fabric {name!r} is given twice: as "
                            f"{describe(spelled[key])} and {describe(given)}")
        spelled[key] = given
        param = sig.parameters[key]
        fabric = nx.Graph in _members(param.annotation)
        kwargs[key] = _convert(name, key, value, param) if isinstance(value, str) and \
            not fabric else value
    return name, fn, sig, kwargs


def _call(name: str, fn: Callable, kwargs: dict) -> nx.Graph:
    try:
        return fn(**kwargs)
    except UserError as exc:  # say which fabric the refused value belongs to
        text = str(exc)
        raise UserError(text if text.startswith(f"{name}:") else f"{name}: {text}") from None


def _structured(spec: object) -> tuple[str, Mapping] | None:
    """(builder name, params) of a pair or a ``{"builder": ...}`` table; None otherwise."""
    if isinstance(spec, tuple):
        if len(spec) != 2 or not isinstance(spec[0], str) or not isinstance(spec[1], Mapping):
            raise UserError(f"a structured fabric spec is a (builder name, params) pair, got "
                            f"{describe(spec)}")
        return spec
    if isinstance(spec, Mapping):
        params = dict(spec)
        name = params.pop("builder", None)
        if not isinstance(name, str):
            raise UserError(f"a fabric table needs 'builder' naming a fabric builder; known: "
                            f"{known(REGISTRY)}")
        return name, params
    return None


def build(spec: FabricSpec, params: Mapping | None = None) -> nx.Graph:
    """The fabric graph ``spec`` describes.

    Parameters
    ----------
    spec : str, pathlib.Path, tuple, dict or networkx.Graph
        A spec string (``"fat-tree:k=8,gpu=Lite"``); a builder name with ``params``; a
        ``(name, params)`` pair; a table ``{"builder": name, **params}``; a saved
        ``.json``/``.graphml`` fabric (:func:`check_as_built`: what it says its builder
        made must be what that builder makes); or a graph, which passes through after
        :func:`~topologies.schema.validate`.
    params : dict, optional
        Keyword arguments of the builder ``spec`` names, typed (SI units, a GpuSpec, a
        nested fabric) or as spec-string text.

    Raises UserError for an unknown builder or key (listing the known ones) and for values
    the builder refuses, naming the fabric.

    Examples
    --------
    >>> from compute.hardware import derive_gpu, get_gpu
    >>> mine = derive_gpu(get_gpu("Lite"), "MyLite", network_bandwidth_multiplier=2)
    >>> g = build("ring", {"n": 4, "gpu": mine})
    >>> g.nodes["gpu0"]["gpu"], g.graph["args"], g.edges["gpu0", "gpu1"]["bandwidth"] / 1e9
    ('MyLite', {'n': 4, 'gpu': 'MyLite'}, 112.5)
    >>> g.graph["gpu_types"]["MyLite"] is mine
    True
    >>> build(("lite-groups", {"base": {"builder": "ring", "n": 3}})).graph["args"]
    {'base': {'builder': 'ring', 'n': 3}}
    """
    if params is not None:
        if not isinstance(spec, str):
            raise UserError(f"with params, the fabric spec must be a builder name, got "
                            f"{describe(spec)}")
        if ":" in spec or spec.strip().lower().endswith((".json", ".graphml")):
            # a spec string or a saved fabric brings its own parameters: it was refused as
            # "unknown fabric builder 'ring:n=4'"
            kind = "a saved fabric" if ":" not in spec else "a spec string"
            raise UserError(f"with params, the fabric spec must be a builder name, got "
                            f"{kind} {spec!r}: give its parameters in the spec or in "
                            f"params, not both")
        name, fn, _, kwargs = _keywords(spec, params)
        return _call(name, fn, kwargs)
    if isinstance(spec, nx.Graph):
        return validate(spec)
    if isinstance(spec, str | os.PathLike) and \
            os.fspath(spec).lower().endswith((".json", ".graphml")):
        from topologies.io import read_graph

        graph = read_graph(spec)  # type: ignore[arg-type]  # a PathLike but Path: UserError
        return check_as_built(graph)   # its claim to be a builder's fabric, if it holds

    pair = _structured(spec)
    if pair is not None:
        name, fn, _, kwargs = _keywords(*pair)
        return _call(name, fn, kwargs)
    name, raw = parse_spec(spec)
    name, fn, _, kwargs = _keywords(name, raw)
    return _call(name, fn, kwargs)


def build_arguments(spec: FabricSpec) -> tuple[str, dict]:
    """The builder name and every keyword argument (defaults filled in) a spec string, pair
    or table stands for (nested fabrics are not built).

    >>> build_arguments("fat-tree:k=8")[1]["oversubscription"]
    1
    """
    pair = _structured(spec)
    name, _, sig, kwargs = _keywords(*(pair if pair is not None else parse_spec(spec)))
    bound = sig.bind(**kwargs)
    bound.apply_defaults()
    return name, dict(bound.arguments)


def bound_arguments(name: str, args: Mapping) -> dict:
    """Every keyword argument of builder ``name`` given the non-default ``args`` a graph
    records (``graph.graph["args"]``), defaults filled in; values as recorded.

    >>> g = build("fat-tree:k=8")
    >>> bound_arguments(g.graph["builder"], g.graph["args"])["pods"] is None
    True
    """
    sig = _signature(get_builder(name))
    unknown = [k for k in args if k not in sig.parameters]
    if unknown:
        raise UserError(f"unknown key(s) {', '.join(map(describe, unknown))} for fabric "
                        f"{name!r}; known: {known(sig.parameters)}")
    bound = sig.bind(**args)
    bound.apply_defaults()
    return dict(bound.arguments)


#: :func:`builders`' last answer, keyed by the registry's (name, function) pairs it read
_BUILDERS_SEEN: tuple[tuple, tuple[BuilderInfo, ...]] | None = None


def builders() -> list[BuilderInfo]:
    """Every registered builder with its parameters, defaults and first sentence.

    Read once per state of :data:`REGISTRY` (a builder registered later is seen): the
    study asks about 300 times, 1.6 ms each to inspect the signatures and docstrings.
    """
    global _BUILDERS_SEEN
    key = tuple(REGISTRY.items())
    if _BUILDERS_SEEN is not None and _BUILDERS_SEEN[0] == key:
        return list(_BUILDERS_SEEN[1])
    out = []
    for name, fn in REGISTRY.items():
        sig = _signature(fn)
        params = []
        for p in sig.parameters.values():
            base, optional = _types(p.annotation)
            tname = getattr(base, "__name__", str(base)) + (" | None" if optional else "")
            unset = unset_word(name, p.name) if optional and p.default is None else ""
            params.append(ParamInfo(p.name, tname, p.default, _unit(p.name), unset))
        doc = " ".join((inspect.getdoc(fn) or "").split("\n\n")[0].split()).replace("``", "")
        summary = doc.split(". ")[0].rstrip(".") + "."
        out.append(BuilderInfo(name, fn, summary, tuple(params)))
    rank = {n: i for i, n in enumerate(NAMES)}
    infos = tuple(sorted(out, key=lambda b: rank[b.name]))
    _BUILDERS_SEEN = (key, infos)
    return list(infos)

