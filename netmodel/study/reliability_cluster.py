"""A scenario's cluster for the reliability models: copies of its fabric with serving
instances placed, and what one failure of each component takes down, per symmetry
class (:mod:`netmodel.study.blast_radius` tabulates it, :mod:`netmodel.study.availability`
runs it over time). How long recovery takes (a spare's reload and swap, a repair's wait) is
:mod:`netmodel.study.reliability_timings`'s.

**The cluster.** A scenario's fabric is one *cell*; a cluster of ``N`` GPUs is ``N / cell``
copies of it (``N`` a multiple of the cell's GPUs, up to 131,072). Cells are joined by no
modelled fabric: a serving instance never spans cells (the largest one, TP 32, fits the
smallest shipped cell), so copying the cell scales the failure counts with ``N`` while
keeping every instance's collectives exactly those the throughput study costs. Instances
are placed in every cell as the study places them: the best TP degree and batch of
:func:`~netmodel.study.fabric_search.fabric_search` for the scenario, model and phase,
``floor(cell / TP)`` instances cut by the scenario's placement policy; GPUs left over are
idle. Every instance is costed healthy where it is placed (:attr:`Cluster.healthy`), as a
failure's instances are: one placed across two leaves may serve a smaller batch than the
search's first group. Parts copies
would share in a full build (leaves, spines, OCSes, links between switches:
:func:`topologies.inventory.shared_part`) are counted as the cluster holds them
(:meth:`Cluster.copies`): a shared switch or OCS once per
:func:`~topologies.inventory.cells_per_shared_part` cells (8 copies of ``h100-dgx`` fill
the SU its rail leaves are built for), whole, as it fails whole (the last set perhaps
part-filled); a link between switches and its ends at the cells' share of them,
:func:`~topologies.inventory.port_fill` per cell, the share the cost model charges
(:func:`netmodel.study.network_bill.network_bill`, ``share="ports-used"``): one ``h100-dgx`` cell, 4
servers of an SU, counts an eighth of the SU's 256 leaf-spine transceivers (twin-port
modules, two cable ends each: 32, beside its own 32 GPU-leaf ones), not those of the 28
absent servers' uplinks. One failure of a
shared part touches every cell of its set (:meth:`Cluster.cells_hit`).

**A failure** of a component (:mod:`topologies.failure_domains`) removes or thins parts of
its cell. Its *hardware radius* is the GPUs lost, the GPUs it stops (every GPU wired to a
failed tier-0 switch: not failed, but running nothing until the switch is repaired) and the
GPUs it cuts off from the rest of the cell (not in the cell's largest connected part), and
their SMs. Its *software radius* is the instances it takes down: an instance is down when
it lost a member or a member was stopped, when its
members can no longer reach each other, or when the collectives of the instance, costed
alone on the degraded fabric (the same collective model, calibration and algorithm
choice as the study; on an optical circuit-switched fabric its ring or torus re-set on the
ports that survive), meet the SLO at no batch. An instance whose step slows re-balances
as a serving engine does (its scheduler caps the running batch): it keeps its configuration
and serves at the largest batch, up to the healthy one, that still meets the SLO and fits
(:meth:`Cluster.rebalanced`), losing the difference in tokens/s. An instance is re-costed
only when the failure touches its *footprint*
(:mod:`netmodel.study.reliability_footprint`): its members and every link and switch on a
shortest path between two of them (routing is shortest-path, so other failures leave it as
it was). The graph an instance is re-costed on once parts failed, and a failure's effect
worked out by re-costing the instances it touches, are
:mod:`netmodel.study.reliability_recost`'s.

**Symmetry classes.** Components of one class are grouped by their local effect (GPUs
removed, and for every instance they touch: members lost and members wired to a failed
part; the switch tiers removed; the bandwidth left on thinned links; the cell's spare
sites on a tier-0 switch they remove, which stop with it). The builders are
regular, so components with the same local effect have the same global effect; one
representative per group is evaluated on the degraded fabric and stands for the group.
Where it takes an instance down or slows one and the cell has pod spare sites, the group
is split by what decides the recovery on them
(:func:`~netmodel.study.reliability_recovery_key.recovery_key`: the sites fill the first
switches, so one GPU's instance may find a spare on its own NVSwitch and another's only
on another one), and each part's representative is evaluated.

>>> c = build_cluster("lite-flat", "Llama-3-70B", "decode")
>>> c.tp, c.cells, len(c.instances), c.gpus
(16, 1, 8, 128)
>>> e = next(x for x in c.effects() if x.cls == "gpu-die")
>>> e.components, e.gpus_lost, e.instances_down, e.sms
(128, 1, 1, 33)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import networkx as nx

from compute.errors import NothingFeasible, UserError, known
from compute.models import get_model
from compute.parallel import Parallelism
from compute.phases import Slo, check_slo, refuse_unread_tokens
from compute.roofline import check_options, make_workload
from compute.roofline_options import RooflineOptions
from compute.search import DEFAULT_MAX_BATCH
from compute.units import SECONDS_PER_YEAR
from compute.validate import describe, of_type
from netmodel.study.collector import few_collections
from netmodel.study.reliability_catalog import Catalog, catalog
from netmodel.study.reliability_fabric import (
    check_labels,
    cluster_cells,
    fabric_cap,
    with_devices,
)
from netmodel.study.reliability_footprint import Footprints
from netmodel.study.reliability_parts import Partitions
from netmodel.study.reliability_recost import Recosting
from netmodel.study.rows import batch_limit_note
from netmodel.study.scenario_catalog import get_scenario
from topologies.failure_domains import CLASSES, Component, components
from topologies.schema import gpu_nodes

if TYPE_CHECKING:
    from compute.hardware import GpuSpec
    from compute.models import ModelSpec
    from compute.phases import Workload
    from compute.results import InferenceResult
    from netmodel.collectives.calibration import Calibration
    from netmodel.study.fabric_search import FabricSearch
    from netmodel.study.scenarios import Scenario

__all__ = ["YEAR", "Cluster", "Effect", "build_cluster", "check_cluster"]

#: Seconds in a year (a Julian year, 365.25 days: compute.units.SECONDS_PER_YEAR).
YEAR = SECONDS_PER_YEAR



@dataclass(frozen=True)
class Effect:
    """What one symmetry class of components does (all values for ONE failure).

    ``components`` and ``parts``: how many components (and physical parts: the rate
    multiplier) of the cell share this effect; ``gpus_lost``/``gpus_disabled``/``gpus_cut``:
    the hardware radius (GPUs failed, stopped with a tier-0 switch, cut off);
    ``instances_down`` (of which ``slo_down`` because the SLO no longer holds and
    ``cut_down`` because members cannot reach each other); ``down_members``: per down
    instance, the members to replace (lost, stopped, cut off, or wired to the failed part);
    ``slow``: tokens/s lost by instances that stay up (slowed, or re-balanced to a smaller
    batch to meet the SLO: ``rebalanced`` of them), in instances' worth.
    """

    cls: str
    example: str
    components: int
    parts: float
    gpus_lost: int
    gpus_cut: int
    sms: int
    instances_down: int
    slo_down: int
    cut_down: int
    slow: float
    rebalanced: int = 0
    gpus_disabled: int = 0
    down_members: tuple = ()
    component: Component | None = field(default=None, repr=False, compare=False)
    down: tuple = field(default=(), repr=False, compare=False)  #: indices of down instances
    #: (index, share of its tokens/s lost) of each instance that stays up slowed
    slowed: tuple = field(default=(), repr=False, compare=False)

    @property
    def gpus(self) -> int:
        """Hardware radius in GPUs (lost, stopped and cut off)."""
        return self.gpus_lost + self.gpus_disabled + self.gpus_cut


@dataclass(frozen=True, eq=False)
class Cluster(Footprints, Partitions, Recosting):
    """A scenario's cluster with instances placed (see the module doc). Build it with
    :func:`build_cluster`. Its instances are re-costed on a degraded fabric by its
    :attr:`costing` (:meth:`instance_result`, :meth:`rebalanced`: the mixin
    :class:`~netmodel.study.reliability_recost.Recosting`); its cell's connected parts after
    a failure are the mixin :class:`~netmodel.study.reliability_parts.Partitions`'."""

    scenario: Scenario
    model: ModelSpec
    workload: Workload
    gpu: GpuSpec
    slo: Slo
    options: RooflineOptions
    graph: nx.Graph           #: one cell's physical fabric (as built, before [adjust]; GPUs
    #: of a ``server`` label carry their ``device`` index,
    #: :func:`~netmodel.study.reliability_fabric.with_devices`)
    cells: int
    best: InferenceResult     #: the healthy instance's InferenceResult
    instances: tuple          #: member tuples of one cell
    calibration: Calibration
    catalog: Catalog
    max_batch: int = DEFAULT_MAX_BATCH   #: the search's largest batch

    # ------------------------------------------------------------------ sizes
    @property
    def batch_at_limit(self) -> bool:
        """Whether the best batch is the search's largest (a larger may do better)."""
        return self.best.batch >= self.max_batch

    @property
    def batch_limit_note(self) -> str:
        """compare's and search's note on a best at the search's largest batch."""
        return batch_limit_note(self.max_batch)

    @property
    def tp(self) -> int:
        return self.best.tp

    @property
    def parallelism(self) -> Parallelism:
        """The healthy instance's configuration (TP, and PP, EP, attention DP where > 1)."""
        return Parallelism.of(self.best)

    @property
    def instance_gpus(self) -> int:
        """GPUs of one instance (``tp x pp``): what a failure that takes it down takes."""
        return self.best.gpus

    @property
    def batch(self) -> int:
        return self.best.batch

    @property
    def cell_gpus(self) -> int:
        return int(self.graph.graph["gpus"])

    @property
    def gpus(self) -> int:
        """GPUs of the cluster (spares not included)."""
        return self.cell_gpus * self.cells

    @property
    def instances_total(self) -> int:
        return len(self.instances) * self.cells

    @cached_property
    def cells_per_shared_part(self) -> int:
        """Cells one set of shared parts (leaves, spines, OCSes, switch-to-switch links)
        serves in a full build: :func:`topologies.inventory.cells_per_shared_part`, at most
        the cluster's cells."""
        from topologies.inventory import cells_per_shared_part

        return min(self.cells, cells_per_shared_part(self.graph))

    @property
    def shared_sets(self) -> int:
        """Sets of shared parts in the cluster: one per :attr:`cells_per_shared_part`
        cells, the last perhaps part-filled (as a builder leaves an SU's last leaves)."""
        return -(-self.cells // self.cells_per_shared_part)

    @cached_property
    def fill(self) -> float:
        """Share of a full build's shared links a cell uses:
        :func:`topologies.inventory.port_fill`, the figure the cost model charges them at
        (``share="ports-used"``)."""
        from topologies.inventory import port_fill

        return port_fill(self.graph)

    def copies(self, effect: Effect, cells: int | None = None) -> float:
        """How many times the cluster (or ``cells`` of its cells: a run of whole sets, or
        the last set) holds a cell's component of ``effect`` (see the module doc): once per
        cell for a cell's own part; a shared switch or OCS once per set of
        :attr:`cells_per_shared_part` cells, whole (it fails whole, whatever share of it the
        cells use); a shared link (between switches, and its ends) at the cells' share,
        :attr:`fill` per cell, as the cost model charges it.

        >>> c = build_cluster("h100-dgx", "Llama-3-70B", "decode")
        >>> t = [e for e in c.effects(("transceiver", "leaf")) if _shared(e)]
        >>> [(e.cls, e.parts, c.copies(e), e.parts * c.copies(e)) for e in t]
        [('transceiver', 256.0, 0.125, 32.0), ('leaf', 8.0, 1, 8.0)]
        """
        n = self.cells if cells is None else cells
        if not _shared(effect):
            return n
        if effect.component.nodes:
            return -(-n // self.cells_per_shared_part)
        return n * self.fill

    def cells_hit(self, effect: Effect) -> tuple[float, int]:
        """Cells one failure of ``effect``'s component touches: the mean over the
        cluster's failures of it and the most (a shared part touches every cell of its set,
        each as :meth:`effects` evaluates one cell). A switch's sets hold one copy each, so
        the mean is the cells per set; a link's sets hold copies in proportion to their cells
        (:meth:`copies`), so a full set's failures weigh more than the last set's."""
        if not _shared(effect):
            return 1.0, 1
        per = self.cells_per_shared_part
        if effect.component.nodes:
            return self.cells / self.shared_sets, per
        full, rest = divmod(self.cells, per)
        return (full * per * per + rest * rest) / self.cells, per

    @property
    def tokens_per_s(self) -> float:
        """Tokens/s of one healthy instance as the search costed it (its first group)."""
        return self.best.tokens_per_s

    @property
    def cluster_tokens_per_s(self) -> float:
        """Tokens/s of the healthy cluster: every instance at its own healthy tokens/s
        (:attr:`healthy`), in every cell."""
        return self.healthy_tokens_per_s * self.cells

    def tokens_per_s_per_sm(self, capacity: float = 1.0, spares: int = 0) -> float:
        """Tokens/s per SM bought: ``capacity`` (the share of :attr:`cluster_tokens_per_s`
        delivered, 1 healthy) x :attr:`cluster_tokens_per_s` over the SMs of the cluster's
        GPUs and ``spares`` more (idle GPUs included). The one definition of the healthy
        (``capacity=1``, no spares) and goodput (a mean capacity, the spares bought)
        figures of :class:`~netmodel.study.availability.Availability` and
        :func:`~netmodel.study.reliability_summary.reliability_summary`.

        >>> c = build_cluster("lite-flat", "Llama-3-70B", "decode")
        >>> c.tokens_per_s_per_sm() == c.cluster_tokens_per_s / (c.gpus * c.gpu.sms)
        True
        >>> c.tokens_per_s_per_sm(0.5, spares=c.gpus) == c.tokens_per_s_per_sm() / 4
        True
        """
        return capacity * self.cluster_tokens_per_s / ((self.gpus + spares) * self.gpu.sms)

    @property
    def healthy_tokens_per_s(self) -> float:
        """Tokens/s of one healthy cell (every instance as placed, :attr:`healthy`)."""
        # instances alike counted as one rate times their number (a sum of equal rates
        # rounds otherwise)
        rates = Counter(r.tokens_per_s for r in self.healthy if r is not None)
        return float(sum(t * n for t, n in rates.items()))

    @cached_property
    def weights(self) -> tuple:
        """Each instance of a cell's share of the capacity, in instances' worth: its
        healthy tokens/s (:attr:`healthy`) over the cell's mean (0 for one that serves
        nothing); exactly 1 for every instance where all serve alike. Availability counts
        capacity lost in these (a down instance that straddles two leaves and serves a
        smaller batch is less than one instance's worth)."""
        rates = [0.0 if r is None else r.tokens_per_s for r in self.healthy]
        if len(set(rates)) <= 1 and all(rates):
            return (1.0,) * len(rates)
        mean = self.healthy_tokens_per_s / len(rates)
        return tuple(t / mean for t in rates) if mean > 0 else (0.0,) * len(rates)

    def worth(self, down: Iterable[int] = (), slowed: Iterable = ()) -> float:
        """Instances' worth of capacity (:attr:`weights`) of the instances ``down`` (indices
        of a cell's) and of the shares ``slowed`` (``(index, share of its own tokens/s)``)
        lose."""
        w = self.weights
        return sum(w[i] for i in down) + sum(share * w[i] for i, share in slowed)

    @cached_property
    def healthy(self) -> tuple:
        """Each instance of a cell costed healthy where it is placed, as a failure's
        instances are (:meth:`rebalanced` on the cell with nothing failed): the search
        costed its first group, and an instance placed elsewhere (across two leaves where
        a leaf's GPUs are no multiple of the instance) may miss the SLO at the searched
        batch; it then serves at the largest batch that meets it (None: at none, so it
        serves nothing). Instances of one shape (:meth:`_shape`) are costed once, the
        first one too, as a failure's re-costing costs it (the search costs it so as
        well: :meth:`~netmodel.study.scenario_collectives.ScenarioCollectives.for_instance`), so
        that a failure is charged only what it takes."""
        by: dict = {}
        out = []
        for inst, key in zip(self.instances, self.shape_ids, strict=True):
            if key not in by:
                by[key] = self.rebalanced(self.recost_graph((), inst), inst)
            out.append(by[key])
        return tuple(out)

    @cached_property
    def idle(self) -> tuple:
        """GPUs of a cell in no instance."""
        used = {g for inst in self.instances for g in inst}
        return tuple(g for g in gpu_nodes(self.graph) if g not in used)

    @cached_property
    def member_of(self) -> dict:
        return {g: i for i, inst in enumerate(self.instances) for g in inst}

    def with_catalog(self, catalog_: Catalog) -> Cluster:
        """The same cluster under other failure and repair figures (the evaluated effects
        are kept: they depend on the fabric, not on the rates)."""
        from dataclasses import replace

        out = replace(self, catalog=catalog_)
        for key in ("components", "_routed", "_effects", "_routes", "_csr", "_kinds",
                    "_direct", "_switches", "idle", "member_of", "healthy", "shape_ids", "_spare_plans", "_spare_capacity",
                    "_switch_hops"):
            if key in self.__dict__ and (key != "components" or (
                    catalog_.host_sms, catalog_.host_gpus)
                    == (self.catalog.host_sms, self.catalog.host_gpus)):
                out.__dict__[key] = self.__dict__[key]
        return out

    # ------------------------------------------------------------------ components
    @cached_property
    def components(self) -> dict:
        """Every component of one cell, by class (a tier-0 switch that stands for several
        switch boxes counts them as parts: :data:`topologies.failure_domains.TIER0_BOXES`)."""
        return components(self.graph, gpus_per_host=self.catalog.gpus_per_host(self.gpu))

    @cached_property
    def rates(self) -> dict:
        """Rate per part per second of every class for this cluster's GPU."""
        return self.catalog.rates(self.gpu)

    # ------------------------------------------------------------------ effects
    @cached_property
    def _kinds(self) -> dict:
        return dict(self.graph.nodes(data="kind"))

    # the name other modules (reliability_spares) read, over the private one above
    @property
    def kinds(self) -> dict:
        """Each node of the cell to its ``kind`` (``gpu``, ``switch``, ``ocs``...)."""
        return self._kinds

    @few_collections
    def effects(self, classes: Iterable[str] | None = None) -> list[Effect]:
        """Every symmetry class of components of one cell, with its evaluated effect
        (classes in :data:`~topologies.failure_domains.CLASSES` order). The collector's
        youngest generation waits for :data:`~netmodel.study.collector.GC_YOUNG`
        allocations meanwhile (:func:`~netmodel.study.collector.few_collections`):
        each component's local effect makes a few small tuples and sets, and the
        collections they set off walked the cell's graph and footprints again and again
        (a 131,072-GPU torus: 4.6 of 32.5 s CPU; peak RSS unchanged)."""
        if classes is not None:
            from netmodel.study.reliability_catalog import check_class

            try:   # a string or a number is not a list of classes; a 0-d array's iter raises
                items = None if isinstance(classes, str | bytes) else list(classes)
            except TypeError:
                items = None
            if items is None:
                raise UserError(f"classes must be a list of component classes (known: "
                                f"{known(CLASSES)}) or None for all, got {describe(classes)}")
            if not items:   # an empty list: a blast radius of nothing, without a word
                raise UserError(f"classes is empty; give one or more component classes "
                                f"(known: {known(CLASSES)}), or None for all")
            classes = {check_class(c) for c in items}
        cache = self.__dict__.setdefault("_effects", {})   # by class
        out = []
        for cls in CLASSES:
            if classes is not None and cls not in classes:
                continue
            if cls not in cache:
                cache[cls] = self._class_effects(cls)
            out.extend(cache[cls])
        self.__dict__.pop("_last_grouping", None)
        return out

    def _class_effects(self, cls: str) -> list[Effect]:
        """The evaluated effects of one class (see :meth:`effects`)."""
        from netmodel.study.reliability_spares import capacity

        out = []
        sms = self.gpu.sms
        members = self.__dict__.setdefault("_class_members", {})
        groups: dict = {}
        # with pod spare sites, each component's local effect is kept for the split by
        # recovery (_by_recovery), not worked out again
        keep = bool(capacity(self, "pod"))
        comps = self.components[cls]
        # what _local reads of a component but its class: where the class before had the
        # very same components but for their class (gpu-package's are gpu-die's), their
        # signatures differ by the class alone, so the grouping is that class's
        last = self.__dict__.get("_last_grouping")
        if last is not None and _alike(last[0], comps):
            for sig, rows in last[1].items():
                groups[sig] = [(comps[j], *local) for j, *local in rows]
        else:
            for j, comp in enumerate(comps):
                sig, lost, wired, touched = self._local(comp)
                item = (j, lost, wired, touched) if keep else (j,)
                hit = groups.get(sig)
                if hit is None:
                    groups[sig] = [item]
                else:
                    hit.append(item)
            self.__dict__["_last_grouping"] = (comps, groups)
            groups = {sig: [(comps[j], *local) for j, *local in rows]
                      for sig, rows in groups.items()}
        for items in groups.values():
            comp = items[0][0]
            local = items[0][1:] or self._local(comp)[1:]
            r = self._evaluate(comp, *local)
            for sub in self._by_recovery(items, r):
                x = sub[0][0]
                s = r if x is comp else self._evaluate(x, *sub[0][1:])
                out.append(Effect(cls=cls, example=x.name, components=len(sub),
                                  parts=sum(i[0].parts for i in sub),
                                  sms=(s["gpus_lost"] + s["gpus_disabled"] + s["gpus_cut"])
                                  * sms, component=x, **s))
                # the class's components, for what is judged per component's group
                # (reliability_recovery.by_group): by the effect's id, as it lives on
                members[id(out[-1])] = tuple(i[0] for i in sub)
        return out

    def class_members(self, effect: Effect) -> tuple:
        """The components of ``effect``'s symmetry class (an effect of :meth:`effects`;
        ``(effect.component,)`` for one made elsewhere)."""
        return self.__dict__.get("_class_members", {}).get(id(effect), (effect.component,))

    def _by_recovery(self, items: list, r: dict) -> list[list]:
        """``items`` (one local effect: ``(component, lost, wired, touched)``, or
        ``(component,)`` where the cell has no spare site; the first evaluated as ``r``)
        split where their recovery on the cell's pod spares differs
        (:func:`~netmodel.study.reliability_recovery_key.recovery_key`: the spare sites each
        member to replace draws on), the first's part first; whole where the failure takes
        no instance down and slows none, or the cell has no spare site."""
        from netmodel.study.reliability_recovery_key import recovery_key

        if len(items) < 2 or not (r["down"] or r["slowed"]) or len(items[0]) < 4:
            return [items]
        parts: dict = {}
        # a key reads of the component its nodes alone, and the local effect: kept per
        # those (gpu-package's components are gpu-die's but for their class; a link's
        # components alike where they hit alike)
        memo = self.__dict__.setdefault("_recovery_keys", {})
        for item in items:
            comp, lost, wired, touched = item
            name = (comp.nodes, frozenset(lost), frozenset(wired), frozenset(touched))
            key = memo.get(name)
            if key is None:
                key = memo[name] = recovery_key(self, *item)
            parts.setdefault(key, []).append(item)
        return list(parts.values())


def _alike(a: list, b: list) -> bool:
    """Whether the components ``a`` and ``b`` are the same, one by one, in all that
    :meth:`Cluster._local` reads of them but their class."""
    return len(a) == len(b) and all(
        x.nodes == y.nodes and x.edges == y.edges and x.scaled == y.scaled
        and x.disabled == y.disabled and x.handed == y.handed and x.shared == y.shared
        for x, y in zip(a, b, strict=True))


def _shared(effect: Effect) -> bool:
    return bool(getattr(effect.component, "shared", False))


def check_cluster(cluster: object, *, default: bool = True) -> Cluster | None:
    """``cluster`` if it is a :class:`Cluster` or None (build one); anything else by name.

    Parameters
    ----------
    cluster : object
        What a caller was given for a cluster.
    default : bool
        Whether None is taken (the caller builds one); False: a Cluster is required.

    Returns
    -------
    Cluster or None

    Raises
    ------
    UserError
        Anything else, in one line naming ``cluster``.

    Examples
    --------
    >>> check_cluster(None) is None
    True
    >>> check_cluster("lite-flat")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: cluster must be a netmodel.study.reliability_cluster.Cluster (e.g. build_cluster(scenario, model)) or None for the defaults, got 'lite-flat'
    """
    return of_type("cluster", cluster, Cluster, "build_cluster(scenario, model)",
                   default=default)


def build_cluster(scenario: str | Scenario, model: str | ModelSpec,
                  phase: str | Workload = "decode", *, gpus: int | None = None,
                  slo: Slo | None = None, options: RooflineOptions | None = None,
                  prompt: int | None = None, context: int | None = None,
                  max_batch: int = DEFAULT_MAX_BATCH, catalog_: Catalog | None = None,
                  search: FabricSearch | None = None, parallelism: str = "auto") -> Cluster:
    """The scenario's cluster of ``gpus`` GPUs (default: one copy of its fabric) with the
    instances of the best configuration of ``model`` in ``phase`` placed in every cell
    (searched as :func:`~netmodel.study.fabric_search.fabric_search` with ``parallelism``:
    ``"tp"``, ``"auto"`` or ``"all"``).
    ``search``: a :class:`~netmodel.study.fabric_search.FabricSearch` of this scenario,
    model and phase already run (by ``compare``, say), so it is not run again.

    Parameters
    ----------
    scenario : str or Scenario
        The scenario (a name, a file, a spec).
    model : str or ModelSpec
        The model.
    phase : str or Workload
        ``"prefill"`` or ``"decode"`` (with ``prompt`` and ``context``), or a workload.
    gpus : int, optional
        The cluster's GPUs, a multiple of the fabric's; default one copy of it.
    slo, options, prompt, context, max_batch, parallelism
        As :func:`~netmodel.study.fabric_search.fabric_search` takes them.
    catalog_ : Catalog, optional
        Failure rates and recovery times; default the shipped
        :func:`~netmodel.study.reliability_catalog.catalog`.
    search : FabricSearch, optional
        The search already run, as said above.

    Returns
    -------
    Cluster

    Raises
    ------
    UserError
        ``gpus`` is not a multiple of the scenario's fabric (up to
        :data:`~netmodel.study.reliability_fabric.MAX_GPUS`), or the fabric alone is over
        that (refused once it is built, before the search).
    NothingFeasible
        No configuration meets the SLO (a UserError of exit status 3).
    ValueError
        A ``search`` run for another model or phase.
    """
    from netmodel.study.fabric_search import FabricSearch, fabric_search
    from netmodel.study.scenario_collectives import ScenarioCollectives
    from netmodel.study.scenario_fabric import build_fabric, scenario_calibration

    with fabric_cap():   # a scenario file's fabric file is read under it too
        s = get_scenario(scenario)
    m = get_model(model)
    refuse_unread_tokens(phase, prompt, context)   # context in prefill ran at the default
    search = of_type("search", search, FabricSearch, "fabric_search(model, scenario, "
                     "workload)")   # a 5 raised AttributeError once the fabric was built
    workload = make_workload(phase, prompt, context)
    slo = check_slo(slo)
    options = check_options(options)
    with fabric_cap():
        graph = build_fabric(s)
    catalog_ = of_type("catalog_", catalog_, Catalog, "reliability_catalog.catalog()") \
        or catalog()
    who = f"fabric {s.name!r}" if s.graph is not None else f"scenario {s.label}"
    check_labels(graph, who, catalog_.gpus_per_host(s.gpu_spec))
    cells = cluster_cells(gpus, int(graph.graph["gpus"]),
                        who if s.graph is not None else f"{who}'s fabric")
    if search is not None:
        r = search
        if r.best is not None and (r.best.model, r.best.phase) != (m.name, workload.phase):
            raise ValueError("the search was run for another model or phase")
    else:
        coll = ScenarioCollectives(s.with_instances("alone"))
        r = fabric_search(m, coll.scenario, workload, slo=slo, options=options,
                          max_batch=max_batch, collectives=coll, parallelism=parallelism)
    if r.best is None:
        raise NothingFeasible(f"{m.name} has no feasible configuration on {s.label} "
                        f"({workload.phase}): {r.search.reason}")
    from netmodel.collectives.placement import partition

    instances = tuple(partition(graph, r.best.gpus, s.placement, gpus=gpu_nodes(graph)))
    return Cluster(scenario=s, model=m, workload=workload, gpu=s.gpu_spec, slo=slo,
                   options=options, graph=with_devices(graph), cells=cells, best=r.best,
                   instances=instances, calibration=scenario_calibration(s),
                   catalog=catalog_, max_batch=int(r.search.max_batch))
