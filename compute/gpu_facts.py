"""What compute knows of a GPU beside its GpuSpec, by GPU name: what it derives from (its
lineage, and the NVLink count that follows from it), its die table and its host power, as
the catalog or its GPU file says them, and those facts carried by a saved fabric.

:mod:`compute.hardware` reads GPU entries and keeps each GPU read with its entry's facts
(:func:`compute.hardware.read_gpu`, the one record of them); this module answers from that
record, reading the catalog first, and notes a saved fabric's facts into it
(:func:`note_gpu_file_facts`) as reading the GPU file would have.

>>> derivation("Lite"), base_gpu("Lite").name, root_gpu(get_gpu("Lite+BW")).name
(('H100-SXM', 0.25), 'H100-SXM', 'H100-SXM')
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from copy import deepcopy
from dataclasses import fields, replace

from compute import validate
from compute.dies import LogicDies, check_die_table
from compute.errors import UserError, find_name, known, lookalike
from compute.gpu_rows import HOST_POWER_KEY, NAMED_KEYS, die_entry, host_power_entry, named_entries
from compute.hardware import (
    FLAG_FIELDS,
    GpuSpec,
    Step,
    catalog,
    derive_gpu,
    get_gpu,
    keep_read,
    read_gpu,
    read_step,
)
from compute.rows import Parameter

__all__ = ["GPU_FILE_FACTS", "NVLINK_REFERENCE", "base_gpu", "check_derivation",
           "check_gpu_file_facts", "derivation", "die_table", "gpu_file_facts",
           "host_power_of", "logic_dies", "named_fact", "note_gpu_file_facts", "nvlink_count",
           "root_gpu", "stated_fact"]


def die_table(name: str) -> tuple[dict, str] | None:
    """The ``die`` table of the GPU ``name`` as read (from the catalog or a GPU file read
    before) with where it was read, or None where its entry has none.

    >>> table, where = die_table("A100-SXM-80GB")
    >>> table["area"]["value"], table["area"]["unit"], where
    (826, 'mm^2', "compute/data/gpus.toml: GPU 'A100-SXM-80GB' die")
    >>> die_table("H100-SXM") is None  # the reference die: compute/data/economics.toml
    True
    """
    catalog()
    found = read_gpu(name)
    return None if found is None or found.die is None else found.die[:2]


def logic_dies(name: str) -> LogicDies | None:
    """The logic dies of the GPU ``name`` as its ``die`` table gives them (checked when it
    was read: :func:`compute.dies.check_die_table`), or None where its entry has none.

    >>> a = logic_dies("A100-SXM-80GB")
    >>> a.sms_physical, a.sms_enabled, a.process, a.wafer_price, a.list_price
    (128, 108, 'N7', 9346.0, 12500.0)
    """
    catalog()
    found = read_gpu(name)
    return None if found is None or found.die is None else found.die[2]


def host_power_of(gpu: GpuSpec) -> Parameter | None:
    """The ``host_power_W`` row (:class:`compute.rows.Parameter`, W) of a GPU-file GPU as
    read (the spec read under its name), or None where its entry has none."""
    found = read_gpu(gpu.name)
    return found.host_power if found is not None and found.spec == gpu else None


def base_gpu(name: str) -> GpuSpec | None:
    """The GPU the GPU ``name`` derives from (:func:`derivation`), as read (a catalog GPU or
    one of the same GPU file), else None.

    >>> base_gpu("Lite").name, base_gpu("H100-SXM")
    ('H100-SXM', None)
    """
    derived = derivation(name)
    if derived is None:
        return None
    return _spec_read(derived[0]) or get_gpu(derived[0])


#: The GPU whose NVLinks a GPU naming no count of its own is taken to have
#: (:func:`nvlink_count`): the H100's fourth-generation NVLink, whose line rate is its
#: catalog entry's 450 GB/s a direction over its 18 links, 25 GB/s (NVIDIA H100 datasheet,
#: gpus.toml). The collective model takes the same generation for a GPU whose lineage names
#: none (no ``collective_generation``: netmodel/data/collective_generations.toml, default =
#: "hopper").
NVLINK_REFERENCE = "H100-SXM"


def nvlink_count(gpu: GpuSpec) -> int:
    """NVLinks per GPU: the one rule fabric builders' default (``nvlinks`` of
    :func:`topologies.hierarchical.rail_optimized`, ``superpod``, ``nvl72``) and a
    scenario's ``"$nvlinks"`` follow. The GPU's own count (:attr:`GpuSpec.nvlinks`: its
    entry's ``nvlinks`` key; a derived GPU keeps its base's); for a GPU that names none,
    the scale-up bandwidth of the GPU it derives from at the root (:func:`root_gpu`) over
    one NVLink's line rate of :data:`NVLINK_REFERENCE` (25 GB/s), which must be a whole
    number of links within ``limits.toml``'s ``[gpu.nvlinks]`` range; otherwise one line
    asking for the count.

    >>> [nvlink_count(get_gpu(g)) for g in ("A100-SXM-80GB", "H100-SXM", "B200-HGX", "Lite")]
    [12, 18, 18, 18]
    >>> from dataclasses import replace   # a name no GPU read in this process has: a GPU's
    >>> # name is what its derivation is looked up by (a file's 'Mine' derived from H100-SXM
    >>> # read earlier would make this one H100-SXM's 18)
    >>> mine = replace(get_gpu("H100-SXM"), name="Doc-400GBps", scaleup_bandwidth=400e9,
    ...                nvlinks=None)
    >>> nvlink_count(mine)   # 400 / 25 GB/s
    16
    """
    if not isinstance(gpu, GpuSpec):
        validate.of_type("gpu", gpu, GpuSpec, "get_gpu('H100-SXM')", default=False)
    if gpu.nvlinks is not None:
        return gpu.nvlinks
    base = root_gpu(gpu)
    if base.nvlinks is not None:
        return base.nvlinks
    ref = get_gpu(NVLINK_REFERENCE)
    rate = ref.scaleup_bandwidth / ref.nvlinks
    links = base.scaleup_bandwidth / rate
    allowed = validate.limits("gpu")["nvlinks"]
    whole = round(links)
    if not (allowed.minimum <= whole <= allowed.maximum and abs(links - whole) <= 1e-9 * links):
        from compute.units import format_bandwidth

        raise UserError(f"GPU {gpu.name!r} gives no NVLink count and its scale-up bandwidth "
                        f"{format_bandwidth(base.scaleup_bandwidth)} is not a whole number "
                        f"from {allowed.minimum:,} to {allowed.maximum:,} of NVLinks of "
                        f"{format_bandwidth(rate)} (the {NVLINK_REFERENCE}'s) ({links:.4g}); "
                        f"give the GPU an nvlinks = N key")
    return int(whole)


def root_gpu(gpu: GpuSpec) -> GpuSpec:
    """The GPU at the root of ``gpu``'s derivations (:func:`base_gpu`, followed to a GPU
    derived from none, a GPU file's chains included), ``gpu`` itself if derived from none.

    >>> root_gpu(get_gpu("Lite")).name, root_gpu(get_gpu("H100-SXM")).name
    ('H100-SXM', 'H100-SXM')
    """
    *_, root = _lineage(gpu.name)
    return gpu if root == gpu.name else _spec_read(root) or get_gpu(root)


def _lineage(name: str) -> Iterator[str]:
    """``name``, then the GPU it derives from (:func:`derivation`), and so on to a GPU
    derived from none (a cycle stopped at its first repeat).

    >>> list(_lineage("Lite")), list(_lineage("H100-SXM"))
    (['Lite', 'H100-SXM'], ['H100-SXM'])
    """
    catalog()
    seen: set[str] = set()
    while name not in seen:
        seen.add(name)
        yield name
        derived = derivation(name)
        if derived is None:
            return
        name = derived[0]


#: The keys of a GPU file's entry whose facts compute keeps beside the GpuSpec, by GPU name
#: (:func:`compute.hardware.read_gpu`): what it derives from and
#: by what fraction (the named facts it keeps from its base, the dies of a GPU without a
#: table of its own), its die table (package cost, list price, yield), its host power and
#: what it is named (:data:`compute.gpu_rows.NAMED_KEYS`: its collective generation,
#: compute capability and host CPU architecture, :func:`named_fact`).
#: A saved fabric carries them for its GPU types (topologies: graph attribute
#: ``gpu_file_facts``, :func:`gpu_file_facts` and :func:`note_gpu_file_facts`), so that a
#: process that never read the GPU file costs its GPUs as one that did.
GPU_FILE_FACTS = ("derive_from", "fraction", "die", HOST_POWER_KEY, *NAMED_KEYS)


def gpu_file_facts(spec: GpuSpec) -> dict:
    """What compute knows of the GPU ``spec`` beside the spec, as its GPU file's entry says
    it (the keys of :data:`GPU_FILE_FACTS`, JSON-safe copies): ``derive_from`` and
    ``fraction`` where it derives from another GPU (by its name, :func:`derivation`),
    ``die``, ``host_power_W`` and the named facts its entry states (not those it keeps from
    its base) where ``spec`` is the GPU read under its name. {} for a catalog GPU's name
    (the catalog keeps its own) and a GPU known to no file.

    >>> gpu_file_facts(get_gpu("Lite")), gpu_file_facts(get_gpu("H100-SXM"))
    ({}, {})
    """
    table = catalog()
    if find_name(table, spec.name) is not None:
        return {}
    out: dict = {}
    found = read_gpu(spec.name)
    step = None if found is None else found.derived
    if step is not None and _derives(spec, *step):   # not another GPU of the same name
        out.update(derive_from=step[0], fraction=step[1])
    if found is not None and found.spec == spec:
        if found.die is not None:
            out["die"] = deepcopy(found.die[0])
        row = found.host_power
        if row is not None:
            out[HOST_POWER_KEY] = {"value": row.raw, "unit": row.unit, "source": row.source,
                                   "confidence": row.confidence}
        out.update(dict(found.named))
    return out


def check_gpu_file_facts(specs: Mapping[str, GpuSpec], facts: object, where: str) -> tuple[
        dict[str, tuple[dict, str, LogicDies]], dict[str, tuple[str, float]],
        dict[str, Parameter], dict[str, dict[str, str]]]:
    """``facts`` (``{name: {key of GPU_FILE_FACTS: value}}``, of the GPUs ``specs``) checked
    as a GPU file's entries are (the same checks, so a value a GPU file refuses is refused
    here), read at ``where``: ``(dies, derivations, host power rows, named facts)`` by GPU
    name. Refused
    in one line: a name not in ``specs`` or a catalog GPU's, an unknown key, a
    ``derive_from`` naming neither a catalog GPU nor one of ``specs``, a cycle of them.

    >>> check_gpu_file_facts({}, {"Lite": {}}, "f.json")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: f.json: 'Lite' names a catalog GPU, whose facts are the catalog's
    """
    if not isinstance(facts, dict):
        raise UserError(f"{where} must be a table of GPU name: facts, got "
                        f"{validate.describe(facts)}")
    table = catalog()
    dies: dict[str, tuple[dict, str, LogicDies]] = {}
    derived: dict[str, tuple[str, float]] = {}
    hosts: dict[str, Parameter] = {}
    named: dict[str, dict[str, str]] = {}
    for name, entry in facts.items():
        if isinstance(name, str) and find_name(table, name) is not None:
            raise UserError(f"{where}: {validate.describe(name)} names a catalog GPU, whose "
                            f"facts are the catalog's")
        if not isinstance(specs.get(name), GpuSpec):   # type: ignore[call-overload]
            raise UserError(f"{where}: {validate.describe(name)} is not one of the GPU types "
                            f"given (gpu_types): {known(specs)}")
        here = f"{where}: GPU {name!r}"
        entry = dict(validate.table(here, entry))
        unknown = sorted(map(str, set(entry) - set(GPU_FILE_FACTS)))
        if unknown:
            raise UserError(f"{here} has unknown key(s) {', '.join(k[:60] for k in unknown)}; "
                            f"allowed: {', '.join(GPU_FILE_FACTS)}")
        if "derive_from" in entry:
            typed = entry["derive_from"]   # looked up as --gpu is: blanks, case aside
            base = find_name({**table, **specs}, typed) if isinstance(typed, str) else None
            if base is None:
                raise UserError(f"{here} derives from unknown GPU {validate.describe(typed)}"
                                f"{lookalike(typed, [*table, *specs])}; known: "
                                f"{known([*table, *specs])}")
            derived[name] = (base, float(validate.in_range(here, "gpu", "fraction",
                                                           entry.get("fraction", 1.0))))
        elif "fraction" in entry:
            raise UserError(f"{here}: fraction is a fraction of the GPU it derives from; it "
                            f"has no derive_from")
        die = die_entry(here, entry)
        if die is not None:
            dies[name] = (die[0], die[1], check_die_table(name, die[0], die[1],
                                                          specs[name].sms))
        if HOST_POWER_KEY in entry:
            hosts[name] = host_power_entry(here, entry)
        said = named_entries(here, entry)
        if said:
            named[name] = said
    ends: set[str] = set()   # every lineage ends at a GPU derived from none
    for name in derived:
        chain, last = {name: None}, name   # in order
        while last not in ends and (step := derived.get(last)) is not None:
            if step[0] in chain:
                raise UserError(f"{where}: GPU {step[0]!r} derives from itself "
                                f"({' -> '.join(c[:60] for c in [*chain, step[0]][:8])})")
            chain[last := step[0]] = None
        ends.update(chain)
    def lineage(spec: GpuSpec) -> tuple[GpuSpec, float] | None:
        """These facts' derivations, then those read before (the catalog's)."""
        step = derived.get(spec.name)
        if step is None:   # one of these GPUs derived from none, or the catalog's
            return None if spec.name in specs and spec.name not in table else read_step(spec)
        return specs[step[0]] if step[0] in specs else table[step[0]], step[1]

    for name, (base, fraction) in derived.items():   # each spec is what its derivation gives
        check_derivation(specs[name], specs[base] if base in specs else table[base], fraction,
                         where, lineage)
    return dies, derived, hosts, named


#: What :func:`compute.hardware.derive_gpu` scales by each multiplier, by the field that
#: reads it back (its one field the multiplier alone sets beside the fraction): a saved
#: fabric carries a derived GPU's base and fraction, not its multipliers.
_MULTIPLIED = {"flops_multiplier": "flops_bf16", "hbm_capacity_multiplier": "hbm_capacity",
               "hbm_bandwidth_multiplier": "hbm_bandwidth",
               "network_bandwidth_multiplier": "scaleup_bandwidth"}
#: GpuSpec fields a derived GPU's entry sets itself beside ``derive_from``
#: (compute.hardware's GPU-file reader: ``max_instance``, ``nvlinks``, the flags, ``source``).
_OWN_FIELDS = ("name", "source", "max_instance", "nvlinks", *FLAG_FIELDS)


def check_derivation(spec: GpuSpec, base: GpuSpec, fraction: float, where: str,
                     lineage: Step | None = None) -> None:
    """Refuse (one line at ``where``, naming the GPU, the field, ``spec``'s value and the
    re-derived one) a ``spec`` that is not :func:`compute.hardware.derive_gpu` of ``base``
    at ``fraction``: re-derived with the multipliers its own fields give (each held to its
    range, ``limits.toml [gpu.multiplier]``) and the fields its entry may set itself
    (:data:`_OWN_FIELDS`), every other field must be the derivation's (SMs, TDP, each
    dtype's peak, the scale-out bandwidth: what the fraction and multipliers set), the TDP
    rated as ``base``'s lineage gives (``lineage``, default the GPUs read:
    :func:`compute.hardware.clock_lineage`).

    >>> half = derive_gpu(get_gpu("B200-HGX"), "Half", fraction=0.5, flops_multiplier=2)
    >>> check_derivation(half, get_gpu("B200-HGX"), 0.5, "f.json")
    >>> check_derivation(half, get_gpu("B200-HGX"), 0.25, "f.json")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: f.json: GPU 'Half' has sms 74, but derive_from 'B200-HGX' at fraction 0.25 gives 37
    """
    allowed = validate.limits("gpu")["multiplier"]
    multipliers, clamped = {}, {}
    for key, field in _MULTIPLIED.items():
        m = getattr(spec, field) / (getattr(base, field) * fraction)
        near = min(max(m, allowed.minimum), allowed.maximum)
        multipliers[key] = near
        if near != m:
            clamped[field] = f" (at its {key}'s {'least' if m < near else 'most'}, {near:g})"
    own = {f: getattr(spec, f) for f in _OWN_FIELDS}
    try:
        again = replace(derive_gpu(base, spec.name, fraction=fraction, **multipliers,
                                   max_instance=spec.max_instance, source=spec.source,
                                   lineage=lineage), **own)
    except UserError as exc:
        raise UserError(f"{where}: {exc}") from None
    for f in fields(GpuSpec):
        mine, theirs = getattr(spec, f.name), getattr(again, f.name)
        if mine != theirs and not (f.name not in own and isinstance(mine, float)
                                   and math.isclose(mine, theirs, rel_tol=1e-9)):
            raise UserError(f"{where}: GPU {spec.name!r} has {f.name} {mine!r}, but "
                            f"derive_from {base.name!r} at fraction {fraction:g} gives "
                            f"{theirs!r}{clamped.get(f.name, '')}")


def _derives(spec: GpuSpec, base: str, fraction: float) -> bool:
    """Whether ``spec`` is the GPU ``base`` (read, or the catalog's) at ``fraction``
    (:func:`check_derivation`): a spec built in code may bear the name of a GPU a file
    derived, and is not that GPU."""
    try:
        check_derivation(spec, _spec_read(base) or get_gpu(base), fraction, "")
    except UserError:
        return False
    return True


def note_gpu_file_facts(specs: Mapping[str, GpuSpec], facts: object, where: str) -> None:
    """Know the GPUs of ``facts`` (:func:`gpu_file_facts` by name, of the GPUs ``specs``:
    a saved fabric's GPU types) from here on as reading their GPU file would have, checked
    (:func:`check_gpu_file_facts`): each with its derivation, die table and host power or
    none (a GPU read again without one loses the one read before).

    >>> from compute.hardware import derive_gpu
    >>> half = derive_gpu(get_gpu("B200-HGX"), "NotedHalf", fraction=0.5)
    >>> note_gpu_file_facts({"NotedHalf": half}, {"NotedHalf": {"derive_from": "B200-HGX",
    ...     "fraction": 0.5}}, "f.json")
    >>> derivation("NotedHalf"), gpu_file_facts(half)
    (('B200-HGX', 0.5), {'derive_from': 'B200-HGX', 'fraction': 0.5})
    """
    dies, derived, hosts, named = check_gpu_file_facts(specs, facts, where)
    keep_read({name: specs[name] for name in facts}, dies, derived, hosts,  # type: ignore[union-attr]
              named)


def derivation(name: str) -> tuple[str, float] | None:
    """``(base GPU, fraction)`` of the GPU ``name`` where it was derived from another (in
    the catalog, a GPU file or a saved fabric read before: :func:`note_gpu_file_facts`),
    else None.

    >>> derivation("Lite"), derivation("H100-SXM")
    (('H100-SXM', 0.25), None)
    """
    catalog()
    found = read_gpu(name)
    return None if found is None else found.derived


def stated_fact(name: str, key: str) -> str | None:
    """The named fact ``key`` (one of :data:`compute.gpu_rows.NAMED_KEYS`) as the entry of
    the GPU ``name`` states it (the catalog's, a GPU file's or a saved fabric's read before),
    None where it states none (a GPU derived from another may keep its base's:
    :func:`named_fact`).

    >>> stated_fact("H100-SXM", "collective_generation"), stated_fact("Lite", "collective_generation")
    ('hopper', None)
    """
    catalog()
    found = read_gpu(name)
    return None if found is None else dict(found.named).get(key)


def named_fact(name: str, key: str, *,
               step: Callable[[str], tuple[str, float] | None] = derivation,
               stated: Callable[[str, str], str | None] = stated_fact
               ) -> tuple[str, str] | None:
    """``(value, GPU that states it)``: the named fact ``key`` of the GPU ``name``, its own
    entry's, else that of the GPU it derives from, and so on (a derived GPU keeps its
    base's unless it states its own: the Lite family is the H100's generation); None where
    no GPU of its lineage states one. ``step`` and ``stated``: where derivations and stated
    facts are looked up (default what compute has read; a caller holding a saved fabric's
    own GPU facts passes lookups that read those first).

    >>> named_fact("Lite+BW", "collective_generation"), named_fact("B300-HGX", "compute_capability")
    (('hopper', 'H100-SXM'), ('10.3', 'B300-HGX'))
    """
    catalog()
    seen: set[str] = set()
    while name not in seen:
        seen.add(name)
        value = stated(name, key)
        if value is not None:
            return value, name
        derived = step(name)
        if derived is None:
            return None
        name = derived[0]
    return None


def _spec_read(name: str) -> GpuSpec | None:
    """The GpuSpec read under ``name`` (the catalog's or a GPU file's), or None."""
    found = read_gpu(name)
    return None if found is None else found.spec
