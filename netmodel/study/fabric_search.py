"""Fabric-aware SLO search: compute's search with the collective costs of an instance placed
on a scenario's fabric graph.

For each (scenario, TP degree) the instance is placed once (the scenario's placement policy;
on an optical circuit-switched fabric the circuits of every instance of that size are set
first, see :func:`instance_graph`), and each collective's cost on it is compiled once into
the linear candidates ``time = a + b * bytes`` of every valid (algorithm, protocol)
(:class:`~netmodel.collectives.model.FabricCostModel`). Every later question, an array of
message sizes over the whole batch grid of any model and phase, is then one numpy
multiply-add and a minimum. :class:`ScenarioCollectives` implements compute's
collective-cost protocol that way; :func:`fabric_search` runs the search with it.

The best TP degree and batch therefore depend on the fabric: a TP-32 instance inside one
switch costs less than one across leaves. By default instances are costed alone (each
sits where the placement puts the first instance; other instances' traffic does not share
its links). With the scenario's ``instances = "all"`` (or ``ScenarioCollectives(scenario,
concurrent=True)``) every instance of the cluster runs the collective at the same time: for
TP degree ``t`` the fabric is cut into ``floor(GPUs / t)`` instances by the placement
policy, links are shared fairly, and the collective takes the slowest instance's time,
each instance running its own (algorithm, protocol), the fastest for it alone, as NCCL's
communicators tune apart and as ``collective --all-groups`` charges it
(:func:`~netmodel.collectives.concurrent.concurrent_own`, compiled once per (op, t), its
instances of one shape kept once; a size array then costs each choice's least line alone
and together, and where instances choose different algorithms, their steps routed
together by :func:`~netmodel.collectives.concurrent.concurrent_cost`).

>>> r = fabric_search("Llama-3-70B", "lite-flat", "decode")
>>> r.best.tp in (8, 16, 32) and r.best.feasible, r.reconfiguration_s
(True, 0.0)
>>> c = ScenarioCollectives("lite-flat")
>>> float(c.collective_time("all-reduce", 1e6, 1))
0.0
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import networkx as nx
import numpy as np

from compute.errors import UserError, known
from compute.hardware import GpuSpec
from compute.models import get_model
from compute.parallel import search_pp
from compute.phases import Slo
from compute.roofline import check_options, check_skew, make_workload
from compute.search import DEFAULT_MAX_BATCH, search
from compute.sharding import check_tp, valid_tp_degrees
from compute.validate import describe
from netmodel.collectives.tuner_plugin import NO_TUNER, tuner_refusal
from netmodel.study.defaults import PARALLELISM
from netmodel.study.scenarios import Scenario, fabric_error, get_scenario

if TYPE_CHECKING:
    from compute.comm import CommLike
    from compute.models import ModelSpec
    from compute.parallel import Parallelism
    from compute.phases import Workload
    from compute.results import InferenceResult, SearchResult
    from compute.roofline import RooflineOptions
    from netmodel.collectives.calibration import Calibration
    from netmodel.collectives.model import FabricCostModel
    from netmodel.study.scenarios import Adjust

__all__ = ["FabricSearch", "ScenarioCollectives", "adjusted", "build_fabric",
           "check_fabric_options", "check_parallelism_name", "fabric_search", "instance_graph",
           "scenario_calibration"]


#: Built fabrics by (spec string, GPU type): a fabric is built once per process.
_BUILT: OrderedDict = OrderedDict()
_BUILT_MAX = 64


def build_fabric(scenario: str | Scenario) -> nx.Graph:
    """The scenario's physical fabric graph, built from its (builder, parameters) with the
    scenario's GPU type object (a user's GPU works), cached by its spec string and GPU type;
    do not modify it. A scenario on a fabric graph (:func:`~netmodel.study.scenarios.
    fabric_scenario`) gives that graph."""
    from topologies.specs import build

    scenario = get_scenario(scenario)
    if scenario.graph is not None:
        return scenario.graph
    try:
        key = (scenario.fabric_spec(), scenario.gpu_spec)
        graph = _BUILT.get(key)
        if graph is None:
            graph = build(*scenario.fabric_params())
    except UserError as exc:
        raise fabric_error(scenario, exc) from None
    if key not in _BUILT:
        _BUILT[key] = graph
        while len(_BUILT) > _BUILT_MAX:
            _BUILT.popitem(last=False)
    else:
        _BUILT.move_to_end(key)
    gpu = scenario.gpu
    first = next(n for n, k in graph.nodes(data="kind") if k == "gpu")
    if graph.nodes[first]["gpu"] != gpu:
        raise UserError(f"scenario {scenario.name!r}: its fabric's GPUs are "
                        f"{graph.nodes[first]['gpu']!r} but the scenario's GPU is {gpu!r}; "
                        f"write gpu = \"$gpu\" (or lite = \"$gpu\") in [fabric]")
    return graph


def adjusted(graph: nx.Graph, adjust: Adjust) -> nx.Graph:
    """A copy of ``graph`` with the scenario's :class:`~netmodel.study.scenarios.Adjust` applied
    (the graph itself when there is nothing to change)."""
    if adjust.is_identity:
        return graph
    out = graph.copy()
    ls, hop, bs = adjust.latency_scale, adjust.hop_latency, adjust.bandwidth_scale
    for _, data in out.nodes(data=True):
        if data["kind"] in ("switch", "ocs"):
            data["latency"] = data["latency"] * ls
    for _, _, data in out.edges(data=True):
        data["latency"] = data["latency"] * ls + hop
        data["bandwidth"] = data["bandwidth"] * bs
    return out


def _ring_pairs(members, repeats):
    from topologies.optical import circuits_for

    ring = circuits_for("ring", list(members)) if len(members) > 2 else [tuple(members)]
    return [p for p in ring for _ in range(repeats)]


def _torus_sides(n: int) -> tuple[int, int] | None:
    """The most square ``a x b == n`` with ``2 <= a <= b``, or None."""
    best = None
    for a in range(2, int(n ** 0.5) + 1):
        if n % a == 0:
            best = (a, n // a)
    return best


def instance_graph(scenario: Scenario, graph: nx.Graph, size: int) -> nx.Graph:
    """The graph an instance of ``size`` GPUs is costed on. For an optical circuit-switched
    fabric: circuits among the GPUs of every instance (the scenario's placement) set to its
    ``circuits`` topology, as many parallel copies as the ports allow (``ring``: ports/2,
    ``torus``: ports/4; fewer where the OCS planes cannot be coloured, e.g. odd rings; a
    torus falls back to a ring for sizes with no 2D factorisation or under 4 ports).
    Other fabrics: ``graph`` itself."""
    if not scenario.is_ocs or size < 2:
        return graph
    from netmodel.collectives.placement import partition
    from topologies.optical import circuits_for, realize
    from topologies.schema import gpu_nodes

    groups = partition(graph, size, scenario.placement, gpus=gpu_nodes(graph))
    ports = min(sum(1 for o in graph.neighbors(g) if graph.nodes[o]["kind"] == "ocs")
                for g in groups[0])
    if ports < 2 and size > 2:
        raise UserError(f"scenario {scenario.name!r}: an instance of {size} GPUs needs 2 "
                        f"optical ports per GPU (a circuit to each ring neighbour); the "
                        f"fabric's GPUs have {ports}")
    sides = _torus_sides(size)
    if scenario.circuits == "torus" and sides and ports >= 4:
        shape = f"torus:{sides[0]}x{sides[1]}"
        options = [[p for gr in groups for p in circuits_for(shape, list(gr)) * r]
                   for r in range(ports // 4, 0, -1)]
    else:
        per_pair = ports if size == 2 else ports // 2
        options = [[p for gr in groups for p in _ring_pairs(gr, r)]
                   for r in range(max(per_pair, 1), 0, -1)]
    last = None
    for pairs in options:
        try:
            return realize(graph, pairs)
        except UserError as exc:
            last = exc
    raise UserError(f"scenario {scenario.name!r}: cannot set circuits for instances of "
                    f"{size} GPUs: {last}")


def scenario_model(scenario: Scenario, graph: nx.Graph, size: int, calibration: Calibration,
                   **routing) -> FabricCostModel:
    """The cost model instances of ``size`` GPUs of ``scenario`` are costed with: its built
    fabric ``graph`` with the circuits set for that size on a circuit-switched fabric and
    its ``[adjust]`` applied, costed with ``calibration`` (:func:`scenario_calibration`)
    and the scenario's placement and algorithm (governing the collectives, not all-to-all
    and send-recv: ``scope="collectives"``) unless ``routing`` gives them (and any other
    :class:`~netmodel.collectives.model.FabricCostModel` keyword: ``algorithms``, ``seed``,
    ``max_transfers``). ``compare`` and ``collective --scenario`` both build it here.
    """
    from netmodel.collectives.model import FabricCostModel

    routing = {"placement": scenario.placement, "algorithm": scenario.algorithm,
               "scope": "collectives", "tuner": scenario.tuner, **routing}
    # the circuits follow the placement in use (the caller's, if given)
    built = adjusted(instance_graph(replace(scenario, placement=routing["placement"]), graph,
                                    size), scenario.adjust)
    return FabricCostModel(built, calibration=calibration, validated=built is graph,
                           **routing)   # a built fabric is checked once


def scenario_calibration(scenario: Scenario) -> Calibration:
    """The collective model's parameters for the scenario: the shipped defaults or the ideal
    ones; with ``links = "scale-up"`` every link is NVLink to them: the NVLink per-step
    latencies and scale-up efficiency on every link, and NCCL's send/recv channels a peer
    by NVLink's rule on every path (``scaleup_everywhere``: two per NVLink of a GPU's links
    into the switches, all planes together, at most 32; not the network's 2 a peer).

    >>> from netmodel.study.scenarios import get_scenario
    >>> cal = scenario_calibration(get_scenario("lite-flat"))
    >>> cal.scaleup_everywhere, cal.scaleout_efficiency == cal.scaleup_efficiency
    (True, True)
    >>> scenario_calibration(get_scenario("h100-dgx")).scaleup_everywhere
    False
    """
    from netmodel.collectives.calibration import Calibration, default_calibration

    cal = Calibration.ideal(0.0) if scenario.calibration == "ideal" else default_calibration()
    if scenario.links == "scale-up":
        up = lambda p: replace(p, step_latency_scaleout=p.step_latency_scaleup)  # noqa: E731
        cal = cal.with_(protocols=tuple(up(p) for p in cal.protocols),
                        in_network=up(cal.in_network),
                        scaleout_efficiency=cal.scaleup_efficiency, scaleup_everywhere=True)
    return cal


def check_parallelism_name(parallelism: object) -> str:
    """``parallelism`` if it is one of :data:`PARALLELISM`, else one line naming it."""
    from compute.errors import known

    if not isinstance(parallelism, str) or parallelism not in PARALLELISM:
        raise UserError(f"parallelism {describe(parallelism)} is unknown; known: "
                        f"{known(PARALLELISM)}")
    return parallelism


def parallel_dimensions(model: ModelSpec, parallelism: str, gpus: int, *,
                        two_batch_overlap: bool = False, mtp_decode: bool = False) -> dict:
    """The search's parallelism arguments for ``model`` on a fabric of ``gpus`` GPUs: empty
    for tensor parallelism alone (``tp``, and ``auto`` for a dense model); expert and
    attention data parallelism within ``gpus`` (``auto`` for a mixture-of-experts model:
    no pipeline, a choice that keeps the search about 3x faster, not an optimum: with
    ``all`` pipelines win where a token's all-to-alls cost more than a stage's hand-off,
    e.g. Mixtral-8x7B prefill on every shipped fabric, TP 1 x PP 2 on ``h100-dgx`` 291.3
    against 280.2 tokens/s/SM and PP 8 on the Lite fabrics 287.9 against 239.8-277.0, and
    DeepSeek-V3 decode on ``lite-direct``, TP 32 x PP 2, 9.96 against 7.69); and with
    ``all`` also pipeline stages (:func:`compute.parallel.search_pp`: 1, 2, 4, 8 up to the
    layers and ``gpus``). With ``two_batch_overlap`` or ``mtp_decode`` (a decode step with
    multi-token prediction; both modelled on one pipeline stage) ``all`` is refused by
    name, where the search would have said 'got PP 8'.

    >>> from compute.models import get_model
    >>> parallel_dimensions(get_model("Llama-3-70B"), "auto", 128)
    {}
    >>> parallel_dimensions(get_model("Mixtral-8x7B"), "auto", 128)["pp"]
    (1,)
    """
    check_parallelism_name(parallelism)
    if parallelism == "all" and two_batch_overlap:
        raise UserError(_ALL_REFUSED)
    if parallelism == "all" and mtp_decode:
        raise UserError(_ALL_REFUSED_MTP)
    if parallelism == "tp" or (parallelism == "auto" and not model.is_moe):
        return {}
    pp = (1,) if parallelism == "auto" else search_pp(model, gpus)
    return {"pp": pp, "ep": True if model.is_moe else None, "attention_dp": True,
            "max_gpus": gpus}


#: What takes the engine options the study refuses (:func:`refuse_unwired_options`).
_WIRED = "compare, sweep, search, evaluate or serve"


def refuse_unwired_options(options: RooflineOptions | None, caller: str,
                           models: Sequence[ModelSpec] = ()) -> None:
    """Refuse ``options.two_batch_overlap``, ``options.dense_mlp_tp`` and
    ``options.mtp_tokens`` where they are not wired (the study: its crossovers, serving,
    reliability and paper parts and its figures are not checked with them; compare and
    sweep take all three, :func:`check_fabric_options`). ``models``: the caller's models,
    named by :func:`refuse_mtp`.

    >>> from compute.roofline import RooflineOptions
    >>> refuse_unwired_options(RooflineOptions(two_batch_overlap=True), "the study")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: options.two_batch_overlap is not modelled by the study; give it to compare, sweep, search, evaluate or serve
    """
    check_options(options)
    refuse_mtp(options, caller, models)
    for name in ("two_batch_overlap", "dense_mlp_tp"):
        value = getattr(options, name, None) if options is not None else None
        if value not in (None, False):
            raise UserError(f"options.{name} is not modelled by {caller}; give it to "
                            f"{_WIRED}")


def refuse_mtp(options: RooflineOptions | None, caller: str,
               models: Sequence[ModelSpec] = ()) -> None:
    """Refuse ``options.mtp_tokens`` (multi-token prediction) where it is not wired (the
    study); compare, sweep, ``infer``, ``search`` and ``serve`` cost it. The line says why:
    where none of ``models`` has an MTP module (the study's own models are dense, its MoE
    part's Mixtral-8x7B has none), that; else that the caller's parts are not checked
    with it.

    >>> from compute.models import get_model
    >>> from compute.roofline import RooflineOptions
    >>> refuse_mtp(RooflineOptions(mtp_tokens=1), "the study", [get_model("Llama-3-70B")])
    Traceback (most recent call last):
    ...
    compute.errors.UserError: options.mtp_tokens 1 is not modelled by the study: none of its models has an MTP module (Llama-3-70B: mtp_modules 0), so no decode step of it could draft; give it to compare, sweep, search, evaluate or serve with a model that has one (DeepSeek-V3)
    """
    if options is None or not options.mtp_tokens:
        return
    k = options.mtp_tokens
    if models and not any(m.mtp_modules for m in models):
        names = ", ".join(dict.fromkeys(m.name for m in models))
        raise UserError(f"options.mtp_tokens {k} is not modelled by {caller}: none of its "
                        f"models has an MTP module ({names}: mtp_modules 0), so no decode "
                        f"step of it could draft; give it to {_WIRED} with a model that "
                        f"has one (DeepSeek-V3)")
    raise UserError(f"options.mtp_tokens {k} is not modelled by {caller} (its crossovers, "
                    f"serving, reliability and paper parts are not checked with it); give it "
                    f"to {_WIRED}")


def check_fabric_options(models: Sequence[ModelSpec], options: RooflineOptions | None,
                         parallelism: str, phases: Sequence[str] = ("prefill", "decode")
                         ) -> None:
    """Refuse, before any search, what :func:`fabric_search` would refuse of the options
    at every model, phase and scenario of a comparison or sweep (a sweep would otherwise
    report each point as refused by its fabric): two-batch overlap with ``parallelism``
    ``"all"`` (pipeline stages; the overlap is modelled on one stage); a dense MLP TP
    degree for a model without dense layers among MoE ones or with ``parallelism``
    ``"tp"`` (no attention DP to run beside); multi-token prediction where ``phases``
    hold decode (prefill is costed as without it) with a model that has no MTP module or
    a windowed one, or with ``parallelism`` ``"all"`` (one stage). ``fabric_search``
    costs the options as ``search`` does with the scenario's collectives.

    >>> from compute.models import get_model
    >>> from compute.roofline import RooflineOptions
    >>> check_fabric_options([get_model("DeepSeek-V3")], RooflineOptions(dense_mlp_tp=1), "tp")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: dense MLP TP 1 runs beside attention DP, which parallelism 'tp' does not search; give parallelism 'auto' or 'all'
    """
    check_options(options)
    check_parallelism_name(parallelism)   # before '== "all"' (a numpy array's truth raised)
    if options is None:
        return
    if options.two_batch_overlap and parallelism == "all":
        raise UserError(_ALL_REFUSED)
    if options.mtp_tokens and "decode" in phases:
        from compute.mtp import check_model

        for m in models:   # the model's own refusal (no MTP module, a windowed model)
            check_model(m)
        if parallelism == "all":
            raise UserError(_ALL_REFUSED_MTP)
    if options.dense_mlp_tp is None:
        return
    if parallelism == "tp":
        raise UserError(f"dense MLP TP {options.dense_mlp_tp} runs beside attention DP, which "
                        f"parallelism 'tp' does not search; give parallelism 'auto' or 'all'")
    from compute.parallel import Parallelism, dense_data_parallel, layout

    for m in models:   # the model's own refusal (no dense layers among MoE ones)
        c = [Parallelism(1, attention_dp=1)]
        if not (m.is_moe and m.dense_layers):
            dense_data_parallel(m, c, layout(m, c), options.dense_mlp_tp)


def _all_refused(what: str, option: str) -> str:
    """The line refusing parallelism 'all' with an option modelled on one pipeline stage."""
    return (f"parallelism 'all' searches pipeline stages, which {what} does not model (one "
            f"stage); give parallelism 'auto' or 'tp' with options.{option}")


_ALL_REFUSED = _all_refused("two-batch overlap", "two_batch_overlap")
_ALL_REFUSED_MTP = _all_refused("MTP decode", "mtp_tokens")


#: Compiled collective costs by network (:func:`network_key`): a comparison of five Lite
#: variants on one fabric routes it twice, not five times.
_SHARED: dict = {}
_SHARED_MAX = 256


def schedule_note(past: Sequence[tuple[str, int]]) -> str:
    """Words for :attr:`ScenarioCollectives.past_budget`."""
    return ("instances = all: where the instances ran different algorithms ("
            + ", ".join(f"{op} on {size} GPUs" for op, size in past)
            + "), working out their schedule in time passed its budget: charged in lockstep "
            "(collective --all-groups: 'lockstep (past the schedule's budget)'), no bound "
            "of the schedule in time either way")


def network_key(scenario: Scenario, calibration: Calibration) -> str:
    """What a scenario's collective costs depend on, spelled as a string: the fabric's
    builder and parameters with the GPU type left out (a GPU's name labels nodes; its
    bandwidths enter the parameters), the placement, algorithm, circuits, instances,
    adjustments, the calibration and the GPU's generation in it. Scenarios with the same
    key cost every collective the same."""
    builder, params = scenario.fabric_params()
    # the GPU's name is left out, its generation is not: it picks the calibration's
    # constants (Calibration.resolve), so an A100 and a copy of it named otherwise differ
    generation = calibration.generation_of(scenario.gpu, scenario.graph)

    def spell(v: object) -> object:
        if isinstance(v, tuple) and len(v) == 2 and isinstance(v[1], dict):
            return (v[0], {k: spell(x) for k, x in v[1].items()})
        if isinstance(v, GpuSpec):
            return "$gpu"
        return v

    parts = (builder, {k: spell(v) for k, v in params.items()}, scenario.placement,
             scenario.algorithm, scenario.circuits, scenario.instances, scenario.adjust,
             calibration, generation and generation.name)
    if scenario.tuner != NO_TUNER:   # the shipped scenarios' keys as they were
        parts += (scenario.tuner,)
    return repr(parts)


def _shared(key: Hashable, make: Callable[[], dict]) -> dict:
    """The process-wide cache of ``key`` (:data:`_SHARED`, oldest dropped past
    :data:`_SHARED_MAX`), made by ``make`` on first use."""
    hit = _SHARED.get(key)
    if hit is None:
        hit = _SHARED[key] = make()
        while len(_SHARED) > _SHARED_MAX:
            _SHARED.pop(next(iter(_SHARED)))
    return hit


class ScenarioCollectives:
    """compute's collective-cost protocol for one scenario (see the module docstring).

    ``collective_time(op, nbytes, group_size)``: seconds for an instance of ``group_size``
    GPUs placed on the scenario's fabric, elementwise over ``nbytes``. An instance the fabric
    cuts apart raises :class:`~compute.errors.UserError`. ``concurrent``: None follows the
    scenario's ``instances``; True (``"all"``) or False (``"alone"``) overrides it, and
    :attr:`scenario` then carries the override. ``scope``: what the scenario's algorithm
    governs (:class:`~netmodel.collectives.model.FabricCostModel`'s): ``"collectives"``
    (a scenario's own, as NCCL_ALGO: all-to-all and send-recv choose as auto where it has
    none), or ``"every-op"`` for an algorithm a caller names
    (:meth:`~netmodel.study.collective_setup.CollectiveSetup.at_once_time`).
    """

    def __init__(self, scenario: str | Scenario, concurrent: bool | None = None, *,
                 scope: str = "collectives"):
        from netmodel.collectives.model import SCOPES

        if not isinstance(scope, str) or scope not in SCOPES:
            raise UserError(f"scope must be one of {known(SCOPES)}, got {describe(scope)}")
        self.scope = scope
        scenario = get_scenario(scenario)
        if concurrent is not None:
            scenario = scenario.with_instances("all" if concurrent else "alone")
        self.scenario = scenario
        self.concurrent = scenario.instances == "all"
        # a tuner with another algorithm is refused where a user gives both (a scenario
        # file, the command line); a caller's algorithm here leaves it idle
        refusal = tuner_refusal(scenario.tuner, instances=scenario.instances)
        if refusal is not None:
            raise UserError(f"scenario {scenario.label!r}: {refusal}")
        #: how many charges of each (op, instance GPUs) fell back past the budget
        self._past_budget: dict[tuple[str, int], int] = {}
        self.graph = build_fabric(self.scenario)
        self.gpus = int(self.graph.graph["gpus"])
        self.calibration = scenario_calibration(self.scenario)
        # scenarios whose networks are the same (GPU types differing only off the network,
        # as Lite and Lite+MemBW do) share their compiled costs
        # (the scope is part of what the costs depend on where it is not the scenario's)
        tail = "" if scope == "collectives" else f" scope {scope}"
        key = network_key(self.scenario, self.calibration) + tail
        # the cost models (routers, compiled steps) do not depend on ``instances``: the
        # instances alone and all at once share them, and only their linear candidates
        # differ
        models = _shared(network_key(self.scenario.with_instances("alone"),
                                     self.calibration) + tail
                         if self.concurrent else key, dict)
        self._models, self._linear = models, _shared(("linear", key), dict)

    def __repr__(self) -> str:
        extra = (", concurrent=True" if self.concurrent else "") + (
            "" if self.scope == "collectives" else f", scope={self.scope!r}")
        return f"ScenarioCollectives({self.scenario.label!r}{extra})"

    def model(self, size: int) -> FabricCostModel:
        """The :class:`~netmodel.collectives.model.FabricCostModel` instances of ``size``
        GPUs are costed with (one per size on a circuit-switched fabric, else shared)."""
        key = size if self.scenario.is_ocs else 0
        hit = self._models.get(key)
        if hit is None:
            if size > self.gpus:
                raise UserError(f"an instance of {size} GPUs does not fit scenario "
                                f"{self.scenario.label!r} ({self.gpus} GPUs)")
            hit = scenario_model(self.scenario, self.graph, size, self.calibration,
                                 scope=self.scope)
            self._models[key] = hit
        return hit

    def group(self, size: int) -> tuple:
        """The GPU nodes of the instance of ``size`` GPUs."""
        return self.model(size).group(int(size))

    def reconfiguration_time(self, size: int) -> float:
        """Seconds to set the circuits of an instance of ``size`` GPUs (0 without OCS);
        paid once per re-provisioning, not per token."""
        if not self.scenario.is_ocs or size < 2:
            return 0.0
        return float(self.model(size).graph.graph.get("reconfiguration_time", 0.0))

    def instances(self, size: int) -> tuple:
        """The instances of ``size`` GPUs whose collectives run together: all
        ``floor(GPUs / size)`` of the placement with ``instances = "all"``, else the
        first one only."""
        m = self.model(size)
        if not self.concurrent:
            return (m.group(int(size)),)
        key = ("instances", int(size))   # asked per configuration by _packed_best
        hit = self._linear.get(key)
        if hit is None:
            from netmodel.collectives.placement import partition

            hit = self._linear[key] = tuple(partition(m.graph, int(size), m.placement,
                                                      seed=m.seed, gpus=m.router.gpu_list))
        return hit

    def linear(self, op: str, size: int) -> tuple[np.ndarray, np.ndarray]:
        """``(a, b)``: the candidates' ``time = a + b * bytes`` of an instance alone
        (compiled once per op, size), shape ``(C,)``; the sizes each runs at (NCCL's
        send/recv: LL or Simple by size) kept beside them for :meth:`collective_time`."""
        key = (op, int(size))
        hit = self._linear.get(key)
        if hit is None:
            from netmodel.collectives.model import candidate_lines

            m = self.model(size)
            with self._whole(op, size):
                a, b, lo, hi = candidate_lines(m, m.candidates(op, m.group(int(size))))
            hit = self._linear[key] = (a, b)
            self._linear[("ranges", op, int(size))] = (lo, hi)
        return hit

    def own(self, op: str, size: int):
        """Every instance at once, each on its own (algorithm, protocol), the fastest for it
        alone (:func:`~netmodel.collectives.concurrent.concurrent_own`, compiled once per
        op, size, as ``collective --all-groups`` charges it), which :meth:`collective_time`
        costs by :func:`~netmodel.collectives.concurrent.concurrent_own_makespan`."""
        key = ("own", op, int(size))
        hit = self._linear.get(key)
        if hit is None:
            from netmodel.collectives.concurrent import concurrent_own

            with self._whole(op, size):
                hit = concurrent_own(self.model(size), self.instances(size), op)
            self._linear[key] = hit
        return hit

    def _whole(self, op: str, size: int):
        """An instance cut apart by the fabric, as one line naming the scenario; and an op
        the scenario's own algorithm does not implement, refused in one naming it."""
        from netmodel.collectives.algorithms import ALGORITHMS, SEND_RECV_OPS, algorithms_for

        algorithm = self.scenario.algorithm
        if algorithm != "auto" and op not in ALGORITHMS[algorithm] and \
                op not in SEND_RECV_OPS:
            raise UserError(f"scenario {self.scenario.label!r} runs every collective with "
                            f"algorithm {algorithm!r}, which has no {op} (algorithms for "
                            f"it: {known(algorithms_for(op))}); to cost it, give the "
                            f"scenario's [collective] algorithm = \"auto\" (the fastest "
                            f"valid one per op and size)")
        return _whole(self.scenario.label, op, size)

    def parts(self, op: str, size: int) -> tuple[np.ndarray, ...]:
        """``(a_fixed, a_fill, b_link, b_reduce, b_least)`` of each candidate line
        (instances alone; :meth:`~netmodel.collectives.model.FabricCostModel.
        candidate_parts`): ``a = a_fixed + a_fill`` and ``b = max(b_link, b_least) +
        b_reduce``; the pipeline fill ``a_fill`` and ``b_link`` are bound by link bandwidth
        (they scale as 1/k when every link's bandwidth is multiplied by k), ``a_fixed`` by
        latency, ``b_reduce`` by the GPUs' reduction rate, ``b_least`` by NCCL's tree
        channel cap (0 where none). Compiled once per (op, size)."""
        if self.concurrent:
            raise UserError("parts() costs instances alone; this scenario runs all at once")
        key = ("parts", op, int(size))
        hit = self._linear.get(key)
        if hit is None:
            m = self.model(size)
            with self._whole(op, size):
                hit = m.candidate_parts(op, m.group(int(size)))
            self._linear[key] = hit
        return hit

    def part_ranges(self, op: str, size: int, scale: float = 1.0
                    ) -> tuple[np.ndarray, np.ndarray] | tuple[None, None]:
        """``(lo, hi)``: each line of :meth:`parts` (same order) runs at the sizes ``lo <
        n <= hi`` with every link's bandwidth times ``scale`` (NCCL's send/recv picks LL or
        Simple by size, its channels from the links' rate:
        :meth:`~netmodel.collectives.cost.CompiledCollective.size_range`); ``(None,
        None)`` where every line runs at every size."""
        from netmodel.collectives.cost import SEND_RECV

        self.parts(op, size)   # refuses what parts refuses
        m = self.model(size)
        cal = m.calibration
        if cal.p2p_ll_threshold <= 0 or not any(o == op for o, _ in SEND_RECV):
            return None, None
        r = [c[4].size_range(c[1], cal, scale) for c in m.candidates(op, m.group(int(size)))]
        lo = np.array([x[0] for x in r], dtype=float)
        hi = np.array([x[1] for x in r], dtype=float)
        return (lo, hi) if (lo > 0).any() or (hi < np.inf).any() else (None, None)

    def collective_time(self, op: str, nbytes: float | np.ndarray,
                        group_size: int) -> np.ndarray:
        from compute.comm import check_group_size, check_nbytes, check_op

        check_op(op)
        n = np.asarray(check_nbytes(nbytes), dtype=float)
        p = check_group_size(group_size)
        if p == 1:
            return np.zeros_like(n)
        if self.concurrent:   # every instance at once, each on its own choice
            from netmodel.collectives.concurrent import concurrent_own_makespan
            from netmodel.collectives.concurrent_time import LOCKSTEP_BUDGET

            said: list = []
            t = concurrent_own_makespan(self.model(p), op, self.own(op, p), n, said)
            if LOCKSTEP_BUDGET in said:
                key = (op, int(p))
                self._past_budget[key] = self._past_budget.get(key, 0) + 1
        elif self.scenario.tuner != NO_TUNER \
                and self.scenario.algorithm == "auto":
            # the tuner's choice, not the fastest line: the model's own costing (after the
            # lines' refusals: an instance cut apart, an op the algorithm lacks)
            self.linear(op, p)
            t = self.model(p).collective_time(op, n, p)
        else:
            from netmodel.collectives.cost import lines_time

            a, b = self.linear(op, p)
            t = lines_time(a, b, *self._linear[("ranges", op, int(p))], n)
        return np.where(n > 0, t, 0.0)

    @property
    def past_budget(self) -> list[tuple[str, int]]:
        """``(op, instance GPUs)`` of every charge of :meth:`collective_time` so far
        where the instances ran different algorithms and working out their schedule in
        time passed its budget: charged in lockstep
        (:data:`~netmodel.collectives.concurrent_time.LOCKSTEP_BUDGET`, as ``collective
        --all-groups`` says), which is no bound of the schedule in time either way."""
        return self.past_budget_since()

    def budget_mark(self) -> dict[tuple[str, int], int]:
        """Where :attr:`past_budget` stands now, for :meth:`past_budget_since`."""
        return dict(self._past_budget)

    def past_budget_since(self, mark: dict[tuple[str, int], int] | None = None
                          ) -> list[tuple[str, int]]:
        """:attr:`past_budget` of the charges made since :meth:`budget_mark` gave ``mark``
        (None: since the start), so that a comparison given collectives an earlier one used
        says only what its own searches were charged."""
        mark = mark or {}
        return sorted(k for k, c in self._past_budget.items() if c > mark.get(k, 0))

    def schedule_notes(self, mark: dict[tuple[str, int], int] | None = None,
                       at: str = "") -> dict[str, str]:
        """The note every command gives (``settings.not_computed`` / a ``note:`` line) for
        the charges since ``mark`` (:meth:`past_budget_since`) that fell back past the
        schedule's budget: ``{"schedule of SCENARIO" + at: words}``, empty where none did
        (or the instances run alone)."""
        past = self.past_budget_since(mark) if self.concurrent else []
        return {f"schedule of {self.scenario.label}{at}": schedule_note(past)} if past else {}

    def moe_all_to_all_time(self, nbytes: float | np.ndarray, group_size: int,
                            copies: int, reach) -> np.ndarray:
        """Seconds for an MoE all-to-all of ``nbytes`` a GPU (``copies`` copies of each
        token, the send buffer of one copy per expert) among ``group_size`` GPUs when it
        crosses the network once a server (DeepEP's normal kernels:
        :mod:`netmodel.collectives.moe`); ``reach(units)``: the expected distinct units
        (servers, GPUs) one token's experts sit on. compute asks it where its prefill
        dispatch and combine run that way (:func:`compute.moe_routing.moe_comm`).

        The time is :func:`netmodel.collectives.moe.once_a_server_time` on the instance's
        cost model, as a fabric's (:meth:`~netmodel.collectives.model.FabricCostModel.
        moe_all_to_all_time`): the smaller of that way's and every copy's
        (:meth:`collective_time` of ``"all-to-all"``), which is taken alone with every
        instance at once (``instances = "all"``; the shared fabric is costed for plain
        all-to-alls only), where the group's scale-up domains differ in size and where
        each GPU is its own (the same traffic)."""
        from compute.comm import check_group_size, check_nbytes

        n = np.asarray(check_nbytes(nbytes), dtype=float)
        p = check_group_size(group_size)
        if p == 1:
            return np.zeros_like(n)

        if self.concurrent:
            return self.collective_time("all-to-all", n, p)
        return once_a_server(self, self.model(p), self.scenario.label, n, p, copies, reach)


def once_a_server(comm, model, label: str, n: np.ndarray, p: int, copies: int,
                  reach) -> np.ndarray:
    """:func:`netmodel.collectives.moe.once_a_server_time` on ``model`` (instances of ``p``
    GPUs) against every copy's all-to-all by ``comm.collective_time``, one line naming the
    scenario ``label`` where an instance is cut apart: the scenario's own comm
    (:class:`ScenarioCollectives`) and the crossovers' re-scoring one
    (:class:`~netmodel.study.crossovers.AdjustedComm`) both cost it so."""
    from netmodel.collectives.moe import once_a_server_time

    def every() -> np.ndarray:
        return comm.collective_time("all-to-all", n, p)

    with _whole(label, "all-to-all", p):
        return once_a_server_time(model, model.group(p), n, copies, reach, every)


@contextmanager
def _whole(label: str, op: str, size: int):
    """An instance of ``size`` GPUs of scenario ``label`` cut apart by the fabric
    (:class:`~netmodel.collectives.cost.GroupCut`), as one line naming the scenario."""
    from netmodel.collectives.cost import GroupCut

    try:
        yield
    except GroupCut as exc:
        raise UserError(f"scenario {label!r}: an instance of {size} GPUs is cut apart "
                        f"({exc}); no {op} can run on it") from None


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
    places the instance), e.g. :class:`~netmodel.study.crossovers.AdjustedComm`: the same
    fabric re-scored with other link bandwidths or per-hop latencies, without routing it
    again. The evaluated grid is dropped unless ``keep_grid`` (a study holds hundreds of
    searches; their grids were most of its memory). ``parallelism`` (see
    :data:`PARALLELISM`): ``"tp"`` searches tensor parallelism only, ``"all"`` also
    pipeline (stages 1, 2, 4, 8 up to the layers), expert and attention data parallelism
    within the fabric's GPUs, ``"auto"`` (default) all of them but the pipeline for
    mixture-of-experts models and tensor parallelism alone for dense ones.
    """
    scenario = get_scenario(scenario)
    coll = collectives or ScenarioCollectives(scenario)
    if coll.scenario != scenario and comm is None:
        raise ValueError("collectives were built for another scenario")
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
                        batch_cap=cap, instances=count, packed_fraction=fraction)


def instance_cap(coll: ScenarioCollectives) -> int | None:
    """The most GPUs an instance of the scenario can span where its circuits limit it (an
    OCS whose GPUs have one optical port wires rings of at most 2), else None."""
    return 2 if coll.scenario.is_ocs and _ocs_ports(coll.graph) < 2 else None


def _ocs_ports(graph: nx.Graph) -> int:
    """The fewest optical ports of any GPU of a circuit-switched fabric."""
    from topologies.schema import gpu_nodes

    return min(sum(1 for o in graph.neighbors(g) if graph.nodes[o]["kind"] == "ocs")
               for g in gpu_nodes(graph))


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

    masked = np.where(grid.feasible, grid.tokens_per_s_per_sm, -np.inf)
    best = None
    for i, c in enumerate(configs):
        if not grid.feasible[i].any():
            continue
        j = int(np.argmax(masked[i]))
        n, share = packing(c)
        score = masked[i, j] * share
        if best is None or score > best[0]:
            best = (score, i, j, n, share)
    _, i, j, n, share = best
    return replace(result, best=grid.result(i, j)), n, share
