"""Scenario files: the TOML a scenario is written in, read into a
:class:`~netmodel.study.scenarios.Scenario` (:func:`load_scenario`,
:func:`load_scenario_text`, :func:`scenario_from_dict`; a saved fabric a file names read
once per content, :func:`_read_fabric_file`) and written back (:func:`save_scenario`, the
text of :meth:`~netmodel.study.scenarios.Scenario.to_toml`). What the keys mean (``links``,
``nccl_release``, ``instances``, a GPU swap): :mod:`netmodel.study.scenarios`.

The shipped scenarios live in ``netmodel/data/scenarios/*.toml``, one file each, every
bandwidth and latency with its source; :mod:`netmodel.study.scenario_catalog` reads them
and turns the names the commands take (``NAME@GPU``, a ``.toml`` path) into scenarios. A file has these keys (all required unless marked
optional; unknown keys are refused)::

    name = "lite-flat"              # none of '@', ',', '=', ':' (they split typed names)
    description = "..."
    gpu = "Lite"                    # GPU type (compute's catalog) or a GPU file
                                    #   (.toml/.json), relative to this file's folder
    fabric = "my_fabric.json"       # either this, a saved fabric file (below), or:

    [fabric]                        # a topologies builder and its keyword arguments
    builder = "flat"
    gpu = "$gpu"                    # "$gpu": the scenario's GPU type
    bandwidth = "$scaleup"          # "$scaleup"/"$scaleout" (optionally "4*$scaleup"): the
    latency = "330ns"               #   GPU's bandwidth per direction, so a GPU swap rescales it
    in_network_reduction = "$reduction"  # whether the GPU's scale-up switch reduces (NVLS:
                                    #   H100 on, not A100), so a GPU swap follows it too
    nvlinks = "$nvlinks"            # (builders that take it) the GPU's NVLinks: scale-up
                                    #   bandwidth / its generation's NVLink rate (A100 12)
    [fabric.base]                   # optional: a nested fabric (for lite-groups' base)

    [collective]
    placement = "contiguous"        # netmodel.collectives.placement policy for each instance
    algorithm = "auto"              # or one algorithm of netmodel.collectives.algorithms
    tuner = "none"                  # optional: a tuner plugin choosing under auto
                                    #   (netmodel.collectives.tuner_plugin.tuner_names)
    nccl_release = "2.30"           # optional: the NCCL release emulated (a string; the
                                    #   newest the data file holds by default; see below)
    nccl_buffsize = 4194304         # optional: NCCL_BUFFSIZE in bytes (NCCL's 4 MiB default)
    links = "scale-up"              # "as-built" or "scale-up" (see below)
    calibration = "default"         # "default" (NCCL-sourced) or "ideal" (alpha = 0)
    circuits = "ring"               # optional, OCS fabrics only: "ring", "torus" or
                                    #   "best" (the faster per instance size)
    instances = "alone"             # optional: "alone" (default) or "all" (see below)

    [adjust]                        # optional, defaults shown
    latency_scale = 1.0             # multiplies every link and switch latency
    hop_latency = 0.0               # seconds added to every link (each hop)
    bandwidth_scale = 1.0           # multiplies every link's bandwidth

    [sources]
    bandwidth = "..."               # where the bandwidth figures come from
    latency = "..."                 # where the latency figures come from
    notes = "..."                   # optional

``fabric = "FILE"`` (a top-level key, before the tables, in place of the ``[fabric]``
table): a saved ``.json``/``.graphml`` fabric (``netmodel topology export``, perhaps edited
by hand), its path relative to the folder of the scenario file itself, not to the current
directory (an absolute path is read as it is). It is read as ``--fabric`` reads one: sizes
checked before it is parsed, its graph validated, a builder's claim kept only if the builder
makes exactly that graph; its GPUs must all be the scenario's ``gpu`` (the same GPU type,
fields and all), with no optical circuit switch. A fabric read from one file content is kept
once per process, keyed by the file's path and the SHA-256 of its bytes, so an edited file
is read again; a scenario on it cannot swap its GPU (``NAME@GPU``, ``--gpus``) or sweep
``fabric.*`` parameters (the file has no builder arguments), and its fabric spec, for the
tables, is the file's path as written.

>>> from netmodel.study.scenario_catalog import get_scenario
>>> s = get_scenario("lite-flat@Lite+NetBW")
>>> load_scenario_text(s.to_toml()) == s
True
"""

from __future__ import annotations

from dataclasses import replace
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING

from compute.config_files import check_keys, parse_table, read_text
from compute.errors import UserError, chosen, known
from compute.hardware import GpuSpec, get_gpu
from compute.memo import Lru
from compute.validate import (
    describe,
    number,
    typed_name,
)
from compute.validate import name as validate_name
from netmodel.collectives.tuner_plugin import NO_TUNER
from netmodel.study.fabric_table import (
    check_table,
    copy_table,
    text_value,
)

if TYPE_CHECKING:
    import networkx as nx

from netmodel.study.scenarios import (
    ADJUST_KEYS,
    ADJUST_RANGES,
    CALIBRATIONS,
    CIRCUITS,
    INSTANCES,
    LINKS,
    NCCL_KEYS,
    Adjust,
    Scenario,
    _allowed_range,
    _choice,
    _fabric_gpu,
    _nccl_keys,
)

__all__ = ["load_scenario", "load_scenario_text", "save_scenario", "scenario_from_dict"]

_TOP_KEYS = ("name", "description", "gpu", "fabric", "collective", "sources")
_COLLECTIVE_KEYS = ("placement", "algorithm", "links", "calibration")
_SOURCE_KEYS = ("bandwidth", "latency")


def _algorithm(where: str, value) -> str:
    """A scenario's ``[collective] algorithm``: ``auto`` or one of netmodel's; another's
    name for one of them (NCCL's ``nvls``) is refused saying what netmodel calls it."""
    from netmodel.collectives.algorithms import ALGORITHMS, unknown_algorithm

    allowed = ("auto", *ALGORITHMS)
    if isinstance(value, str) and chosen(value, allowed) is None:
        raise UserError(f"{where}: {unknown_algorithm(value, allowed)}")
    return _choice(where, "algorithm", value, allowed)


def _adjust(where: str, table) -> Adjust:
    values = {}
    for k, v in table.items():
        lo, hi, unit = ADJUST_RANGES[k]
        values[k] = number(f"{where}: [adjust]", k, v, minimum=lo, maximum=hi, unit=unit)
    return Adjust(**values)


def scenario_from_dict(data: dict, where: str = "scenario",
                       base_dir: str | PathLike[str] | None = None) -> Scenario:
    """A :class:`Scenario` from the TOML layout, refusing unknown and missing keys.
    ``gpu`` may name a GPU file, relative to ``base_dir`` (the scenario file's folder)."""
    from netmodel.collectives.names import PLACEMENTS
    from netmodel.collectives.tuner_plugin import tuner_names, tuner_refusal

    check_keys(where, data, _TOP_KEYS, ("adjust",))
    # typed back (--scenarios A,B; NAME@GPU; a name with ':' read as a fabric spec's)
    name = typed_name(where, "scenario", data["name"])
    # a GPU looked up (a catalog name or a GPU file's path), read as --gpu reads one:
    # blanks at either end dropped (compute.errors.find_name), case aside
    gpu_ref = data["gpu"]
    gpu_ref = validate_name(where, "gpu", gpu_ref.strip() if isinstance(gpu_ref, str)
                            and gpu_ref.strip() else gpu_ref)
    gpu_file = None
    if gpu_ref.lower().endswith((".toml", ".json")):
        gpu_file = gpu_ref
        if base_dir is not None and not Path(gpu_ref).is_absolute():
            gpu_ref = str(Path(base_dir) / gpu_ref)
    try:
        gpu_spec = get_gpu(gpu_ref)
    except UserError as exc:   # an unknown name, a missing or bad GPU file: say whose gpu
        raise UserError(f"{where}: gpu: {exc}") from None
    graph = fabric_file = None
    if isinstance(data["fabric"], str):
        fabric_file = data["fabric"]
        graph = _read_fabric_file(where, fabric_file, base_dir, gpu_spec)
    elif isinstance(data["fabric"], dict):
        check_table(data["fabric"], where, "fabric")
    else:
        raise _fabric_kinds(where, data["fabric"])
    col = data["collective"]
    check_keys(f"{where}: [collective]", col, _COLLECTIVE_KEYS,
               ("circuits", "instances", "tuner", *NCCL_KEYS))
    at = f"{where}: [collective]"   # its keys' refusals name file, section and key
    circuits = col.get("circuits")
    is_ocs = graph is None and data["fabric"]["builder"] == "ocs"
    if circuits is not None:
        if not is_ocs:
            raise UserError(f"{where}: [collective] circuits applies only to an 'ocs' fabric")
        _choice(at, "circuits", circuits, CIRCUITS)
    elif is_ocs:
        raise UserError(f"{where}: an 'ocs' fabric needs [collective] circuits "
                        f"(allowed: {known(CIRCUITS)})")
    tuner = _choice(at, "tuner", col.get("tuner", NO_TUNER), tuner_names())
    refusal = tuner_refusal(tuner, col["algorithm"])
    if refusal is not None:
        raise UserError(f"{where}: [collective] {refusal}")
    release, buffsize = _nccl_keys(where, col.get("nccl_release"), col.get("nccl_buffsize"),
                                   col["calibration"])
    adjust = data.get("adjust", {})
    check_keys(f"{where}: [adjust]", adjust, (), tuple(ADJUST_KEYS))
    src = data["sources"]
    check_keys(f"{where}: [sources]", src, _SOURCE_KEYS, ("notes",))
    for k, v in src.items():
        text_value(f"{where}: [sources]", k, v)
    return Scenario(
        name=name, description=text_value(where, "description", data["description"]),
        gpu=gpu_spec.name, gpu_spec=gpu_spec, gpu_file=gpu_file,
        fabric={} if graph is not None else copy_table(data["fabric"]),
        graph=graph, fabric_file=fabric_file,
        placement=_choice(at, "placement", col["placement"], PLACEMENTS),
        algorithm=_algorithm(at, col["algorithm"]),
        links=_choice(at, "links", col["links"], LINKS),
        calibration=_choice(at, "calibration", col["calibration"], CALIBRATIONS),
        circuits=circuits,
        instances=_choice(at, "instances", col.get("instances", "alone"), INSTANCES),
        tuner=tuner, nccl_release=release, nccl_buffsize=buffsize,
        adjust=_adjust(where, adjust),
        sources=dict(src))


#: How many fabrics read from saved files are kept (a 131,072-GPU fabric is about 1 GB).
_FABRIC_FILES_MAX = 4
#: Fabrics read from saved files for scenarios, by (resolved path, SHA-256 of the bytes):
#: one graph per file content (equal scenarios share it; an edited file is read again),
#: the least recently used dropped first.
_FABRIC_FILES = Lru(_FABRIC_FILES_MAX)


def _fabric_kinds(where: str, value: object) -> UserError:
    """The refusal of a scenario's ``fabric`` that is neither kind it may be."""
    from topologies.io import FORMATS

    return UserError(f"{where}: fabric must be a [fabric] table or a saved fabric file "
                     f"({', '.join(FORMATS)}: netmodel topology export), relative to the "
                     f"scenario file, got {describe(value)}")


def _read_fabric_file(where: str, value: object, base_dir, gpu: GpuSpec) -> nx.Graph:
    """The fabric graph a scenario's ``fabric = "FILE"`` names (module doc), relative to
    ``base_dir``; its GPUs must be ``gpu``. Refused in one line naming ``where``."""
    import hashlib

    from topologies.io import FORMATS, read_fabric_bytes, read_graph
    from topologies.io_guards import fabric_file
    from topologies.registry import check_as_built

    text = text_value(where, "fabric", value)
    if not text.strip().lower().endswith(FORMATS):
        raise _fabric_kinds(where, value)
    path = Path(text.strip())
    if base_dir is not None and not path.is_absolute():
        path = Path(base_dir) / path
    try:
        raw = read_fabric_bytes(path)   # refused past the size limit before it is read
        key = (str(path.resolve()), hashlib.sha256(raw).hexdigest())
        graph = _FABRIC_FILES.recall(key)
        if graph is None:
            graph = _FABRIC_FILES.put(key, check_as_built(read_graph(path, raw)))
        own = _fabric_gpu(graph, str(path))
    except UserError as exc:
        raise UserError(f"{where}: fabric: {exc}") from None
    if own.name != gpu.name:
        raise UserError(f"{where}: {fabric_file(path)} holds {own.name} GPUs, not the "
                        f"scenario's gpu {gpu.name!r}")
    if own != gpu:
        from dataclasses import fields

        differ = [f.name for f in fields(own) if getattr(own, f.name) != getattr(gpu, f.name)]
        raise UserError(f"{where}: {fabric_file(path)} holds its own {own.name} GPUs (its "
                        f"gpu_types), not the scenario's gpu of that name: they differ in "
                        f"{', '.join(differ)}")
    return graph


def load_scenario_text(text: str, where: str = "scenario",
                       base_dir: str | PathLike[str] | None = None) -> Scenario:
    """A scenario from TOML text (a GPU file it names is read relative to ``base_dir``)."""
    return scenario_from_dict(parse_table(text, "toml", where, allowed=_allowed_range), where,
                              base_dir)


def load_scenario(path: str | PathLike[str]) -> Scenario:
    """A scenario from a TOML file."""
    path = Path(path)
    return replace(load_scenario_text(read_text(path, "scenario file"), str(path), path.parent),
                   source=str(path))


def save_scenario(scenario: Scenario, path: str | PathLike[str]) -> Path:
    """Write ``scenario`` as TOML to ``path`` atomically (one file: the folder's other
    files stay); returns the path."""
    from compute.outputs import atomic_write

    path = Path(path)
    if path.suffix.lower() != ".toml":
        raise UserError(f"scenario file {str(path)!r} must end in .toml")
    atomic_write(path, scenario.to_toml().encode(), "scenario file")
    return path
