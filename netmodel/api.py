"""netmodel's Python API: the library's main questions, each one call, accepting objects or
the names the command line takes.

Every function turns names into objects once, here at the boundary (a catalog name, a
``.toml``/``.json`` file or an object: :class:`~compute.hardware.GpuSpec`,
:class:`~compute.models.ModelSpec`, :class:`~netmodel.study.scenarios.Scenario`, a fabric
graph), then calls the library, which takes objects only. The same functions are
importable from the package: ``import netmodel; netmodel.search(...)``.

>>> import netmodel
>>> g = netmodel.build_fabric("single-switch:n=8")
>>> t = netmodel.collective_time(g, "all-reduce", [1e6, 1e9], 8)
>>> t.shape, bool(t[1] > t[0])
((2,), True)
>>> r = netmodel.search("Llama-3-8B", "H100-SXM", "decode", max_batch=64)
>>> r.best.tp, r.best.batch
(1, 64)
>>> netmodel.search("Llama-3-8B", phase="decode", scenario="h100-dgx").best.tp
1
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from compute.comm import CommLike, as_comm
from compute.errors import UserError
from compute.hardware import GpuSpec, get_gpu
from compute.models import ModelSpec, get_model
from compute.phases import PHASES, Slo, check_slo, refuse_unread_tokens
from compute.roofline import check_options
from compute.roofline_options import RooflineOptions
from compute.search import DEFAULT_MAX_BATCH
from compute.validate import describe, is_whole, refuse_unordered

if TYPE_CHECKING:  # pragma: no cover
    import networkx as nx
    from numpy.typing import ArrayLike

    from compute.results import InferenceResult, SearchResult
    from netmodel.study.compare import CompareResult
    from netmodel.study.lite_gpu import FullStudy
    from netmodel.study.scenarios import Scenario
    from netmodel.study.sweep import SweepResult

__all__ = ["build_fabric", "collective_time", "compare", "evaluate", "get_scenario",
           "run_study", "search", "sweep"]

#: A GPU: catalog name, GPU file, or the object.
GpuLike = str | os.PathLike | GpuSpec
#: A model: catalog name, model file or HuggingFace config.json, or the object.
ModelLike = str | os.PathLike | ModelSpec
#: A scenario: shipped name, ``NAME@GPU``, a ``.toml`` file, or the object.
ScenarioLike: TypeAlias = "str | os.PathLike | Scenario"
#: A fabric: spec string, saved ``.json``/``.graphml`` file, ``(builder, parameters)``,
#: a graph, or a scenario (its fabric).
FabricLike: TypeAlias = "str | os.PathLike | tuple[str, Mapping[str, Any]] | nx.Graph | Scenario"


def _ref(x):
    """A path-like reference as the string the catalogs' getters take."""
    return os.fspath(x) if isinstance(x, os.PathLike) else x


def _gpu(x: GpuLike) -> GpuSpec:
    return get_gpu(_ref(x))


def _model(x: ModelLike) -> ModelSpec:
    return get_model(_ref(x))


#: What one item of a parameter taking several is, where not a name, file or object (a
#: model, a scenario, a GPU), as a refusal of the parameter says it.
_ONE = {"phases": "phase (" + " or ".join(map(repr, PHASES)) + ")",
        "networks": "network name",
        "params": "'PATH=LO:HI' or 'PATH=V1,V2' text"}


def _each(x, name: str) -> list:
    """The items of parameter ``name``, which takes several (models, scenarios, GPUs,
    phases, sweep parameters): one name, path or object alone is one item, not its
    characters; None, a number, bytes, a table or what will not iterate (numpy's 0-d array,
    an Iterable by type) is refused naming the parameter and what one item of it is
    (:data:`_ONE`; it raised TypeError from ``list``, or gave a table's keys).

    >>> _each(5, "params")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: params must be one 'PATH=LO:HI' or 'PATH=V1,V2' text, or a list of them, got 5
    """
    from netmodel.study.scenarios import Scenario

    if isinstance(x, str | os.PathLike | GpuSpec | ModelSpec | Scenario):
        return [x]
    refuse_unordered(name, x)   # its order, the rows', would change from run to run
    if not isinstance(x, bytes | bytearray | Mapping) and isinstance(x, Iterable):
        try:
            return list(x)
        except TypeError:
            pass
    raise UserError(f"{name} must be one {_ONE.get(name, 'name, file or object')}, or a list "
                    f"of them, got {describe(x)}")


def _once(name: str, items: list, names: Iterable[str]) -> list:
    """``items`` of parameter ``name``, refused where two of them are one thing (their
    ``names``, matched regardless of case as a catalog matches them), as the command line
    refuses ``--models A,A``: the run merged them (one row for a model given twice) or
    doubled them (two rows for a phase or scenario given twice) without a word.

    >>> _once("phases", ["decode", "Decode"], ["decode", "Decode"])
    Traceback (most recent call last):
    ...
    compute.errors.UserError: phases 'decode,Decode' names one thing more than once ('decode' and 'Decode'); give each once
    """
    from compute.validate import refuse_repeats

    refuse_repeats(name, [str(n).strip() for n in names], str.casefold)
    return items


def _models(x, name: str = "models") -> list[ModelSpec]:
    specs = [_model(m) for m in _each(x, name)]
    return _once(name, specs, (m.name for m in specs))


def _gpus(x, name: str = "gpus") -> list[GpuSpec]:
    specs = [_gpu(g) for g in _each(x, name)]
    return _once(name, specs, (g.name for g in specs))


def _names(x, name: str) -> list:
    """The items of ``name`` (phases, networks: texts), each once."""
    items = _each(x, name)
    return _once(name, items, items)


def _known_keywords(kwargs: Mapping[str, Any], public, inner) -> None:
    """Refuse a keyword argument that neither ``public`` nor ``inner`` (the function its
    ``**kwargs`` go to) takes, naming ``public`` and listing the keywords both signatures
    allow: Python's TypeError blamed ``inner``, a name the caller never used."""
    import inspect

    allowed = list(dict.fromkeys(
        name for f in (public, inner) for name, p in inspect.signature(f).parameters.items()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)))
    unknown = [k for k in kwargs if k not in allowed]
    if unknown:
        raise UserError(f"{public.__name__}() takes no keyword {', '.join(map(repr, unknown))}; "
                        f"allowed: {', '.join(allowed)}")


def get_scenario(scenario: ScenarioLike) -> Scenario:
    """The :class:`~netmodel.study.scenarios.Scenario` a name, ``NAME@GPU`` or file names
    (an object passes through)."""
    from netmodel.study.scenario_catalog import get_scenario as _get

    return _get(_ref(scenario))


def build_fabric(spec: FabricLike, params: Mapping[str, Any] | None = None) -> nx.Graph:
    """The fabric graph ``spec`` describes.

    Parameters
    ----------
    spec : str, path, tuple, networkx.Graph or Scenario
        A spec string (``"fat-tree:k=8,gpu=Lite"``), a saved ``.json``/``.graphml``
        fabric, a builder name with ``params``, a ``(builder, params)`` pair, a graph
        (validated, returned), or a scenario or its name (a copy of its physical fabric,
        yours to change).
    params : mapping, optional
        The builder's keyword arguments when ``spec`` is a builder name; values in SI or
        strings with units, ``gpu`` a name or a :class:`~compute.hardware.GpuSpec`.

    Raises
    ------
    UserError
        An unknown builder or parameter, or a value the builder refuses.

    Examples
    --------
    >>> build_fabric("fat-tree", {"k": 4}).graph["gpus"]
    16
    """
    from netmodel.study.scenario_catalog import is_scenario_ref
    from netmodel.study.scenarios import Scenario
    from topologies.specs import build

    if isinstance(spec, os.PathLike):
        spec = os.fspath(spec)
    if isinstance(spec, tuple):
        if len(spec) != 2 or params is not None:
            raise UserError("a fabric given as a tuple must be (builder, parameters)")
        spec, params = spec
    if params is not None and (isinstance(spec, Scenario) or
                               (isinstance(spec, str) and is_scenario_ref(spec))):
        # a scenario's object built its own fabric, params dropped; its name was "unknown
        # fabric builder 'lite-flat'"
        said = repr(spec.label if isinstance(spec, Scenario) else spec)
        raise UserError(f"with params, the fabric spec must be a builder name, got scenario "
                        f"{said}, which brings its own fabric: give its fabric_spec() with "
                        f"the parameters changed, or drop params")
    if params is None and isinstance(spec, str) and is_scenario_ref(spec):
        spec = get_scenario(spec)
    if isinstance(spec, Scenario):
        from netmodel.study.scenario_fabric import build_fabric as scenario_fabric

        # a copy: the library keeps one graph per scenario for its own use
        return scenario_fabric(spec).copy()
    if params is not None:
        if not isinstance(params, Mapping):
            raise UserError(f"params must be a mapping of the builder's parameters (e.g. "
                            f"{{'k': 8}}), got {describe(params)}")
        return build(spec, dict(params))
    return build(spec)


def collective_time(fabric: FabricLike, op: str, sizes: ArrayLike, group: int | Sequence[str] = 8,
                    *, algorithm: str = "auto", placement: str = "contiguous",
                    algorithms: Sequence[str] | str | None = None) -> np.ndarray:
    """Seconds for one collective on a fabric, elementwise over ``sizes``.

    Parameters
    ----------
    fabric : fabric-like
        See :func:`build_fabric`. A scenario brings its own calibration and adjustments.
    op : str
        One of :data:`compute.comm.OPERATIONS` (``"all-reduce"``, ...).
    sizes : float or array of float
        Message sizes in bytes (nccl-tests' convention: the buffer each rank holds).
    group : int or sequence of GPU node names
        A group size (placed by ``placement``) or the GPU nodes themselves.
    algorithm : str
        ``"auto"`` (the fastest valid algorithm and protocol per size) or one algorithm.
    placement : str
        Where a group given by its size sits (contiguous, rail-aligned, spread, random);
        with a group of GPU nodes, only the default.
    algorithms : sequence of str, a comma list or ``"nccl"``, optional
        The candidates ``auto`` chooses from (default all); refused beside one
        ``algorithm``.

    Returns
    -------
    numpy.ndarray
        Seconds, the shape of ``sizes``.

    Examples
    --------
    >>> t = collective_time("single-switch:n=8", "all-reduce", 1e9, 8, algorithm="ring")
    >>> round(2 * 7 / 8 * 1e9 / float(t) / 1e9)   # busbw in GB/s; nccl-tests: ~370 on 8xH100
    366
    """
    from netmodel.collectives.model import FabricCostModel, check_sizes
    from netmodel.study.scenario_catalog import is_scenario_ref
    from netmodel.study.scenarios import Scenario

    n = check_sizes(sizes, bounded=True, param="sizes")
    if isinstance(fabric, Scenario) or (isinstance(fabric, str) and is_scenario_ref(fabric)):
        from netmodel.study.scenario_collectives import ScenarioCollectives

        if not is_whole(group) or isinstance(group, bool):
            raise UserError(f"on a scenario, group must be a size (an int: instances are "
                            f"placed by the scenario's placement), got {describe(group)}")
        s = get_scenario(fabric)
        # a scenario costs with its own [collective] table: refuse what it would not use
        asked = [f"{k}={v!r}" for k, v, own, default in (
            ("algorithm", algorithm, s.algorithm, "auto"),
            ("placement", placement, s.placement, "contiguous"))
            if v != default and v != own] + \
            ([f"algorithms={algorithms!r}"] if algorithms is not None else [])
        if asked:
            raise UserError(f"on scenario {s.label!r} a collective runs with the scenario's "
                            f"algorithm {s.algorithm!r} and placement {s.placement!r}, not "
                            f"{', '.join(asked)}: pass its fabric spec "
                            f"(get_scenario(...).fabric_spec(), here {s.fabric_spec()!r}) "
                            f"to choose them")
        return np.asarray(ScenarioCollectives(s)
                          .collective_time(op, n, int(group)), dtype=float)
    _refuse_unread_choices(group, algorithm, placement, algorithms)
    graph = build_fabric(fabric)
    model = FabricCostModel(graph, placement=placement, algorithm=algorithm,
                            algorithms=algorithms)
    g = model.group(group)   # a size or nodes; it refuses a string or a float by name
    # the cost model sweeps a flat list of sizes; the answer takes the sizes' shape back
    return np.asarray(model.sweep(op, np.ravel(n), g).time, dtype=float).reshape(n.shape)


def _refuse_unread_choices(group, algorithm, placement, algorithms) -> None:
    """Refuse a choice :func:`collective_time` would not read, as ``netmodel collective``
    does: ``algorithms`` (the candidates ``auto`` chooses among) beside one ``algorithm``,
    and a ``placement`` other than the default for a group given by its GPU nodes (only a
    group given by its size is placed). Both ran as without them. An unknown algorithm or
    placement is left to the cost model's refusal."""
    from compute.errors import chosen
    from netmodel.collectives.algorithms import ALGORITHMS
    from netmodel.collectives.names import PLACEMENTS

    one = chosen(algorithm, ALGORITHMS) if isinstance(algorithm, str) else None
    if algorithms is not None and one is not None:
        raise UserError(f"algorithms={algorithms!r} are the candidates algorithm='auto' "
                        f"chooses among; algorithm={algorithm!r} names one: drop one of the "
                        f"two")
    placed = chosen(placement, PLACEMENTS) if isinstance(placement, str) else None
    if isinstance(group, list | tuple | np.ndarray) and placed not in (None, "contiguous"):
        raise UserError(f"placement={placement!r} places a group given by its size; group "
                        f"names its GPU nodes ({describe(group)}): give group as a size, or "
                        f"drop placement")


def _comm_for(gpu: GpuSpec, scenario, comm):
    if scenario is not None and comm is not None:
        raise UserError("give scenario or comm, not both")
    if scenario is not None:
        from netmodel.study.scenario_collectives import ScenarioCollectives

        return ScenarioCollectives(scenario)
    return as_comm(comm) if comm is not None else None


def _gpu_of(gpu: GpuLike | None, scenario) -> GpuSpec:
    if scenario is not None:   # the caller has swapped in its gpu
        return scenario.gpu_spec
    if gpu is None:
        raise UserError("give gpu (a name, a GPU file or a GpuSpec) or a scenario")
    return _gpu(gpu)


def evaluate(model: ModelLike, gpu: GpuLike | None = None, phase: str = "decode", *,
             tp: int, batch: int, pp: int = 1, ep: int = 1, attention_dp: int = 1,
             expert_skew: float = 1.0, scenario: ScenarioLike | None = None,
             comm: CommLike | None = None, prompt: int | None = None,
             context: int | None = None,
             options: RooflineOptions | None = None) -> InferenceResult:
    """The per-stage roofline of one configuration (model, GPU, TP degree, batch, phase;
    ``pp``, ``ep`` and ``attention_dp`` add pipeline, expert and attention data
    parallelism, ``expert_skew`` the busiest expert group's share of routed tokens over
    the mean, as ``infer`` takes them). ``options.dense_mlp_tp`` needs ``attention_dp > 1``
    (refused otherwise, as ``infer --dense-mlp-tp`` is).

    Collectives cost what ``comm`` says (default: rings over the GPU's scale-up
    bandwidth), or, with ``scenario``, what they cost on the scenario's fabric (the same
    model ``compare`` uses; the GPU is the scenario's unless ``gpu`` swaps it).

    Examples
    --------
    >>> r = evaluate("Llama-3-70B", "H100-SXM", "decode", tp=4, batch=16)
    >>> r.tp, r.latency_name, r.latency > 0
    (4, 'tbt', True)
    >>> m = evaluate("Mixtral-8x7B", "H100-SXM", "decode", tp=8, ep=8, attention_dp=2, batch=64)
    >>> m.gpus, m.ep, m.attention_dp
    (8, 8, 2)
    """
    from compute.evaluate_one import evaluate as _evaluate

    refuse_unread_tokens(phase, prompt, context)
    check_options(options)
    if options is not None and options.dense_mlp_tp is not None and is_whole(attention_dp) \
            and not isinstance(attention_dp, bool) and attention_dp == 1:
        # as infer refuses it: without attention DP the option would be read by nothing
        # (search's own re-evaluations of rows without it keep the dense MLPs over TP)
        raise UserError(f"options.dense_mlp_tp {describe(options.dense_mlp_tp)} runs the "
                        f"dense MLPs beside attention data parallelism, which attention_dp=1 "
                        f"does not have: give attention_dp > 1 or leave dense_mlp_tp None")
    scen = get_scenario(scenario) if scenario is not None else None
    if scen is not None and gpu is not None:   # as search: by the spec, not its name
        scen = scen.with_gpu(_gpu(gpu))
    g = _gpu_of(gpu, scen)
    coll = _comm_for(g, scen, comm)
    # numpy's integers too; a bool or a timedelta64 is no degree (the checks say so)
    if scen is not None and is_whole(tp) and is_whole(pp) and tp * pp > coll.gpus:   # named here, before a collective's group is
        raise UserError(f"an instance of {tp * pp} GPUs (TP {tp} x PP {pp}) does not fit "
                        f"scenario {scen.label!r} ({coll.gpus} GPUs)")
    return _evaluate(_model(model), g, tp, batch, phase, pp=pp, ep=ep,
                     attention_dp=attention_dp, expert_skew=expert_skew, prompt=prompt,
                     context=context, comm=coll, options=options)


def search(model: ModelLike, gpu: GpuLike | None = None, phase: str = "decode", *,
           scenario: ScenarioLike | None = None, comm: CommLike | None = None,
           prompt: int | None = None, context: int | None = None,
           options: RooflineOptions | None = None, slo: Slo | None = None,
           tp: int | Sequence[int] | None = None, parallelism: str = "auto",
           expert_skew: float = 1.0, max_batch: int = DEFAULT_MAX_BATCH) -> SearchResult:
    """The best configuration and batch under the latency SLO.

    With ``scenario`` the search runs on the scenario's fabric (instances up to the
    fabric's size, collectives of the instance placed there): the same search
    ``compare`` runs. Otherwise ``comm`` costs the collectives (default rings over the
    GPU's scale-up bandwidth) and instances span up to the GPU's largest one.
    ``parallelism`` as ``compare`` takes it: ``tp`` (tensor parallelism only), ``auto``
    (also expert and attention data parallelism for a mixture-of-experts model) or
    ``all`` (also pipeline stages); ``expert_skew`` the busiest expert group's share of
    routed tokens over the mean.

    Returns
    -------
    compute.results.SearchResult
        ``best`` (None with ``reason`` when nothing is feasible), ``front``, ``by_tp``.
    """
    from compute.search import search as _search

    refuse_unread_tokens(phase, prompt, context)
    check_slo(slo), check_options(options)
    if scenario is not None:
        from netmodel.study.fabric_search import fabric_search

        scen = get_scenario(scenario)
        if gpu is not None:
            scen = scen.with_gpu(_gpu(gpu))
        if comm is not None:
            raise UserError("give scenario or comm, not both")
        return fabric_search(_model(model), scen, phase, prompt=prompt, context=context,
                             options=options, slo=slo, max_batch=max_batch, tp=tp,
                             parallelism=parallelism, expert_skew=expert_skew).search
    from netmodel.study.search_options import parallel_dimensions

    g, m = _gpu_of(gpu, None), _model(model)
    dims = parallel_dimensions(m, parallelism, g.max_instance,
                               two_batch_overlap=bool(options and options.two_batch_overlap))
    return _search(m, g, phase, prompt=prompt, context=context,
                   comm=_comm_for(g, None, comm), options=options, slo=slo, tp=tp,
                   expert_skew=expert_skew, max_batch=max_batch, **dims)


def compare(models: Iterable[ModelLike], scenarios: Iterable[ScenarioLike] | None = None,
            phases: Iterable[str] = PHASES, *, gpus: Iterable[GpuLike] | None = None,
            options: RooflineOptions | None = None, slo: Slo | None = None,
            prompt: int | None = None, context: int | None = None,
            max_batch: int = DEFAULT_MAX_BATCH, instances: str | None = None,
            parallelism: str = "auto", reliability: bool = False, workers: int | None = None,
            scheduler: str | None = None) -> CompareResult:
    """The best configuration of every model on every scenario's fabric, per phase
    (default: every shipped scenario, both phases); ``gpus`` runs each scenario with each
    of those GPU types instead of its own, the baseline ``h100-dgx`` also on its own H100
    (:func:`~netmodel.study.scenario_catalog.expand_scenarios`; :func:`sweep` alike).
    ``parallelism``: ``auto``, ``tp`` or ``all``;
    ``reliability`` adds the blast-radius columns; ``workers`` / ``scheduler`` run the
    cells on Dask (the ``distributed`` extra), with identical results."""
    from compute.validate import flag
    from netmodel.study.compare import run_compare
    from netmodel.study.scenario_catalog import scenario_names

    flag("compare", "reliability", reliability)   # 'no' or 0.0 was taken as its truth
    check_slo(slo), check_options(options)
    phases = _names(phases, "phases")
    refuse_unread_tokens(phases, prompt, context, "phases")
    refs = [_ref(s) for s in (_each(scenarios, "scenarios") if scenarios is not None
                              else scenario_names())]
    # each read here first; the texts passed on (NAME@GPU with gpus)
    _once("scenarios", refs, [get_scenario(ref).label for ref in refs])   # NAME@GPU
    return run_compare(_models(models), refs, phases,
                       gpus=_gpus(gpus) if gpus is not None else None,
                       options=options, slo=slo, prompt=prompt, context=context,
                       max_batch=max_batch, instances=instances, parallelism=parallelism,
                       reliability=reliability, workers=workers, scheduler=scheduler)


def sweep(scenarios: Iterable[ScenarioLike], params: Iterable[str],
          models: Iterable[ModelLike] = ("Llama-3-70B",), phases: Iterable[str] = ("decode",),
          *, points: int | None = None, **kwargs: Any) -> SweepResult:
    """Tokens/s/SM of scenarios while one or two parameters vary (``params``:
    ``"PATH=LO:HI"`` texts, see :mod:`netmodel.study.sweep`); keyword arguments as
    :func:`compare`."""
    from netmodel.study.sweep import parse_param, run_sweep
    from netmodel.study.sweep_params import refuse_unread_points

    _known_keywords(kwargs, sweep, run_sweep)
    check_slo(kwargs.get("slo")), check_options(kwargs.get("options"))
    phases = _names(phases, "phases")
    refuse_unread_tokens(phases, kwargs.get("prompt"), kwargs.get("context"), "phases")
    if kwargs.get("gpus") is not None:   # a number raised TypeError from deep inside
        kwargs["gpus"] = _gpus(kwargs["gpus"])
    refs = [_ref(s) for s in _each(scenarios, "scenarios")]
    scens = [get_scenario(s) for s in refs]
    _once("scenarios", scens, [s.label for s in scens])   # NAME@GPU: one name, two GPUs run
    texts = _each(params, "params")
    refuse_unread_points(points, texts)
    parsed = [parse_param(p, scens, points) for p in texts]
    # the texts passed on: a NAME@GPU that gpus would replace is refused there
    return run_sweep(refs, parsed, _models(models), phases,
                     **kwargs)


def run_study(models: Iterable[ModelLike] | None = None,
              gpus: Iterable[GpuLike] | None = None, phases: Iterable[str] = PHASES,
              **kwargs: Any) -> FullStudy:
    """``netmodel study lite-gpu`` without writing files: every part of it (the GPU-only
    comparison, the fabric comparison, the paper's assumption, the per-hop latency sweep,
    reliability, cost, crossovers, serving, MoE and packed; see
    :func:`netmodel.study.lite_gpu.run_full_study` for the keyword arguments and
    :class:`~netmodel.study.lite_gpu.FullStudy` for the result)."""
    from netmodel.study.defaults import DEFAULT_GPUS, DEFAULT_MODELS
    from netmodel.study.lite_gpu import run_full_study

    _known_keywords(kwargs, run_study, run_full_study)
    check_slo(kwargs.get("slo")), check_options(kwargs.get("options"))
    if "networks" in kwargs:   # None or a number raised TypeError from deep inside
        kwargs["networks"] = _names(kwargs["networks"], "networks")
    # 'is None', not 'or': an array's truth raised numpy's ValueError
    return run_full_study(_models(DEFAULT_MODELS if models is None else models),
                          _gpus(DEFAULT_GPUS if gpus is None else gpus),
                          _names(phases, "phases"),
                          **kwargs)
