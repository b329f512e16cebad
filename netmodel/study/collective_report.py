"""What ``netmodel collective`` and ``netmodel costs`` print, each made by one call: one
collective's cost on a group of a fabric or a scenario, with the failures' effect, who chose
the algorithm, every instance or group at once, the alternatives and the busbw figure
(:func:`collective_report`, a :class:`CollectiveReport`), and a lookup table of costs
(:func:`cost_table`, a :class:`CostTable`), each with ``to_dict()`` and ``table()``.

A refusal is said in the library's words, marked with the parameter whose value it refuses
(the :class:`~compute.errors.UserError`'s ``parameter``: ``group``, ``failed``,
``at_once``, ``groups``), for a caller to say with its own names for them.

>>> from netmodel.study.collective_setup import collective_setup
>>> r = collective_report(collective_setup(fabric="single-switch:n=8"), "all-reduce", 2**26, 8)
>>> r.result.algorithm, r.to_dict()["group_size"], r.table().splitlines()[0]
('in-network', 8, 'all-reduce of 64 MiB on 8 GPUs (gpu0, gpu1, gpu2, gpu3, gpu4, gpu5, gpu6, gpu7)')
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from compute.errors import UserError, chosen, known, lookalike
from compute.validate import flag
from netmodel.study.run_words import named

if TYPE_CHECKING:
    from netmodel.collectives.model import FabricCostModel
    from netmodel.collectives.results import CollectiveResult, TreeCap
    from netmodel.study.collective_setup import CollectiveSetup

__all__ = ["TABLE_FORMATS", "TABLE_SUFFIXES", "VIDUR_FORMAT", "CollectiveReport", "CostTable", "collective_report", "cost_table",
           "fabric_label", "short_group"]

#: The placement a report names for a group given as its GPU nodes (none placed it).
AS_GIVEN = "as given"


@contextmanager
def _reading(parameter: str) -> Iterator[None]:
    """A :class:`~compute.errors.UserError` raised inside marked with the parameter whose
    value it refuses (``exc.parameter``, where none is marked yet): its message is the
    library's; a caller says it with its own name for that parameter (the command line, a
    flag)."""
    try:
        yield
    except UserError as exc:
        if getattr(exc, "parameter", None) is None:
            exc.parameter = parameter
        raise


def _names_nodes(group: object) -> bool:
    """Whether ``group`` lists its GPU nodes (anything that iterates, but text and numpy's
    0-d arrays), not a size: a size of numpy's (``np.int64(4)``) or another value is the
    model's to read or refuse (``FabricCostModel.group``), where ``list()`` of it raised
    TypeError ('numpy.int64' object is not iterable).

    >>> import numpy as np
    >>> [_names_nodes(g) for g in (4, np.int64(4), np.True_, 1.5, "gpu0", ["gpu0", "gpu1"])]
    [False, False, False, False, False, True]
    """
    if isinstance(group, str | bytes) or getattr(group, "ndim", None) == 0:
        return False
    return isinstance(group, Iterable)


def fabric_label(model: FabricCostModel) -> str:
    """The fabric ``model`` costs on, as the reports name it: its name and, where it has
    one, its spec in brackets."""
    g = model.graph.graph
    spec = g.get("spec") or ""
    return f"{g.get('name', 'fabric')}" + (f" [{spec}]" if spec else "")


def short_group(group) -> str:
    """A group's members, the first two and the last where it has more than 8.

    >>> short_group([f"gpu{i}" for i in range(16)])
    'gpu0, gpu1, ..., gpu15'
    """
    return ", ".join(map(str, group)) if len(group) <= 8 else \
        f"{group[0]}, {group[1]}, ..., {group[-1]}"


def _tree_cap(cap: TreeCap, channels: str = "") -> str:
    """NCCL's tree cap as its figure: ``8 x 42.8 GB/s`` (channels x GB/s a channel), with
    the protocol's factor where it is not 1."""
    f = "" if cap.protocol_factor == 1 else f" x {cap.protocol_factor:g}"
    return f"{cap.channels}{channels} x {cap.channel_bandwidth / 1e9:g} GB/s{f}"


def _all_groups_lines(conc: dict | None, size: int) -> list[str]:
    """The lines of ``conc``, :func:`~netmodel.collectives.concurrent.all_groups_cost`'s
    dict (none for None)."""
    from compute.units import counted, format_time
    from netmodel.collectives.concurrent_time import LOCKSTEP_BUDGET

    if conc is None:
        return []
    cut = conc["cut"]
    left = (f"{counted(len(cut), 'group')} of {size} cut apart, left out: "
            + "; ".join(short_group(g) for g in cut[:3])
            + ("; ..." if len(cut) > 3 else "")) if cut else ""
    if not conc["groups"]:
        return [f"all groups of {size} at once: none runs, {left}"]
    hot = conc["hot_links"][0] if conc["hot_links"] else None
    lines = [f"all {conc['groups']} groups of {size} at once: {conc['algorithm']}/"
             f"{conc['protocol']}, slowest {format_time(conc['makespan'])}, slowdown "
             f"max {conc['slowdown_max']:.3g}x mean {conc['slowdown_mean']:.3g}x"
             + (f"; hottest link {hot[0]} -> {hot[1]} ({counted(hot[2], 'group')})"
                if hot else "")]
    if left:
        lines.append(f"({left})")
    lines.append(f"schedule sharing the links: {conc['schedule']}"
                 + (", a charge that is no bound of the schedule in time either way"
                    if conc["schedule"] == LOCKSTEP_BUDGET else ""))
    return lines


@dataclass(frozen=True)
class CollectiveReport:
    """One collective's cost and what is said beside it (:func:`collective_report`).

    ``model``: the model the cost was made with (after failures, the degraded fabric's);
    ``placement``: how the group was placed (``"as given"`` for named GPUs);
    ``alternatives``: seconds of each algorithm at its best protocol under auto (empty
    for a named algorithm); ``failures``: the failures' effect
    (:meth:`~netmodel.collectives.degraded.DegradedResult.as_dict` after ``failed``, the
    failures as spelled), None without; ``chosen_by``: ``"tuner"`` or ``"auto"`` where a
    tuner was asked, else None, and ``chooser`` the words for it; ``at_once``: a
    scenario's every instance at once (None: instances alone, a fabric, failures);
    ``all_groups``: every group of the size at once
    (:func:`~netmodel.collectives.concurrent.all_groups_cost`), None where not asked;
    ``plot``: the figure written (None: none), ``plot_skipped`` why one asked for was not.
    """

    op: str
    nbytes: float
    setup: CollectiveSetup
    model: FabricCostModel
    result: CollectiveResult
    placement: str
    alternatives: dict[str, float]
    failures: dict | None = None
    chosen_by: str | None = None
    chooser: str = "auto"
    at_once: float | None = None
    all_groups: dict | None = None
    plot: str | None = None
    plot_skipped: str | None = None
    plot_asked: bool = field(default=False, repr=False)

    def to_dict(self) -> dict:
        """JSON-ready (``netmodel collective --json``): the fabric, the placement, the
        result's :meth:`~netmodel.collectives.results.CollectiveResult.as_dict`, the
        alternatives and how the collectives were costed, then ``failures``,
        ``chosen_by``, ``instances_all`` and ``all_groups`` where there are any, and
        ``plot`` where one was asked for (null where none was drawn)."""
        doc = {"fabric": fabric_label(self.model), "placement": self.placement,
               **self.result.as_dict(), "alternatives": self.alternatives,
               "collectives": self.setup.describe()}
        if self.failures is not None:
            doc["failures"] = self.failures
        if self.chosen_by is not None:
            doc["chosen_by"] = self.chosen_by
        if self.at_once is not None:
            doc["instances_all"] = {"time": self.at_once}
        if self.all_groups is not None:
            doc["all_groups"] = self.all_groups
        if self.plot_asked:
            doc["plot"] = self.plot
        return doc

    def table(self) -> str:
        """The report as ``netmodel collective`` prints it: the group and fabric, the
        failures, the algorithm and its time, what bounds it, the steps, the alternatives
        and the instances or groups at once."""
        from compute.units import counted, format_bytes, format_time

        result, group, model = self.result, self.result.group, self.model
        lines = [f"{self.op} of {format_bytes(self.nbytes)} on {counted(len(group), 'GPU')}"
                 f" ({short_group(group)})",
                 f"fabric: {fabric_label(model)}; placement {self.placement}"]
        if self.setup.note():
            lines.append(self.setup.note())
        fails = self.failures
        if fails:
            stopped = fails.get("stopped", [])
            gone = [x for x in fails["lost"] if x not in stopped]
            lost = (f"; lost {', '.join(gone)}" if gone else "") + (
                f"; stopped (on a failed tier-0 switch) {', '.join(stopped)}" if stopped
                else "")
            healthy = "cut apart too" if fails["healthy_time"] is None else \
                f"{fails['healthy_algorithm']} {format_time(fails['healthy_time'])}"
            lines.append(f"failed: {fails['failed']}{lost}; healthy: {healthy}"
                         + ("" if fails["slowdown"] is None else
                            f", slowdown {fails['slowdown']:.3g}x"))
        if not result.connected:
            a, b = result.cut
            lines.append(f"CUT: the group is cut apart, no path joins {a} and {b}")
            info = model.graph.graph
            if info.get("builder") == "ocs" and not info.get("logical"):
                lines.append(f"(an OCS fabric carries traffic only over the circuits it has "
                             f"set, and this one has none: set them with logical=, e.g. "
                             f"{named('fabric')} {info.get('spec', 'ocs')},logical=ring; also "
                             f"logical=torus:AxB or a circuit list)")
            return "\n".join(lines + _all_groups_lines(self.all_groups, len(group)))
        if len(group) == 1:
            return "\n".join(lines + ["a group of one GPU communicates nothing: 0 s"])
        lines.append(f"algorithm: {result.algorithm} ({result.protocol} protocol)"
                     + (f", chosen by {self.chooser}" if self.setup.algorithm == "auto"
                        else "")
                     + ("" if result.routing == "shortest" else
                        f"; routes: {result.routing}" + (
                            " (cabled pairs split over cable and switch by capacity)"
                            if result.routing == "split" else
                            " (cabled pairs over their wider switch path)")))
        lines.append(f"time {format_time(result.time)}   algbw {result.algbw / 1e9:.2f} GB/s"
                     f"   busbw {result.busbw / 1e9:.2f} GB/s")
        for u, v in result.bottleneck:
            bw = model.router.bandwidth[model.router.link_id(u, v)]
            lines.append(f"bottleneck: {u} -> {v} ({bw / 1e9:g} GB/s per direction)")
        cap = result.tree_cap
        if cap is not None:
            lines.append(
                f"bottleneck: NCCL's per-channel tree cap, {_tree_cap(cap, ' channels')} "
                f"= {cap.busbw / 1e9:.4g} GB/s busbw on {cap.nodes} "
                f"node{'s' if cap.nodes > 1 else ''} ({cap.table}; algbw at most "
                f"{'half' if cap.share == 1 else 'busbw x n/(2(n-1))'}, "
                f"{cap.algbw / 1e9:.4g} GB/s); the links alone: {cap.slowdown:.3g}x as fast")
        top = result.in_switch_ceiling
        if top is not None:
            # the ceiling holds the rate the bytes stream at, not the start-up latency or
            # the pipeline's fill: said with the two times, so the busbw above reconciles
            streamed = top.per_byte * result.nbytes
            # phases in domains of fewer GPUs than the group (across domains): the ceiling
            # is theirs, counted over a domain; said over this group too, as busbw counts it
            p = len(group)
            ours = top.group_busbw(p)
            over = "" if ours == top.busbw else \
                f" over a domain's {top.heads} GPUs, {ours / 1e9:.4g} GB/s over these {p}"
            lines.append(
                f"bottleneck: the in-switch reduction ceiling, busbw at most {top.ceiling:g} x "
                f"{top.link_rate / 1e9:.4g} GB/s (a GPU's NVLink rate) = "
                f"{top.busbw / 1e9:.4g} GB/s (the highest published NVLS busbw of the "
                f"generation){over} while the in-switch phases stream, "
                f"{format_time(streamed)} of the {format_time(result.time)} (the links alone: "
                f"{top.slowdown:.3g}x as fast); the other {format_time(result.time - streamed)} "
                f"(start-up latency, pipeline fill and any step run apart from those phases) "
                f"it does not set: busbw above is over the whole time")
        lines.append(f"start-up latency {format_time(result.base_latency)}; steps:")
        lines.append(f"  {'step':<26} {'x':>4} {'stages':>6} {'xfers':>6} {'latency':>10} "
                     f"{'transfer':>10} {'total':>10}  bottleneck")
        for s in result.steps:
            link = f"{s.bottleneck[0]}->{s.bottleneck[1]}" if s.bottleneck else \
                f"tree cap {_tree_cap(s.tree_cap)}" if s.tree_cap else \
                f"in-switch ceiling {s.in_switch_ceiling.busbw / 1e9:.4g} GB/s" \
                if s.in_switch_ceiling else "-"
            lines.append(f"  {s.name:<26} {s.repeat:>4} {s.stages:>6} {s.transfers:>6} "
                         f"{format_time(s.latency):>10} {format_time(s.serialization):>10} "
                         f"{format_time(s.time):>10}  {link}")
        if self.alternatives:
            lines.append("alternatives (best protocol each): " + ", ".join(
                f"{k} {format_time(t)}"
                for k, t in sorted(self.alternatives.items(), key=lambda x: x[1])))
        if self.at_once is not None:
            lines.append(f"every instance of {len(group)} at once (the scenario's instances "
                         f"= all), each on its own algorithm, as compare charges it: "
                         f"{format_time(self.at_once)}")
        return "\n".join(lines + _all_groups_lines(self.all_groups, len(group)))


def _failures_text(links, nodes) -> str:
    """Failures as the command line spells them: nodes, then links ``u/v``, by commas."""
    return ",".join([*map(str, nodes), *(f"{u}/{v}" for u, v in links)])


def collective_report(setup: CollectiveSetup, op: str, nbytes: float,
                      group: int | Iterable[Hashable], *,
                      failed_links: Iterable[tuple[Hashable, Hashable]] = (),
                      failed_nodes: Iterable[Hashable] = (), failed: str | None = None,
                      all_groups: bool = False, plot: str | None = None) -> CollectiveReport:
    """Cost ``op`` of ``nbytes`` (bytes a rank, nccl-tests' convention) on ``group`` (a
    size, placed as ``setup`` places it, or its GPU nodes) with ``setup``'s model
    (:func:`~netmodel.study.collective_setup.collective_setup`), and what is said beside it.

    ``failed_links`` and ``failed_nodes``: costed after these fail, rerouted, against the
    healthy fabric (:func:`~netmodel.collectives.degraded.degraded_cost`); ``failed``: the
    failures as the caller spelled them, which the report echoes (default nodes, then
    links ``u/v``, by commas). ``all_groups``: every group of the size, cut by the
    placement, run at once too. ``plot``: a figure of busbw against size for every
    algorithm written there, unless the group has no bus bandwidth (one GPU, or cut
    apart: :attr:`CollectiveReport.plot_skipped` says which).

    A refused value is a :class:`~compute.errors.UserError` in the library's words, its
    ``parameter`` attribute the parameter that gave it (``group``, ``failed`` or ``at_once``:
    a scenario's instances at once), for a caller to say with its own names.
    """
    all_groups = flag("", "all_groups", all_groups)
    import numpy as np

    from compute.validate import of_type
    from netmodel.collectives.tuner_plugin import NcclTuner
    from netmodel.study.collective_setup import CollectiveSetup

    # a fabric or a number raised AttributeError ('int' object has no attribute 'placement')
    of_type("setup", setup, CollectiveSetup, "collective_setup('ring:n=8')", default=False)

    failed_links, failed_nodes = list(failed_links), list(failed_nodes)
    named = _names_nodes(group)
    if named:
        group = list(group)
    placement, algorithm, seed = setup.placement, setup.algorithm, setup.seed
    shown = AS_GIVEN if named else placement  # no placement that was not used
    with _reading("group"):
        # a scenario's model places its instance of the size (too large: refused there)
        model = setup.model(len(group) if named else group)
        members = model.group(group)
    if all_groups and len(members) > 1:   # too much work refused before any is done
        from netmodel.collectives.concurrent import check_all_groups_work

        check_all_groups_work(model, len(members), op)
    failures = None
    degraded = bool(failed_links or failed_nodes)
    if degraded:
        from netmodel.collectives.degraded import degraded_cost, degraded_model

        with _reading("failed"):
            deg = degraded_cost(model.graph, op, nbytes, members, links=failed_links,
                                nodes=failed_nodes, algorithm=algorithm, placement=placement,
                                algorithms=model.algorithms, seed=seed, scope=model.scope,
                                calibration=setup.calibration,
                                max_transfers=setup.max_transfers, tuner=model.tuner,
                                circuits=setup.circuits_after(len(members), failed_links,
                                                              failed_nodes))
        failures = {"failed": _failures_text(failed_links, failed_nodes) if failed is None
                    else failed, **deg.as_dict()}
        result = deg.degraded
        model = degraded_model(deg, model, placement, algorithm, seed)
        members = result.group
    else:
        result = model.cost(op, nbytes, members)
    chosen_by, chooser = None, "auto"    # who chose the algorithm under auto
    if model.tuned() and len(members) > 1 and result.connected:
        tuned = model.tuner_choice(op, nbytes, members) is not None
        chosen_by = "tuner" if tuned else "auto"
        kind = "tuner" if isinstance(model.tuner, NcclTuner) else "tuner plugin"
        chooser = f"the {model.tuner.label} {kind}" if tuned else \
            f"auto (the {model.tuner.label} {kind} leaves this choice to auto)"
    at_once = None   # the healthy scenario's charge (compare's), beside the group alone
    if len(members) > 1 and not degraded:
        with _reading("at_once"):
            at_once = setup.at_once_time(op, nbytes, len(members))
    conc = None
    if all_groups and len(members) > 1:
        from netmodel.collectives.concurrent import all_groups_cost

        conc = all_groups_cost(model, len(members), op, nbytes)
    alternatives = {name: float(t[0]) for name, t in
                    sorted(model.curves(op, [nbytes], members).items())} \
        if algorithm == "auto" else {}
    skipped = None
    if plot is not None and (len(members) < 2 or not result.connected):
        # no line to draw: write no empty figure
        skipped = "a group of one GPU has no bus bandwidth" if len(members) < 2 else \
            "the group is cut apart"
    elif plot is not None:
        from netmodel.collectives.plot import plot_busbw
        from netmodel.collectives.results import bus_factor

        lo = min(1024.0, nbytes)
        sizes = 2.0 ** np.arange(np.log2(lo), max(np.log2(nbytes), 33) + 0.5)
        curves = model.curves(op, sizes, members)
        factor = bus_factor(op, len(members))
        marks = [(nbytes, result.busbw, f"{result.algorithm}/{result.protocol}")]
        plot_busbw([(f"{op}, {len(members)} GPUs, {shown}", sizes,
                     {k: sizes / t * factor for k, t in curves.items()}, marks)],
                   plot, title=fabric_label(model))
    return CollectiveReport(op=op, nbytes=nbytes, setup=setup, model=model, result=result,
                            placement=shown, alternatives=alternatives, failures=failures,
                            chosen_by=chosen_by, chooser=chooser, at_once=at_once,
                            all_groups=conc, plot=None if skipped else plot,
                            plot_skipped=skipped, plot_asked=plot is not None)


@dataclass(frozen=True)
class CostTable:
    """A lookup table of collective costs (:func:`cost_table`): its ``rows``
    (:data:`~netmodel.collectives.cost_table.COLUMNS`, op by op, then group by group),
    ``model`` the largest group's, ``algorithm`` the one costed (``"all"``: a row per
    algorithm), ``plot`` the figure written (None: none)."""

    rows: list[dict]
    setup: CollectiveSetup
    model: FabricCostModel
    algorithm: str
    plot: str | None = None

    def meta(self) -> dict:
        """What the table was made with: the fabric, the placement, the algorithm and how
        the collectives were costed (:meth:`CollectiveSetup.describe
        <netmodel.study.collective_setup.CollectiveSetup.describe>`)."""
        return {"fabric": fabric_label(self.model), "placement": self.setup.placement,
                "algorithm": self.algorithm, "collectives": self.setup.describe()}

    def title(self) -> str:
        """The line the nccl-tests formats head the table with: the fabric and placement,
        and how a scenario's collectives are costed."""
        note = self.setup.note()
        return f"netmodel costs: {fabric_label(self.model)}, placement " \
               f"{self.setup.placement}" + (f"; {note}" if note else "")

    def to_dict(self) -> dict:
        """JSON-ready: the schema, the units, :meth:`meta` and the rows
        (:func:`~netmodel.collectives.cost_table.table_doc`)."""
        from netmodel.collectives.cost_table import table_doc

        return table_doc(self.rows, self.meta())

    def table(self, fmt: str = "csv") -> str:
        """The table as text in ``fmt``, one of :data:`TABLE_FORMATS`: CSV, JSON,
        nccl-tests' own layout or a short nccl-tests-like table (``nccl-short``, or
        ``nccl``)."""
        from netmodel.collectives import cost_table as ct

        if chosen(fmt, TABLE_FORMATS) is None:   # blanks at either end dropped, as every choice's
            raise UserError(f"fmt: unknown table format {fmt!r}"
                            f"{lookalike(fmt, TABLE_FORMATS)}; known: {known(TABLE_FORMATS)}")
        fmt = chosen(fmt, TABLE_FORMATS)
        if fmt == "csv":
            return ct.to_csv(self.rows)
        if fmt == "json":
            return ct.to_json(self.rows, self.meta())
        if fmt == "nccl-tests":
            return ct.to_nccl_tests(self.rows, self.title(),
                                    per_algorithm=self.algorithm == "all")
        return ct.to_nccl_short(self.rows, self.title())

    def vidur_files(self) -> dict[str, bytes]:
        """Vidur's network profiles of the rows, file name -> bytes
        (:func:`~netmodel.collectives.cost_table.vidur_files`)."""
        from netmodel.collectives.cost_table import vidur_files

        return vidur_files(self.model, self.rows)


#: The text formats :meth:`CostTable.table` writes (``nccl`` is ``nccl-short``): name ->
#: what it writes; and the file suffixes a table in it is written to (a run of
#: '-o ../../etc/passwd' once replaced that file with a cost table).
TABLE_FORMATS = {
    "csv": "CSV table (one row per op x group x size)",
    "json": "JSON document with the rows, their schema and units",
    "nccl-tests": "text laid out exactly as nccl-tests' *_perf binaries print it",
    "nccl-short": "short nccl-tests-like table with the algorithm chosen",
    "nccl": "same as nccl-short",
}
TABLE_SUFFIXES = {"csv": (".csv",), "json": (".json",), "nccl-tests": (".txt", ".log"),
                  "nccl-short": (".txt", ".log"), "nccl": (".txt", ".log")}
#: What :meth:`CostTable.vidur_files` writes, a folder (``netmodel costs --format vidur``).
VIDUR_FORMAT = {"vidur": "Vidur network profiles (all_reduce.csv, send_recv.csv...) into the "
                         "output folder"}


def cost_table(setup: CollectiveSetup, ops: Iterable[str], sizes: Iterable[float],
               groups: Iterable[int], *, all_algorithms: bool = False,
               plot: str | None = None) -> CostTable:
    """A lookup table of ``ops`` at each of ``sizes`` (bytes a rank) on groups of each of
    ``groups`` GPUs, placed and costed as ``setup`` does (one model per group size: a
    scenario's OCS circuits are set for each), at ``setup``'s algorithm or, with
    ``all_algorithms``, one row per algorithm. ``plot``: a figure of busbw against size,
    one line per algorithm, a panel per op, on the largest group, written there.

    A group size the fabric refuses is a :class:`~compute.errors.UserError` whose
    ``parameter`` is ``groups``.
    """
    all_algorithms = flag("", "all_algorithms", all_algorithms)
    import numpy as np

    from netmodel.collectives.cost_table import cost_rows

    ops, sizes, groups = list(ops), list(sizes), list(groups)
    algorithm = "all" if all_algorithms else setup.algorithm
    with _reading("groups"):   # over the fabric's
        rows = [row for op in ops for p in groups
                for row in cost_rows(setup.model(p), [op], sizes, [p], algorithm)]
    model = setup.model(max(groups))
    if plot is not None:
        from netmodel.collectives.plot import plot_busbw
        from netmodel.collectives.results import bus_factor

        p = max(groups)
        group = model.group(p)
        arr = np.asarray(sizes)
        panels = []
        for op in ops:
            curves = model.curves(op, arr, group)
            f = bus_factor(op, p)
            panels.append((f"{op}, {p} GPUs", arr, {k: arr / t * f for k, t in curves.items()},
                           []))
        plot_busbw(panels, plot, title=fabric_label(model))
    return CostTable(rows=rows, setup=setup, model=model, algorithm=algorithm, plot=plot)
