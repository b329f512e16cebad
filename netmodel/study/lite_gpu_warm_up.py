"""What the Lite-GPU study makes once before it forks its MoE part, so that both processes
share it (:func:`warm_before_fork`): the GPUs' prices, the modules a fabric comparison
imports (:data:`FABRIC_MODULES`), and the instances both the MoE part and the fabric
comparison place, with the lines of :data:`SHARED_OPS` on each
(:func:`place_shared_instances`, of the sizes :func:`shared_instance_sizes` guesses); and,
before it forks the blast radius's process, the modules that process and the writing of
the files both import (:func:`import_written_modules`).

:func:`netmodel.study.lite_gpu.run_full_study` runs the MoE part from the start in a forked
process (it needs nothing the other parts compute), which would otherwise make all of this
again while the main process makes it for the fabric comparison. A warm-up changes no
result: everything it makes is kept by the process-wide caches under what it depends on,
and whatever cannot be made (a scenario that cannot be placed, an op it cannot cost) is left
to the parts, which say why in their own words.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from compute.models import ModelSpec
    from netmodel.study.scenarios import Scenario

__all__ = ["FABRIC_MODULES", "SHARED_OPS", "WRITTEN_MODULES", "import_written_modules",
           "place_shared_instances", "shared_instance_sizes", "warm_before_fork"]


#: The modules a fabric comparison imports on first use (routing, costing, placement, the
#: joint splits' solver): :func:`warm_before_fork` imports them before the MoE part is
#: forked, which would import them all again (about 250 modules) while this process does.
FABRIC_MODULES = ("netmodel.study.fabric_search", "netmodel.study.scenario_collectives",
                  "netmodel.study.placed_cost", "netmodel.study.distributed",
                  "netmodel.collectives.model", "netmodel.collectives.moe",
                  "netmodel.collectives.route_joint", "netmodel.collectives.route_search",
                  "netmodel.collectives.route_sharing", "topologies.degrade",
                  "topologies.enclosures", "compute.power", "scipy.optimize",
                  "scipy.sparse.csgraph")


def shared_instance_sizes(scenario: Scenario, moe: ModelSpec,
                          models: Sequence[ModelSpec]) -> list[int]:
    """The instance sizes of ``scenario`` (2 GPUs or more) that both the MoE part (``moe``)
    and the fabric comparison (``models``) are likely to place: TP degrees of ``moe`` and of
    one of ``models`` whose GPUs hold the weights of ``moe`` and of the lightest of
    ``models`` (a smaller instance fits no batch, so its collectives are never costed). A
    guess for :func:`place_shared_instances`, which changes no result.

    >>> from compute.models import get_model
    >>> from netmodel.study.defaults import DEFAULT_MODELS, MOE_MODEL
    >>> from netmodel.study.scenario_catalog import get_scenario
    >>> dense = [get_model(m) for m in DEFAULT_MODELS]
    >>> [shared_instance_sizes(get_scenario(s), get_model(MOE_MODEL), dense)
    ...  for s in ("h100-dgx", "lite-flat")]
    [[2, 4, 8], [8, 16, 32]]
    """
    from compute.sharding import valid_tp_degrees

    gpu = scenario.gpu_spec
    limit = gpu.max_instance
    dense = set().union(*(valid_tp_degrees(m, limit) for m in models)) if models else set()
    least = max(moe.weight_storage_bytes, min((m.weight_storage_bytes for m in models),
                                              default=0.0))
    return [k for k in valid_tp_degrees(moe, limit)
            if k >= 2 and k in dense and k * gpu.hbm_capacity >= least]


#: The collectives a tensor-parallel instance of a dense model and of a mixture of experts
#: both ask at every size (the attention's and MLP's all-reduce, the logits' all-gather:
#: :mod:`compute.stages`): :func:`place_shared_instances` compiles their lines too.
SHARED_OPS = ("all-reduce", "all-gather")


def place_shared_instances(scenarios: Iterable[Scenario], moe: ModelSpec,
                           models: Sequence[ModelSpec]) -> None:
    """Place the instances of :func:`shared_instance_sizes` on each of ``scenarios``
    (:meth:`~netmodel.study.scenario_collectives.ScenarioCollectives.group`: the fabric,
    the placement and, on an optical circuit-switched fabric, the circuits of each size),
    and the candidate lines of :data:`SHARED_OPS` on each
    (:meth:`~netmodel.study.scenario_collectives.ScenarioCollectives.linear`: routes,
    compiled steps, lines), kept by the process-wide caches: :func:`warm_before_fork` does
    it before the MoE part is forked, so that the forked process does not build them again
    while the fabric comparison does here (about 0.4 s of CPU each). It changes no result:
    the costs are kept by what they depend on, and a scenario, size or op that cannot be
    placed or costed is left to the parts, which say why in their own words."""
    from netmodel.study.scenario_collectives import ScenarioCollectives

    for s in scenarios:
        try:
            coll = ScenarioCollectives(s)
            for k in shared_instance_sizes(s, moe, models):
                if k <= coll.gpus:
                    coll.group(k)
                    for op in SHARED_OPS:
                        try:
                            coll.linear(op, k)
                        except Exception:   # noqa: BLE001 - as below, for this op alone
                            continue
        except Exception:   # noqa: BLE001 - a warm-up: the parts meet it and say it
            continue


def warm_before_fork(scenarios: Iterable[Scenario], own: Iterable[Scenario], moe: ModelSpec,
                     models: Sequence[ModelSpec]) -> None:
    """Make in this process what both the MoE part (``moe`` on ``own``, each scenario with
    its own GPU) and the fabric comparison (``models`` on ``scenarios``) use, before the
    MoE part is forked: the prices of the GPUs of ``scenarios`` (every comparison prices
    its GPUs for the cost columns; :func:`~netmodel.study.cost.warm_prices`, with the yield
    model's imports), the :data:`FABRIC_MODULES` (0.2 s of CPU) and the instances
    :func:`place_shared_instances` places on ``own``. It changes no result."""
    from netmodel.study.cost import warm_prices

    warm_prices(dict.fromkeys(s.gpu_spec for s in scenarios))
    for name in FABRIC_MODULES:
        import_module(name)
    place_shared_instances(own, moe, models)


#: The modules the blast radius's forked process imports (about 25: the availability and
#: reliability models) that the main process imports too, to write ``reliability.csv``
#: (its columns) and ``reliability.json``: :func:`import_written_modules` imports them
#: before that process is forked, so that they are imported once (about 0.05 s of CPU, 0.15 s
#: where the sources are compiled at each run) instead of in both processes.
WRITTEN_MODULES = ("netmodel.study.reliability_summary", "netmodel.study.availability_kinds")


def import_written_modules() -> None:
    """Import :data:`WRITTEN_MODULES` (before the blast radius's process is forked, by
    :func:`netmodel.study.lite_gpu.run_full_study`). It changes no result."""
    for name in WRITTEN_MODULES:
        import_module(name)
