"""What differs by GPU generation and by NCCL release in the collective model's
parameters: a generation's constants (:class:`Generation`, the NVLink and NVSwitch of its
GPUs, with their values in older releases), the NCCL releases a generations file covers
(:class:`Releases`) and an NCCL release read from text (:func:`parse_release`).

:class:`~netmodel.collectives.calibration.Calibration` applies them
(:meth:`~netmodel.collectives.calibration.Calibration.resolve`); the file
``netmodel/data/collective_generations.toml`` is read by
:mod:`netmodel.collectives.calibration_files`.

>>> Generation("hopper", scaleup_efficiency=0.824,
...            until=(((2, 26), (("scaleup_efficiency", 0.8),)),)).at((2, 24)).scaleup_efficiency
0.8
>>> Releases((2, 17), (2, 30)).covered()
'2.17..2.30'
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from compute.errors import UserError
from compute.validate import describe

__all__ = ["RELEASE_KEYS", "Generation", "Releases", "parse_release", "release_text"]


@dataclass(frozen=True)
class Generation:
    """Constants of one GPU generation (its NVLink and NVSwitch), applied by
    :meth:`~netmodel.collectives.calibration.Calibration.resolve`; None leaves the
    calibration's own value. Which GPUs are of it, each GPU's entry says
    (``collective_generation``, :data:`compute.gpu_rows.NAMED_KEYS`), not the generation.

    Attributes
    ----------
    name : str
        What a GPU's ``collective_generation`` names it by.
    flagship_gpu : str or None
        The GPU whose NVLinks NCCL's ring of the generation runs its ``ring_channels`` on
        (a catalog GPU of the generation, the one of the logs the channels were read from):
        :attr:`~netmodel.collectives.calibration.Calibration.flagship_bandwidth` is its
        NVLinks times ``nvlink_bandwidth``. None: unknown (0).
    scaleup_efficiency : float or None
        Fraction of a scale-up link's line rate moved as payload.
    in_network_factor : float or None
        Bandwidth factor of in-switch reduction (NVLS efficiency).
    in_network_ceiling : float or None
        In-switch all-reduce busbw cannot exceed this multiple of a GPU's scale-up line
        rate, whatever the domain's size.
    ll_bandwidth_factor : float or None
        Bandwidth factor of the LL protocol (NCCL's LL busbw ceiling over its NVLink rate).
    nvlink_bandwidth : float or None
        Line rate of one NVLink of the generation, bytes/s a direction.
    tree_channel_bandwidth : tuple of 3 floats or None
        NCCL's cap on one tree channel's all-reduce busbw on 1, 2 and 3 or more nodes
        (bytes/s; ``perChMaxTreeBws``).
    tree_ll128_channel_bandwidth : tuple of 3 floats or None
        NCCL's cap on one LL128 tree channel's busbw, as above (``perChMaxTreeLL128Bws``).
    nvls_tree_channel_bandwidth : tuple of 3 floats or None
        NCCL's cap on one NVLSTree channel's busbw, as above (``perChMaxNVLSTreeBws``; 0:
        none for that many nodes).
    ring_ll128_channel_bandwidth : tuple of 3 floats or None
        NCCL's cap on one LL128 ring channel's busbw, as above (``perChMaxRingLL128Bws``),
        read by the tuner ``nccl`` only.
    ll128_off_capabilities : tuple of str or None
        The compute capabilities (CUDA's ``MAJOR.MINOR``, a GPU entry's
        ``compute_capability``) of the generation's GPUs on which NCCL's tuner leaves LL128
        off by default (not among those its release enables it on), read by the tuner
        ``nccl`` only; None or empty: LL128 on for every GPU of the generation.
    in_network_channels : int or None
        NCCL's NVLS channels inside one NVLink domain (``NVLS_NCHANNELS``).
    ring_channels : int or None
        NCCL's ring channels on one node of the generation's GPUs (its ring graph's
        channels, duplicated: the "coll channels" of its log), which run an LL ring
        collective at the generation's LL rate (``ll_bandwidth_factor``).
    until : tuple of (release, values)
        The generation's values in older NCCL releases: each ``((major, minor), ((key,
        value), ...))`` holds through that release; :meth:`at` picks them.
    since : tuple of 2 ints or None
        ``(major, minor)`` of the first NCCL release that supports the generation's GPUs
        (a generations file's ``since``); an older release is refused for them
        (:meth:`~netmodel.collectives.calibration.Calibration.for_gpu`): the file holds none
        of its constants. None: every release the file covers.
    """

    name: str
    flagship_gpu: str | None = None
    scaleup_efficiency: float | None = None
    in_network_factor: float | None = None
    in_network_ceiling: float | None = None
    ll_bandwidth_factor: float | None = None
    nvlink_bandwidth: float | None = None
    tree_channel_bandwidth: tuple[float, float, float] | None = None
    tree_ll128_channel_bandwidth: tuple[float, float, float] | None = None
    nvls_tree_channel_bandwidth: tuple[float, float, float] | None = None
    ring_ll128_channel_bandwidth: tuple[float, float, float] | None = None
    ll128_off_capabilities: tuple[str, ...] | None = None
    in_network_channels: int | None = None
    ring_channels: int | None = None
    until: tuple = ()
    since: tuple[int, int] | None = None

    def at(self, release: tuple[int, int] | None) -> Generation:
        """This generation's constants in NCCL ``release`` (``(major, minor)``; None: the
        newest, its own fields)."""
        values = _values_at(self.until, release)
        return replace(self, until=(), **values) if values else self


def _values_at(until: Iterable, release: tuple[int, int] | None) -> dict[str, Any]:
    """The values of ``until`` (``((major, minor), ((key, value), ...))`` entries, each
    holding through its release) for ``release``: per key, the entry of the earliest release
    at or after it; none for None (the newest release)."""
    out: dict[str, Any] = {}
    if release is None:
        return out
    for through, values in sorted(until, key=lambda e: e[0], reverse=True):
        if through >= release:
            out.update(values)
    return out


#: An NCCL release as runs print it: 2.28, 2.28.9, v2.28.3-1, 2.28.9+cuda12.9. ASCII digits
#: without leading zeros (Python's ``\d`` and ``int`` take other scripts' digits: '٢.٢٨' was
#: read as 2.28), no surrounding space, a build suffix of at most 32 letters, digits or dots.
_RELEASE = re.compile(r"v?(0|[1-9][0-9]{0,2})\.(0|[1-9][0-9]{0,2})(?:\.[0-9]{1,3})?"
                      r"(?:-[0-9]{1,3})?(?:\+[0-9A-Za-z.]{1,32})?", re.ASCII)


def parse_release(v: object, name: str = "nccl_release") -> tuple[int, int]:
    """``v`` (an NCCL release, ``MAJOR.MINOR[.PATCH]``) as ``(major, minor)``: the data
    files change constants between minor releases only (each 2.N's first patch release
    holds them), so the patch is read and dropped; else UserError naming ``name``.

    >>> parse_release("2.28.9+cuda12.9"), parse_release("v2.28.3-1"), parse_release("2.30")
    ((2, 28), (2, 28), (2, 30))
    """
    m = _RELEASE.fullmatch(v) if isinstance(v, str) else None
    if m is None:
        raise UserError(f"{name} must be an NCCL release MAJOR.MINOR[.PATCH] (e.g. 2.28 or "
                        f"2.28.9), got {describe(v)}")
    return int(m[1]), int(m[2])


def release_text(r: tuple[int, int]) -> str:
    return f"{r[0]}.{r[1]}"


@dataclass(frozen=True)
class Releases:
    """The NCCL releases a generations file's constants cover (its ``[release]`` table).

    Attributes
    ----------
    oldest, newest : tuple of 2 ints
        ``(major, minor)`` of the oldest and newest release covered; the newest is the
        default, whose constants the file's tables hold.
    until : tuple of (release, values)
        Calibration-wide values of older releases (:data:`RELEASE_KEYS`), as
        :attr:`Generation.until`.
    """

    oldest: tuple[int, int]
    newest: tuple[int, int]
    until: tuple = ()

    def covered(self) -> str:
        """The releases covered, as ``2.17..2.30``."""
        return f"{release_text(self.oldest)}..{release_text(self.newest)}"

    def check(self, v: object, name: str = "nccl_release") -> tuple[int, int]:
        """``v`` as ``(major, minor)``, refused (UserError naming ``name``) unless a
        release this covers."""
        r = parse_release(v, name)
        if not self.oldest <= r <= self.newest:
            raise UserError(f"{name} {describe(v)} is not a release whose constants the "
                            f"data file holds: NCCL {self.covered()}")
        return r


#: The calibration-wide keys whose values a generations file gives by release
#: (``[[release.until]]``): NCCL's send/recv channels of a peer across the network and its
#: send/recv LL size rule.
RELEASE_KEYS = ("p2p_net_channel_bandwidth", "p2p_net_channels", "p2p_ll_per_channel")
