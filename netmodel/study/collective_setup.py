"""Which collective model `netmodel collective` and `netmodel costs` cost with: a fabric with
the command's own routing options, or a scenario's own collective model, the one `compare`,
`infer --scenario`, `search --scenario` and :func:`netmodel.api.collective_time` charge.

A scenario's model (:class:`~netmodel.study.scenario_collectives.ScenarioCollectives`) is its
fabric with its ``[adjust]`` applied, on an OCS fabric the circuits its ``circuits`` and
placement set for instances of each size, its calibration
(:func:`~netmodel.study.scenario_fabric.scenario_calibration`: ``calibration`` and ``links``),
and its placement and algorithm; a fabric (a spec, a saved file, or a scenario's physical
fabric alone) is costed with the shipped calibration for its GPUs' generation, placement
contiguous and algorithm auto unless told otherwise.

>>> s = collective_setup(scenario="lite-flat")
>>> cal = s.describe()["calibration"]
>>> s.placement, s.algorithm, cal["name"], cal["links"], cal["generation"], cal["nccl_release"]
('contiguous', 'auto', 'default', 'scale-up', 'hopper', '2.30')
>>> from netmodel.study.scenario_collectives import ScenarioCollectives
>>> m = s.model(8)
>>> m.cost("all-reduce", 2**26, m.group(8)).time == \\
...     float(ScenarioCollectives("lite-flat").collective_time("all-reduce", 2**26, 8))
True
>>> collective_setup(fabric="lite-flat").describe()["calibration"]["links"]
'as-built'
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from compute.errors import UserError, chosen
from compute.validate import describe
from netmodel.collectives.tuner_plugin import NO_TUNER
from netmodel.study.run_words import named

if TYPE_CHECKING:
    from netmodel.collectives.model import FabricCostModel
    from netmodel.study.scenarios import Scenario

__all__ = ["CollectiveSetup", "collective_setup", "routing_description"]


def _algorithms_text(algorithms) -> str:
    """The candidates of auto in words: ``"all"``, ``"nccl"`` or a comma list."""
    if algorithms is None:
        return "all"
    return algorithms if isinstance(algorithms, str) else ",".join(algorithms)


def routing_description(placement: str, algorithm: str, algorithms=None,
                        tuner: str = NO_TUNER, instances: str = "alone") -> dict:
    """How a collective model routes, as every JSON describes it (``collective`` and
    ``costs``' ``collectives``, :meth:`CollectiveSetup.describe`; ``infer``'s and
    ``search``'s for a scenario or fabric): its placement, algorithm, auto's candidates
    (``algorithms``: None, every one, ``"all"``), tuner and instances, every key always.

    >>> routing_description("contiguous", "auto")
    {'placement': 'contiguous', 'algorithm': 'auto', 'algorithms': 'all', 'tuner': 'none', 'instances': 'alone'}
    """
    return {"placement": placement, "algorithm": algorithm,
            "algorithms": _algorithms_text(algorithms), "tuner": tuner, "instances": instances}


def _own_choices(s: Scenario) -> tuple[tuple[str, object], ...]:
    """The choices a scenario's model makes, by the name a caller overrides them
    with: its placement and algorithm, every algorithm a candidate of auto, random
    placement by seed 0 (ScenarioCollectives' FabricCostModel defaults), its tuner, and
    the NCCL release and Simple buffer (bytes) its calibration holds (None: the ideal
    one, which has neither)."""
    from netmodel.study.scenario_fabric import scenario_calibration

    cal = scenario_calibration(s)
    return (("placement", s.placement), ("algorithm", s.algorithm), ("algorithms", "all"),
            ("seed", 0), ("tuner", s.tuner), ("nccl_release", cal.nccl_release or None),
            ("nccl_buffsize", int(cal.simple_buffer) or None))


@dataclass
class CollectiveSetup:
    """A fabric or a scenario, and how collectives on it are costed.

    ``scenario`` is None for a fabric. ``overrides`` maps each choice the caller
    gave against the scenario's (``placement``, ``algorithm``, ``algorithms``, ``seed``,
    ``tuner``, ``nccl_release``, ``nccl_buffsize``) to
    ``(the scenario's, the caller's)``; empty for a fabric or when nothing differs.
    """

    label: str
    source: str                      #: "spec", "file" or "scenario" (fabric_ref.Fabric)
    scenario: Scenario | None
    placement: str
    algorithm: str
    algorithms: object               #: None (every algorithm), "nccl" or a tuple of names
    seed: int
    max_transfers: int
    tuner: str = NO_TUNER            #: the tuner plugin choosing under auto (NO_TUNER: NCCL's)
    #: the run's NCCL_BUFFSIZE (bytes; None: the calibration's, NCCL's 4 MiB default)
    simple_buffer: float | None = None
    #: the NCCL release emulated (``MAJOR.MINOR[.PATCH]``; None: the calibration's, the
    #: newest the data file holds)
    nccl_release: str | None = None
    overrides: dict = field(default_factory=dict)
    _graph: object = None            #: the built fabric (a scenario's before [adjust])
    _models: dict = field(default_factory=dict)

    @property
    def calibration(self):
        """The calibration handed to the cost model: the scenario's, or None (the shipped
        defaults, resolved for the fabric's GPUs); with :attr:`simple_buffer`, that Simple
        buffer in it, with :attr:`nccl_release`, that release's constants."""
        cal = None
        if self.scenario is not None:
            from netmodel.study.scenario_fabric import scenario_calibration

            cal = scenario_calibration(self.scenario)
        if self.simple_buffer is not None:
            from netmodel.collectives.calibration_files import default_calibration

            cal = (cal or default_calibration()).with_(simple_buffer=self.simple_buffer)
        if self.nccl_release is not None:
            from netmodel.collectives.calibration_files import default_calibration

            cal = (cal or default_calibration()).with_(nccl_release=self.nccl_release)
        return cal

    def model(self, size: int) -> FabricCostModel:
        """The cost model a group of ``size`` GPUs is costed with (a scenario on an OCS fabric
        has one per size: its circuits are set for instances of that size)."""
        s = self.scenario
        key = int(size) if s is not None and s.is_ocs else 0
        hit = self._models.get(key)
        if hit is None:
            routing = {"placement": self.placement, "algorithm": self.algorithm,
                       "algorithms": self.algorithms, "seed": self.seed,
                       "max_transfers": self.max_transfers, "tuner": self.tuner}
            if s is None:
                from netmodel.collectives.model import FabricCostModel

                hit = FabricCostModel(self._graph, validated=True,
                                      calibration=self.calibration, **routing)
            else:
                from netmodel.study.scenario_fabric import scenario_model

                if "algorithm" in self.overrides:   # the caller's own: every op, as named
                    routing["scope"] = "every-op"
                hit = scenario_model(s, self._graph, int(size), self.calibration, **routing)
            self._models[key] = hit
        return hit

    def circuits_after(self, size: int, links: Iterable = (), nodes: Iterable = ()):
        """On a scenario's optical circuit-switched fabric, what the survivors of an
        instance of ``size`` GPUs are costed on after ``links`` (``(u, v)`` pairs) and
        ``nodes`` fail, for :func:`~netmodel.collectives.degraded.degraded_cost`'s
        ``circuits``: a callable given the surviving members, returning the degraded cell
        with their circuits, and every other instance's of the size (placed as on the
        healthy cell, its own survivors), re-set as the reliability model re-sets them
        (:func:`~netmodel.study.placed_graph.instance_circuits`: the scenario's ring or
        torus on the planes each still has; ``best``, the faster layout that can be set,
        :func:`~netmodel.study.scenario_fabric.best_layout`), its ``[adjust]`` applied; None
        where the members' circuits cannot be set. None (the failed circuits are dropped,
        nothing re-set) for a fabric, a scenario off an OCS, or where a failed link is a
        circuit (two GPUs), not a part of the cell."""
        s = self.scenario
        if s is None or not s.is_ocs or size < 2:
            return None
        physical = self._graph
        links = [tuple(x) for x in links]
        if any(not physical.has_edge(u, v) for u, v in links):
            return None
        import networkx as nx

        from netmodel.collectives.degraded import degrade
        from netmodel.collectives.placement import partition
        from netmodel.study.placed_graph import instance_circuits
        from netmodel.study.scenario_fabric import adjusted
        from topologies.degrade import mark_degraded
        from topologies.schema import circuit_count, gpu_nodes

        cell = degrade(physical, links=links, nodes=nodes)
        # frozen (read, never changed here): its fibres' record (optical.ocs_cabling) is
        # read once for every instance's circuits, not once an instance
        nx.freeze(cell)
        calibration = self.calibration
        groups = partition(physical, int(size), self.placement, gpus=gpu_nodes(physical))
        # named as degrade names a failed fabric: the healthy one's name, degraded
        name = f"{self.model(size).graph.graph.get('name', 'fabric')} (degraded)"

        def circuits(members):
            members = tuple(members)
            own = instance_circuits(s, cell, members, calibration)
            if own is None:
                return None
            others = [tuple(g for g in group if g in cell) for group in groups
                      if not set(group) & set(members)]
            sets = [own] + [c for m in others if len(m) > 1
                            for c in [instance_circuits(s, cell, m, calibration)]
                            if c is not None]
            out = nx.compose_all(sets) if len(sets) > 1 else own
            out.graph.update(own.graph, name=name, spec="")
            out.graph["circuits"] = circuit_count(out)
            return mark_degraded(adjusted(out, s.adjust))

        return circuits

    def at_once_time(self, op: str, nbytes: float, size: int) -> float | None:
        """Seconds of ``op`` with every instance of ``size`` GPUs at once, each on its own
        (algorithm, protocol), the fastest for it alone or the tuner plugin's where it
        chooses, as compare charges a scenario whose ``instances = "all"``
        (:class:`~netmodel.study.scenario_collectives.ScenarioCollectives`, the caller's
        placement, algorithm and tuner in: an algorithm the caller names governs every op,
        as in :meth:`model`); None for a fabric or instances alone."""
        s = self.scenario
        if s is None or s.instances != "all":
            return None
        fixed = ("algorithms", "seed")   # compare's at-once cost: every candidate, seed 0
        given = [f"{k}={self.overrides[k][1]!r}" for k in fixed if k in self.overrides]
        if given:
            taken = [k for k, _ in _own_choices(s) if k not in fixed]
            raise UserError(f"{' and '.join(given)}: scenario {s.label!r} runs every "
                            f"instance at once (instances = all), costed as compare costs "
                            f"it, with every algorithm a candidate and seed 0; over it "
                            f"only {', '.join(taken[:-1])} and {taken[-1]} are taken")
        from netmodel.study.scenario_collectives import ScenarioCollectives

        own = replace(s, placement=self.placement, algorithm=self.algorithm,
                      tuner=self.tuner)
        scope = "every-op" if "algorithm" in self.overrides else "collectives"
        # this setup's calibration: the scenario's with the buffer and release given here
        return float(ScenarioCollectives(own, scope=scope, calibration=self.calibration)
                     .collective_time(op, float(nbytes), int(size)))

    def describe(self) -> dict:
        """What the costs were made with, for JSON: the scenario (None for a fabric), the
        calibration (its name, which links get the scale-up figures, the GPU generation
        whose constants apply), the routing choices and the caller's overrides."""
        from netmodel.collectives.calibration_files import default_calibration

        s = self.scenario
        cal = (self.calibration or default_calibration()).resolve(self._graph)
        return {"scenario": s.label if s is not None else None,
                "calibration": {"name": s.calibration if s is not None else "default",
                                "links": s.links if s is not None else "as-built",
                                "generation": cal.generation or None,
                                "nccl_release": cal.nccl_release or None},
                **routing_description(self.placement, self.algorithm, self.algorithms,
                                      self.tuner,
                                      s.instances if s is not None else "alone"),
                "overrides": {k: {"scenario": a, "given": b}
                              for k, (a, b) in self.overrides.items()}}

    def note(self) -> str:
        """One line on how the collectives are costed: a scenario's model and its choices
        (the caller's overrides named beside the scenario's); for a scenario named as a
        fabric, that its calibration is not used; empty for a fabric spec or file."""
        s = self.scenario
        if s is None:
            if self.source != "scenario":
                return ""
            return (f"note: scenario {self.label}'s fabric only, costed with the shipped "
                    f"calibration and this command's placement and algorithm; "
                    f"{named('scenario')} {self.label} costs it with the scenario's own "
                    f"collective model, as "
                    f"compare does")
        from netmodel.study.scenarios import NCCL_KEYS

        parts = [f"calibration {s.calibration}, links {s.links}"]
        for key, own in _own_choices(s):
            if key in self.overrides:
                parts.append(f"{key} {self.overrides[key][1]} (given; the scenario's: "
                             f"{own})")
            elif key in ("placement", "algorithm") or (key == "tuner" and own != NO_TUNER) \
                    or (key in NCCL_KEYS and getattr(s, key) is not None):   # set in it
                parts.append(f"{key} {own}")
        if s.instances == "all":
            parts.append(f"instances all: compare charges every instance at once, which "
                         f"collective {named('scenario')} prints; a time here is one group "
                         f"alone")
        how = "with the choices given" if self.overrides else "as compare costs it"
        return f"collectives: scenario {s.label}'s own model, {how} (" + \
            "; ".join(parts) + ")"


def collective_setup(fabric: str | None = None, scenario: str | Scenario | None = None, *,
                     placement: str | None = None, algorithm: str | None = None,
                     algorithms: str | Iterable[str] | None = None, seed: int | None = None,
                     max_transfers: int | None = None, tuner: str | None = None,
                     simple_buffer: float | None = None,
                     nccl_release: str | None = None) -> CollectiveSetup:
    """How collectives are costed on ``fabric`` (a spec, a saved file or a scenario's
    physical fabric, costed with the shipped calibration) or ``scenario`` (its own
    collective model); give one. ``placement``, ``algorithm``, ``algorithms``, ``seed`` and
    ``tuner`` left None take the scenario's (contiguous, auto, every algorithm, 0 and
    :data:`~netmodel.collectives.tuner_plugin.NO_TUNER` for a fabric);
    given for a scenario, they override its choice and
    :attr:`CollectiveSetup.overrides` records both. ``simple_buffer``: the run's
    NCCL_BUFFSIZE in bytes (None: the calibration's); ``nccl_release``: the NCCL release
    emulated (None: the calibration's), refused before anything is built unless the
    shipped data file covers it; given for a scenario, both override its
    ``nccl_buffsize`` and ``nccl_release`` (recorded as ``overrides`` where they differ).
    A tuner beside a named algorithm is refused in one line naming each part as the
    caller's parameter (``tuner='...'``) or the scenario's
    (:func:`~netmodel.collectives.tuner_plugin.tuner_refusal`)."""
    from netmodel.collectives.model import MAX_TRANSFERS
    from netmodel.collectives.tuner_plugin import get_tuner, tuner_names, tuner_refusal

    if (fabric is None) == (scenario is None):
        raise UserError("give a fabric or a scenario (not both)")
    from netmodel.collectives.algorithms import ALGORITHMS
    from netmodel.collectives.placement import PLACEMENTS, check_seed

    # as Python's int (numpy's failed the report's JSON where it overrides a scenario's)
    seed = None if seed is None else check_seed(seed)

    # each choice as read (compute.errors.chosen: ' spread ' is 'spread'), for the setup to
    # print and compare with a scenario's; one that is none is refused as typed, below
    placement = chosen(placement, PLACEMENTS) or placement
    algorithm = chosen(algorithm, ("auto", *ALGORITHMS)) or algorithm
    if tuner is not None:
        get_tuner(tuner)   # an unknown name refused before anything is built
        tuner = chosen(tuner, tuner_names()) or tuner
    from netmodel.collectives.calibration_generations import parse_release, release_text

    if nccl_release is not None:   # so is a release the data file does not cover
        from netmodel.collectives.calibration_files import default_calibration

        default_calibration().releases.check(nccl_release)
    if simple_buffer is not None:   # and a buffer NCCL could not take ('abc': ValueError)
        from netmodel.collectives.calibration import check_simple_buffer

        check_simple_buffer(simple_buffer)
    max_transfers = MAX_TRANSFERS if max_transfers is None else max_transfers
    if scenario is None:
        from netmodel.collectives.routing import routed_builds
        from netmodel.study.fabric_ref import resolve_fabric

        refusal = tuner_refusal(tuner, "auto" if algorithm is None else algorithm)
        if refusal is not None:
            raise UserError(f"tuner={tuner!r} with algorithm={algorithm!r}: {refusal}; drop "
                            f"one, or give tuner={NO_TUNER!r}")
        with routed_builds():   # refused before it is built where no router could index it
            fab = resolve_fabric(fabric)
        return CollectiveSetup(label=fab.label, source=fab.source, scenario=None,
                               placement="contiguous" if placement is None else placement,
                               algorithm="auto" if algorithm is None else algorithm,
                               algorithms=algorithms,
                               seed=0 if seed is None else seed,
                               max_transfers=max_transfers,
                               tuner=NO_TUNER if tuner is None else tuner,
                               simple_buffer=simple_buffer, nccl_release=nccl_release,
                               _graph=fab.graph)
    from netmodel.study.scenario_catalog import get_scenario
    from netmodel.study.scenario_fabric import build_fabric, scenario_calibration

    s = get_scenario(scenario)
    # (the buffer checked above: whole bytes)
    nccl = [f"{k} {v}" for k, v in (("simple_buffer", None if simple_buffer is None else
                                     int(simple_buffer)),
                                    ("nccl_release", None if nccl_release is None else
                                     describe(nccl_release))) if v is not None]
    if nccl and scenario_calibration(s).releases is None:   # as its file's keys are refused
        raise UserError(f"{' and '.join(nccl)}: scenario {s.label}'s calibration "
                        f"{s.calibration!r} holds no NCCL constants (its "
                        f"[collective].nccl_buffsize and [collective].nccl_release are "
                        f"refused too); these apply to calibration 'default' only")
    given = {"placement": placement, "algorithm": algorithm, "seed": seed, "tuner": tuner,
             "algorithms": None if algorithms is None else _algorithms_text(algorithms),
             # as the scenario's keys spell them: MAJOR.MINOR, whole bytes
             "nccl_release": None if nccl_release is None else
             release_text(parse_release(nccl_release)),
             "nccl_buffsize": None if simple_buffer is None else int(simple_buffer)}
    overrides = {key: (own, given[key]) for key, own in _own_choices(s)
                 if given[key] is not None and given[key] != own}
    _refuse_tuner(s, s.tuner if tuner is None else tuner,
                  s.algorithm if algorithm is None else algorithm, overrides)
    return CollectiveSetup(label=s.label, source="scenario", scenario=s,
                           placement=s.placement if placement is None else placement,
                           algorithm=s.algorithm if algorithm is None else algorithm,
                           algorithms=algorithms,
                           seed=0 if seed is None else seed, max_transfers=max_transfers,
                           tuner=s.tuner if tuner is None else tuner,
                           simple_buffer=simple_buffer, nccl_release=nccl_release,
                           overrides=overrides,
                           _graph=build_fabric(s))


def _refuse_tuner(s: Scenario, tuner: str, algorithm: str, overrides: dict) -> None:
    """The tuner rule (:func:`~netmodel.collectives.tuner_plugin.tuner_refusal`) on a
    scenario with the caller's choices, naming each part as the scenario's or the caller's
    parameter (``tuner='...'``), as a scenario file naming both is refused."""
    from netmodel.collectives.tuner_plugin import tuner_refusal

    refusal = tuner_refusal(tuner, algorithm)
    if refusal is None:
        return
    mine = f"tuner={tuner!r}" if "tuner" in overrides else \
        f"scenario {s.label}'s tuner {tuner}"
    if "algorithm" in overrides:
        beside = f"algorithm={algorithm!r}"
    else:
        beside = f"scenario {s.label}'s algorithm {algorithm}"
    raise UserError(f"{mine} with {beside}: {refusal}; drop one, or give "
                    f"tuner={NO_TUNER!r}")
