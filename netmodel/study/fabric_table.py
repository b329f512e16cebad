"""A scenario's ``[fabric]`` table: a fabric builder's name and keyword arguments as a
scenario file writes them, with the GPU's ``$`` tokens unresolved (the module doc of
:mod:`netmodel.study.scenarios`). :func:`parse_gpu_token` resolves one token for a GPU,
:func:`table_params` a whole table into the builder's ``(builder, parameters)`` and
:func:`table_spec` into its spec string; :func:`check_table` refuses what no builder takes;
:func:`param_paths` and :func:`set_param` are the table's sweepable arguments.

>>> from compute.hardware import get_gpu
>>> table_spec({"builder": "ring", "n": 4, "gpu": "$gpu", "bandwidth": "2*$scaleup"},
...            get_gpu("Lite"))
'ring:n=4,gpu=Lite,bandwidth=225GB/s'
"""

from __future__ import annotations

import math
import numbers
import re

from compute.errors import UserError, known, lookalike, one_line
from compute.hardware import GpuSpec, get_gpu
from compute.units import format_bandwidth
from compute.validate import describe, is_flag, is_whole, read_number, string

__all__ = ["MAX_FABRIC_NUMBER", "MAX_TEXT", "canonical_table", "check_table", "copy_table",
           "format_value", "nvlinks_of", "param_paths", "parse_gpu_token", "set_param",
           "table_params", "table_spec", "text_value"]

#: Longest description or source text in a scenario file.
MAX_TEXT = 2_000
#: Largest magnitude of a number in a [fabric] table (bandwidths in bytes/s reach 1e15).
MAX_FABRIC_NUMBER = 1e18

_GPU_TOKEN = re.compile(r"^\s*(?:([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*\*\s*)?"
                        r"\$(scaleup|scaleout)\s*$")


def plain_value(value: object) -> object:
    """``value`` with a numpy scalar read as Python's (``np.True_`` as True, ``np.int64(2)``
    as 2, ``np.float32(0.5)`` as 0.5; a Fraction as a float): a [fabric] table is checked,
    written to TOML and JSON and cached by Python's types (numpy's were refused as "must be
    a string, number or boolean, got 2"); anything else as it is.

    >>> import numpy as np
    >>> [plain_value(v) for v in (np.True_, np.int64(2), np.float32(0.5), "ring")]
    [True, 2, 0.5, 'ring']
    """
    if is_flag(value):
        return bool(value)
    if is_whole(value):
        return int(value)
    if isinstance(value, numbers.Real) and not isinstance(value, float):
        return float(value)
    return value


def copy_table(table: dict) -> dict:
    """A copy of a [fabric] table, its nested tables copied too (numpy's values as Python's:
    :func:`plain_value`)."""
    return {k: copy_table(v) if isinstance(v, dict) else plain_value(v)
            for k, v in table.items()}


def canonical_table(table: dict) -> dict:
    """A copy of a [fabric] table (:func:`copy_table`) with its builder names, its own and
    its nested tables', as the registry spells them: read as a spec string reads a builder
    name (:func:`topologies.registry.canonical_name`), so ``"Rail_Optimized"`` is stored,
    shown and cached as ``"rail-optimized"``.

    >>> canonical_table({"builder": "Lite-Groups", "base": {"builder": "Fat_Tree", "k": 4}})
    {'builder': 'lite-groups', 'base': {'builder': 'fat-tree', 'k': 4}}
    """
    from topologies.registry import canonical_name

    out = {k: canonical_table(v) if isinstance(v, dict) else plain_value(v)
           for k, v in table.items()}
    if isinstance(out.get("builder"), str):
        out["builder"] = canonical_name(out["builder"])
    return out


def set_param(fabric: dict, keys: list[str], value, path: str) -> dict:
    """A copy of the [fabric] table ``fabric`` with the argument at ``keys`` (a nested
    table's: ``["base", "n"]``) set to ``value``; ``path`` (``fabric.base.n``) names it
    where it is refused."""
    out = copy_table(fabric)
    table = out
    for k in keys[:-1]:
        if not isinstance(table.get(k), dict):
            raise UserError(f"unknown parameter {path!r}: the fabric has no nested table {k!r}")
        table = table[k]
    if keys[-1] == "builder":
        raise UserError(f"parameter {path!r} cannot be swept: it names the builder")
    table[keys[-1]] = plain_value(value)
    return out


def param_paths(table: dict, prefix: str) -> list[str]:
    """Every builder argument of a [fabric] table (and its nested ones) as a dotted path."""
    from topologies.specs import builders

    params = next(b.params for b in builders() if b.name == table["builder"])
    out = [f"{prefix}.{p.name}" for p in params]
    for k, v in table.items():
        if isinstance(v, dict):
            out += param_paths(v, f"{prefix}.{k}")
    return out


def nvlinks_of(gpu: GpuSpec) -> int:
    """NVLinks per GPU (the ``"$nvlinks"`` token): :func:`compute.gpu_facts.nvlink_count`,
    the rule fabric builders default to, so a scenario and a builder wire one GPU alike: the
    GPU's own count (:attr:`~compute.hardware.GpuSpec.nvlinks`; a GPU derived from another,
    the Lite family from the H100, keeps its base's, each link carrying its share, so
    ``h100-dgx@Lite`` keeps 18), else its root's scale-up bandwidth over the H100's NVLink4
    line rate, 25 GB/s, when that is a whole number of links; otherwise refused, in one
    line that also says where the scenario may give the count.

    >>> [nvlinks_of(get_gpu(g)) for g in ("A100-SXM-80GB", "H100-SXM", "B200-HGX", "Lite")]
    [12, 18, 18, 18]
    """
    from compute.gpu_facts import nvlink_count

    try:
        return nvlink_count(gpu)
    except UserError as e:
        raise UserError(f"{e}, or write nvlinks = N in the [fabric] table ('$nvlinks' counts "
                        f"by the same rule)") from None


def parse_gpu_token(value: object, gpu: GpuSpec) -> object:
    """Resolve ``"$gpu"``, ``"$scaleup"``, ``"$scaleout"``, ``"K*$scaleup"``,
    ``"$reduction"`` (whether the GPU's scale-up switches reduce in the switch,
    :attr:`~compute.hardware.GpuSpec.scaleup_reduction`) and ``"$nvlinks"`` (its NVLinks:
    :func:`nvlinks_of`) for ``gpu`` (a :class:`~compute.hardware.GpuSpec`); other values
    pass through.

    >>> lite = get_gpu("Lite")
    >>> parse_gpu_token("$gpu", lite), parse_gpu_token("4*$scaleup", lite)
    ('Lite', 450000000000.0)
    >>> parse_gpu_token("$reduction", get_gpu("H100-SXM")), \\
    ...     parse_gpu_token("$reduction", get_gpu("A100-SXM-80GB"))
    (True, False)
    >>> parse_gpu_token("$nvlinks", get_gpu("A100-SXM-80GB"))
    12
    """
    if not isinstance(value, str):
        return value
    if value.strip() == "$gpu":
        return gpu.name
    if value.strip() == "$reduction":
        return bool(gpu.scaleup_reduction)
    if value.strip() == "$nvlinks":
        return nvlinks_of(gpu)
    m = _GPU_TOKEN.match(value)
    if m:
        # K by the one number grammar: '1e-400' is refused as typed (float() read it as 0.0,
        # then told 'bandwidth ... got 0.0')
        # (K scales a bandwidth, which may not be 0: nor may K)
        factor = read_number(f"fabric value {value!r}: K", m.group(1),
                             allowed="a finite number > 0") if m.group(1) else 1.0
        base = gpu.scaleup_bandwidth if m.group(2) == "scaleup" else gpu.scaleout_bandwidth
        if not base > 0:   # scaleout_Gbps = 0: a GPU with no NIC
            raise UserError(f"fabric value {value!r}: GPU {gpu.name!r} has no scale-out "
                            f"bandwidth (scaleout_Gbps = 0); write the bandwidth in the "
                            f"[fabric] table")
        if not math.isfinite(factor * base):   # '1e300*$scaleup': 'got inf', never typed
            raise UserError(f"fabric value {value!r}: K {m.group(1)} times the GPU's "
                            f"{m.group(2)} bandwidth is beyond the range of a float (at most "
                            "about 1.8e308); give a smaller K")
        return factor * base
    if "$" in value:
        raise UserError(f"fabric value {value!r} is not one of the tokens '$gpu', '$scaleup', "
                        f"'$scaleout', 'K*$scaleup' / 'K*$scaleout', '$reduction' or "
                        f"'$nvlinks'")
    return value


#: What each token gives (``"$gpu"`` aside: a GPU), for the refusal of a token given
#: for a parameter of another kind: (kind, whether a builder parameter takes it).
_TOKEN_KINDS = {
    "$nvlinks": ("a count of NVLinks", lambda p: p.type.split(" |")[0] == "int"),
    "$reduction": ("true or false", lambda p: p.type.split(" |")[0] == "bool"),
    "bandwidth": ("a bandwidth (bytes/s)", lambda p: p.unit == "bytes/s"),
}


def _check_token_kind(builder: object, key: str, value: str) -> None:
    """Refuse a token for a parameter of another kind: ``bandwidth = "$nvlinks"`` built
    a fabric of 18-bytes/s links, ``nvlinks = "$scaleup"`` asked for 450e9 links."""
    from topologies.registry import builders

    token = value.strip()
    kind = _TOKEN_KINDS.get(token) or (_TOKEN_KINDS["bandwidth"]
                                       if _GPU_TOKEN.match(value) else None)
    info = next((b for b in builders() if b.name == builder), None)
    param = None if info is None else next((p for p in info.params if p.name == key), None)
    if kind is None or param is None or kind[1](param):
        return   # not a token, or an unknown builder or key: refused where they are read
    base = param.type.split(" |")[0]
    takes = f"a bandwidth ({param.unit})" if param.unit == "bytes/s" else {
        "int": "a whole number", "bool": "true or false", "float": "a number"}.get(base, base)
    raise UserError(f"fabric value {key} = {value!r}: {token!r} is {kind[0]}, but "
                    f"{builder}'s {key} takes {takes}")


def table_params(table: dict, gpu) -> tuple[str, dict]:
    """The builder's ``(name, keyword arguments)`` of a [fabric] table for ``gpu`` (a
    :class:`~compute.hardware.GpuSpec`): ``"$gpu"`` the spec itself, every other token
    resolved (:func:`parse_gpu_token`) once checked against the kind of parameter it is
    given for, nested tables the same way."""
    params = {}
    for key, value in table.items():
        if key == "builder":
            continue
        if isinstance(value, dict):
            params[key] = table_params(value, gpu)
        elif isinstance(value, str) and value.strip() == "$gpu":
            params[key] = gpu
        else:
            if isinstance(value, str) and "$" in value:
                _check_token_kind(table.get("builder"), key, value)
            params[key] = parse_gpu_token(value, gpu)
    from topologies.registry import file_counts

    # a file's whole float of a count ('domains = 4.0') is its int: a float in code is refused
    return table["builder"], file_counts(table.get("builder"), params)


def format_value(value) -> str:
    """A [fabric] value as a spec string writes it: ``true``/``false``, a float's repr, a
    text holding ``,``, ``[`` or ``]`` in brackets.

    >>> format_value(True), format_value(0.5), format_value("a,b")
    ('true', '0.5', '[a,b]')
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    text = str(value)
    return f"[{text}]" if any(c in text for c in ",[]") else text


def table_spec(table: dict, gpu) -> str:
    """The spec string (``builder:key=value,...``) of a [fabric] table for ``gpu``, its
    tokens resolved and a bandwidth token written as a bandwidth (the module's example)."""
    parts = []
    for key, value in table.items():
        if key == "builder":
            continue
        if isinstance(value, dict):
            parts.append(f"{key}=[{table_spec(value, gpu)}]")
        else:
            resolved = parse_gpu_token(value, gpu)
            # a $scaleup / $scaleout token is a bandwidth: written as one (112.5GB/s)
            parts.append(f"{key}={format_bandwidth(resolved)}" if resolved is not value
                         and isinstance(resolved, float) else f"{key}={format_value(resolved)}")
    return table["builder"] + (":" + ",".join(parts) if parts else "")


def check_table(table, where: str, path: str) -> None:
    """Check a [fabric] table: a known builder and only its keyword arguments. Its builder
    name is read as a spec string reads one (:func:`topologies.registry.canonical_name`) and
    written back in the table as the registry spells it (nested tables' too)."""
    from topologies.registry import canonical_name
    from topologies.specs import builders

    if not isinstance(table, dict):
        raise UserError(f"{where}: [{path}] must be a table")
    infos = {b.name: b for b in builders()}
    name = table.get("builder")
    if isinstance(name, str) and (canon := canonical_name(name)) in infos:
        name = table["builder"] = canon
    if not isinstance(name, str) or name not in infos:
        got = "" if name is None else f", got {describe(name)}"   # name what was written
        raise UserError(f"{where}: [{path}] needs 'builder' naming a fabric builder{got}"
                        f"{lookalike(name, infos)}; known: {known(infos)}")
    params = {p.name for p in infos[name].params}
    unknown = sorted(set(table) - params - {"builder"})
    if unknown:
        raise UserError(f"{where}: [{path}] has unknown key(s) {', '.join(unknown)} for "
                        f"builder {name!r}; known: {known(params)}")
    types = {p.name: p.type for p in infos[name].params}
    for key, value in table.items():
        if isinstance(value, dict) and key != "builder" and "str" not in types[key]:
            # a table is a fabric (read as one) only where a spec's text is (lite-groups' base)
            raise UserError(f"{where}: [{path}] {key} must be a value ({name}'s {key} takes "
                            f"{types[key]}), got a table")
        if isinstance(value, dict):
            check_table(value, where, f"{path}.{key}")
        elif isinstance(value, bool):
            continue
        elif isinstance(value, int | float):
            # the builder checks ranges; refuse here what cannot be a quantity at all
            if abs(value) > MAX_FABRIC_NUMBER or not math.isfinite(value):
                raise UserError(f"{where}: [{path}] {key} must be a finite number of at most "
                                f"{MAX_FABRIC_NUMBER:.0e} in size, got {describe(value)}")
        elif isinstance(value, str):
            text_value(f"{where}: [{path}]", key, value)
            if "$" in value:
                try:   # checks the token's spelling
                    parse_gpu_token(value, get_gpu("H100-SXM"))
                except UserError as exc:
                    raise UserError(f"{where}: [{path}] {key}: {exc}") from None
        else:
            raise UserError(f"{where}: [{path}] {key} must be a string, number or boolean, "
                            f"got {describe(value)}")


def text_value(where: str, key: str, value) -> str:
    """Non-empty one-line text of at most :data:`MAX_TEXT` characters."""
    text = string(where, key, value, max_length=MAX_TEXT)
    if not text.strip() or one_line(text) != text:
        raise UserError(f"{where}: {key} must be non-empty text on one line (no control "
                        f"characters), got {describe(value)}")
    return text
