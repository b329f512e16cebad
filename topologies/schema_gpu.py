"""A GPU type as a fabric file's ``gpu_types`` table holds it: its SI fields (the shape of
:meth:`compute.hardware.GpuSpec.to_dict`), each checked, read into a GpuSpec.

A fabric that places a GPU type not in compute's catalog carries it in the graph attribute
``gpu_types`` (see :mod:`topologies.schema`); a fabric file writes each as a table of its
fields, and a reader turns the table back into the GpuSpec with the bounds a GPU file's
entry meets (``compute/data/limits.toml``).

Interface: :func:`gpu_spec_from_dict` (``name``, the table, ``where`` to name in an error ->
GpuSpec, or UserError naming the field at fault). Used by the fabric-file readers
(:mod:`topologies.io`).
"""

from __future__ import annotations

import math
from dataclasses import fields
from typing import Any

from compute.errors import UserError
from compute.gpu_ranges import spec_ranges
from compute.hardware import (
    CLOCK_MARK,
    FLAG_FIELDS,
    OPTIONAL_FIELDS,
    UNSET_FIELDS,
    GpuSpec,
    catalog,
)
from compute.validate import NAME_MARKS, describe, flag, number, typed_name
from topologies.schema import as_real, catalog_clash

__all__ = ["check_gpu_type", "gpu_spec_from_dict"]


#: True/false fields (optional: files saved before they existed lack them).
_FLAGS = FLAG_FIELDS


def gpu_spec_from_dict(name: str, data: object, where: str = "gpu_types") -> GpuSpec:
    """A GpuSpec from its SI fields (the shape of :meth:`GpuSpec.to_dict`), each checked:
    whole numbers in their ranges for the fields ``compute/data/limits.toml`` says are whole
    (``sms``, ``max_instance``, ``nvlinks``), true or false for
    ``scaleup_reduction``, finite numbers > 0 for the rest (``flops_fp8``, ``flops_int8``,
    ``flops_fp4`` and ``scaleout_bandwidth`` may be 0, "none": their ranges in
    ``compute/data/limits.toml`` allow it, :func:`_zero_ok`); every
    number within the range a GPU file's entry has there (:func:`_in_limits`). The fields
    with a default (:data:`~compute.hardware.OPTIONAL_FIELDS`: ``scaleup_reduction``,
    ``flops_int8``, ``flops_fp4``, ``nvlinks``, ``source``) may be absent, as in files saved
    before they existed: the GpuSpec default (no int8 or fp4 tensor cores) then, except
    ``nvlinks`` (a whole number in its range, or null: none given), which a GPU saved
    without it takes from the catalog GPU of its name (``NAME@R``, a GPU at another clock:
    ``NAME``'s) where there is one, else none (builders then count them by
    :func:`compute.gpu_facts.nvlink_count`).

    >>> from compute.hardware import get_gpu
    >>> gpu_spec_from_dict("Lite", get_gpu("Lite").to_dict()) == get_gpu("Lite")
    True
    >>> old = {k: v for k, v in get_gpu("A100-SXM-80GB").to_dict().items()
    ...        if k not in ("name", "nvlinks")}   # as saved before GpuSpec held nvlinks
    >>> gpu_spec_from_dict("A100-SXM-80GB", old).nvlinks, gpu_spec_from_dict("Mine", old).nvlinks
    (12, None)
    """
    if not isinstance(data, dict):
        raise UserError(f"{where}: GPU type {describe(name)} must be a table of its fields, got "
                        f"{describe(data)}")
    allowed = [f.name for f in fields(GpuSpec)]
    unknown = [k for k in data if k not in allowed]
    if unknown:
        raise UserError(f"{where}: GPU type {describe(name)} has unknown field(s) "
                        f"{', '.join(map(describe, unknown))}; allowed: {', '.join(allowed)}")
    missing = [k for k in allowed if k not in data and k not in ("name", *OPTIONAL_FIELDS)]
    if missing:
        raise UserError(f"{where}: GPU type {describe(name)} lacks field(s) {', '.join(missing)}")
    if data.get("name", name) != name:
        raise UserError(f"{where}: GPU type {describe(name)} has the name "
                        f"{describe(data['name'])}; a GPU type's 'name' must be the one it is "
                        f"listed under ({describe(name)}), or be left out")
    if not isinstance(data.get("source", ""), str):
        raise UserError(f"{where}: GPU type {describe(name)}: source must be text")
    values: dict[str, Any] = {}
    if "nvlinks" not in data:   # saved before GpuSpec held it: the catalog's count
        known_gpu = catalog().get(name.split(CLOCK_MARK)[0]) if isinstance(name, str) else None
        values["nvlinks"] = None if known_gpu is None else known_gpu.nvlinks
    for key in allowed:
        if key in ("name", "source") or (key in OPTIONAL_FIELDS and key not in data):
            continue
        v = data[key]
        if v is None and key in UNSET_FIELDS:   # null: none given
            values[key] = v
            continue
        if key in _FLAGS:
            v = flag(f"{where}: GPU type {describe(name)}", key, v)
        elif key in UNSET_FIELDS or spec_ranges()[key][2]:
            pass   # a whole number (sms, max_instance, nvlinks): _in_limits names its range
        else:
            x = as_real(v)
            if x is None or not math.isfinite(x) or x < 0 or (x == 0 and not _zero_ok(key)):
                least = ">= 0" if _zero_ok(key) else "> 0"
                raise UserError(f"{where}: GPU type {describe(name)}: {key} must be a finite "
                                f"number {least} (SI units), got {describe(v)}")
            v = x
        if key not in _FLAGS:
            v = _in_limits(f"{where}: GPU type {describe(name)}", key, v)
        values[key] = v
    return check_gpu_type(where, GpuSpec(name=name, source=data.get("source", ""), **values))


def check_gpu_type(where: str, spec: GpuSpec) -> GpuSpec:
    """``spec``, a GPU type a fabric file holds (read or to be written), if a file may hold
    it as its GPU files may: its name without ``,``, ``=`` or ``:``
    (:data:`~compute.validate.NAME_MARKS`; ``@`` kept: a GPU at another clock, as netmodel
    saves it) and not a catalog GPU's name with other figures
    (:func:`~topologies.schema.catalog_clash`); else UserError naming ``where``. A graph in
    memory may hold such a GPU type (an object is its figures); a file names it.

    >>> from compute.hardware import derive_gpu, get_gpu
    >>> check_gpu_type("f.json", get_gpu("Lite")).name
    'Lite'
    >>> check_gpu_type("f.json", derive_gpu(get_gpu("Lite"), "Lite:2", fraction=0.5))
    Traceback (most recent call last):
    ...
    compute.errors.UserError: f.json: GPU name 'Lite:2' must not contain ':' (it ends a fabric spec's builder, as in ring:n=4); a GPU's name holds none of ',', '=', ':'
    """
    typed_name(where, "GPU", spec.name, "".join(m for m in NAME_MARKS if m != CLOCK_MARK))
    clash = catalog_clash(spec)
    if clash is not None:
        raise UserError(f"{where}: {clash}")
    return spec


def _zero_ok(field: str) -> bool:
    """Whether the SI ``field`` of a GpuSpec may be 0 ("none"): its range in
    ``compute/data/limits.toml`` says ``or_zero``.

    >>> _zero_ok("flops_fp8"), _zero_ok("scaleout_bandwidth"), _zero_ok("flops_bf16")
    (True, True, False)
    """
    return spec_ranges()[field][3]


def _in_limits(where: str, field: str, value: float) -> int | float:
    """``value`` (the SI ``field`` of a GpuSpec) checked against the range a GPU file's
    entry has in ``compute/data/limits.toml`` (the file's key and unit scaled to SI, as
    the GPU-file reader scales them), so a GPU inside a saved fabric meets the same bounds
    as one given by name or in a GPU file.

    >>> _in_limits("f.json", "hbm_bandwidth", 3.35e12)
    3350000000000.0
    >>> _in_limits("f.json", "hbm_bandwidth", 1e30)  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    compute.errors.UserError: f.json: hbm_bandwidth must be a number from 1,000,000,000 to
    100,000,000,000,000,000 bytes/s, got 1e+30
    """
    lo, hi, integer, or_zero, unit = spec_ranges()[field]
    return number(where, field, value, minimum=lo, maximum=hi, integer=integer,
                  or_zero=or_zero, unit=unit)
