"""The spec-string grammar of the builder registry (:mod:`topologies.registry`): a spec
split into its builder name and raw ``{key: text}`` parameters (:func:`parse_spec`, names
and keys read case-insensitively, ``-`` and ``_`` one character), and a parameter's value
read from its text by the kind its annotation and name give (:func:`_convert`: a bandwidth
or time with units, a boolean word of :data:`SPEC_BOOLEANS`, a whole number, a number, or
the word a spec leaves an optional parameter unset with, :func:`unset_word`). The grammar
itself is the registry's module docstring.

>>> parse_spec("fat-tree:k=8, oversubscription=2,gpu=Lite")
('fat-tree', {'k': '8', 'oversubscription': '2', 'gpu': 'Lite'})
"""

from __future__ import annotations

import inspect
import types
import typing
from typing import Any

from compute.errors import UserError
from compute.units import LENGTH_UNITS, parse_bandwidth, parse_quantity, parse_time
from compute.validate import describe, read_number
from topologies.limits import MAX_DEPTH, physical_range

__all__ = ["SPEC_BOOLEANS", "SPEC_UNSET", "canonical_name", "parse_spec", "unset_word"]



# ---------------------------------------------------------------- parameter kinds

def _members(annotation: Any) -> tuple:
    """The types of an annotation (``int | None`` -> ``(int, NoneType)``)."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        return typing.get_args(annotation)
    return (annotation,)


def _types(annotation: Any) -> tuple[type, bool]:
    """(first type, whether None is allowed) of an annotation like ``int | None``."""
    args = _members(annotation)
    base = next((a for a in args if a is not type(None)), object)
    return base, type(None) in args


def _unit(pname: str) -> str:
    if "bandwidth" in pname:
        return "bytes/s"
    if "latency" in pname or pname.endswith("time"):
        return "s"
    if pname == "length":
        return "m"
    return ""


# ---------------------------------------------------------------- spec strings

def _split_top(text: str, sep: str) -> list[str]:
    parts: list[str] = []
    cur: list[str] = []
    depth, deepest = 0, 0
    for ch in text:
        if ch == "[":
            depth += 1
            deepest = max(deepest, depth)
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise UserError(f"spec {describe(text)} has an unmatched ']'")
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if depth:
        raise UserError(f"spec {describe(text)} has an unmatched '['")
    if deepest > MAX_DEPTH:
        raise UserError(f"spec {describe(text)} nests brackets {deepest} deep; at most "
                        f"{MAX_DEPTH}")
    parts.append("".join(cur))
    return parts


def _unbracketed(value: str) -> str:
    """A spec value as meant: the text inside its brackets where one pair encloses all of
    it (``[fat-tree:k=4,gpu=H100-SXM]``), else as written: ``[a]-[b]`` is two bracketed
    parts, not ``a]-[b`` (its first ``[`` closes before its end).

    >>> _unbracketed("[ring:n=4,gpu=Lite]"), _unbracketed("[a]-[b]"), _unbracketed("[[x]]")
    ('ring:n=4,gpu=Lite', '[a]-[b]', '[x]')
    """
    if not (value.startswith("[") and value.endswith("]")):
        return value
    depth = 0
    for i, ch in enumerate(value):
        depth += (ch == "[") - (ch == "]")
        if depth == 0:   # the first '[' closes here: around all of it only at the end
            return value[1:-1] if i == len(value) - 1 else value
    return value


def canonical_name(name: str) -> str:
    """A registry name as the registry spells it, however given: case-insensitive, ``_``
    read as ``-`` (builder names here; shipped scenario names in
    :mod:`netmodel.study.scenarios` alike).

    >>> canonical_name(" Rail_Optimized ")
    'rail-optimized'
    """
    return name.strip().lower().replace("_", "-")


def _keyword(key: str) -> str:
    """A builder parameter's name as its keyword, however given (a spec string's key or a
    parameter table's): case-insensitive, ``-`` read as ``_``.

    >>> _keyword(" In-Network-Reduction ")
    'in_network_reduction'
    """
    return key.strip().lower().replace("-", "_")


def parse_spec(spec: object) -> tuple[str, dict[str, str]]:
    """Split a spec string into the builder name and its raw ``{key: value-string}``
    parameters (anything but a non-empty string is a UserError). Names and keys are
    case-insensitive, and ``-`` and ``_`` are one character in both: the name is returned as
    the registry spells it (``-``), each key as the builder's keyword (``_``).

    >>> parse_spec("Rail_Optimized:Domains=2,in-network-reduction=false")
    ('rail-optimized', {'domains': '2', 'in_network_reduction': 'false'})
    """
    if not isinstance(spec, str) or not spec.strip():
        raise UserError(f"a fabric spec must be a non-empty string like 'fat-tree:k=8', "
                        f"got {describe(spec)}")
    name, _, rest = spec.strip().partition(":")
    params: dict[str, str] = {}
    if rest.strip():
        # the builder and its parameters quoted, not the spec whole: the command line says
        # the flag and the spec typed in front (netmodel.cli.refusals.named_by_value)
        at = f"{name.strip()}: " if name.strip() else ""
        for item in _split_top(rest, ","):
            key, eq, value = item.partition("=")
            key = _keyword(key)
            if not eq or not key:
                raise UserError(f"{at}spec parameter {describe(item.strip())} must be "
                                f"KEY=VALUE (in {describe(rest.strip())})")
            if key in params:
                raise UserError(f"{at}spec parameter {key!r} is given twice (in "
                                f"{describe(rest.strip())})")
            params[key] = _unbracketed(value.strip())
    return canonical_name(name), params


#: The words that leave a spec string's optional parameter unset (None), in any case:
#: ``auto`` where the builder works the value out, ``none`` where None means none of it
#: (:func:`~topologies.registry.builder`'s ``absent``); each parameter takes its own word
#: only (:func:`unset_word`).
SPEC_UNSET = ("auto", "none")
#: Per builder, the parameters whose None means none of it
#: (:func:`~topologies.registry.builder`'s ``absent``, which fills it).
_ABSENT: dict[str, frozenset[str]] = {}


def unset_word(builder_name: str, pname: str) -> str:
    """The word a spec leaves an optional parameter unset with, as ``netmodel topology
    list`` shows its default None: ``none`` where None means none of it, ``auto`` where
    the builder works the value out (a user writing ``none`` there may mean zero or off:
    ``in_network_reduction=none`` would have been the GPU's reduction, on for an H100).

    >>> from topologies import specs  # the builders registered
    >>> unset_word("ocs", "logical"), unset_word("rail-optimized", "nics_per_server")
    ('none', 'auto')
    """
    return SPEC_UNSET[1] if pname in _ABSENT.get(canonical_name(builder_name), ()) \
        else SPEC_UNSET[0]


#: The words a spec string's boolean parameter is read from (in any case): the table
#: :func:`_convert` reads and its refusal lists.
SPEC_BOOLEANS = {"true": True, "yes": True, "on": True, "1": True,
                 "false": False, "no": False, "off": False, "0": False}
#: ``'true/yes/on/1 or false/no/off/0'``: what a refusal says is accepted.
_BOOLEAN_WORDS = " or ".join("/".join(w for w, v in SPEC_BOOLEANS.items() if v is truth)
                             for truth in (True, False))


def _convert(builder_name: str, pname: str, text: str, param: inspect.Parameter) -> Any:
    """A parameter's value from its spec-string text."""
    base, optional = _types(param.annotation)
    what = f"{builder_name}: {pname}"
    word = text.strip().lower()
    if optional and word in SPEC_UNSET:
        unset = unset_word(builder_name, pname)
        if word == unset:
            return None
        if unset == "auto":
            raise UserError(f"{what} takes auto (left to the builder, as if not given) or a "
                            f"value, not {describe(text)}: 'none' could mean zero or off")
        raise UserError(f"{what} takes none (none of it, as if not given) or a value, not "
                        f"{describe(text)}: the builder works nothing out for it")
    unit = _unit(pname)
    if unit == "bytes/s":
        return parse_bandwidth(text, what)
    if unit == "s":
        return parse_time(text, what)
    if base is bool:
        try:
            return SPEC_BOOLEANS[text.lower()]
        except KeyError:
            raise UserError(f"{what} must be {_BOOLEAN_WORDS}, got {describe(text)}") from None
    if base is int:   # the one number grammar: '+16', '1e1' are whole; '1_6', '1.5' are not
        whole = read_number(what, text, whole=True)
        if whole is None:
            raise UserError(f"{what} must be an integer, got {describe(text)}")
        return whole
    if base is float:
        value = read_number(what, text, allowed=physical_range(pname))   # a length: 0 up
        if value is None and unit == "m":   # '20m', '50cm', as a sweep's fabric.length
            value = parse_quantity(text, LENGTH_UNITS, what, allow_zero=True,
                                   rule=physical_range(pname))
        if value is None:
            raise UserError(f"{what} must be a number, got {describe(text)}")
        return 0.0 if value == 0 else value   # a typed -0 is zero, as every number read
    return text
