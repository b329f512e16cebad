"""Fabrics side by side (``netmodel topology compare``): what each is made of, what it
carries, what an all-reduce gets from it, what its network costs and draws, and what one
failure of each kind of part takes out.

A fabric is named, and ``gpu`` re-types it, as anywhere else
(:func:`~netmodel.study.fabric_ref.resolve_fabric`); a scenario's *physical* fabric gives
every row but the all-reduce (costed with the scenario's own collective model, below).

One :class:`TopologyRow` per fabric (its fields are the columns of :meth:`to_dict`; the
human :meth:`~TopologyComparison.table` shows one column per fabric). All values are SI
(bytes/s per direction, USD, W); the table converts them once, one unit and one number
format per row, the unit in the row's name.

* **Counts, optics, ports, diameter, path diversity**: :func:`topologies.analysis.summary`
  (optics from its bill of materials: pluggable transceivers and co-packaged (CPO) engines;
  ``pluggable_ends`` the optical cable ends the transceivers hold, ``module_ports`` ends a
  module, and where that is 2 a note says so as ``topology show`` does,
  :func:`topologies.optic_modules.ends_held`).
* **Injection**: every GPU's links summed (``injection_total``) and the smallest GPU's
  (``injection_per_gpu``); where GPUs of a server share its NICs (a GPU without one has
  only its scale-up links), a note gives the scale-out share, the server's NICs over its
  GPUs (:func:`topologies.analysis.scale_out_share`). **Bisection**: the analysis' max-flow from the first half of the
  GPUs to the rest (a closed form where one holds); ``bisection_per_gpu`` divides it by the
  GPUs of that half, so a non-blocking fabric's equals its injection per GPU.
* **All-reduce busbw** of a group of ``group`` GPUs placed contiguously, at 1 MiB, 64 MiB
  and 1 GiB (:data:`SIZES`), the fastest of every algorithm and protocol per size
  (:class:`~netmodel.collectives.model.FabricCostModel`, compiled once per fabric); busbw
  as nccl-tests defines it, ``algbw x 2(n-1)/n``. A scenario is costed with its own
  collective model, the one ``collective --scenario``, compare and the study charge
  (:meth:`~netmodel.study.scenario_collectives.ScenarioCollectives.model`: its calibration,
  placement, algorithm, ``[adjust]`` and circuits; the group alone where its instances
  run all at once), so the same group and size get the same seconds; any other fabric the
  shipped default calibration. An optical circuit-switched fabric without circuits gets,
  for the group, a ring of circuits on as many parallel ports as it has (a scenario: its
  ``circuits``), as the study sets them
  (:func:`~netmodel.study.scenario_fabric.instance_graph`).
* **Network capex and power**: :func:`netmodel.study.network_bill.network_bill` (the ports-used
  share: a scenario is priced as a slice of a fabric built out to full size); what the bill
  estimated (its ``notes``: a pluggable module of a rate no class has) a note says.
* **Blast radius** of each component class of :mod:`topologies.failure_domains`, hardware
  radius only (:func:`topologies.hardware_radius.hardware_radius`, which defines it): the
  GPUs one failure removes, stops or cuts off, mean over the class and worst case. Hosts
  are the fabric's ``server`` labels, else as many GPUs as the reliability catalog puts in
  one.
* **Expected GPU time lost** (``gpu_time_lost``, a share): every class's rate per part
  (:meth:`~netmodel.study.reliability_catalog.Catalog.rates`, the fabric's first GPU type)
  x its parts x its mean blast radius x its repair time
  (:meth:`~netmodel.study.reliability_catalog.Catalog.repair_s`), summed and divided by the
  GPUs: the share of GPU time hardware failures take out, first order (failures do not
  overlap; detection, warm-up, spares and placed instances are ``netmodel availability``'s).
  ``network_capex_per_gpu_up`` divides the network capex by the GPUs up on average,
  ``gpus x (1 - gpu_time_lost)``: the network's price per working GPU, the figure to set
  against a fabric's blast radius. The GPUs' and hosts' prices (and the NICs, which
  ``netmodel cost`` counts in the host) need a GPU and host price list the fabric does not
  carry: ``netmodel cost`` adds them.

>>> r = compare_topologies(["single-switch:n=8", "ring:n=8"])
>>> [row.diameter for row in r.rows], [row.switches for row in r.rows]
([2, 4], [1, 0])
>>> [round(row.bisection_bandwidth / 1e9) for row in r.rows]  # 4 x 450 GB/s; 2 x 225 GB/s
[1800, 450]
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from types import SimpleNamespace
from typing import TYPE_CHECKING

import networkx as nx
import numpy as np

from compute.errors import UserError
from compute.units import RATE_FLOOR, RATE_RUNGS, counted, format_quantity, rung
from compute.validate import describe, is_whole, refuse_repeats
from netmodel.study.fabric_ref import Fabric, resolve_fabric
from netmodel.study.run_words import named

if TYPE_CHECKING:
    from netmodel.study.scenarios import Scenario

__all__ = ["DEFAULT_GROUP", "SIZES", "AllReduce", "TopologyComparison", "TopologyRow",
           "compare_topologies"]

#: Message sizes of the all-reduce rows (bytes): small, mid and large.
SIZES = (2**20, 2**26, 2**30)
#: Default all-reduce group (GPUs), lowered to the largest power of two every fabric holds.
DEFAULT_GROUP = 8
#: Most links of the fabrics of one comparison together (``NETMODEL_MAX_COMPARE_LINKS``
#: overrides), checked once they are built (a build is a few per cent of the work) and before
#: any row: each link costs about :data:`SECONDS_PER_LINK` and :data:`BYTES_PER_LINK` (its
#: failure domains, blast radius, bill of materials and cost). fat-tree:k=128 (1,572,864
#: links) takes about 15-25 s and 1.34 GB; the next fat tree, k=160 (3,072,000), is
#: refused.
MAX_LINKS = 2_000_000
#: Seconds and peak bytes per link of a comparison, measured on fat-tree:k=64 and k=128
#: against ring (scripts/bench_topologies.py's compare cases: wall and CPU of
#: compare_topologies in a fresh process, peak RSS by VmHWM). With failure domains and
#: the network bill from arrays, on a shared 2-core machine: k=128 15.5-24.6 s wall,
#: 14.8-14.9 s CPU, 1.65 GB (9.8-16.8 us and 1,047 B a link); k=64 1.9-4.1 s wall, 1.9-2.0 s
#: CPU, 0.26 GB (1,328 B a link: the interpreter's own ~0.2 GB weighs more). Since, k=128
#: 20.7 s wall, 18.2 s CPU, 1.34 GB (13.1 us and 852 B a link). Kept at the loaded wall
#: time and over k=128's bytes (~15% over the 1,047 B they were set on, ~40% over 852 B),
#: estimates that refuse before building should not understate (the first estimate's 35 us
#: and 1,600 B stood over 25-36 us and 1,559 B then).
SECONDS_PER_LINK = 17e-6
BYTES_PER_LINK = 1_200


# ---------------------------------------------------------------------- blast radius

def _gpu_time_lost(graph: nx.Graph, radius: Iterable) -> float:
    """The expected share of the fabric's GPU time its hardware failures take out: over the
    component classes of ``radius`` (:class:`~topologies.hardware_radius.BlastClass`), the
    catalog's rate per part (:meth:`~netmodel.study.reliability_catalog.Catalog.rates`, for
    the fabric's first GPU type) x parts x mean GPUs lost x repair time
    (:meth:`~netmodel.study.reliability_catalog.Catalog.repair_s`), over the GPUs. First
    order: failures do not overlap, and detection and warm-up are not counted (netmodel
    availability adds them)."""
    from netmodel.study.reliability_catalog import catalog
    from topologies.schema import gpu_nodes, gpu_spec

    gpus = gpu_nodes(graph)
    cat = catalog()
    rates = cat.rates(gpu_spec(graph, graph.nodes[gpus[0]]["gpu"]))
    lost = sum(rates[b.cls] * b.parts * b.gpus_mean * cat.repair_s(b.cls) for b in radius)
    return lost / len(gpus)


def _gpus_per_host(graph: nx.Graph) -> int:
    """GPUs per host where the fabric has no server labels (as the blast-radius study)."""
    from netmodel.study.reliability_catalog import catalog
    from topologies.schema import gpu_nodes, gpu_spec

    first = gpu_nodes(graph)[0]
    return catalog().gpus_per_host(gpu_spec(graph, graph.nodes[first]["gpu"]))


# ---------------------------------------------------------------------- all-reduce

@dataclass(frozen=True)
class AllReduce:
    """One all-reduce of ``bytes`` on the group: seconds, busbw (bytes/s, nccl-tests'
    definition) and the (algorithm, protocol) chosen; ``busbw`` 0 and ``time`` inf where
    the group is cut apart."""

    bytes: int
    time: float
    busbw: float
    algorithm: str
    protocol: str


def _circuits_note(graph: nx.Graph, circuits: str) -> str:
    """The note of a group whose circuits were set on an OCS fabric (empty where none
    are)."""
    per: dict = {}
    for u, v, d in graph.edges(data=True):
        if d["medium"] == "ocs-circuit":
            per[frozenset((u, v))] = per.get(frozenset((u, v)), 0) + d.get("links", 1)
    if not per:
        return ""
    return (f"all-reduce on a {circuits} of circuits set for the group "
            f"({max(per.values()):g} per neighbour)")


def _collective_graph(fab: Fabric, size: int) -> tuple[nx.Graph, str]:
    """The graph a fabric's (not a scenario's) group runs its all-reduce on, and a note when
    it is not the fabric: an OCS fabric without circuits gets a ring of them."""
    g = fab.graph
    has_ocs = any(k == "ocs" for _, k in g.nodes(data="kind"))
    has_circuits = any(d["medium"] == "ocs-circuit" for _, _, d in g.edges(data=True))
    if not has_ocs or has_circuits:
        return g, ""
    from netmodel.study.scenario_fabric import instance_graph

    how = SimpleNamespace(is_ocs=True, placement="contiguous", name=fab.label,
                          circuits="ring")
    out = instance_graph(how, g, size)
    return out, _circuits_note(out, how.circuits)


def _cost_model(fab: Fabric, size: int):
    """``(model, note, guard)``: the cost model the group's all-reduce is costed with. A
    scenario's is its own collective model, the one compare, the study and ``collective
    --scenario`` charge (:meth:`~netmodel.study.scenario_collectives.ScenarioCollectives.model`:
    its calibration, placement, algorithm, ``[adjust]`` and circuits), shared with them in
    the process, and ``guard`` refuses, as compare does, in a line naming the scenario, an
    algorithm of it without an all-reduce; any other fabric is costed with the shipped
    calibration, placed contiguously, every algorithm a candidate."""
    from contextlib import nullcontext

    from netmodel.collectives.model import FabricCostModel

    s = fab.scenario
    if s is not None:
        from netmodel.study.scenario_collectives import ScenarioCollectives

        c = ScenarioCollectives(s)
        model = c.model(size)
        return (model, _circuits_note(model.graph, c.layout(size)) if s.is_ocs else "",
                c.refusals("all-reduce", size))
    graph, note = _collective_graph(fab, size)
    return FabricCostModel(graph, placement="contiguous",
                           validated=graph is fab.graph), note, nullcontext()


def _all_reduce(fab: Fabric, size: int) -> tuple[tuple[AllReduce, ...], str]:
    model, note, guard = _cost_model(fab, size)
    with guard:
        sweep = model.sweep("all-reduce", np.array(SIZES, dtype=float), size)
    out = []
    with np.errstate(divide="ignore"):
        busbw = sweep.busbw   # nccl-tests' (SweepResult.busbw); 0 where the group is cut
    for n, t, bw, a, p in zip(SIZES, sweep.time, busbw, sweep.algorithm, sweep.protocol,
                              strict=True):
        ok = bool(np.isfinite(t)) and t > 0
        out.append(AllReduce(bytes=int(n), time=float(t), busbw=float(bw) if ok else 0.0,
                             algorithm=str(a), protocol=str(p)))
    if not np.isfinite(sweep.time).all():
        note = (note + "; " if note else "") + "the group is cut apart"
    return tuple(out), note


# ---------------------------------------------------------------------- rows

def _row(label: str = "", fmt: str = "", **kw):
    """A :class:`TopologyRow` field shown in the table as ``label`` formatted as ``fmt``
    (``count``, ``text``, ``bandwidth``, ``usd``, ``watts``; empty: JSON only)."""
    return field(metadata={"label": label, "fmt": fmt}, **kw)


@dataclass(frozen=True)
class TopologyRow:
    """One fabric of a comparison (SI units: bytes/s per direction, USD, W). Table rows
    follow the field order; ``switches_by_tier``, ``all_reduce`` and ``blast_radius`` add
    one row per tier, size and component class."""

    fabric: str = _row()
    source: str = _row()
    name: str = _row()
    spec: str = _row()
    gpu_types: dict = _row("GPU type", "text")
    gpus: int = _row("GPUs", "count")
    switches: int = _row("switches", "count")
    switches_by_tier: dict = _row("tier", "count")
    ocs: int = _row("OCS", "count")
    links: int = _row("links (graph edges)", "count")
    pluggable_transceivers: int = _row("pluggable transceivers", "count")
    pluggable_ends: int = _row()
    module_ports: int = _row()
    cpo_engines: int = _row("CPO engines (co-packaged ports)", "count")
    switch_ports_used: int = _row("switch ports used", "count")
    switch_ports: int = _row("switch ports", "count")
    ocs_ports_used: int = _row("OCS ports used", "count")
    ocs_ports: int = _row("OCS ports", "count")
    diameter: int | None = _row("diameter (GPU-to-GPU hops)", "count")
    injection_total: float = _row("injection, all GPUs", "bandwidth")
    injection_per_gpu: float = _row("injection per GPU", "bandwidth")
    bisection_bandwidth: float | None = _row("bisection", "bandwidth")
    bisection_per_gpu: float | None = _row("bisection per GPU of a half", "bandwidth")
    bisection_method: str = _row()
    path_hops: int | None = _row()
    paths: int | None = _row("shortest paths, gpu0 to farthest GPU", "count")
    group: int = _row()
    all_reduce: tuple = _row("all-reduce busbw", "bandwidth")
    network_capex: float = _row("network capex", "usd")
    network_capex_per_gpu: float = _row("network capex per GPU", "usd")
    network_power: float = _row("network power", "watts")
    network_power_per_gpu: float = _row("network power per GPU", "watts")
    blast_radius: tuple = _row("blast radius", "gpus")
    gpu_time_lost: float = _row("expected GPU time lost to failures", "share")
    network_capex_per_gpu_up: float | None = _row("network capex per GPU up", "usd")
    notes: tuple = _row()

    def to_dict(self) -> dict:
        """JSON-ready dict (SI units; ``switches_by_tier`` keys are strings)."""
        out = asdict(self)
        out["switches_by_tier"] = {str(k): v for k, v in self.switches_by_tier.items()}
        out["all_reduce"] = [asdict(a) for a in self.all_reduce]
        out["blast_radius"] = [asdict(b) for b in self.blast_radius]
        out["notes"] = list(self.notes)
        return out


#: The columns of :meth:`TopologyRow.to_dict` (its fields).
COLUMNS = tuple(f.name for f in fields(TopologyRow))

_UNITS = {"bandwidth": (RATE_RUNGS, RATE_FLOOR),   # (rungs, the unit below them)
          "usd": ((("M$", 1e6), ("k$", 1e3)), ("$", 1.0)),
          "watts": ((("MW", 1e6), ("kW", 1e3)), ("W", 1.0))}


def row_unit(values: list, fmt: str) -> tuple[str, float, int]:
    """``(unit, scale, decimals)`` for a row of SI values: the largest unit in which the
    row's largest value reads at least 1 once rounded to four significant digits, four
    significant digits on it (the table's and the figure's,
    :mod:`netmodel.study.topology_compare_plots`); rates on
    :data:`compute.units.RATE_RUNGS`, chosen by :func:`compute.units.rung`, as
    :func:`compute.units.format_quantity` prints them.

    >>> row_unit([999.96e9, 1e9], "bandwidth"), row_unit([125e3], "bandwidth")
    (('TB/s', 1000000000000.0, 3), ('kB/s', 1000.0, 1))
    """
    nums = [abs(v) for v in values if v is not None and math.isfinite(v)]
    top = max(nums, default=0.0)
    unit, scale = rung(top, *_UNITS[fmt])   # none: the unit below, the value under 1 of it
    shown = float(f"{top / scale:.4g}")
    lead = math.floor(math.log10(shown)) if shown > 0 else 0
    return unit, scale, max(0, 3 - lead)


def _scaled(values: list, fmt: str) -> tuple[str, list[str]]:
    """One unit and one number format for a row of SI values (see :func:`row_unit`)."""
    unit, scale, digits = row_unit(values, fmt)
    return unit, ["-" if v is None or not math.isfinite(v) else f"{v / scale:,.{digits}f}"
                  for v in values]


def count_texts(values: list) -> list[str]:
    """A row of counts as the table and the figure write them: thousands separated, two
    decimals where one is not whole, ``-`` for None."""
    return ["-" if v is None else (f"{v:,}" if float(v).is_integer() else f"{v:,.2f}")
            for v in values]


def _radii(values: list) -> list[str]:
    """Blast radii (:class:`~topologies.hardware_radius.BlastClass` or None): the mean,
    then the worst in brackets where it differs; whole numbers where every mean of the row
    is whole, else two decimals."""
    whole = all(b is None or float(b.gpus_mean).is_integer() for b in values)
    out = []
    for b in values:
        if b is None:
            out.append("-")
            continue
        mean = f"{b.gpus_mean:,.0f}" if whole else f"{b.gpus_mean:,.2f}"
        out.append(mean if b.gpus_mean == b.gpus_max else f"{mean} ({b.gpus_max:,})")
    return out


@dataclass(frozen=True)
class TopologyComparison:
    """Fabrics side by side: one :class:`TopologyRow` per fabric, the all-reduce ``group``
    (GPUs) and message ``sizes`` (bytes)."""

    rows: tuple
    group: int
    sizes: tuple = SIZES

    def to_dict(self) -> dict:
        return {"group": self.group, "sizes": list(self.sizes), "placement": "contiguous",
                "busbw": "nccl-tests: algbw x 2(n-1)/n", "network_share": "ports-used",
                "rows": [r.to_dict() for r in self.rows]}

    def to_json(self, indent: int | None = 1) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def series(self) -> list[tuple[str, str, str, list]]:
        """Every table row as ``(key, name, format, values)``: ``key`` a
        :class:`TopologyRow` field name (``all_reduce:BYTES``, ``blast:CLASS`` and
        ``tier:T`` for the rows those fields expand into), ``format`` one of ``count``,
        ``text``, ``bandwidth``, ``usd``, ``watts``, ``gpus`` (a
        :class:`~topologies.hardware_radius.BlastClass`) or ``""`` (a heading), ``values``
        one per fabric in SI units (None: not applicable)."""
        from compute.units import format_bytes
        from topologies.failure_domains import CLASSES, SWITCH_CLASSES

        out: list = []
        for f in fields(TopologyRow):
            label, fmt = f.metadata["label"], f.metadata["fmt"]
            if not label:
                continue
            values = [getattr(r, f.name) for r in self.rows]
            if f.name == "gpu_types":
                out.append((f.name, label, fmt, [", ".join(v) for v in values]))
            elif f.name == "switches_by_tier":
                for t in sorted({t for v in values for t in v}):
                    out.append((f"tier:{t}", f"  tier {t} ({SWITCH_CLASSES[min(t, 3)]})", fmt,
                                [v.get(t, 0) for v in values]))
            elif f.name == "all_reduce":
                for i, n in enumerate(self.sizes):
                    out.append((f"all_reduce:{n}",
                                f"{label}, {self.group} GPUs, {format_bytes(n)}", fmt,
                                [v[i].busbw if v[i].busbw > 0 else None for v in values]))
            elif f.name == "blast_radius":
                out.append((f.name, f"{label} (GPUs): mean (worst)", "",
                             [None] * len(values)))
                by = [{b.cls: b for b in v} for v in values]
                for cls in CLASSES:
                    if any(cls in b for b in by):
                        out.append((f"blast:{cls}", f"  {cls}", fmt, [b.get(cls) for b in by]))
            else:
                out.append((f.name, label, fmt, values))
        return out

    def table_rows(self) -> list[tuple[str, list[str]]]:
        """``(row name with its unit, one formatted value per fabric)`` in table order."""
        out: list = []
        for _, name, fmt, values in self.series():
            if fmt == "text":
                out.append((name, list(values)))
            elif fmt == "":
                out.append((name, [""] * len(values)))
            elif fmt == "count":
                out.append((name, count_texts(values)))
            elif fmt == "gpus":
                out.append((name, _radii(values)))
            elif fmt == "share":
                out.append((f"{name} (%)", ["-" if v is None else f"{100 * v:.4g}"
                                            for v in values]))
            else:
                unit, text = _scaled(values, fmt)
                out.append((f"{name} ({unit})", text))
        return out

    def table(self) -> str:
        """The comparison as text: a column per fabric, then a line per fabric naming it and
        any note, and the definitions."""
        body = self.table_rows()
        heads = [r.fabric for r in self.rows]
        first = max(len(name) for name, _ in body)
        widths = [max(len(h), *(len(v[i]) for _, v in body)) for i, h in enumerate(heads)]
        # a heading row (blast radius, its classes below) has no values: no padding after it
        lines = ["  ".join([" " * first, *(h.rjust(w) for h, w in zip(heads, widths,
                                                                      strict=True))])]
        for name, values in body:
            lines.append("  ".join([name.ljust(first), *(v.rjust(w) for v, w in
                                                          zip(values, widths, strict=True))])
                         .rstrip())
        lines.append("")
        for r in self.rows:
            spec = f" [{r.spec}]" if r.spec and r.spec != r.fabric else ""
            lines.append(f"{r.fabric}: {r.name}{spec}")
            for note in r.notes:
                lines.append(f"    {note}")
        import textwrap

        lines.extend(textwrap.wrap(
            f"all-reduce: {self.group} GPUs placed contiguously, the fastest algorithm and "
            "protocol per size (a scenario: its own collective model); busbw = algbw x 2(n-1)/n (nccl-tests). Network: the "
            "ports-used share (netmodel cost). Blast radius: GPUs one failure removes, stops "
            "(a tier-0 switch's) or cuts off from the largest part left, mean over the class "
            "weighted by parts. GPU time lost: each class's failures a second (the failure "
            "catalog) x its parts x mean radius x repair time, over the GPUs (first order; "
            "no detection or warm-up). Network capex per GPU up: over the GPUs x (1 - the "
            "share lost).",
            width=96))
        return "\n".join(lines)


# ---------------------------------------------------------------------- the comparison

def _check_group(group, fabrics: list[Fabric]) -> int:
    smallest = min(fabrics, key=lambda f: f.graph.graph["gpus"])
    fewest = int(smallest.graph.graph["gpus"])
    if group is None:
        if fewest < 2:
            raise UserError(f"fabric {smallest.label!r} has {fewest} GPU; an all-reduce needs "
                            "at least 2")
        return min(DEFAULT_GROUP, 1 << (fewest.bit_length() - 1))
    if isinstance(group, bool) or not is_whole(group) or group < 2:
        raise UserError(f"group must be a whole number of GPUs >= 2, got {describe(group)}")
    if group > fewest:
        raise UserError(f"group of {group} GPUs does not fit fabric {smallest.label!r} "
                        f"({fewest} GPUs)")
    return int(group)


def _scenario_note(s: Scenario) -> str:
    """How a scenario's all-reduce rows are costed: its own collective model, its choices
    named where they are not those of the other fabrics' rows."""
    from netmodel.study.scenarios import ADJUST_KEYS

    parts = [f"links {s.links}"]
    if s.calibration != "default":
        parts.append(f"calibration {s.calibration}")
    if s.placement != "contiguous":
        parts.append(f"placement {s.placement}")
    if s.algorithm != "auto":
        parts.append(f"algorithm {s.algorithm}")
    if not s.adjust.is_identity:
        parts.append("its [adjust]: " + ", ".join(
            f"{k} {getattr(s.adjust, k):g}" for k, v in ADJUST_KEYS.items()
            if getattr(s.adjust, k) != v))
    if s.instances == "all":
        parts.append("one group alone; compare charges every instance at once")
    return (f"collectives: the scenario's own model, as collective {named('scenario')} and "
            "compare cost it (" + "; ".join(parts) + ")")


def _row_for(fab: Fabric, group: int) -> TopologyRow:
    from netmodel.study.network_bill import network_bill
    from topologies.analysis import summary
    from topologies.edge_arrays import edge_arrays
    from topologies.hardware_radius import hardware_radius
    from topologies.optic_modules import ends_held
    from topologies.schema import gpu_nodes

    g = fab.graph
    edges = edge_arrays(g)   # one pass over the links for the summary, bill and blast radius
    s = summary(g, validated=True, edges=edges)   # validated as resolve_fabric made it
    b = s.bom
    n = s.gpus
    gpus = gpu_nodes(g)
    total = float(sum(bw for _, bw in g.degree(gpus, weight="bandwidth")))
    half = n // 2
    bis = s.bisection_bandwidth
    all_reduce, note = _all_reduce(fab, group)
    bill = network_bill(g, edges=edges)
    radius = hardware_radius(g, gpus_per_host=_gpus_per_host(g), edges=edges)
    lost = _gpu_time_lost(g, radius)
    notes = []
    if held := ends_held(b.pluggable_transceivers, b.pluggable_ends, b.module_ports):
        notes.append(f"pluggable transceivers: {held}")
    # what the network bill estimated (a module class priced per bit of another, an OCS
    # fabric file's cabling inferred)
    notes.extend(f"network capex and power: {n}" for n in bill.notes)
    if s.bisection_method != "closed form":
        notes.append(f"bisection: {s.bisection_method}")
    if s.scale_out_share is not None:
        notes.append(f"injection per GPU: its own links; GPUs of a server share its NICs, "
                     f"scale-out {format_quantity(s.scale_out_share, 'B/s')} per GPU")
    if note:
        notes.append(note)
    if fab.scenario is not None:
        notes.append(_scenario_note(fab.scenario))
    if len(s.gpu_types) > 1:
        notes.append(f"GPU time lost: every GPU at the failure rates of "
                     f"{g.nodes[gpus[0]]['gpu']}")
    return TopologyRow(
        fabric=fab.label, source=fab.source, name=s.name, spec=s.spec,
        gpu_types=dict(s.gpu_types), gpus=n, switches=sum(s.switches_by_tier.values()),
        switches_by_tier=dict(s.switches_by_tier), ocs=s.ocs, links=s.links,
        pluggable_transceivers=b.pluggable_transceivers, pluggable_ends=b.pluggable_ends,
        module_ports=b.module_ports, cpo_engines=b.cpo_ports,
        switch_ports_used=b.switch_ports_used, switch_ports=b.switch_ports,
        ocs_ports_used=b.ocs_ports_used, ocs_ports=b.ocs_ports, diameter=s.diameter,
        injection_total=total, injection_per_gpu=float(s.injection_bandwidth),
        bisection_bandwidth=bis, bisection_per_gpu=bis / half if bis is not None and half
        else None, bisection_method=s.bisection_method,
        path_hops=s.path_diversity.hops if s.path_diversity else None,
        paths=s.path_diversity.paths if s.path_diversity else None, group=group,
        all_reduce=all_reduce, network_capex=bill.capex, network_capex_per_gpu=bill.capex / n,
        network_power=bill.power, network_power_per_gpu=bill.power / n,
        blast_radius=radius, gpu_time_lost=lost,
        network_capex_per_gpu_up=bill.capex / (n * (1 - lost)) if lost < 1 else None,
        notes=tuple(notes))


def compare_topologies(fabrics: Iterable[str], *, group: int | None = None,
                       gpu: str | None = None) -> TopologyComparison:
    """Compare two or more fabrics side by side (see the module docstring).

    Parameters
    ----------
    fabrics : sequence of str
        Spec strings, ``.json``/``.graphml`` files or scenario names (``NAME@GPU``
        allowed), at least two, none twice.
    group : int, optional
        GPUs of the all-reduce group; default :data:`DEFAULT_GROUP`, or the largest power of
        two every fabric holds where that is smaller. Must fit every fabric.
    gpu : str, optional
        A GPU type every fabric is re-typed to (not possible for a saved file).

    Examples
    --------
    >>> r = compare_topologies(["single-switch:n=8", "ring:n=8"], group=4)
    >>> r.group, [round(row.all_reduce[-1].busbw / 1e9) for row in r.rows]
    (4, [374, 185])
    """
    if isinstance(fabrics, str) or not hasattr(fabrics, "__iter__"):
        raise UserError(f"fabrics must be a list of at least 2 fabrics, got {fabrics!r}")
    refs = list(fabrics)
    if len(refs) < 2:
        raise UserError(f"a comparison needs at least 2 fabrics, got {len(refs)}")
    resolved = _resolve_within_the_limit(refs, gpu)
    keys = {f.label: f.key for f in resolved}   # one fabric however spelled (Fabric.key)
    refuse_repeats("fabrics", [f.label for f in resolved], keys.__getitem__,
                   text=" ".join(f.label for f in resolved))
    size = _check_group(group, resolved)
    _check_links(resolved)
    from netmodel.study.network_bill import check_not_degraded

    for f in resolved:   # before any is costed, named (a file's 'graph' was said of none)
        check_not_degraded(f.graph, f"fabric {f.label!r}")
    return TopologyComparison(rows=tuple(_row_for(f, size) for f in resolved), group=size)


def _resolve_within_the_limit(refs: list, gpu: str | None) -> list[Fabric]:
    """Each fabric of ``refs`` resolved (built) with the links the comparison has left
    (:data:`MAX_LINKS` less those of the fabrics before it) as a cap on its build
    (:func:`topologies.limits.capped`, estimated before allocating): fabrics built one by one
    with only their sum checked ran 20 fat trees of k=64..102 (9.1 million links, each under
    the limit) for 104 s and 4.0 GB before :func:`_check_links` refused them."""
    from compute.limits import setting
    from topologies.limits import capped, max_nodes

    most, used, out = setting("NETMODEL_MAX_COMPARE_LINKS", MAX_LINKS), 0, []
    for ref in refs:
        why = (f"topology compare holds at most {counted(most, 'link')} together ({used:,} "
               f"in the fabrics before it); compare smaller fabrics, or raise "
               f"NETMODEL_MAX_COMPARE_LINKS")
        try:
            with capped(max_nodes(), max(most - used, 0), why=why):
                fabric = resolve_fabric(ref, gpu)
        except UserError as exc:
            if str(exc).endswith(why):   # this cap's refusal: name the fabric it refused
                raise UserError(f"topology compare: fabric {describe(ref)}: {exc}") from None
            if str(ref) not in str(exc):   # which of the fabrics it refuses: said with it
                raise UserError(f"fabric {describe(ref)}: {exc}") from None
            raise
        out.append(fabric)
        used += fabric.graph.number_of_edges()
    return out


def _check_links(fabrics: list[Fabric]) -> None:
    """Refuse a comparison whose fabrics hold more than :data:`MAX_LINKS` links together,
    with the estimate of its time and memory (fat-tree:k=128 took 65 s and 2.95 GB before
    anything said so)."""
    from compute.limits import check

    links = sum(f.graph.number_of_edges() for f in fabrics)
    largest = max(fabrics, key=lambda f: f.graph.number_of_edges())
    check("topology compare", f"links (largest {largest.label!r}, "
          f"{largest.graph.number_of_edges():,}; about {SECONDS_PER_LINK * links:,.0f} s and "
          f"{BYTES_PER_LINK * links / 1e9:.1f} GB at {SECONDS_PER_LINK * 1e6:g} us and "
          f"{BYTES_PER_LINK:,} B a link)", links, MAX_LINKS, "NETMODEL_MAX_COMPARE_LINKS",
          "compare smaller fabrics")
