"""The sourced facts of a GPU file's entry beside its spec: its ``source`` (required), its
``die`` table and its ``host_power_W`` row, and the check every sourced row ``{value, unit,
source, confidence}`` of an entry passes (:func:`row_value`). The entry's spec fields are
read by :mod:`compute.hardware`; :mod:`compute.gpu_facts` answers from what both read.

>>> row_value("GPU 'X'", "host_power_W", "W", {"value": 300, "unit": "W", "source": "a"})
300
"""

from __future__ import annotations

import re

from compute import validate
from compute.errors import UserError, known
from compute.rows import CONFIDENCE, Parameter, check_number

__all__ = ["HOST_ARCHS", "HOST_POWER_KEY", "MAX_HOST_POWER", "NAMED_KEYS", "NO_SOURCE",
           "check_capability", "check_host_arch", "die_entry", "entry_source", "host_power_entry",
           "named_entries", "row_value"]


def die_entry(here: str, entry: dict) -> tuple[dict, str] | None:
    """The entry's ``die`` table (removed from it) and where it was read, or None."""
    if "die" not in entry:
        return None
    table = entry.pop("die")
    if not isinstance(table, dict):
        raise UserError(f"{here}: die must be a table of die rows (value, unit, source, ref, "
                        f"confidence), got {validate.describe(table)}")
    return table, f"{here} die"


#: A GPU file entry's optional key: W per GPU its system's host (server less GPUs and
#: network) draws at the system's max, a sourced row ``{value, unit = "W", source,
#: confidence}`` (a catalog GPU's is a row of compute/data/economics.toml
#: ``[host_power_per_gpu]``); netmodel.study.host_bill.host_power reads it.
HOST_POWER_KEY = "host_power_W"
#: Most host power per GPU taken (W): 100 kW, over 100x any published system's (186-716 W).
MAX_HOST_POWER = 1e5


def host_power_entry(here: str, entry: dict) -> Parameter:
    """The entry's ``host_power_W`` row, checked: a sourced row in W, 0 to
    :data:`MAX_HOST_POWER` (read as :func:`die_entry` reads the die table)."""
    row = entry[HOST_POWER_KEY]
    v = check_number(f"{here}: {HOST_POWER_KEY}", row_value(here, HOST_POWER_KEY, "W", row),
                     high=MAX_HOST_POWER)
    return Parameter(HOST_POWER_KEY, v, "W", row["value"], row["source"], "",
                     row.get("confidence", ""))


#: The CPU architectures a GPU's host may be, as Linux names them (``uname -m``): those
#: NCCL's topology tells apart (NVIDIA/nccl src/graph/topo.h, NCCL_TOPO_CPU_ARCH_X86, _ARM
#: and _POWER), which its tuner reads. Grace (GB200, GB300, GH200) and Vera are Arm
#: (``aarch64``); Intel Xeon and AMD EPYC hosts ``x86_64``; IBM POWER ``ppc64le``.
HOST_ARCHS = ("aarch64", "ppc64le", "x86_64")

#: CUDA's compute capability as text: ``MAJOR.MINOR``, ASCII digits, no leading zero.
_CAPABILITY = re.compile(r"(?:0|[1-9][0-9]?)\.[0-9]", re.ASCII)


def check_capability(where: str, key: str, value: object) -> str:
    """``value`` if it is a CUDA compute capability written as text ``MAJOR.MINOR``
    (``"9.0"``, ``"10.3"``: a TOML number 10.3 is refused, as 10.30 would read the same);
    else UserError naming ``where``, ``key`` and the value.

    >>> check_capability("g.toml", "compute_capability", "10.3")
    '10.3'
    >>> check_capability("g.toml", "compute_capability", 9.0)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: g.toml: compute_capability must be CUDA's compute capability MAJOR.MINOR as text (e.g. "9.0", "10.3"), got 9.0
    """
    if not (isinstance(value, str) and _CAPABILITY.fullmatch(value)):
        raise UserError(f"{where}: {key} must be CUDA's compute capability MAJOR.MINOR as "
                        f"text (e.g. \"9.0\", \"10.3\"), got {validate.describe(value)}")
    return value


def check_host_arch(where: str, key: str, value: object) -> str:
    """``value`` if it is one of :data:`HOST_ARCHS` (exactly as written: ``uname -m``'s
    names); else UserError naming ``where``, ``key``, the value and the architectures there
    are.

    >>> check_host_arch("g.toml", "host_arch", "aarch64")
    'aarch64'
    >>> check_host_arch("g.toml", "host_arch", "grace")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: g.toml: host_arch must be the CPU architecture of the GPU's host as Linux names it (Grace and Vera: 'aarch64'; Intel and AMD: 'x86_64'), got 'grace'; known: 'aarch64', 'ppc64le', 'x86_64'
    """
    if not (isinstance(value, str) and value in HOST_ARCHS):
        raise UserError(f"{where}: {key} must be the CPU architecture of the GPU's host as "
                        f"Linux names it (Grace and Vera: 'aarch64'; Intel and AMD: "
                        f"'x86_64'), got {validate.describe(value)}; known: "
                        f"{known(HOST_ARCHS)}")
    return value


#: How each of :data:`NAMED_KEYS` is checked where an entry is read: a generation's name is
#: a name (:func:`compute.validate.name`; which generations exist is netmodel's to say), a
#: compute capability :func:`check_capability`'s, a host architecture
#: :func:`check_host_arch`'s.
_NAMED_CHECKS = {"collective_generation": validate.name,
                 "compute_capability": check_capability, "host_arch": check_host_arch}

#: What a GPU entry may say of what the GPU is beside its figures: names, not numbers, each
#: optional, kept beside its spec (:attr:`compute.hardware.ReadGpu.named`). A GPU derived
#: from another keeps its base's unless its own entry names one
#: (:func:`compute.gpu_facts.named_fact`). ``collective_generation``: the generation of its
#: NVLink and NVSwitch, whose constants the collective model applies to it; the generations
#: are the tables of ``netmodel/data/collective_generations.toml`` (or a user's generations
#: file), so netmodel, which defines them, refuses a name it does not define when it costs
#: the GPU (compute knows no collectives: here the name is held as text). A GPU whose lineage
#: names none takes that file's default. ``compute_capability``: CUDA's ``MAJOR.MINOR``
#: (NVIDIA's CUDA GPU compute capability table), by which NCCL enables a protocol (LL128).
#: ``host_arch``: the CPU architecture of the host the GPU is attached to (one of
#: :data:`HOST_ARCHS`: Grace-hosted GB200 and GB300 ``"aarch64"``, HGX systems' x86 hosts
#: ``"x86_64"``), which NCCL's tuner reads (its NVLSTree size correction: netmodel's
#: ``collective_tuner_plugins.toml``, whose ``default_host_arch`` a GPU whose lineage names
#: none takes).
NAMED_KEYS = tuple(_NAMED_CHECKS)


def named_entries(here: str, entry: dict) -> dict[str, str]:
    """The entry's :data:`NAMED_KEYS` (removed from it), each checked as
    :data:`_NAMED_CHECKS` says."""
    return {key: _NAMED_CHECKS[key](here, key, entry.pop(key)) for key in NAMED_KEYS
            if key in entry}


#: A GPU entry without a ``source`` key (:func:`entry_source`; a JSON ``null`` is a value).
NO_SOURCE = object()


def entry_source(here: str, value) -> str:
    """A GPU entry's ``source``: required, non-blank text on one line. Every figure read
    from a file carries where it comes from (as a scenario file's ``[sources]`` and an
    engine profile's per-parameter ``source``); a what-if GPU says so
    (``source = "what-if: ..."``)."""
    sources = "a datasheet, a paper, or 'what-if: ...' for a GPU of your own"
    if value is NO_SOURCE:
        raise UserError(f"{here} lacks key source (where its figures come from: {sources})")
    source = validate.string(here, "source", value)
    if not source.strip():
        raise UserError(f"{here}: source is blank; say where its figures come from "
                        f"({sources})")
    return source


def row_value(here: str, key: str, unit: str, row) -> object:
    """The value of a sourced row ``{value, unit, source, confidence}`` (``key`` of a GPU
    entry, whose unit must be ``unit``), unchecked: the caller checks its range."""
    shape = f"a row {{value, unit = {unit!r}, source, confidence}}"
    if not isinstance(row, dict):  # a bare number carries no source
        raise UserError(f"{here}: {key} must be a table ({shape}), got "
                        f"{validate.describe(row)}")
    extra = sorted(set(row) - {"value", "unit", "source", "confidence"})
    if extra:
        raise UserError(f"{here}: {key} must be {shape}, got unknown key(s) "
                        f"{', '.join(k[:60] for k in extra)}")
    if row.get("unit") != unit:
        raise UserError(f"{here}: {key} must be {shape}, got unit "
                        f"{validate.describe(row.get('unit'))} (allowed: {unit!r})")
    if not isinstance(row.get("source"), str):
        raise UserError(f"{here}: {key} must be {shape} whose source (where the number "
                        f"comes from) is text, got source {validate.describe(row.get('source'))}")
    if "confidence" in row and not isinstance(row["confidence"], str):
        raise UserError(f"{here}: {key} must be {shape} whose confidence is text (a tag such "
                        f"as {known(CONFIDENCE)}), got confidence "
                        f"{validate.describe(row['confidence'])}")
    return row.get("value")
