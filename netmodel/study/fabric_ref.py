"""A fabric named as every command names one, resolved to its graph: a spec string
(``fat-tree:k=8,gpu=Lite``), a saved ``.json``/``.graphml`` file, or a scenario
(``lite-flat``, ``lite-flat@Lite+BW``, a ``.toml``), whose *physical* fabric is used (as
built, before its ``[adjust]``). ``gpu`` re-types it: a scenario by
:meth:`~netmodel.study.scenarios.Scenario.with_gpu`, a spec through its builder's ``gpu``
(or ``lite``) parameter, so ``bandwidth=auto`` follows the new GPU; a saved file cannot be
re-typed. The commands that take a fabric (``netmodel topology``'s, ``--fabric``
elsewhere) and the study resolve it here, each built spec once per process.
:func:`fabric_collectives` checks one for costing an instance's collectives on it (one GPU
type, the GPU asked for, circuits set on an OCS fabric) and gives its cost model.

>>> f = resolve_fabric("ring:n=8")
>>> f.label, f.source, f.graph.graph["gpus"], f.scenario is None
('ring:n=8', 'spec', 8, True)
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import networkx as nx

from compute.errors import UserError, known, lookalike

if TYPE_CHECKING:
    from compute.hardware import GpuSpec
    from netmodel.collectives.model import FabricCostModel
    from netmodel.study.scenarios import Scenario

__all__ = ["Fabric", "FabricCollectives", "fabric_collectives", "resolve_fabric"]

_FILE_SUFFIXES = (".json", ".graphml")


@dataclass(frozen=True, eq=False)
class Fabric:
    """A resolved fabric: ``label`` (its name, re-typed where ``gpu`` was given; a
    comparison's column), ``source`` (``"spec"``, ``"file"`` or
    ``"scenario"``), the physical ``graph`` (shared and cached: do not modify it), for a
    scenario the :class:`~netmodel.study.scenarios.Scenario`, and ``key``: what it is,
    however it was spelled (names are matched regardless of case: ``lite-flat`` and
    ``LITE-FLAT`` are one scenario, ``ring:n=8``, ``RING: n=8`` and ``ring`` one spec), so a list
    naming one fabric twice is told from one naming two (default: ``label``)."""

    label: str
    source: str
    graph: nx.Graph
    scenario: Scenario | None = None
    key: object = None

    def __post_init__(self) -> None:
        if self.key is None:
            object.__setattr__(self, "key", (self.source, self.label))


@lru_cache(maxsize=64)
def _build_spec(name: str, params: tuple, files: tuple = ()) -> nx.Graph:
    """A spec's fabric, built once per process (the graph is shared: do not modify it);
    ``files`` (:func:`_files_named`) keys it by the files its parameters name as well."""
    from topologies.specs import build

    return build(name, dict(params))


#: Largest file a spec names that is keyed by its content (bytes); larger ones by size and
#: time of change (a GPU file is a few kB).
_HASHED_BYTES = 1 << 24
_FILE_WORD = re.compile(r"[^\s\[\],=:]+\.(?:toml|json|graphml)", re.IGNORECASE)


def _files_named(params: tuple) -> tuple:
    """``(path, real path, digest)`` of each existing file a spec's parameters name (a GPU
    file ``gpu=g.toml``, also inside a bracketed value): the spec's text names a file by a
    path relative to the working folder, whose content may differ from one call to the next
    (another folder, the file rewritten), so the built fabric is kept by what was read.

    >>> _files_named((("gpu", "H100-SXM"), ("n", "8")))
    ()
    """
    import hashlib
    import os
    import stat

    found = []
    for _, value in params:
        for word in _FILE_WORD.findall(str(value)):
            try:
                info = os.stat(word)
                if not stat.S_ISREG(info.st_mode):   # a FIFO or device: the build refuses it
                    continue
                if info.st_size > _HASHED_BYTES:   # past what a GPU file holds: by its stamp
                    digest = f"{info.st_size}:{info.st_mtime_ns}"
                else:
                    fd = os.open(word, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
                    with os.fdopen(fd, "rb") as f:
                        digest = hashlib.sha256(f.read(_HASHED_BYTES + 1)).hexdigest()
            except OSError:   # not a file here: the build says what is wrong
                continue
            found.append((word, os.path.realpath(word), digest))
    return tuple(found)


def _clock_ratio(text: str) -> bool:
    """Whether ``text`` is a clock ratio as a GPU at another clock is named with
    (``H100-SXM@0.5x``: a number and ``x``).

    >>> _clock_ratio("0.5x"), _clock_ratio(" 2x"), _clock_ratio("Lite"), _clock_ratio("x")
    (True, True, False, False)
    """
    text = text.strip()
    try:
        return text.endswith("x") and float(text[:-1]) > 0
    except ValueError:
        return False


def resolve_fabric(ref: str, gpu: str | None = None) -> Fabric:
    """The :class:`Fabric` that ``ref`` names (see the module docstring); ``gpu`` re-types it.

    >>> f = resolve_fabric("lite-flat", gpu="Lite+BW")
    >>> f.label, f.source, f.graph.graph["gpus"], f.graph.nodes["gpu0"]["gpu"]
    ('lite-flat@Lite+BW', 'scenario', 128, 'Lite+BW')
    >>> resolve_fabric("ring:n=4", gpu="Lite").label
    'ring:n=4,gpu=Lite'
    """
    if not isinstance(ref, str) or not ref.strip():
        raise UserError(f"a fabric must be a spec string, a .json/.graphml file or a scenario "
                        f"name, got {ref!r}")
    typed, ref = ref, ref.strip()   # blanks at either end dropped; a refusal quotes them
    if gpu is not None and (not isinstance(gpu, str) or not gpu.strip()):
        raise UserError(f"gpu must be a GPU type name, got {gpu!r}")
    if ref.lower().endswith(_FILE_SUFFIXES):
        if gpu is not None:
            raise UserError(f"gpu cannot re-type the saved fabric file {ref!r} (its GPUs are "
                            f"part of the file); give a spec string or a scenario instead")
        import os

        from topologies.specs import build

        return Fabric(ref, "file", build(ref), key=("file", os.path.realpath(ref)))
    from netmodel.study.scenario_catalog import is_scenario_ref

    if is_scenario_ref(ref):
        from netmodel.study.scenario_catalog import get_scenario
        from netmodel.study.scenario_fabric import build_fabric

        s = get_scenario(ref)
        if gpu is not None:
            s = s.with_gpu(gpu.strip())
        return Fabric(s.label if gpu is not None else ref, "scenario", build_fabric(s), s,
                      key=("scenario", s.label))
    from topologies.specs import builders, parse_spec

    infos = {b.name: b for b in builders()}
    base, at, at_gpu = ref.rpartition("@")
    if base.count("[") > base.count("]"):   # inside a bracketed value: that value's text
        at = ""
    if at and base.partition(":")[0].strip() in infos and _clock_ratio(at_gpu):
        # NAME@0.5x names a GPU at another clock (compute.power.gpu_at_clock), not a GPU
        # to re-type with: advice 'gpu=0.5x' would be refused in turn
        # the builder quoted, not the text whole: the command line says the flag and the
        # text typed in front (netmodel.cli.refusals.named_by_value)
        raise UserError(f"'@{at_gpu.strip()}' marks a GPU at another clock, which fabric "
                        f"builder {base.partition(':')[0].strip()!r} does not take; give a "
                        f"catalog GPU or a GPU file as its gpu (e.g. gpu=H100-SXM)")
    if at and base.partition(":")[0].strip() in infos:
        # NAME@GPU re-types a scenario only; a builder takes its GPU as a parameter
        key = next((k for k in ("gpu", "lite") if k in
                    [p.name for p in infos[base.partition(":")[0].strip()].params]), "gpu")
        builder, colon, rest = base.partition(":")
        # the GPU in place of one the spec already names ('gpu' twice is refused)
        items = [i for i in rest.split(",") if i.strip()] if colon else []
        items = [i for i in items if i.partition("=")[0].strip() != key]
        spec = builder + ":" + ",".join([*items, f"{key}={at_gpu or 'GPU'}"])
        raise UserError(f"'@GPU' re-types a scenario, and {builder.strip()!r} is a fabric "
                        f"builder; give the GPU as its parameter ({spec})")
    name, params = parse_spec(ref)
    if name not in infos:
        from netmodel.study.scenario_catalog import scenario_names

        like = lookalike(name, infos) or lookalike(ref, scenario_names())
        raise UserError(f"unknown fabric {typed!r}{like}: neither a fabric builder (known: "
                        f"{known(infos)}) nor a scenario (known: {known(scenario_names())}) "
                        f"nor a .json/.graphml file")
    label = ref
    if gpu is not None:
        keys = [p.name for p in infos[name].params]
        key = next((k for k in ("gpu", "lite") if k in keys), None)
        if key is None:
            raise UserError(f"gpu cannot re-type fabric {ref!r}: builder {name!r} has no gpu "
                            f"or lite parameter")
        params = {**params, key: gpu.strip()}
    canonical = tuple(sorted(params.items()))
    graph = _build_spec(name, canonical, _files_named(canonical))
    if gpu is not None:
        label = graph.graph.get("spec") or ref
    # keyed by what the builder was given, resolved (graph 'args': defaults dropped, numbers
    # and units read, names as the catalog spells them), so 'ring' and 'ring:n=8', 'n=4'
    # and 'n=4.0', 'gpu=lite' and 'gpu=Lite' are one fabric, as the options' lists do
    args = graph.graph.get("args")
    what = json.dumps(args, sort_keys=True, default=repr) if isinstance(args, dict) \
        else canonical
    return Fabric(label, "spec", graph, key=("spec", name, what, _files_named(canonical)))


@dataclass(frozen=True, eq=False)
class FabricCollectives:
    """A fabric an instance's collectives are costed on (:func:`fabric_collectives`): the
    resolved ``fabric``, its one GPU type ``gpu_type``, and the ``model`` (placement
    contiguous, algorithm auto, the shipped calibration)."""

    fabric: Fabric
    gpu_type: str
    model: FabricCostModel

    @property
    def gpu(self) -> GpuSpec:
        """The spec of :attr:`gpu_type` as the graph records it (a GPU file's kept in its
        ``gpu_types``)."""
        from topologies.schema import gpu_spec

        return gpu_spec(self.fabric.graph, self.gpu_type)


def _names_fabric_gpu(gpu: str, built_for: str, graph: nx.Graph) -> bool:
    """Whether ``gpu``, a GPU as typed, is the one the fabric is built for: its name, the
    catalog's name in another case (``lite``, as ``--gpu lite`` reads anywhere), or a GPU
    file of that one GPU, its figures the fabric's (the file the spec or scenario was built
    with). A GPU file that cannot be read raises its own error.

    >>> g = resolve_fabric("ring:n=4,gpu=Lite").graph
    >>> [_names_fabric_gpu(t, "Lite", g) for t in ("Lite", "LITE", "H100-SXM")]
    [True, True, False]
    """
    from compute.errors import find_name
    from compute.hardware import catalog, get_gpu
    from topologies.schema import gpu_spec

    if gpu == built_for or find_name(catalog(), gpu) == built_for:
        return True
    if not gpu.strip().lower().endswith((".toml", ".json")):
        return False
    spec = get_gpu(gpu)
    return spec.name == built_for and spec == gpu_spec(graph, built_for)


def fabric_collectives(ref: str, gpu: str | None = None) -> FabricCollectives:
    """The fabric ``ref`` names (:func:`resolve_fabric`), checked for costing an instance's
    collectives on it: its GPUs are of one type, ``gpu`` (a GPU name) where given, and an
    OCS fabric has its circuits set (without them every group is cut apart). Each refusal
    is one line saying how to name such a fabric.

    >>> f = fabric_collectives("ring:n=8,gpu=Lite", gpu="Lite")
    >>> f.gpu_type, f.gpu.name, f.model.gpus, f.model.algorithm
    ('Lite', 'Lite', 8, 'auto')
    >>> fabric_collectives("ring:n=8,gpu=Lite", gpu="H100-SXM")
    Traceback (most recent call last):
    compute.errors.UserError: fabric 'ring:n=8,gpu=Lite' is built for GPU 'Lite', not 'H100-SXM'; name that GPU in the spec (gpu=H100-SXM)
    """
    from netmodel.collectives.model import FabricCostModel

    # a spec, a file or a scenario's fabric (checked against the schema as built), one a
    # router can index
    from netmodel.collectives.routing import routed_builds

    with routed_builds():
        fabric = resolve_fabric(ref)
    graph = fabric.graph
    names = {d.get("gpu") for _, d in graph.nodes(data=True) if d.get("kind") == "gpu"}
    if len(names) != 1:
        raise UserError(f"fabric {ref!r} holds {len(names)} GPU types; costing an instance "
                        f"on it needs one")
    built_for = names.pop()
    if gpu is not None and not _names_fabric_gpu(gpu, built_for, graph):
        if fabric.source == "scenario":   # a spec's 'gpu=' key means nothing after a name
            from netmodel.study.scenario_catalog import split_ref

            base = split_ref(ref)[0]   # a .toml path may hold an '@'
            how = f"give the scenario with that GPU ({base}@{gpu})"
        elif fabric.source == "file":
            how = "a saved fabric file's GPUs are part of it; give a spec or scenario"
        else:
            how = f"name that GPU in the spec (gpu={gpu})"
        raise UserError(f"fabric {ref!r} is built for GPU {built_for!r}, not {gpu!r}; {how}")
    info = graph.graph
    if info.get("builder") == "ocs" and not info.get("logical"):
        # no circuits: every group is cut apart, which a search found only as an infinite
        # collective time, named by op and group size
        if fabric.source == "scenario":
            how = f"give scenario={ref!r} (each instance's circuits set as compare sets them)"
        elif fabric.source == "file":
            how = "save the fabric with its circuits set (a spec with logical=ring)"
        else:
            how = (f"set them in the spec: {ref},logical=ring (or logical=torus:AxB, or a "
                   f"circuit list)")
        raise UserError(f"fabric {ref!r} is an OCS fabric with no circuits set, so no "
                        f"collective can run on it; {how}")
    model = FabricCostModel(graph, placement="contiguous", algorithm="auto", validated=True)
    return FabricCollectives(fabric, built_for, model)
