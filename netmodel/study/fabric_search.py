"""Fabric-aware SLO search: compute's search with the collective costs of an instance placed
on a scenario's fabric graph.

:func:`fabric_search` runs compute's search for one model and phase with a scenario's
collective costs (:class:`~netmodel.study.scenario_collectives.ScenarioCollectives`: the
instance of each size placed once, each collective compiled once). What the search accepts
is checked in :mod:`netmodel.study.search_options`; the fabric and the graph an instance
runs on are built in :mod:`netmodel.study.scenario_fabric`.

The best TP degree and batch therefore depend on the fabric: a TP-32 instance inside one
switch costs less than one across leaves. By default each instance is costed alone; with
the scenario's ``instances = "all"`` every instance of the cluster runs its collectives at
the same time (see :mod:`netmodel.study.scenario_collectives`), and the best is the
configuration with the most tokens/s/SM over every SM of the cluster, stranded GPUs
included (:meth:`FabricSearch.charged`).

>>> r = fabric_search("Llama-3-70B", "lite-flat", "decode")
>>> r.best.tp in (8, 16, 32) and r.best.feasible, r.reconfiguration_s
(True, 0.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from compute.errors import UserError
from compute.models import get_model
from compute.phases import Slo
from compute.roofline import check_skew, make_workload
from compute.search import DEFAULT_MAX_BATCH, search
from compute.sharding import check_tp, valid_tp_degrees
from compute.validate import flag, of_type
from netmodel.study.circuit_copies import ocs_ports
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_collectives import ScenarioCollectives
from netmodel.study.scenarios import Scenario
from netmodel.study.search_options import parallel_dimensions

if TYPE_CHECKING:
    from compute.comm import CommLike
    from compute.models import ModelSpec
    from compute.parallel import Parallelism
    from compute.phases import Workload
    from compute.results import InferenceResult, SearchResult
    from compute.roofline_options import RooflineOptions

#: ``ScenarioCollectives`` stays importable from here, where docs/api.md named it before it
#: had a module of its own (:mod:`netmodel.study.scenario_collectives`)
__all__ = ["FabricSearch", "ScenarioCollectives", "fabric_search", "instance_cap"]


@dataclass(frozen=True, eq=False)
class FabricSearch:
    """The SLO search of one model and phase on one scenario.

    ``search`` is compute's :class:`~compute.results.SearchResult`; ``group`` the GPU nodes
    of the best instance; ``reconfiguration_s`` the time to set its circuits (OCS only,
    paid once per re-provisioning, not per token).
    """

    scenario: Scenario
    search: SearchResult
    group: tuple
    reconfiguration_s: float
    #: The largest batch that fits in memory at any TP degree tried (memory does not depend
    #: on the network, so re-scored searches of this fabric need no larger batch).
    batch_cap: int = 0
    #: With every instance at once (``instances = "all"``): how many instances of the best
    #: configuration the fabric holds, and the share of its GPUs they use (the rest are
    #: stranded; tokens/s/SM is then charged for every SM of the cluster). None alone.
    instances: int | None = None
    packed_fraction: float | None = None
    #: The layout the best instance's circuits were set as (``"ring"`` or ``"torus"``,
    #: :meth:`~netmodel.study.scenario_collectives.ScenarioCollectives.layout`; with
    #: ``circuits = "best"`` the one chosen for its size); None off an OCS fabric.
    circuits: str | None = None

    def charged(self) -> dict:
        """The row fields packed accounting changes: the cluster's tokens/s (every
        instance) and tokens/s/SM over every SM of the fabric, stranded GPUs included;
        empty when instances are costed alone or nothing is feasible."""
        b = self.best
        if self.packed_fraction is None or b is None:
            return {}
        return {"tokens_per_s": b.tokens_per_s * self.instances,
                "tokens_per_s_per_sm": b.tokens_per_s_per_sm * self.packed_fraction,
                "instances": self.instances, "packed_fraction": self.packed_fraction}

    @property
    def best(self) -> InferenceResult | None:
        """The best :class:`~compute.results.InferenceResult` (None when none is feasible)."""
        return self.search.best


def fabric_search(model: str | ModelSpec, scenario: str | Scenario,
                  phase: str | Workload = "decode", *, prompt: int | None = None,
                  context: int | None = None, options: RooflineOptions | None = None,
                  slo: Slo | None = None, max_batch: int = DEFAULT_MAX_BATCH,
                  collectives: ScenarioCollectives | None = None,
                  tp: int | Sequence[int] | None = None, comm: CommLike | None = None,
                  keep_grid: bool = False, parallelism: str = "auto", expert_skew: float = 1.0
                 ) -> FabricSearch:
    """Best TP degree and batch of ``model`` on ``scenario`` under the SLO.

    TP degrees run from 1 to the smaller of the GPU's largest instance and the fabric's GPU
    count (dividing the heads). ``collectives`` reuses the compiled costs of an earlier
    call on the same scenario (pass one per scenario when searching many models/phases).
    ``tp`` restricts the TP degrees tried (each must fit the fabric and the GPU's largest
    instance). ``comm`` costs the collectives instead of ``collectives`` (which still
    places the instance), e.g. :class:`~netmodel.study.adjusted_comm.AdjustedComm`: the same
    fabric re-scored with other link bandwidths or per-hop latencies, without routing it
    again. The evaluated grid is dropped unless ``keep_grid`` (a study holds hundreds of
    searches; their grids were most of its memory). ``parallelism`` (see
    :data:`~netmodel.study.defaults.PARALLELISM`): ``"tp"`` searches tensor parallelism
    only, ``"all"`` also pipeline (stages 1, 2, 4, 8 up to the layers), expert and
    attention data parallelism within the fabric's GPUs, ``"auto"`` (default) all of them
    but the pipeline for mixture-of-experts models and tensor parallelism alone for dense
    ones.
    """
    keep_grid = flag("fabric_search", "keep_grid", keep_grid)   # 'no' kept the grid
    scenario = get_scenario(scenario)
    # a number raised AttributeError ('int' object has no attribute 'scenario')
    coll = of_type("collectives", collectives, ScenarioCollectives,
                   "ScenarioCollectives(scenario)") or ScenarioCollectives(scenario)
    if coll.scenario != scenario and comm is None:
        raise UserError(f"collectives were built for another scenario than "
                        f"{scenario.name!r} (or another variant of it); give the scenario's "
                        f"own, or none")
    model, gpu = get_model(model), scenario.gpu_spec
    check_skew(expert_skew)   # checked even where no EP degree uses it, as search does
    limit = min(gpu.max_instance, coll.gpus)
    cap = instance_cap(coll)
    limit = limit if cap is None else min(limit, cap)
    tps = valid_tp_degrees(model, limit) if tp is None else \
        tuple(sorted({check_tp(model, t, limit) for t in np.atleast_1d(tp)}))
    workload = make_workload(phase, prompt, context)
    dims = parallel_dimensions(model, parallelism, coll.gpus if cap is None else limit,
                               two_batch_overlap=bool(options and options.two_batch_overlap),
                               mtp_decode=bool(options and options.mtp_tokens
                                               and workload.phase == "decode"))
    if dims:
        dims = {**dims, "tp": None if tp is None and cap is None else tps,
                "expert_skew": expert_skew}
    else:
        dims = {"tp": tps}
    result = search(model, gpu, workload,
                    comm=coll if comm is None else comm, options=options, slo=slo,
                    max_batch=max_batch, **dims)
    count = fraction = None
    if coll.concurrent and result.best is not None:
        result, count, fraction = _packed_best(result, coll)
    size = result.best.gpus if result.best else None   # the instance: tp x pp GPUs
    fits = result.grid.fits
    cap = int(np.asarray(result.grid.batches)[np.any(fits, axis=0)].max()) \
        if np.any(fits) else int(max_batch)
    if not keep_grid:
        result = replace(result, grid=None)
    return FabricSearch(scenario=scenario, search=result,
                        group=coll.group(size) if size else (),
                        reconfiguration_s=coll.reconfiguration_time(size) if size else 0.0,
                        batch_cap=cap, instances=count, packed_fraction=fraction,
                        circuits=coll.layout(size) if size else None)


def instance_cap(coll: ScenarioCollectives) -> int | None:
    """The most GPUs an instance of the scenario can span where its circuits limit it (an
    OCS whose GPUs have one optical port wires rings of at most 2), else None."""
    if not coll.scenario.is_ocs:
        return None
    hit = coll.__dict__.get("_instance_cap")   # asked by every search: its graph is frozen
    if hit is None:
        from topologies.schema import gpu_nodes

        hit = coll.__dict__["_instance_cap"] = (
            2 if ocs_ports(coll.graph, gpu_nodes(coll.graph)) < 2 else None,)
    return hit[0]


def _packed_best(result, coll):
    """The best configuration when every instance of the cluster runs and every SM is
    charged: each configuration's best batch scored by tokens/s/SM x the share of the
    fabric's GPUs its instances use (floor(GPUs / instance) instances; the rest stranded).
    Returns the search with that best, the instance count and the share."""
    grid = result.grid
    configs = list(grid.configs)

    def packing(c: Parallelism) -> tuple[int, float]:
        n = len(coll.instances(c.tp)) if c.pp == 1 else coll.gpus // c.gpus
        n = min(n, coll.gpus // c.gpus)
        return n, n * c.gpus / coll.gpus

    feasible = grid.feasible   # formed once (a property: a pass over the whole grid)
    masked = np.where(feasible, grid.tokens_per_s_per_sm, -np.inf)
    rows = feasible.any(axis=1)
    best = None
    for i, c in enumerate(configs):
        if not rows[i]:
            continue
        j = int(np.argmax(masked[i]))
        n, share = packing(c)
        score = masked[i, j] * share
        if best is None or score > best[0]:
            best = (score, i, j, n, share)
    _, i, j, n, share = best
    return replace(result, best=grid.result(i, j)), n, share
