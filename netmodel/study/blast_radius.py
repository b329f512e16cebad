"""Static blast radius: what one failure of each component takes down, per scenario.

**The cluster.** A scenario's fabric is one *cell*; a cluster of ``N`` GPUs is ``N / cell``
copies of it (``N`` a multiple of the cell's GPUs, up to 131,072). Cells are joined by no
modelled fabric: a serving instance never spans cells (the largest one, TP 32, fits the
smallest shipped cell), so copying the cell scales the failure counts with ``N`` while
keeping every instance's collectives exactly those the throughput study costs. Instances
are placed in every cell as the study places them: the best TP degree and batch of
:func:`~netmodel.study.fabric_search.fabric_search` for the scenario, model and phase,
``floor(cell / TP)`` instances cut by the scenario's placement policy; GPUs left over are
idle. Every healthy instance delivers the best configuration's tokens/s. Parts copies
would share in a full build (leaves, spines, OCSes, links between switches:
:func:`topologies.analysis.shared_part`) are counted once per
:func:`~topologies.analysis.cells_per_shared_part` cells (8 copies of ``h100-dgx`` fill
the SU its rail leaves are built for), the cost model's share of them; one failure of such
a part touches every cell of its set (:meth:`Cluster.cells_hit`).

**A failure** of a component (:mod:`topologies.failure_domains`) removes or thins parts of
its cell. Its *hardware radius* is the GPUs lost plus the GPUs it cuts off from the rest of
the cell (not in the cell's largest connected part), and their SMs. Its *software radius*
is the instances it takes down: an instance is down when it lost a member, when its
members can no longer reach each other, or when the collectives of the instance, costed
alone on the degraded fabric (the same collective model, calibration and algorithm
choice as the study; on an optical circuit-switched fabric its ring or torus re-set on the
ports that survive), meet the SLO at no batch. An instance whose step slows re-balances
as a serving engine does (its scheduler caps the running batch): it keeps its configuration
and serves at the largest batch, up to the healthy one, that still meets the SLO and fits
(:meth:`Cluster.rebalanced`), losing the difference in tokens/s. An instance is re-costed
only when the failure touches its *footprint*: its members and every link and switch on a shortest
path between two of them (routing is shortest-path, so other failures leave it as it was).

**Symmetry classes.** Components of one class are grouped by their local effect (GPUs
removed, and for every instance they touch: members lost and members wired to a failed
part; the switch tiers removed; the bandwidth left on thinned links). The builders are
regular, so components with the same local effect have the same global effect; one
representative per group is evaluated on the degraded fabric and stands for the group.

>>> c = build_cluster("lite-flat", "Llama-3-70B", "decode")
>>> c.tp, c.cells, len(c.instances), c.gpus
(16, 1, 8, 128)
>>> e = next(x for x in c.effects() if x.cls == "gpu-die")
>>> e.components, e.gpus_lost, e.instances_down, e.sms
(128, 1, 1, 33)
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import networkx as nx
import numpy as np

from compute.errors import NothingFeasible, UserError, known
from compute.hardware import get_gpu
from compute.models import get_model
from compute.parallel import Parallelism
from compute.phases import Slo, check_slo
from compute.roofline import RooflineOptions, check_options, make_workload
from compute.search import DEFAULT_MAX_BATCH
from compute.units import SECONDS_PER_YEAR
from compute.validate import describe, is_whole, of_type
from netmodel.study.instance_cost import InstanceCosting
from netmodel.study.reliability_catalog import HOUR, Catalog, catalog
from netmodel.study.rows import batch_limit_note
from netmodel.study.scenarios import get_scenario
from topologies.failure_domains import CLASSES, Component, components, degrade
from topologies.schema import gpu_nodes

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from compute.hardware import GpuSpec
    from compute.models import ModelSpec
    from compute.phases import Workload
    from compute.results import InferenceResult
    from netmodel.collectives.calibration import Calibration
    from netmodel.study.fabric_search import FabricSearch
    from netmodel.study.scenarios import Scenario

__all__ = ["BLAST_COLUMNS", "MAX_GPUS", "BlastRadius", "BlastRow", "Cluster", "Effect",
           "blast_files", "blast_radius", "build_cluster", "check_cluster"]

#: Largest cluster (GPUs) the reliability commands model.
MAX_GPUS = 131_072
#: Seconds in a year (a Julian year, 365.25 days: compute.units.SECONDS_PER_YEAR).
YEAR = SECONDS_PER_YEAR


@dataclass(frozen=True)
class Effect:
    """What one symmetry class of components does (all values for ONE failure).

    ``components`` and ``parts``: how many components (and physical parts: the rate
    multiplier) of the cell share this effect; ``gpus_lost``/``gpus_cut``: the hardware
    radius; ``instances_down`` (of which ``slo_down`` because the SLO no longer holds and
    ``cut_down`` because members cannot reach each other); ``down_members``: per down
    instance, the members to replace (lost, cut off, or wired to the failed part);
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
    down_members: tuple = ()
    component: Component | None = field(default=None, repr=False, compare=False)
    down: tuple = field(default=(), repr=False, compare=False)  #: indices of down instances
    #: (index, share of its tokens/s lost) of each instance that stays up slowed
    slowed: tuple = field(default=(), repr=False, compare=False)

    @property
    def gpus(self) -> int:
        """Hardware radius in GPUs (lost and cut off)."""
        return self.gpus_lost + self.gpus_cut

    @property
    def lost_instances(self) -> float:
        """Capacity lost, in instances' worth (down ones plus the slow-down of others)."""
        return self.instances_down + self.slow


@dataclass(frozen=True, eq=False)
class Cluster(InstanceCosting):
    """A scenario's cluster with instances placed (see the module doc). Build it with
    :func:`build_cluster`. Its instances are re-costed on a degraded fabric by the methods
    of :class:`~netmodel.study.instance_cost.InstanceCosting` (``instance_result``,
    ``rebalanced``)."""

    scenario: Scenario
    model: ModelSpec
    workload: Workload
    gpu: GpuSpec
    slo: Slo
    options: RooflineOptions
    graph: nx.Graph           #: one cell's physical fabric (as built, before [adjust])
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
        serves in a full build: :func:`topologies.analysis.cells_per_shared_part`, at most
        the cluster's cells."""
        from topologies.analysis import cells_per_shared_part

        return min(self.cells, cells_per_shared_part(self.graph))

    @property
    def shared_sets(self) -> int:
        """Sets of shared parts in the cluster: one per :attr:`cells_per_shared_part`
        cells, the last perhaps part-filled (as a builder leaves an SU's last leaves)."""
        return -(-self.cells // self.cells_per_shared_part)

    def copies(self, effect: Effect) -> int:
        """How many times the cluster holds a cell's component of ``effect``: once per
        cell, or once per set of cells for a shared part (see the module doc)."""
        return self.shared_sets if _shared(effect) else self.cells

    def cells_hit(self, effect: Effect) -> tuple[float, int]:
        """Cells one failure of ``effect``'s component touches: the mean over the
        cluster's copies of it and the most (a shared part touches every cell of its set,
        each as :meth:`effects` evaluates one cell)."""
        if not _shared(effect):
            return 1.0, 1
        return self.cells / self.shared_sets, self.cells_per_shared_part

    @property
    def tokens_per_s(self) -> float:
        """Tokens/s of one healthy instance."""
        return self.best.tokens_per_s

    @property
    def cluster_tokens_per_s(self) -> float:
        """Tokens/s of the healthy cluster."""
        return self.tokens_per_s * self.instances_total

    @cached_property
    def idle(self) -> tuple:
        """GPUs of a cell in no instance."""
        used = {g for inst in self.instances for g in inst}
        return tuple(g for g in gpu_nodes(self.graph) if g not in used)

    @cached_property
    def member_of(self) -> dict:
        return {g: i for i, inst in enumerate(self.instances) for g in inst}

    @cached_property
    def reconfiguration_s(self) -> float:
        """Seconds to re-set circuits (the slowest OCS; 0 without OCS)."""
        return max((d["reconfiguration_time"] for _, d in self.graph.nodes(data=True)
                    if d["kind"] == "ocs"), default=0.0)

    @cached_property
    def shard_bytes(self) -> float:
        """Weight bytes per GPU of an instance (what a spare loads)."""
        return float(self.best.memory.weights)

    def swap_s(self) -> float:
        """Seconds from a failure to a hot spare serving: detection, circuit
        reconfiguration (OCS), loading the weight shard, warm-up."""
        c = self.catalog
        return (c.detection_s + self.reconfiguration_s
                + self.shard_bytes / c.load_bandwidth(self.gpu) + c.warmup_s)

    def repair_down_s(self, cls: str) -> float:
        """Seconds an instance waits without a spare: detection, repair, reload, warm-up."""
        c = self.catalog
        return (c.detection_s + c.repair_s(cls) + self.shard_bytes / c.load_bandwidth(self.gpu)
                + c.warmup_s)

    def hold_s(self, cls: str) -> float:
        """Seconds a spare stands in before the repaired part returns to the pool."""
        return self.catalog.detection_s + self.catalog.repair_s(cls)

    def with_catalog(self, catalog_: Catalog) -> Cluster:
        """The same cluster under other failure and repair figures (the evaluated effects
        are kept: they depend on the fabric, not on the rates)."""
        from dataclasses import replace

        out = replace(self, catalog=catalog_)
        for key in ("components", "_index", "_effects", "_router", "_csr", "_kinds",
                    "_direct", "_switches", "idle", "member_of", "_spare_plans", "_spare_capacity"):
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

    # ------------------------------------------------------------------ footprints
    @cached_property
    def _index(self) -> dict:
        """Element (node or sorted edge) -> indices of the instances whose footprint holds
        it."""
        inv: dict = {}
        for i, inst in enumerate(self.instances):
            for e in self._footprint(inst):
                inv.setdefault(e, []).append(i)
        return inv

    def _footprint(self, members) -> set:
        """The members, every link of theirs with what it leads to, and every link and switch
        on a shortest path between two of them. Members wired to the same switches share
        the middle of their routes, so one route per pair of distinct attachments does."""
        g = self.graph
        out = set(members)
        by: dict = {}
        for m in members:
            nbrs = frozenset(g.neighbors(m))
            by.setdefault(nbrs, m)
            for n in nbrs:
                out.add(n)
                out.add(_key(m, n))
        if self.scenario.is_ocs:
            return out
        reps = list(by.values())
        router = self._router
        for i, a in enumerate(reps):
            for b in reps[i + 1:]:
                r = router.route(a, b)
                if r is None:
                    continue
                for link in r.links:
                    u, v = router.link_name(link)
                    out.update((u, v, _key(u, v)))
        return out

    @cached_property
    def _router(self):
        from netmodel.collectives.routing import Router

        return Router(self.graph)

    @cached_property
    def _direct(self) -> bool:
        """Whether GPUs are wired to GPUs (then they may forward traffic, and instances are
        costed on the whole cell rather than on their members and the switches)."""
        data = self.graph.nodes
        return any(data[u]["kind"] == "gpu" and data[v]["kind"] == "gpu"
                   for u, v in self.graph.edges())

    @cached_property
    def _switches(self) -> nx.Graph:
        """The cell without its GPUs (every switch and OCS, their links), for
        :meth:`recost_graph`."""
        g = self.graph
        return g.subgraph([n for n, k in g.nodes(data="kind") if k != "gpu"]).copy()

    @cached_property
    def _csr(self) -> tuple:
        """The cell as arrays: node list, node index, edge ends (for connectivity)."""
        nodes = list(self.graph.nodes)
        index = {n: i for i, n in enumerate(nodes)}
        ends = np.array([(index[u], index[v]) for u, v in self.graph.edges()],
                        dtype=np.int64).reshape(-1, 2)
        return nodes, index, ends

    def partition(self, comps: Iterable[Component]) -> dict:
        """Connected part of every surviving node once ``comps`` failed: ``{node: label}``
        (thinned links still connect)."""
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import connected_components

        nodes, index, ends = self._csr
        gone_nodes = {index[n] for c in comps for n in c.nodes}
        gone_edges = {tuple(sorted((index[u], index[v]))) for c in comps for u, v in c.edges}
        keep = np.ones(len(ends), dtype=bool)
        if gone_nodes:
            dead = np.zeros(len(nodes), dtype=bool)
            dead[list(gone_nodes)] = True
            keep &= ~(dead[ends[:, 0]] | dead[ends[:, 1]])
        if gone_edges:
            lo, hi = np.minimum(ends[:, 0], ends[:, 1]), np.maximum(ends[:, 0], ends[:, 1])
            code = lo * len(nodes) + hi
            drop = np.array([a * len(nodes) + b for a, b in gone_edges])
            keep &= ~np.isin(code, drop)
        e = ends[keep]
        n = len(nodes)
        m = coo_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(n, n))
        _, labels = connected_components(m, directed=False)
        return {nodes[i]: int(labels[i]) for i in range(n) if i not in gone_nodes}

    def recost_graph(self, comps: Iterable[Component], members: Iterable[Hashable],
                     spares: Iterable[tuple[str, dict, list[tuple[Hashable, dict]]]] = (),
                     ) -> nx.Graph:
        """A graph to cost ``members`` on: the cell (or, where GPUs forward no traffic, only
        the members and every switch and OCS) with ``spares`` (a
        :func:`~topologies.failure_domains.plan_spares` plan) added and ``comps`` failed."""
        comps, members = tuple(comps), tuple(members)
        g = self.graph
        if self._direct:
            out = g.copy()
        else:
            # the switches' part once (_switches), copied, and the members wired into it:
            # the graph g.subgraph(switches + members).copy() gave, without filtering the
            # whole cell's adjacency through a subgraph view for every instance costed
            out = self._switches.copy()
            ms = [m for m in members if m in g]
            out.add_nodes_from((m, g.nodes[m]) for m in ms)
            adj = g.adj
            out.add_edges_from((m, v, d) for m in ms for v, d in adj[m].items() if v in out)
        for name, attrs, edges in spares:
            out.add_node(name, **attrs)
            out.add_edges_from((name, n, d) for n, d in edges if n in out)
        out = degrade(out, comps, copy=False)
        if not self._direct:
            # what the graph was made from, for the costing's short way to its canonical
            # form (InstanceCosting._switch_problem, for this graph object as returned: it
            # is not to be changed before costing); kept, so its id is not reused
            self.__dict__["_last_recost"] = (out, comps, members, bool(spares))
        return out

    # ------------------------------------------------------------------ effects
    @cached_property
    def _kinds(self) -> dict:
        return dict(self.graph.nodes(data="kind"))

    def _local(self, comp: Component) -> tuple:
        """(signature, lost GPUs, GPUs wired to the failed parts, touched instances)."""
        g = self.graph
        kind = self._kinds
        lost = {n for n in comp.nodes if kind[n] == "gpu"}
        wired = set()
        index = self._index
        touched = set()
        for e in (*comp.edges, *(e for e, _ in comp.scaled)):
            u, v = e
            if kind[u] == "gpu":
                wired.add(u)
            if kind[v] == "gpu":
                wired.add(v)
            touched.update(index.get(_key(u, v), ()))
        tiers = []
        for n in comp.nodes:
            touched.update(index.get(n, ()))
            if kind[n] != "gpu":
                tiers.append((kind[n], g.nodes[n].get("tier", -1)))
                wired.update(x for x in g.neighbors(n) if kind[x] == "gpu")
        wired -= lost
        member_of = self.member_of
        touched.update(member_of[n] for n in lost | wired if n in member_of)
        n_lost = Counter(member_of[n] for n in lost if n in member_of)
        n_wired = Counter(member_of[n] for n in wired if n in member_of)
        per = [(n_lost[i], n_wired[i]) for i in touched]
        idle_lost = sum(1 for n in lost if n not in member_of)
        idle_wired = sum(1 for n in wired if n not in member_of)
        factors = tuple(sorted(round(f, 9) for _, f in comp.scaled))
        sig = (comp.cls, tuple(sorted(tiers)), idle_lost, idle_wired, tuple(sorted(per)),
               len(comp.edges), factors, comp.shared)
        return sig, lost, wired, touched

    def _evaluate(self, comp: Component, lost, wired, touched) -> dict:
        part = self.partition([comp])
        sizes: dict = {}
        data = self.graph.nodes
        for n, k in part.items():
            if data[n]["kind"] == "gpu":
                sizes[k] = sizes.get(k, 0) + 1
        main = max(sizes, key=lambda k: sizes[k]) if sizes else None
        cut = [n for n, k in part.items() if data[n]["kind"] == "gpu" and k != main]
        down, slo_down, cut_down, slow, members, rebalanced = [], 0, 0, 0.0, [], 0
        slowed = []
        healthy = self.tokens_per_s
        for i in sorted(touched):
            inst = self.instances[i]
            gone = [m for m in inst if m in lost]
            if gone:
                down.append(i)
                members.append(len(gone))
                continue
            if len({part[m] for m in inst}) > 1:
                down.append(i)
                cut_down += 1
                members.append(sum(1 for m in inst if m in wired) or 1)
                continue
            g = self.recost_graph([comp], inst)
            r = self.rebalanced(g, inst)
            if r is None:
                down.append(i)
                if self.instance_result(g, inst) is None:   # memoized
                    cut_down += 1
                else:
                    slo_down += 1
                members.append(sum(1 for m in inst if m in wired))
                continue
            rebalanced += r.batch < self.batch
            loss = 1.0 - r.tokens_per_s / healthy
            if loss > 1e-9:
                slow += loss
                slowed.append((i, loss))
        return dict(gpus_lost=len(lost), gpus_cut=len(cut), instances_down=len(down),
                    slo_down=slo_down, cut_down=cut_down, slow=slow,
                    rebalanced=rebalanced, down_members=tuple(members), down=tuple(down),
                    slowed=tuple(slowed))

    def effects(self, classes: Iterable[str] | None = None) -> list[Effect]:
        """Every symmetry class of components of one cell, with its evaluated effect
        (classes in :data:`~topologies.failure_domains.CLASSES` order)."""
        if classes is not None:
            from netmodel.study.reliability_catalog import check_class

            try:   # a string or a number is not a list of classes; a 0-d array's iter raises
                items = None if isinstance(classes, str | bytes) else list(classes)
            except TypeError:
                items = None
            if items is None:
                raise UserError(f"classes must be a list of component classes (known: "
                                f"{known(CLASSES)}) or None for all, got {describe(classes)}")
            classes = {check_class(c) for c in items}
        cache = self.__dict__.setdefault("_effects", {})   # by class
        out = []
        for cls in CLASSES:
            if classes is not None and cls not in classes:
                continue
            if cls not in cache:
                cache[cls] = self._class_effects(cls)
            out.extend(cache[cls])
        return out

    def _class_effects(self, cls: str) -> list[Effect]:
        """The evaluated effects of one class (see :meth:`effects`)."""
        out = []
        sms = self.gpu.sms
        groups: dict = {}
        for comp in self.components[cls]:
            sig, lost, wired, touched = self._local(comp)
            hit = groups.get(sig)
            if hit is None:
                groups[sig] = [comp, lost, wired, touched, 1, comp.parts]
            else:
                hit[4] += 1
                hit[5] += comp.parts
        for comp, lost, wired, touched, count, parts in groups.values():
            r = self._evaluate(comp, lost, wired, touched)
            out.append(Effect(cls=cls, example=comp.name, components=count, parts=parts,
                              sms=(r["gpus_lost"] + r["gpus_cut"]) * sms, component=comp,
                              **r))
        return out


def _key(u, v) -> tuple:
    return (u, v) if str(u) <= str(v) else (v, u)


def _shared(effect: Effect) -> bool:
    return bool(getattr(effect.component, "shared", False))


def _check_gpus(gpus, cell: int) -> int:
    if gpus is None:
        return 1
    if isinstance(gpus, bool) or not is_whole(gpus) or gpus < 1:
        raise UserError(f"gpus must be a whole number >= 1, got {describe(gpus)}")
    if gpus > MAX_GPUS:
        raise UserError(f"gpus {gpus:,} exceeds the largest cluster modelled "
                        f"({MAX_GPUS:,} GPUs)")
    if gpus % cell:
        lo = max(cell, gpus // cell * cell)
        raise UserError(f"gpus {gpus:,} is not a multiple of the scenario's fabric of {cell} "
                        f"GPUs (the cluster is copies of it); use {lo:,} or {lo + cell:,}")
    return int(gpus // cell)


def check_cluster(cluster: object) -> Cluster | None:
    """``cluster`` if it is a :class:`Cluster` or None (build one); anything else by name."""
    return of_type("cluster", cluster, Cluster, "build_cluster(scenario, model)")


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

    Raises UserError when no configuration is feasible, or ``gpus`` is not a multiple of
    the scenario's fabric (up to :data:`MAX_GPUS`).
    """
    from netmodel.study.fabric_search import (
        ScenarioCollectives,
        build_fabric,
        fabric_search,
        scenario_calibration,
    )

    s = get_scenario(scenario)
    m = get_model(model)
    workload = make_workload(phase, prompt, context)
    slo = check_slo(slo)
    options = check_options(options)
    graph = build_fabric(s)
    cells = _check_gpus(gpus, int(graph.graph["gpus"]))
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
    return Cluster(scenario=s, model=m, workload=workload, gpu=get_gpu(s.gpu), slo=slo,
                   options=options, graph=graph, cells=cells, best=r.best,
                   instances=instances, calibration=scenario_calibration(s),
                   catalog=of_type("catalog_", catalog_, Catalog, "reliability_catalog.catalog()")
                   or catalog(), max_batch=int(r.search.max_batch))


# ---------------------------------------------------------------------- the table

@dataclass(frozen=True)
class BlastRow:
    """One component class in a cluster (radii are per failure; ``mean`` weighted by rate).

    ``count``: parts in the cluster; ``rate_per_hour``: per part; ``events_per_year``: in
    the cluster; ``recovery_*``: the path and time of the instances it takes down.
    """

    cls: str
    description: str
    count: float
    rate_per_hour: float
    events_per_year: float
    gpus_mean: float
    gpus_max: int
    sms_mean: float
    sms_max: int
    instances_down_mean: float
    instances_down_max: int
    gpus_down_mean: float          #: GPUs in the instances it takes down (software radius)
    tokens_lost_pct_mean: float
    tokens_lost_pct_max: float
    symmetry_classes: int
    recovery_without_spares: str
    recovery_without_spares_s: float | None
    recovery_with_spares: str
    recovery_with_spares_s: float | None

    def to_dict(self) -> dict:
        return asdict(self)


BLAST_COLUMNS = tuple(f.name for f in BlastRow.__dataclass_fields__.values())


@dataclass(frozen=True, eq=False)
class BlastRadius:
    """The blast-radius table of one scenario, model and phase."""

    cluster: Cluster
    rows: tuple
    effects: tuple
    recoveries: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        c = self.cluster
        return {"scenario": c.scenario.label, "model": c.model.name,
                "phase": c.workload.phase, "gpus": c.gpus, "cells": c.cells,
                "cell_gpus": c.cell_gpus, "cells_per_shared_part": c.cells_per_shared_part, "tp": c.tp, "config": c.parallelism.label,
                "instance_gpus": c.instance_gpus, "batch": c.batch,
                "instances": c.instances_total, "idle_gpus": len(c.idle) * c.cells,
                "sms_per_gpu": c.gpu.sms, "tokens_per_s": c.cluster_tokens_per_s,
                "instance_tokens_per_s": c.tokens_per_s, "swap_s": c.swap_s(),
                "reconfiguration_s": c.reconfiguration_s,
                "catalog": c.catalog.to_dict(),
                "rows": [r.to_dict() for r in self.rows],
                "symmetry_classes": [
                    {**{k: v for k, v in asdict(e).items() if k not in ("component", "down")},
                     "down_members": list(e.down_members), "gpus": e.gpus,
                     "slowed": [list(s) for s in e.slowed],
                     "recovery": self.recoveries.get(id(e))}
                    for e in self.effects]}

    def to_json(self, indent: int | None = 2) -> str:
        import json

        return json.dumps(self.to_dict(), indent=indent)

    def to_csv(self) -> str:
        from compute.results import rows_to_csv

        return rows_to_csv([r.to_dict() for r in self.rows], BLAST_COLUMNS)

    def table(self) -> str:
        c = self.cluster
        lines = [f"{c.scenario.label}, {c.model.name} {c.workload.phase}: {c.gpus:,} GPU{'' if c.gpus == 1 else 's'} "
                 f"({c.cells} x {c.cell_gpus}), {c.parallelism.label} x batch {c.batch}, "
                 f"{c.instances_total:,} instance{'' if c.instances_total == 1 else 's'}, {c.cluster_tokens_per_s:,.0f} tokens/s",
                 f"{'class':<12}{'count':>9}{'rate/h':>10}{'ev/yr':>9}{'GPUs':>8}{'SMs':>9}"
                 f"{'inst':>8}{'tok%':>8}  recovery (no spares | with spares)"]
        for r in self.rows:
            lines.append(
                f"{r.cls:<12}{r.count:>9,.0f}{r.rate_per_hour:>10.2e}{r.events_per_year:>9.3g}"
                f"{_cell(r.gpus_mean, 8)}{_cell(r.sms_mean, 9)}"
                f"{_cell(r.instances_down_mean, 8)}{_cell(r.tokens_lost_pct_mean, 8)}"
                f"  {r.recovery_without_spares} | "
                f"{r.recovery_with_spares}")
        lines.append("GPUs, SMs, inst, tok%: per failure, mean over the class weighted by rate "
                     "(hardware radius: GPUs lost or cut off; inst: instances down)")
        if c.batch_at_limit:
            lines.append(c.batch_limit_note)
        return "\n".join(lines)


def blast_files(result: BlastRadius, *, plot: bool = True) -> dict:
    """``blast_radius.json``, ``blast_radius.csv`` and (with ``plot``) ``blast_radius.png``."""
    files = {"blast_radius.json": result.to_json().encode(),
             "blast_radius.csv": result.to_csv().encode()}
    if plot:
        from netmodel.study.reliability_plots import plot_blast_radius

        files["blast_radius.png"] = lambda path: plot_blast_radius(result, path)
    return files


def _cell(x: float, width: int) -> str:
    """``x`` right-aligned in ``width`` characters with at least one space before it: whole
    numbers with thousands separators from 1,000 up (a rack of 72 GB300 is 10,656 SMs),
    else 3 significant digits.

    >>> _cell(10656, 9), _cell(72, 8), _cell(0.5, 8), _cell(131072, 8)
    ('   10,656', '      72', '     0.5', ' 131,072')
    """
    text = f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.3g}"
    return " " + text.rjust(width - 1)


def _fmt_s(s: float | None) -> str:
    if s is None:
        return "-"
    if s >= 2 * HOUR:
        return f"{s / HOUR:.3g} h"
    if s >= 120:
        return f"{s / 60:.3g} min"
    return f"{s:.3g} s"


def blast_radius(scenario: str | Scenario, model: str | ModelSpec,
                 phase: str | Workload = "decode", *, gpus: int | None = None,
                 slo: Slo | None = None, options: RooflineOptions | None = None,
                 catalog_: Catalog | None = None, placement: str = "pod",
                 prompt: int | None = None, context: int | None = None,
                 classes: Iterable[str] | None = None,
                 cluster: Cluster | None = None, parallelism: str = "auto",
                 max_batch: int = DEFAULT_MAX_BATCH) -> BlastRadius:
    """The blast-radius table (see the module doc): per class, the count, rate, hardware
    and software radius, tokens/s lost, and the recovery path and time without spares
    (repair) and with a hot spare of ``placement`` (group, pod or global) at hand."""
    from netmodel.study.reliability_spares import recovery

    c = check_cluster(cluster) or build_cluster(
        scenario, model, phase, gpus=gpus, slo=slo, options=options, prompt=prompt,
        context=context, catalog_=catalog_, parallelism=parallelism, max_batch=max_batch)
    effects = c.effects(classes)
    rates = c.rates
    total = c.instances_total
    rows = []
    recs = {}
    for cls in CLASSES:
        es = [e for e in effects if e.cls == cls]
        if not es:
            continue
        # a class's failures a year: each effect's parts x the cluster's copies of it;
        # a shared part's failure touches every cell of its set (hit, mean and most)
        w = np.array([e.parts * c.copies(e) for e in es], dtype=float)
        wsum = float(w.sum())
        rate = rates[cls]
        hit = np.array([c.cells_hit(e)[0] for e in es])
        most = [c.cells_hit(e)[1] for e in es]

        def mean(xs: ArrayLike, w: np.ndarray = w, wsum: float = wsum) -> float:
            return float(np.dot(w, xs) / wsum) if wsum > 0 else 0.0

        down = [e for e in es if e.instances_down]
        path0 = path1 = "no instance down"
        t0 = t1 = None
        if down:
            path0 = f"repair ({_fmt_s(c.repair_down_s(cls))})"
            t0 = c.repair_down_s(cls)
            recs_cls = [recovery(c, e, placement) for e in down]
            for e, rec in zip(down, recs_cls, strict=True):
                recs[id(e)] = rec.to_dict()
            worst = max(recs_cls, key=lambda r: (r.units is None, r.time_s or 0.0))
            if worst.units is None:
                path1, t1 = f"{worst.path}: repair", t0
            else:
                path1, t1 = f"{worst.path} ({_fmt_s(worst.time_s)})", worst.time_s
        lost = np.array([100 * e.lost_instances / len(c.instances) / c.cells for e in es])
        rows.append(BlastRow(
            cls=cls, description=c.catalog.classes[cls].description,
            count=wsum, rate_per_hour=rate * HOUR,
            events_per_year=wsum * rate * YEAR,
            gpus_mean=mean(hit * [e.gpus for e in es]),
            gpus_max=max(m * e.gpus for m, e in zip(most, es, strict=True)),
            sms_mean=mean(hit * [e.sms for e in es]),
            sms_max=max(m * e.sms for m, e in zip(most, es, strict=True)),
            instances_down_mean=mean(hit * [e.instances_down for e in es]),
            instances_down_max=max(m * e.instances_down for m, e in zip(most, es, strict=True)),
            gpus_down_mean=mean(hit * [e.instances_down * c.instance_gpus for e in es]),
            tokens_lost_pct_mean=mean(hit * lost),
            tokens_lost_pct_max=float(max(lost * most)),
            symmetry_classes=len(es), recovery_without_spares=path0,
            recovery_without_spares_s=t0, recovery_with_spares=path1,
            recovery_with_spares_s=t1))
    if not math.isfinite(total):  # pragma: no cover - guarded by build_cluster
        raise UserError("no instance")
    return BlastRadius(cluster=c, rows=tuple(rows), effects=tuple(effects), recoveries=recs)
