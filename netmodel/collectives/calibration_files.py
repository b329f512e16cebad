"""Reading the collective model's calibration files: the defaults and the constants that differ
by GPU generation and NCCL release, every key and value checked.

The shipped files are ``netmodel/data/collective_defaults.toml``
(:data:`~netmodel.collectives.calibration.DEFAULTS_PATH`: links, protocols, in-network
reduction, the pipeline and send/recv) and ``netmodel/data/collective_generations.toml``
(:data:`~netmodel.collectives.calibration.GENERATIONS_PATH`: a table per GPU generation and the
NCCL releases the constants cover). A user's files take the same layout
(:func:`load_calibration`). An unknown or missing key, or a value of the wrong kind, raises
:class:`~compute.errors.UserError` naming the file, its table and the value; what the values
mean, and the checks the values themselves get, are
:mod:`netmodel.collectives.calibration`'s.

>>> cal = default_calibration()
>>> [g.name for g in cal.generations], cal.default_generation, cal.releases.covered()
(['ampere', 'hopper', 'blackwell'], 'hopper', '2.17..2.30')
>>> cal.nccl_release == release_text(load_releases().newest)
True
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

from compute.config_files import check_keys, read_table
from compute.errors import UserError, chosen, find_name, known, lookalike
from compute.gpu_rows import check_capability
from compute.hardware import catalog
from compute.validate import describe, flag
from netmodel.collectives.calibration import (
    _PROTOCOL_KEYS,
    CHANNEL_CAP_KEYS,
    DEFAULTS_PATH,
    GENERATIONS_PATH,
    Calibration,
    Protocol,
    _count,
    _finite,
    _tree_caps,
    check_simple_buffer,
)
from netmodel.collectives.calibration_generations import (
    RELEASE_KEYS,
    Generation,
    Releases,
    parse_release,
    release_text,
)

__all__ = ["default_calibration", "load_calibration", "load_generations", "load_releases"]

_PROTOCOL_OPTIONAL = ("chunk",)

#: A calibration file's ``[p2p]`` keys that are true or false: NCCL's rules, each on or off.
_P2P_FLAGS = ("pxn", "net_ll_buffers", "ll_per_channel")


def _protocol(where: str, name: str, table: Mapping[str, Any]) -> Protocol:
    check_keys(where, table, _PROTOCOL_KEYS, _PROTOCOL_OPTIONAL)
    for k in (*_PROTOCOL_KEYS, *_PROTOCOL_OPTIONAL):
        if k in table and (not isinstance(table[k], int | float) or isinstance(table[k], bool)):
            raise UserError(f"{where}.{k} must be a number, got {table[k]!r}")
    return Protocol(name, *(float(table[k]) for k in _PROTOCOL_KEYS),
                    **{k: float(table[k]) for k in _PROTOCOL_OPTIONAL if k in table})


def _pow2_up(c: object) -> object:
    """NCCL's p2pnChannels from its channel count (src/graph/paths.cc,
    ncclTopoComputeP2pChannels: pow2Up); anything but a count (:func:`_count`) is passed
    on for :class:`Calibration` to refuse as ``channels``, in its order of checks."""
    try:
        n = _count("channels", c)
    except UserError:
        return c
    return 1 << (n - 1).bit_length()


def load_calibration(path: str | Path = DEFAULTS_PATH,
                     generations: str | Path | None = None) -> Calibration:
    """Read a calibration TOML file (same layout as the shipped defaults) and, if given, a
    generations file (same layout as ``collective_generations.toml``).

    Unknown or missing keys raise :class:`~compute.errors.UserError` naming them.
    """
    path = Path(path)
    data = read_table(path, "calibration file", suffixes=(".toml",))
    check_keys(str(path), data, ("links", "protocols", "in_network", "reduction"),
               ("pipeline", "p2p"))
    check_keys(f"{path}: [links]", data["links"], ("scaleup_efficiency", "scaleout_efficiency"))
    check_keys(f"{path}: [reduction]", data["reduction"], ("rate",))
    pipeline = data.get("pipeline", {})
    check_keys(f"{path}: [pipeline]", pipeline, (), ("channels", "simple_buffer"))
    if "simple_buffer" in pipeline:   # 0 is no buffer to the library, never a file's value
        check_simple_buffer(pipeline["simple_buffer"], f"{path}: [pipeline].simple_buffer")
    p2p = data.get("p2p", {})
    check_keys(f"{path}: [p2p]", p2p, (), ("ll_threshold", "channels_per_peer",
                                           "channels_per_net_peer", "net_channel_bandwidth",
                                           "net_channels", "peers_per_batch", "pxn",
                                           "nvlink_chunk", "threads", "ll_ring_threads",
                                           "net_ll_buffers", "ll_per_channel"))
    for key in ("ll_threshold", "net_channel_bandwidth", "nvlink_chunk"):
        if key in p2p and (not isinstance(p2p[key], int | float) or isinstance(p2p[key], bool)):
            raise UserError(f"{path}: [p2p].{key} must be a number, got {p2p[key]!r}")
    for key in _P2P_FLAGS:
        if key in p2p:
            flag(str(path), f"[p2p].{key}", p2p[key])
    protos = data["protocols"]
    if not isinstance(protos, dict) or not protos:
        raise UserError(f"{path}: [protocols] must hold at least one [protocols.NAME] table")
    gens, default = load_generations(generations) if generations is not None else ((), "")
    releases = load_releases(generations) if generations is not None else None
    protocols = tuple(_protocol(f"{path}: [protocols.{n}]", n, t) for n, t in protos.items())
    in_network = _protocol(f"{path}: [in_network]", "Simple", data["in_network"])
    try:   # the values' own checks, named with the file (a bare 'pxn must be ...' was not)
        return _calibration_of(data, pipeline, p2p, protocols, in_network, gens,
                               default).with_(releases=releases, nccl_release=""
                                              if releases is None else
                                              release_text(releases.newest))
    except UserError as exc:
        raise UserError(f"{path}: {exc}") from None


def _calibration_of(data, pipeline, p2p, protocols, in_network, gens,
                    default) -> Calibration:
    for key in ("scaleup_efficiency", "scaleout_efficiency"):
        if not isinstance(data["links"][key], int | float) or isinstance(data["links"][key], bool):
            raise UserError(f"[links].{key} must be a number, got {describe(data['links'][key])}")
    if not isinstance(data["reduction"]["rate"], int | float) or \
            isinstance(data["reduction"]["rate"], bool):
        raise UserError(f"[reduction].rate must be a number, got "
                        f"{describe(data['reduction']['rate'])}")
    return Calibration(
        protocols=protocols,
        in_network=in_network,
        scaleup_efficiency=float(data["links"]["scaleup_efficiency"]),
        scaleout_efficiency=float(data["links"]["scaleout_efficiency"]),
        reduction_rate=float(data["reduction"]["rate"]),
        channels=pipeline.get("channels", 1),
        simple_buffer=pipeline.get("simple_buffer", 0),
        p2p_ll_threshold=float(p2p.get("ll_threshold", 0.0)),
        p2p_channels_per_peer=p2p.get("channels_per_peer", 1),
        p2p_channels_per_net_peer=p2p.get("channels_per_net_peer", 1),
        p2p_net_channel_bandwidth=float(p2p.get("net_channel_bandwidth", 0.0)),
        p2p_net_channels=p2p.get("net_channels", _pow2_up(pipeline.get("channels", 1))
                                 if p2p else 0),
        p2p_peers_per_batch=p2p.get("peers_per_batch", 8),
        p2p_nvlink_chunk=float(p2p.get("nvlink_chunk", 0.0)),
        p2p_threads=p2p.get("threads", 0),
        ll_ring_threads=p2p.get("ll_ring_threads", 0),
        pxn=_p2p_flag(p2p, "pxn"),
        p2p_net_ll_buffers=_p2p_flag(p2p, "net_ll_buffers"),
        p2p_ll_per_channel=_p2p_flag(p2p, "ll_per_channel"),
        generations=gens, default_generation=default,
    )


def _p2p_flag(p2p: Mapping[str, Any], key: str) -> bool:
    """A ``[p2p]`` rule (:data:`_P2P_FLAGS`) of a calibration file, or where it leaves the
    rule out the shipped defaults' (:func:`shipped_p2p_flags`): no default of the code's
    own to disagree with the data."""
    return p2p[key] if key in p2p else shipped_p2p_flags()[key]


@functools.cache
def shipped_p2p_flags() -> dict[str, bool]:
    """The shipped defaults' ``[p2p]`` rules (``collective_defaults.toml``: NCCL's newest
    release covered; ``collective_generations.toml``'s ``[[release.until]]`` gives older
    releases theirs), which a calibration file that leaves one out takes.

    >>> shipped_p2p_flags()
    {'pxn': True, 'net_ll_buffers': False, 'll_per_channel': True}
    """
    p2p = read_table(DEFAULTS_PATH, "calibration file", suffixes=(".toml",))["p2p"]
    return {k: flag(str(DEFAULTS_PATH), f"[p2p].{k}", p2p[k]) for k in _P2P_FLAGS}


#: A generation table's keys that are lists of compute capabilities (CUDA's MAJOR.MINOR, as a
#: GPU entry's ``compute_capability``).
_CAPABILITY_LIST_KEYS = ("ll128_off_capabilities",)

#: A generation table's scalar keys: the :class:`Generation` fields but its name, its
#: flagship GPU, its releases (``until`` entries, ``since``) and the per-channel caps
#: (:data:`CHANNEL_CAP_KEYS`, read as three rates).
_GENERATION_KEYS = tuple(f.name for f in fields(Generation)
                         if f.name not in ("name", "flagship_gpu", "until", "since",
                                           *CHANNEL_CAP_KEYS, *_CAPABILITY_LIST_KEYS))

#: Keys a generations file held before each GPU said its own generation and compute
#: capability, with what replaced them (refused with these words, not as unknown keys).
_MOVED_KEYS = {
    "gpus": "a GPU names its generation in its own entry (collective_generation = "
            "\"NAME\" in compute/data/gpus.toml or a GPU file; a derived GPU keeps its "
            "base's), not in a generations file",
    "ll128_off_gpus": "NCCL leaves LL128 off by compute capability: "
                      "ll128_off_capabilities = [\"MAJOR.MINOR\", ...], each GPU's own in its "
                      "entry (compute_capability)",
}


def _refuse_moved(where: str, t: Mapping[str, Any]) -> None:
    """Refuse a key of :data:`_MOVED_KEYS` in table ``t`` in one line saying what replaced
    it."""
    for key, instead in _MOVED_KEYS.items():
        if key in t:
            raise UserError(f"{where}.{key} is no longer read: {instead}")

#: A generation table's keys that are counts (:func:`_count`, from 1), not rates.
_GENERATION_COUNTS = ("in_network_channels", "ring_channels")


def load_generations(path: str | Path = GENERATIONS_PATH) -> tuple[tuple[Generation, ...], str]:
    """Read a generations file: ``(generations, default generation name)``."""
    path = Path(path)
    data = read_table(path, "generations file", suffixes=(".toml",))
    check_keys(str(path), data, ("default", "generation"), ("release",))
    table = data["generation"]
    if not isinstance(table, dict) or not table:
        raise UserError(f"{path}: [generation] must hold at least one [generation.NAME] table")
    out = []
    for name, t in table.items():
        where = f"{path}: [generation.{name}]"
        if isinstance(t, dict):
            _refuse_moved(where, t)
            for i, e in enumerate(t.get("until") or ()):
                if isinstance(e, dict):
                    _refuse_moved(f"{where}.until[{i}]", e)
        check_keys(where, t, (), (*_GENERATION_KEYS, *CHANNEL_CAP_KEYS,
                                  *_CAPABILITY_LIST_KEYS, "flagship_gpu", "until", "since"))
        values = _generation_values(where, t)
        values["until"] = _until(where, t.get("until", []), (*_GENERATION_KEYS,
                                                             *CHANNEL_CAP_KEYS,
                                                             *_CAPABILITY_LIST_KEYS),
                                 _generation_values)
        if "flagship_gpu" in t:
            values["flagship_gpu"] = _flagship(where, t["flagship_gpu"])
        if "since" in t:
            values["since"] = parse_release(t["since"], f"{where}.since")
        out.append(Generation(str(name), **values))
    default = data["default"]
    if chosen(default, table) is None:   # blanks at either end dropped, as every choice's
        raise UserError(f"{path}: default generation {describe(default)} is not one of "
                        f"{known(table)}{lookalike(default, table)}")
    return tuple(out), str(chosen(default, table))


def _generation_values(where: str, t: Mapping[str, Any]) -> dict[str, Any]:
    """A generation table's (or one of its ``until`` entries') values, checked."""
    values: dict[str, Any] = {}
    for k in _GENERATION_KEYS:
        if k in _GENERATION_COUNTS:
            if k in t:
                values[k] = _count(f"{where}.{k}", t[k])
        elif k in t:
            _finite(where, k, t[k], "", positive=True)
            values[k] = float(t[k])
    for k in ("scaleup_efficiency", "in_network_factor", "ll_bandwidth_factor"):
        if k in values and values[k] > 1:
            raise UserError(f"{where}.{k} must be in (0, 1], got {values[k]!r}")
    for key in CHANNEL_CAP_KEYS:
        if key in t:
            values[key] = _tree_caps(where, key, t[key])
    for key in _CAPABILITY_LIST_KEYS:
        if key in t:
            v = t[key]
            if not isinstance(v, list):
                raise UserError(f"{where}.{key} must be a list of compute capabilities "
                                f"(CUDA's MAJOR.MINOR as text, e.g. [\"10.3\"]), got "
                                f"{describe(v)}")
            values[key] = tuple(check_capability(where, f"{key} item", c) for c in v)
    return values


def _flagship(where: str, v: object) -> str:
    """A generation's ``flagship_gpu``: a catalog GPU's name, as the catalog spells it."""
    table = catalog()
    if not isinstance(v, str) or find_name(table, v) != v:
        raise UserError(f"{where}.flagship_gpu must name a catalog GPU (the one whose "
                        f"NVLinks the generation's ring_channels were read on), got "
                        f"{describe(v)}{lookalike(v, table)}; known: {known(table)}")
    return v


def _until(where: str, entries: object, keys: tuple[str, ...], read) -> tuple:
    """``[[...until]]`` entries (``release`` and some of ``keys``) as ``((major, minor),
    ((key, value), ...))``, each read by ``read(where, table)``."""
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise UserError(f"{where}.until must be an array of tables ([[...until]]), got "
                        f"{describe(entries)}")
    out = []
    for i, e in enumerate(entries):
        here = f"{where}.until[{i}]"
        check_keys(here, e, ("release",), keys)
        r = parse_release(e["release"], f"{here}.release")
        out.append((r, tuple(read(here, {k: v for k, v in e.items() if k != "release"})
                             .items())))
    return tuple(out)


def _release_values(where: str, t: Mapping[str, Any]) -> dict[str, Any]:
    """A ``[[release.until]]`` entry's values (:data:`RELEASE_KEYS`), checked."""
    out: dict[str, Any] = {}
    for k, v in t.items():
        if k == "p2p_ll_per_channel":   # a rule: on or off
            out[k] = flag("", f"{where}.{k}", v)
            continue
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise UserError(f"{where}.{k} must be a number, got {describe(v)}")
        out[k] = v if k == "p2p_net_channels" else float(v)
    return out


def load_releases(path: str | Path = GENERATIONS_PATH) -> Releases | None:
    """The NCCL releases a generations file covers (its ``[release]`` table: ``oldest``,
    ``newest`` and calibration-wide ``[[release.until]]`` entries); None without one."""
    path = Path(path)
    data = read_table(path, "generations file", suffixes=(".toml",))
    t = data.get("release")
    if t is None:
        return None
    where = f"{path}: [release]"
    if not isinstance(t, dict):
        raise UserError(f"{where} must be a table, got {describe(t)}")
    check_keys(where, t, ("oldest", "newest"), ("until",))
    oldest = parse_release(t["oldest"], f"{where}.oldest")
    newest = parse_release(t["newest"], f"{where}.newest")
    if oldest > newest:
        raise UserError(f"{where}: oldest {t['oldest']!r} is after newest {t['newest']!r}")
    return Releases(oldest, newest, _until(where, t.get("until", []), RELEASE_KEYS,
                                           _release_values))


@functools.cache
def default_calibration() -> Calibration:
    """The shipped defaults (read once), with the per-generation constants."""
    return load_calibration(DEFAULTS_PATH, GENERATIONS_PATH)
