"""Spec strings: one short string names a builder and its keyword arguments.

Grammar (whitespace around tokens is ignored; names are case-insensitive and ``_`` may be
written for ``-``)::

    spec   := NAME [ ":" param ( "," param )* ]
    param  := KEY "=" value
    value  := text without commas | "[" text, brackets balanced "]"

KEYs are the builder's keyword names. Values are converted by the parameter's type: ints,
floats, booleans (``true/false/yes/no/1/0``), ``none`` for an optional parameter; keys
naming a bandwidth take units (``450GB/s``, ``400Gb/s``), keys naming a latency or time take
``ns/us/ms/s``. A value holding commas (a nested spec) is bracketed:
``lite-groups:base=[fat-tree:k=4,gpu=H100-SXM],lites=4``. A path ending in ``.json`` or
``.graphml`` reads a saved fabric instead.

>>> parse_spec("fat-tree:k=8, oversubscription=2,gpu=Lite")
('fat-tree', {'k': '8', 'oversubscription': '2', 'gpu': 'Lite'})
>>> build("fat-tree:k=4,bandwidth=100Gb/s").edges["gpu0", "leaf0"]["bandwidth"]
12500000000.0
>>> build("fat-tree:k=8").graph["spec"], build("fat_tree:K=8").graph["gpus"]
('fat-tree:k=8', 128)
"""

from __future__ import annotations

import inspect
import types
import typing
from dataclasses import dataclass
from pathlib import Path

import networkx as nx

from compute.errors import UserError, known
from compute.units import parse_bandwidth, parse_time
from topologies import direct, hierarchical, optical, switched  # noqa: F401  (registers)
from topologies.common import REGISTRY

__all__ = ["BuilderInfo", "ParamInfo", "build", "build_arguments", "builders", "get_builder",
           "parse_spec"]


@dataclass(frozen=True)
class ParamInfo:
    """One keyword parameter of a builder: its name, type as written, default and unit."""

    name: str
    type: str
    default: object
    unit: str = ""


@dataclass(frozen=True)
class BuilderInfo:
    """A registered builder: spec name, the function, its one-line summary, parameters."""

    name: str
    function: object
    summary: str
    params: tuple[ParamInfo, ...]


def _split_top(text: str, sep: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise UserError(f"spec {text!r} has an unmatched ']'")
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if depth:
        raise UserError(f"spec {text!r} has an unmatched '['")
    parts.append("".join(cur))
    return parts


def _canonical(name: str) -> str:
    return name.strip().lower().replace("_", "-")


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """Split a spec into the builder name and its raw ``{key: value-string}`` parameters."""
    if not isinstance(spec, str) or not spec.strip():
        raise UserError(f"a fabric spec must be a non-empty string like 'fat-tree:k=8', "
                        f"got {spec!r}")
    name, _, rest = spec.strip().partition(":")
    params: dict[str, str] = {}
    if rest.strip():
        for item in _split_top(rest, ","):
            key, eq, value = item.partition("=")
            key = key.strip().lower()
            if not eq or not key:
                raise UserError(f"spec parameter {item.strip()!r} must be KEY=VALUE "
                                f"(in {spec!r})")
            if key in params:
                raise UserError(f"spec parameter {key!r} is given twice (in {spec!r})")
            value = value.strip()
            if value.startswith("[") and value.endswith("]"):
                value = value[1:-1]
            params[key] = value
    return _canonical(name), params


def get_builder(name: str):
    """The builder function registered as ``name``; UserError listing the known ones."""
    key = _canonical(name)
    if key not in REGISTRY:
        raise UserError(f"unknown fabric builder {name!r}; known: {known(REGISTRY)}")
    return REGISTRY[key]


def _unit(pname: str) -> str:
    if "bandwidth" in pname:
        return "bytes/s"
    if "latency" in pname or pname.endswith("time"):
        return "s"
    if pname == "length":
        return "m"
    return ""


def _types(annotation) -> tuple[type, bool]:
    """(base type, whether None is allowed) of an annotation like ``int | None``."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        args = typing.get_args(annotation)
        base = next(a for a in args if a is not type(None))
        return base, type(None) in args
    return annotation, False


def _convert(builder_name: str, pname: str, text: str, param: inspect.Parameter):
    base, optional = _types(param.annotation)
    if optional and text.lower() == "none":
        return None
    what = f"{builder_name}: {pname}"
    unit = _unit(pname)
    if unit == "bytes/s":
        return parse_bandwidth(text, what)
    if unit == "s":
        return parse_time(text, what)
    if base is bool:
        low = text.lower()
        if low in ("true", "yes", "1", "on"):
            return True
        if low in ("false", "no", "0", "off"):
            return False
        raise UserError(f"{what} must be true or false, got {text!r}")
    if base is int:
        try:
            return int(text)
        except ValueError:
            raise UserError(f"{what} must be an integer, got {text!r}") from None
    if base is float:
        try:
            return float(text)
        except ValueError:
            raise UserError(f"{what} must be a number, got {text!r}") from None
    return text


def _signature(fn) -> inspect.Signature:
    return inspect.signature(fn, eval_str=True)


def _arguments(spec: str):
    name, raw = parse_spec(spec)
    fn = get_builder(name)
    sig = _signature(fn)
    kwargs = {}
    for key, text in raw.items():
        if key not in sig.parameters:
            raise UserError(f"unknown key {key!r} for fabric {name!r}; known: "
                            f"{known(sig.parameters)}")
        kwargs[key] = _convert(name, key, text, sig.parameters[key])
    return name, fn, sig, kwargs


def build_arguments(spec: str) -> tuple[str, dict]:
    """The builder name and every keyword argument (defaults filled in) a spec stands for.

    >>> build_arguments("fat-tree:k=8")[1]["oversubscription"]
    1
    """
    name, _, sig, kwargs = _arguments(spec)
    bound = sig.bind(**kwargs)
    bound.apply_defaults()
    return name, dict(bound.arguments)


def build(spec) -> nx.Graph:
    """The fabric graph a spec string describes (or a saved ``.json``/``.graphml`` file; a
    graph passes through after :func:`~topologies.schema.validate`).

    Raises UserError for an unknown builder or key (listing the known ones) and for values
    the builder refuses.
    """
    if isinstance(spec, nx.Graph):
        from topologies.schema import validate

        return validate(spec)
    if isinstance(spec, str | Path) and str(spec).lower().endswith((".json", ".graphml")):
        from topologies.io import read_graph

        return read_graph(spec)
    name, fn, _, kwargs = _arguments(spec)
    try:
        return fn(**kwargs)
    except UserError as exc:  # say which fabric the refused value belongs to
        text = str(exc)
        raise UserError(text if text.startswith(f"{name}:") else f"{name}: {text}") from None


#: Listing order: switched, hierarchical, direct, optical.
ORDER = ("single-switch", "flat", "leaf-spine", "fat-tree", "rail-optimized", "superpod", "nvl72",
         "ring", "full-mesh", "torus", "lite-groups", "ocs")


def builders() -> list[BuilderInfo]:
    """Every registered builder with its parameters, defaults and first sentence."""
    out = []
    for name, fn in REGISTRY.items():
        sig = _signature(fn)
        params = []
        for p in sig.parameters.values():
            base, optional = _types(p.annotation)
            tname = getattr(base, "__name__", str(base)) + (" | None" if optional else "")
            params.append(ParamInfo(p.name, tname, p.default, _unit(p.name)))
        doc = " ".join((inspect.getdoc(fn) or "").split("\n\n")[0].split()).replace("``", "")
        summary = doc.split(". ")[0].rstrip(".") + "."
        out.append(BuilderInfo(name, fn, summary, tuple(params)))
    rank = {n: i for i, n in enumerate(ORDER)}
    return sorted(out, key=lambda b: rank.get(b.name, len(ORDER)))
