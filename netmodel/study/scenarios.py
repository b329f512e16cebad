"""Cluster scenarios: a GPU type, a fabric (builder and parameters) and how model instances
are placed on it and their collectives run, as TOML files users can read, edit and write.

Its file format, read and written, is :mod:`netmodel.study.scenario_files`'.

``links``: the collective model charges NCCL's NVLink per-step latencies and the scale-up
link efficiency on scale-up links (GPU-GPU and tier-0 switches) and its network figures on
the rest (:mod:`netmodel.collectives.calibration`). ``"as-built"`` keeps that split; ``"scale-up"``
charges the scale-up figures on every link, for fabrics that stand in for the scale-up
domain (co-packaged optics wired to the GPU package, no NIC or proxy thread in the path).

``nccl_release`` and ``nccl_buffsize`` (``calibration = "default"`` only; leave them out for
the library's defaults) are what ``netmodel collective --nccl-release/--nccl-buffsize``
set for one run, here for every command that costs the scenario: the NCCL release whose
constants apply (``MAJOR.MINOR[.PATCH]`` as a string, in the range the generations file
covers: :meth:`netmodel.collectives.calibration_generations.Releases.check`) and the bytes of a
channel's Simple buffer (a whole number, :func:`netmodel.collectives.calibration.
check_simple_buffer`). The scenario's calibration holds them
(:func:`netmodel.study.scenario_fabric.scenario_calibration`).

``instances``: ``"alone"`` costs each model instance by itself, placed where the placement
puts the first one, with no other traffic on its links. ``"all"`` cuts the fabric into
groups of each collective's size (``floor(GPUs / size)`` of them) by the placement and runs
the collectives of every one at the same time (the same layer everywhere), sharing links
fairly: a collective takes the
slowest instance's time, each instance on its own algorithm, the fastest for it alone
(:mod:`netmodel.collectives.concurrent`).

A scenario is swapped to another GPU with :meth:`Scenario.with_gpu` or, where a name is
typed, ``NAME@GPU`` (``lite-flat@Lite+BW``); the fabric's ``$gpu``, ``$scaleup``,
``$scaleout``, ``$reduction`` and ``$nvlinks`` then follow the new GPU.

>>> from netmodel.study.scenario_catalog import get_scenario
>>> s = get_scenario("lite-flat@Lite+NetBW")
>>> s.name, s.gpu, s.label
('lite-flat', 'Lite+NetBW', 'lite-flat@Lite+NetBW')
>>> s.fabric_spec().startswith("flat:n=128,planes=4,radix=144,gpu=Lite+NetBW,bandwidth=225")
True
"""

from __future__ import annotations

import json
import math
import re
import weakref
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from compute.errors import UserError, known, lookalike
from compute.hardware import GpuSpec, get_gpu
from compute.memo import Memo
from compute.validate import (
    choice,
    describe,
    limits,
    number,
    range_words,
    read_number,
    string,
)
from netmodel.collectives.tuner_plugin import NO_TUNER, get_tuner
from netmodel.study.fabric_table import (
    MAX_TEXT,
    canonical_table,
    check_table,
    copy_table,
    format_value,
    param_paths,
    set_param,
    table_params,
    table_spec,
)

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["ADJUST_KEYS", "BEST", "CALIBRATIONS", "CIRCUITS", "INSTANCES", "LINKS", "NCCL_KEYS",
           "Adjust", "Scenario", "adjust_allowed", "fabric_scenario", "graph_digest"]

LINKS = ("as-built", "scale-up")
CALIBRATIONS = ("default", "ideal")
#: ``circuits = "best"``: per instance size the faster of the layouts before it that the
#: cell can set (:func:`netmodel.study.scenario_fabric.layout_model`).
BEST = "best"
CIRCUITS = ("ring", "torus", BEST)
#: The optional [collective] keys that set NCCL's own settings (None: the library's).
NCCL_KEYS = ("nccl_release", "nccl_buffsize")
#: How instances share the fabric: each costed by itself, or all at once.
INSTANCES = ("alone", "all")
#: The optional [adjust] keys and their defaults.
ADJUST_KEYS = {"latency_scale": 1.0, "hop_latency": 0.0, "bandwidth_scale": 1.0}
#: Their allowed ranges (minimum, maximum, unit): generous bounds that refuse typos and
#: absurd values, never a plausible what-if (a bandwidth scaled by 1e12 stands in for an
#: ideal network); a hop's added latency is a switch or link latency, so it takes
#: limits.toml's [quantity.link_latency] (0 to 1 ms: 'hop_latency = 330' is a misplaced
#: unit, as a builder's latency 330 is).
ADJUST_RANGES = {"latency_scale": (0.0, 1e6, ""),
                 "hop_latency": (limits("quantity")["link_latency"].minimum,
                                 limits("quantity")["link_latency"].maximum, "s"),
                 "bandwidth_scale": (1e-9, 1e15, "")}


@dataclass(frozen=True)
class Adjust:
    """Changes applied to every link and switch of the built fabric (for what-if sweeps).

    ``latency_scale`` multiplies link and switch latencies (0 makes them vanish),
    ``hop_latency`` adds seconds to every link, ``bandwidth_scale`` multiplies every link's
    bandwidth.
    """

    latency_scale: float = 1.0
    hop_latency: float = 0.0
    bandwidth_scale: float = 1.0

    def __post_init__(self):
        for key in ADJUST_KEYS:
            lo, hi, unit = ADJUST_RANGES[key]
            object.__setattr__(self, key, number("", f"adjust.{key}", getattr(self, key),
                                                 minimum=lo, maximum=hi, unit=unit))

    @property
    def is_identity(self) -> bool:
        """True when nothing is changed."""
        return (self.latency_scale, self.hop_latency, self.bandwidth_scale) == (1.0, 0.0, 1.0)


#: :meth:`Scenario.fabric_spec` of a table, by the table (a scenario's, which it does not
#: change: frozen) and the GPU it is resolved for; at most 1,024
_SPECS = Memo(1024)


@dataclass(frozen=True)
class Scenario:
    """A GPU type on a fabric, with placement and collective settings (see the module doc).

    ``fabric`` holds the builder name and its arguments as written in the file (``$gpu``
    and ``$scaleup``-style tokens unresolved; builder names as the registry spells them,
    read as a spec string reads one: ``Rail_Optimized`` is ``rail-optimized``);
    :meth:`fabric_spec` resolves them.
    """

    name: str
    description: str
    gpu: str                  #: the GPU type's name (display, labels)
    fabric: dict
    placement: str = "contiguous"
    algorithm: str = "auto"
    links: str = "as-built"
    calibration: str = "default"
    circuits: str | None = None
    instances: str = "alone"
    #: The tuner choosing under ``auto`` (:func:`~netmodel.collectives.tuner_plugin.
    #: tuner_names`): :data:`~netmodel.collectives.tuner_plugin.NO_TUNER` (``"none"``, which
    #: None is read as) is no tuner, the model's own ``auto`` (the fastest of its own costs);
    #: ``"nccl"`` emulates NCCL's tuner; ``PLUGIN:SET`` a tuner plugin's choices.
    tuner: str = NO_TUNER
    #: The NCCL release whose constants apply (``MAJOR.MINOR``; None: the calibration's,
    #: the newest the generations file holds), checked by
    #: :meth:`~netmodel.collectives.calibration_generations.Releases.check`.
    nccl_release: str | None = None
    #: ``NCCL_BUFFSIZE``, a channel's Simple buffer in bytes (None: the calibration's,
    #: NCCL's 4 MiB), checked by :func:`~netmodel.collectives.calibration.check_simple_buffer`.
    nccl_buffsize: int | None = None
    adjust: Adjust = field(default_factory=Adjust)
    sources: dict = field(default_factory=dict)
    #: The GPU type itself (default: the catalog's ``gpu``); a user's GPU file works too.
    gpu_spec: GpuSpec | None = None
    #: Where ``gpu`` was read from when it is a file (written back by :meth:`to_toml`).
    gpu_file: str | None = field(default=None, compare=False)
    #: The GPU the scenario came with, before :meth:`with_gpu` swapped it (None: never
    #: swapped); what "each scenario with its own GPU" means for a user's scenario file.
    home_gpu: str | None = field(default=None, compare=False)
    #: The file the scenario was read from (None: shipped or made in code), which a fabric
    #: value its builder refuses is named with (:func:`fabric_error`); a :meth:`with_param`
    #: copy adds the value it set (``s.toml with fabric.n = 0``).
    source: str | None = field(default=None, compare=False)
    #: A user's fabric graph the scenario runs on instead of a builder table (a saved
    #: ``.json``/``.graphml`` fabric, a spec's build): :func:`fabric_scenario` makes one;
    #: ``fabric`` is then empty. Compared by identity (do not modify it).
    graph: nx.Graph | None = field(default=None, repr=False)
    #: The saved fabric file ``graph`` was read from, as the scenario file wrote it
    #: (``fabric = "FILE"``: relative to that file's folder; written back by :meth:`to_toml`).
    fabric_file: str | None = field(default=None, compare=False)

    def __post_init__(self):
        # None is no tuner (the model's own auto), as tuner_refusal and get_tuner read it;
        # another name is refused by get_tuner's own check (one line listing the known ones)
        if self.tuner is None:
            object.__setattr__(self, "tuner", NO_TUNER)
        get_tuner(self.tuner)
        self._check_made_in_code()
        release, buffsize = _nccl_keys(f"scenario {self.name!r}", self.nccl_release,
                                       self.nccl_buffsize, self.calibration)
        object.__setattr__(self, "nccl_release", release)
        object.__setattr__(self, "nccl_buffsize", buffsize)
        spec = self.gpu_spec if self.gpu_spec is not None else get_gpu(self.gpu)
        object.__setattr__(self, "gpu_spec", spec)
        object.__setattr__(self, "gpu", spec.name)
        if release is not None:   # a release before NCCL supported the GPU: refused now
            from netmodel.collectives.calibration_files import default_calibration

            try:
                default_calibration().with_(nccl_release=release).for_gpu(spec.name,
                                                                          self.graph)
            except UserError as exc:
                raise UserError(f"scenario {self.name!r}: [collective].{exc}") from None

    def _check_made_in_code(self) -> None:
        """The choices and tables a scenario file's reader checks, checked again for a
        Scenario made in code (docs/api.md: every function takes one): ``links
        'as_built'`` ran as built, ``calibration 'x'`` the default and ``instances 'аll'``
        each instance alone, and a ``fabric`` of no builder or an ``adjust`` of another
        type raised KeyError or AttributeError where they were used; a name of two lines
        or of none, or a number, printed as it was."""
        # a name on one line (a newline broke every printed table), as fabric_scenario's
        if not string("Scenario", "name", self.name, max_length=MAX_TEXT).strip():
            raise UserError(f"Scenario: name must be non-empty text, got {describe(self.name)}")
        where = f"scenario {self.name!r}"
        string(where, "description", self.description, max_length=MAX_TEXT)
        for key, allowed in (("links", LINKS), ("calibration", CALIBRATIONS),
                             ("instances", INSTANCES)):
            object.__setattr__(self, key, _choice(where, key, getattr(self, key), allowed))
        if self.circuits is not None:
            object.__setattr__(self, "circuits", _choice(where, "circuits", self.circuits,
                                                         CIRCUITS))
        if not isinstance(self.adjust, Adjust):
            raise UserError(f"{where}: adjust must be a netmodel.study.scenarios.Adjust, got "
                            f"{describe(self.adjust)}")
        # the objects and paths a copy made by dataclasses.replace may be given: a GPU
        # name for gpu_spec or a spec for graph raised AttributeError, a list for
        # fabric_file TypeError (unhashable) where the fabric was built
        self._check_kept_fields(where)
        if self.graph is None and not (isinstance(self.fabric, dict)
                                       and isinstance(self.fabric.get("builder"), str)):
            raise UserError(f"{where}: fabric must be a table naming its builder ({{'builder': "
                            f"'fat-tree', 'k': 8}}), or graph a fabric graph, got "
                            f"{describe(self.fabric)}")
        if self.graph is None:   # its builder names as a spec string reads them
            object.__setattr__(self, "fabric", canonical_table(self.fabric))

    def _check_kept_fields(self, where: str) -> None:
        """``gpu_spec`` a GpuSpec, ``graph`` a networkx graph, ``sources`` a table and the
        paths and names kept beside them text, or None where None is theirs."""
        import networkx as nx

        for key, cls, what in (("gpu_spec", GpuSpec, "a compute.hardware.GpuSpec (e.g. "
                                                      "get_gpu('Lite'))"),
                               ("graph", nx.Graph, "a networkx.Graph (e.g. a fabric's "
                                                   "build('ring:n=8'))"),
                               *((key, str, "text") for key in ("gpu_file", "home_gpu",
                                                               "source", "fabric_file"))):
            if not isinstance(getattr(self, key), cls | type(None)):
                raise UserError(f"{where}: {key} must be {what} or None, got "
                                f"{describe(getattr(self, key))}")
        if not isinstance(self.sources, dict):
            raise UserError(f"{where}: sources must be a table (a dict), got "
                            f"{describe(self.sources)}")

    @property
    def label(self) -> str:
        """``name@gpu``: unique among scenarios swapped to several GPUs. A fabric graph's
        scenario named by a spec that names its GPU is that spec alone (its GPU is the
        graph's, never swapped): ``torus:dims=2x2x2,gpu=Lite``, not ``...,gpu=Lite@Lite``;
        so is an OCS spec's scenario (:func:`~netmodel.study.reliability_fabric.
        fabric_cluster_scenario`), which builds its cabling from the spec's arguments.

        >>> from topologies.specs import build
        >>> fabric_scenario(build("ring:n=4,gpu=Lite"), "ring:n=4,gpu=Lite").label
        'ring:n=4,gpu=Lite'
        >>> fabric_scenario(build("ring:n=4"), "ring:n=4").label
        'ring:n=4@H100-SXM'
        """
        if (self.graph is not None or ":" in self.name) and self.fabric_file is None \
                and re.search(
                rf"[:,]\s*(?:gpu|lite)\s*=\s*{re.escape(self.gpu)}\s*(?:,|$)", self.name,
                re.IGNORECASE):   # a GPU is named in any case (gpu=lite builds Lites)
            return self.name
        return f"{self.name}@{self.gpu}"

    @property
    def builder(self) -> str:
        """The fabric builder's spec name (a fabric graph's builder, or ``""`` for a
        hand-made one)."""
        if self.graph is not None:
            return str(self.graph.graph.get("builder") or "")
        return self.fabric["builder"]

    @property
    def is_ocs(self) -> bool:
        """Whether the fabric is optical circuit-switched (circuits set per instance)."""
        return self.builder == "ocs"

    @property
    def fixed_gpu(self) -> bool:
        """Whether the scenario runs on a fabric graph (a saved fabric file, a user's
        fabric) whose GPUs are part of it, so it runs with its own GPU alone (a study does
        not swap it onto other GPUs)."""
        return self.graph is not None

    def with_gpu(self, gpu: str | GpuSpec) -> Scenario:
        """The same scenario with another GPU type (a :class:`~compute.hardware.GpuSpec`, a
        catalog name or a GPU file); the fabric's tokens follow it."""
        spec = get_gpu(gpu)
        if self.fabric_file is not None and spec.name != self.gpu:
            raise UserError(f"scenario {self.name!r} runs on the fabric file "
                            f"{self.fabric_file!r}, whose GPUs are {self.gpu!r}, not "
                            f"{spec.name!r}: export a fabric of {spec.name} GPUs for it")
        if self.graph is not None and spec.name != self.gpu:
            raise UserError(f"fabric {self.name!r} is built for GPU {self.gpu!r}, not "
                            f"{spec.name!r}: its GPUs are part of the graph; give a spec "
                            f"with gpu={spec.name} or a scenario")
        path = gpu if isinstance(gpu, str) and spec.name != gpu else None
        return replace(self, gpu=spec.name, gpu_spec=spec, gpu_file=path,
                       home_gpu=self.home_gpu or self.gpu)

    def with_instances(self, instances: str) -> Scenario:
        """The same scenario with instances costed ``"alone"`` or ``"all"`` at once."""
        return replace(self, instances=_choice(f"scenario {self.name!r}", "instances",
                                               instances, INSTANCES))

    def with_param(self, path: str, value: object) -> Scenario:
        """A copy with one parameter set: ``fabric.KEY``, ``fabric.base.KEY`` (a builder
        argument) or ``adjust.KEY``. See :func:`netmodel.study.sweep.parameters` for the list."""
        if not isinstance(path, str):   # 5 raised AttributeError ('split'), b'..' TypeError
            raise UserError(f"path must be a parameter's name as text (fabric.KEY, "
                            f"fabric.base.KEY or adjust.KEY), got {describe(path)}")
        parts = path.split(".")
        if self.graph is not None and parts[0] == "fabric":
            raise UserError(f"unknown parameter {path!r}: fabric {self.name!r} is a graph, "
                            f"with no builder parameters")
        if parts[0] == "adjust" and len(parts) == 2:
            if parts[1] not in ADJUST_KEYS:
                raise UserError(f"unknown parameter {path!r}"
                                f"{lookalike(path, ['adjust.' + k for k in ADJUST_KEYS])}; "
                                f"known adjust parameters: "
                                f"{known('adjust.' + k for k in ADJUST_KEYS)}")
            if isinstance(value, str):   # a number as typed, by the one number grammar
                number = read_number(path, value, allowed=_allowed_range(parts[1]))
                if number is None:
                    raise UserError(f"{path} value {describe(value)} is not a number")
                value = number
            # Adjust checks the value (a bool, None or a list named, not float()'s
            # TypeError, and True not read as 1.0)
            return replace(self, adjust=replace(self.adjust, **{parts[1]: value}))
        if parts[0] == "fabric" and len(parts) >= 2:
            paths = param_paths(self.fabric, "fabric")
            if path not in paths:
                raise UserError(f"unknown parameter {path!r} for scenario {self.name!r}"
                                f"{lookalike(path, paths)}; known: {known(paths)}")
            fabric = set_param(self.fabric, parts[1:], value, path)
            check_table(fabric, f"scenario {self.name!r}", "fabric")
            # the file's other values are still the file's: name it, with the value set
            return replace(self, fabric=fabric, source=None if self.source is None else
                           f"{self.source} with {path} = {format_value(value)}")
        raise UserError(f"unknown parameter {path!r}; parameters are fabric.KEY, "
                        f"fabric.base.KEY or adjust.KEY")

    def fabric_spec(self) -> str:
        """The topologies spec string of the fabric, tokens resolved for this GPU (for
        display and cache keys; :meth:`fabric_params` is what builds it). A fabric graph's
        own spec, or its name for a hand-made one; a saved fabric file's path as the
        scenario file writes it. A table's is worked out once per table and GPU (a
        comparison asks it of every row, twice: the row's fabric and its cost's cache
        key)."""
        if self.fabric_file is not None:
            return self.fabric_file
        if self.graph is not None:
            return str(self.graph.graph.get("spec") or self.name)
        key = (id(self.fabric), self.gpu_spec)
        hit = _SPECS.get(key)
        if hit is None or hit[0] is not self.fabric:
            # the table kept with its spec: its id stays its own
            hit = _SPECS.put(key, (self.fabric, table_spec(self.fabric, self.gpu_spec)))
        return hit[1]

    def fabric_params(self) -> tuple[str, dict]:
        """``(builder, parameters)`` of the fabric, tokens resolved: ``$gpu`` is the
        :class:`~compute.hardware.GpuSpec` itself, ``$scaleup`` its bandwidth in bytes/s, a
        nested table a ``(builder, parameters)`` pair. A fabric graph has none: it is
        ``("graph", {"digest": ...})``, a digest of its nodes, links and attributes (what
        its collective costs depend on, as a key)."""
        if self.graph is not None:
            return "graph", {"digest": graph_digest(self.graph)}
        return table_params(self.fabric, self.gpu_spec)

    def to_dict(self) -> dict:
        """The TOML layout as a plain dict (``[adjust]`` only where it changes something)."""
        if self.graph is not None and self.fabric_file is None:
            raise UserError(f"scenario {self.name!r} runs on a fabric graph, which no "
                            f"[fabric] table holds; save the fabric with netmodel topology "
                            f"export")
        collective = {"placement": self.placement, "algorithm": self.algorithm,
                      "links": self.links, "calibration": self.calibration}
        if self.circuits is not None:
            collective["circuits"] = self.circuits
        if self.instances != "alone":
            collective["instances"] = self.instances
        if self.tuner != NO_TUNER:
            collective["tuner"] = self.tuner
        for key in NCCL_KEYS:   # only where set: the library's defaults otherwise
            if getattr(self, key) is not None:
                collective[key] = getattr(self, key)
        d = {"name": self.name, "description": self.description,
             "gpu": self.gpu_file or self.gpu,
             "fabric": self.fabric_file if self.fabric_file is not None else
             copy_table(self.fabric), "collective": collective}
        if not self.adjust.is_identity:
            d["adjust"] = {k: getattr(self.adjust, k) for k in ADJUST_KEYS}
        d["sources"] = dict(self.sources)
        return d

    def to_toml(self) -> str:
        """TOML text that :func:`~netmodel.study.scenario_files.load_scenario_text` reads back
        into an equal scenario."""
        d = self.to_dict()
        lines = [f"{k} = {_toml_value(d[k])}" for k in ("name", "description", "gpu")]
        if isinstance(d["fabric"], str):   # a saved fabric file: a key, before the tables
            lines.append(f"fabric = {_toml_value(d.pop('fabric'))}")
        if self.home_gpu and self.home_gpu != self.gpu:
            # the text was written for the home GPU; a reader of the swapped one is told so
            lines.insert(0, f"# {self.name} swapped from {self.home_gpu} to {self.gpu}: the "
                            f"description and [sources] describe {self.home_gpu}; the "
                            f"fabric's $ tokens follow {self.gpu}")
        for table in ("fabric", "collective", "adjust", "sources"):
            if table in d:
                lines += _toml_table(table, d[table])
        return "\n".join(lines) + "\n"


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else ("inf" if v > 0 else "-inf")
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    raise UserError(f"cannot write {v!r} to TOML (allowed: strings, numbers, booleans)")


def _toml_table(name: str, table: dict) -> list[str]:
    lines = ["", f"[{name}]"]
    nested = []
    for k, v in table.items():
        if isinstance(v, dict):
            nested.append((k, v))
        else:
            lines.append(f"{k} = {_toml_value(v)}")
    for k, v in nested:
        lines += _toml_table(f"{name}.{k}", v)
    return lines


# ------------------------------------------------------------------ loading

def _choice(where: str, key: str, value, allowed) -> str:
    return choice(where, key, value, allowed)


def _nccl_keys(where: str, release: object, buffsize: object,
               calibration: str) -> tuple[str | None, int | None]:
    """A scenario's ``nccl_release`` and ``nccl_buffsize`` (None: the calibration's) as
    kept: the release as ``MAJOR.MINOR``, the buffer as whole bytes; refused in one line
    naming ``where``, the key and the value unless the library's own checks take them, and
    on the ideal calibration (which holds no NCCL constants)."""
    from netmodel.collectives.calibration import check_simple_buffer
    from netmodel.collectives.calibration_files import default_calibration
    from netmodel.collectives.calibration_generations import release_text

    # "[collective].KEY": a file's key, which the command line does not spell as its flag
    # (netmodel.cli.refusals.flags_for_parameters)
    at = f"{where}: [collective]."
    if release is not None:
        if isinstance(release, (int, float)) and not isinstance(release, bool):
            raise UserError(f"{at}nccl_release must be a string (\"2.26\"), got "
                            f"{describe(release)}: a number drops a trailing zero (2.20 "
                            f"is 2.2)")
        release = release_text(default_calibration().releases.check(
            release, f"{at}nccl_release"))
    if buffsize is not None:
        check_simple_buffer(buffsize, f"{at}nccl_buffsize")
        buffsize = int(buffsize)
    if calibration == "ideal":
        given = [f"[collective].{k} {describe(v)}" for k, v in
                 zip(NCCL_KEYS, (release, buffsize), strict=True) if v is not None]
        if given:
            raise UserError(f"{where}: {' and '.join(given)}: calibration \"ideal\" holds no NCCL "
                            f"constants; these apply to calibration \"default\" only")
    return release, buffsize


def adjust_allowed(key: str) -> str | None:
    """What the ``[adjust]`` key ``key`` must be (its :data:`ADJUST_RANGES`, in
    :func:`~compute.validate.range_words`' words), for a number below the smallest a file
    or a sweep value holds; None where ``key`` is no adjust key.

    >>> adjust_allowed("bandwidth_scale"), adjust_allowed("latency_scale")
    ('a number from 1e-09 to 1,000,000,000,000,000', 'a number from 0 to 1,000,000')
    """
    if key not in ADJUST_RANGES:
        return None
    least, most, unit = ADJUST_RANGES[key]
    return range_words(least, most, unit=unit)


def _allowed_range(key: str) -> str | None:
    """What a scenario's number ``key`` must be, for a number below the smallest a file
    holds: an ``[adjust]`` key's (:func:`adjust_allowed`); a builder's bandwidth (as a
    quantity refusing 0 says it); a builder's whole number (each builder refuses 0 for
    every one, its least 1 or 2: :func:`topologies.common.check_int`); a builder's time or
    length, 0 up to its :data:`topologies.limits.PHYSICAL_MAX`; None for a key of none of
    these."""
    if key in ADJUST_RANGES:
        return adjust_allowed(key)
    from topologies.limits import physical_range
    from topologies.registry import builders

    kinds = {(p.type, p.unit) for b in builders() for p in b.params if p.name == key}
    if any(unit == "bytes/s" for _, unit in kinds):
        return "a finite number > 0"
    if any(kind == "int" for kind, _ in kinds):
        return "a whole number >= 1"
    return physical_range(key)


def fabric_error(scenario: Scenario, error: UserError) -> UserError:
    """``error``, raised building ``scenario``'s fabric, naming the scenario's file when it
    was read from one: the builder's checks name only the builder (``flat: n must be an
    integer >= 1, got 0``), and a value read from a file names the file."""
    if scenario.source is None:
        return error
    return UserError(f"{scenario.source}: [fabric]: {error}")


def fabric_scenario(graph: nx.Graph, name: str) -> Scenario:
    """A scenario on a user's fabric ``graph`` (a saved ``.json``/``.graphml`` fabric or a
    spec's build, checked against :mod:`topologies.schema`), named ``name`` (its file or
    spec, for the tables), with the settings ``--fabric`` gives elsewhere (``infer``,
    ``search``, ``collective``): placement contiguous, algorithm auto, the default
    calibration with the network figures off the scale-up links (``links = "as-built"``),
    instances costed alone, no ``[adjust]``. The GPU is the graph's own (its one GPU
    type: a file's ``gpu_types`` or compute's catalog). Refused: a fabric of several GPU
    types, and one with an optical circuit switch (a scenario sets its circuits per
    instance: ``[collective] circuits``).

    >>> from topologies.specs import build
    >>> s = fabric_scenario(build("leaf-spine:leaves=2"), "mine")
    >>> s.label, s.placement, s.links, s.calibration, s.fabric_spec()
    ('mine@H100-SXM', 'contiguous', 'as-built', 'default', 'leaf-spine:leaves=2')
    """
    from topologies.schema import validate

    name = string("fabric_scenario", "name", name, max_length=MAX_TEXT)
    graph = validate(graph)
    spec = _fabric_gpu(graph, name)
    return Scenario(name=name, description=f"fabric {name}", gpu=spec.name,
                    gpu_spec=spec, fabric={}, graph=graph,
                    sources={"bandwidth": "the fabric's links", "latency": "the fabric's "
                             "links and switches"})


def _fabric_gpu(graph: nx.Graph, name: str) -> GpuSpec:
    """The one GPU type of the fabric ``graph`` (named ``name``); refused: several GPU
    types, and an optical circuit switch (a scenario sets its circuits per instance)."""
    from topologies.schema import gpu_spec

    gpus = [d for _, d in graph.nodes(data=True) if d["kind"] == "gpu"]
    types = sorted({d["gpu"] for d in gpus})
    if len(types) != 1:
        raise UserError(f"fabric {name!r} holds {len(types)} GPU types "
                        f"({', '.join(types) or 'no GPU'}); a cluster of it needs one")
    ocs = next((n for n, k in graph.nodes(data="kind") if k == "ocs"), None)
    if ocs is not None:
        raise UserError(f"fabric {name!r} has an optical circuit switch ({ocs!r}), whose "
                        f"circuits a scenario sets per instance; give a scenario with "
                        f"[fabric] builder = \"ocs\" and [collective] circuits (as the "
                        f"shipped scenario lite-ocs does)")
    return gpu_spec(graph, types[0])


def graph_digest(graph: nx.Graph) -> str:
    """A digest of ``graph``'s attributes, nodes and links in their order (what a
    fabric's collective costs and placement depend on), kept per graph object: a graph is
    not modified once built.

    >>> from topologies.specs import build
    >>> graph_digest(build("ring:n=4")) == graph_digest(build("ring:n=4")), \\
    ...     graph_digest(build("ring:n=4")) == graph_digest(build("ring:n=5"))
    (True, False)
    """
    hit = _DIGESTS.get(graph)
    if hit is None:
        import hashlib

        text = repr((sorted(graph.graph.items(), key=lambda kv: str(kv[0])),
                     list(graph.nodes(data=True)), list(graph.edges(data=True))))
        hit = _DIGESTS[graph] = hashlib.sha256(text.encode()).hexdigest()
    return hit


_DIGESTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
