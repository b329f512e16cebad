"""The collective-cost protocol: how compute asks "how long does this collective take?".

compute knows nothing of fabrics or graphs. It asks a *collective cost model* for the time
of one collective among the ``group_size`` GPUs of a tensor-parallel instance, and anything
that answers the question plugs in: the :class:`ScaleUpLowerBound` default here (the
least time of the algorithms engines run on a GPU's scale-up switch, a lower bound), the
simple :class:`RingAlphaBeta` (the calibrated mode's default: the engine profiles were
fitted with it), or the topology-aware model in ``netmodel`` bound to a fabric graph and a
placement.

Conventions (the same as nccl-tests, so that numbers can be put beside measurements):

* ``op`` is one of :data:`OPERATIONS`.
* ``nbytes`` is the message size in bytes as nccl-tests counts it: the full buffer on each
  rank (for all-reduce the vector each rank holds; for all-gather the gathered output; for
  reduce-scatter the input before scattering; for all-to-all the whole send buffer).
  It may be a scalar or a numpy array (one entry per configuration of a grid); the answer
  then has the same shape.
* ``group_size`` is a whole number of GPUs >= 1 (an int or a numpy integer); sizes are
  finite and >= 0 bytes. :func:`check_group_size` and :func:`check_nbytes` refuse anything
  else (a string, a bool, a fraction, a negative or NaN) with one line; every model here
  uses them.
* The answer is seconds. A group of one GPU costs zero.
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np

from compute.errors import UserError, chosen, known, lookalike
from compute.validate import describe, flag, holds_flag, is_whole, limits, number

__all__ = ["OPERATIONS", "CollectiveCostModel", "CollectiveTimeFunction", "CommLike",
           "FunctionComm", "NoCommunication", "RingAlphaBeta", "ScaleUpLowerBound", "as_comm",
           "as_times", "check_group_size", "check_nbytes", "check_op", "collective_args",
           "least_time"]

#: The largest group check_group_size takes: 2**53, the largest whole number a float (the
#: cost formulas' arithmetic) holds exactly; above it a size is not a count of GPUs.
MAX_GROUP_SIZE = 2**53

#: Collective operations understood across netmodel (names as typed on the command line).
OPERATIONS = (
    "all-reduce",
    "reduce-scatter",
    "all-gather",
    "broadcast",
    "reduce",
    "all-to-all",
    "send-recv",
)


def check_op(op: str) -> str:
    """Return ``op`` if it is a known operation, else raise :class:`UserError`."""
    text = chosen(op, OPERATIONS)
    if text is None:
        raise UserError(f"unknown collective operation {describe(op)}"
                        f"{lookalike(op, OPERATIONS)}; known: "
                        f"{known(OPERATIONS)}")
    return text


def check_group_size(group_size: int) -> int:
    """``group_size`` as an int if it is a whole number of GPUs >= 1 (an int or a numpy
    integer, not a bool, string or float), else :class:`UserError`. Cheap: it is on the
    hot path of every search.

    >>> check_group_size(np.int64(8))
    8
    """
    if type(group_size) is int:
        if 1 <= group_size <= MAX_GROUP_SIZE:
            return group_size
    elif (isinstance(group_size, np.integer) and not isinstance(group_size, np.timedelta64)
          and 1 <= group_size <= MAX_GROUP_SIZE):
        return int(group_size)
    if is_whole(group_size) and group_size > MAX_GROUP_SIZE:
        raise UserError(f"group_size must be a whole number of GPUs from 1 to {MAX_GROUP_SIZE:,} "
                        f"(2**53, the largest a float counts exactly), got "
                        f"{describe(group_size)}")
    raise UserError(f"group_size must be a whole number of GPUs >= 1, got {describe(group_size)}")


def as_times(out, op: str, who: str = "collective model") -> np.ndarray:
    """What a collective-cost model returned, as float seconds: real numbers only (ints,
    floats, numpy's); a bool, complex number, string, None or other object is a
    :class:`UserError` naming it (numpy would take True as 1 s and drop an imaginary part).
    The range (>= 0, finite) is the caller's to check. Cheap for a float array."""
    if type(out) is np.ndarray and out.dtype.kind == "f":
        return out
    try:
        t = np.asarray(out)
        # a list mixing True with numbers is an int or float array: True read as 1 s
        if t.dtype.kind in "iuf" and (type(out) is np.ndarray or not holds_flag(out)):
            return t.astype(float, copy=False)
        if t.dtype.kind == "O" and all(isinstance(x, numbers.Real)
                                       and not isinstance(x, bool | np.bool_) for x in t.flat):
            return t.astype(float)
    except (TypeError, ValueError, OverflowError):
        pass
    raise UserError(f"{who} returned {describe(out)} for {op}; it must return seconds, one "
                    f"number per message size")




def check_nbytes(nbytes: float | np.ndarray, positive: bool = False) -> float | np.ndarray:
    """``nbytes`` (a number or an array of them) as float(s) if every size is finite and
    >= 0 bytes (> 0 with ``positive``: a fabric's collectives move at least a byte), else
    :class:`UserError`; a float comes back as it is (cheap: it is on the hot path of every
    search). Bools, complex numbers, strings, dates and times are not sizes."""
    rule = "> 0" if positive else ">= 0"
    if type(nbytes) is float:
        if (0.0 < nbytes if positive else 0.0 <= nbytes) and nbytes < np.inf:
            return nbytes
        raise UserError(f"message size must be a finite number of bytes {rule}, got {nbytes!r}")
    if isinstance(nbytes, str | bytes | bool | np.bool_):
        raise UserError(f"message size must be a number of bytes, got {describe(nbytes)}")
    try:
        n = np.asarray(nbytes)
        if n.dtype.kind == "O":   # ints beyond int64, or mixed objects: numbers one by one
            if not all(isinstance(x, numbers.Real) and not isinstance(x, bool | np.bool_)
                       for x in n.flat):
                raise TypeError
            n = n.astype(float)
        elif n.dtype.kind in "iuf":
            if type(nbytes) is not np.ndarray and holds_flag(nbytes):   # [True, 8]: 1 B?
                raise TypeError
            n = n.astype(float, copy=False)
        else:   # bools, complex, strings, dates, times
            raise TypeError
    except OverflowError:
        raise UserError(f"message size must be a finite number of bytes {rule}, got "
                        f"{describe(max((x for x in n.flat if isinstance(x, int)), key=abs))}") from None
    except (TypeError, ValueError):
        raise UserError(f"message size must be a number of bytes, got {describe(nbytes)}") from None
    if n.size and not ((0.0 < n.min() if positive else 0.0 <= n.min())   # NaN fails this
                       and n.max() < np.inf):
        bad = n[~(np.isfinite(n) & ((n > 0) if positive else (n >= 0)))] if n.ndim else n
        raise UserError(f"message size must be a finite number of bytes {rule}, got "
                        f"{float(bad.flat[0])!r}")
    return n


def collective_args(op: str | None, nbytes: float | np.ndarray,
                    group_size: int) -> tuple[np.ndarray, int]:
    """The arguments of a ``collective_time`` checked as every cost model checks them: ``op``
    by :func:`check_op` (skipped where ``None``: a method of one operation), ``nbytes`` by
    :func:`check_nbytes` as a float array, ``group_size`` by :func:`check_group_size`.

    >>> collective_args("all-reduce", 1024, 8)
    (array(1024.), 8)
    """
    if op is not None:
        op = check_op(op)
    return np.asarray(check_nbytes(nbytes), dtype=float), check_group_size(group_size)


@runtime_checkable
class CollectiveCostModel(Protocol):
    """Anything that can time a collective among ``group_size`` GPUs.

    ``collective_time(op, nbytes, group_size)`` returns seconds, elementwise over
    ``nbytes`` when it is an array.

    Optional: ``for_instance(gpus, stage)``, a model of the same kind for the collectives
    of an instance of ``gpus`` GPUs (``tp x pp``) in pipeline stages of ``stage`` GPUs
    (``tp``; its members stage after stage), for one whose groups of fewer GPUs (a
    pipeline stage's TP group, an attention group) are not all placed alike: it then times
    a group of ``group_size < gpus`` as the instance's groups of that size run (a pipeline
    runs at its slowest stage), and a ``send-recv`` (group size 2, a stage boundary's) on
    the pairs that carry it, GPU ``i`` of a stage to GPU ``i`` of the next (``stage``
    members apart). The grid asks it for every row whose groups are smaller than its
    instance (:func:`compute.roofline.evaluate_grid`); a model without it times every
    group of one size alike.
    """

    def collective_time(self, op: str, nbytes: float | np.ndarray,
                        group_size: int) -> np.ndarray: ...


#: A plain function ``(op, nbytes_array, group_size) -> seconds_array``.
CollectiveTimeFunction = Callable[[str, np.ndarray, int], np.ndarray]

#: What a ``comm=`` argument accepts: a cost model or a plain function (:func:`as_comm`).
CommLike = CollectiveCostModel | CollectiveTimeFunction


@dataclass(frozen=True)
class FunctionComm:
    """A plain function used as a collective-cost model (see :func:`as_comm`)."""

    function: CollectiveTimeFunction

    def collective_time(self, op: str, nbytes: float | np.ndarray,
                        group_size: int) -> np.ndarray:
        n, p = collective_args(op, nbytes, group_size)
        if p == 1:
            return np.zeros_like(n)
        who = f"comm function {describe(self.name)}"
        t = as_times(self.function(op, n, p), op, who)
        if t.shape not in (n.shape, ()):
            raise UserError(f"{who} returned shape {t.shape} for message sizes of shape "
                            f"{n.shape}; it must return one time per size")
        ok = np.isfinite(t) & (t >= 0)
        if not np.all(ok):
            bad = float(t[~ok].flat[0])
            kind = "not a number" if bad != bad else "an infinite time" if bad == np.inf \
                else "a negative time"
            raise UserError(f"{who} returned {bad!r} s for {op} among {p} GPUs, {kind}; it "
                            f"must return finite seconds >= 0")
        return np.broadcast_to(t, n.shape).astype(float)

    @property
    def name(self) -> str:
        """The function's name, as errors give it (a callable object's: its class's)."""
        name = getattr(self.function, "__name__", None)
        return name if isinstance(name, str) else type(self.function).__name__


def as_comm(comm: CommLike) -> CollectiveCostModel:
    """``comm`` as a collective-cost model: an object with ``collective_time`` passes
    through; a plain callable ``(op, nbytes_array, group_size) -> seconds_array`` is wrapped
    (:class:`FunctionComm`).

    >>> m = as_comm(lambda op, n, p: 1e-6 + n / 100e9)
    >>> float(m.collective_time("all-reduce", 1e9, 8))
    0.010001
    >>> float(m.collective_time("all-reduce", 1e9, 1))   # one GPU never communicates
    0.0
    """
    if hasattr(comm, "collective_time"):
        return comm
    if callable(comm):
        return FunctionComm(comm)
    raise UserError(f"comm must be a function (op, nbytes, group_size) -> seconds or an "
                    f"object with a collective_time method, got {type(comm).__name__}")


@dataclass(frozen=True)
class NoCommunication:
    """An ideal network: every collective is free (the study's "ideal network" case)."""

    def collective_time(self, op: str, nbytes: float | np.ndarray,
                        group_size: int) -> np.ndarray:
        return np.zeros_like(collective_args(op, nbytes, group_size)[0])


class _ByFormula:
    """A collective-cost model given by a closed form: its ``time(op, n, p)`` for a known
    ``op`` and ``p > 1``, checked and extended to one GPU here, once for every such model."""

    def collective_time(self, op: str, nbytes: float | np.ndarray,
                        group_size: int) -> np.ndarray:
        """Seconds, elementwise over ``nbytes`` (a plain float gives a plain float: the
        same operations, so the same number as an array's element)."""
        op = check_op(op)
        n = check_nbytes(nbytes)
        p = check_group_size(group_size)
        if p == 1:
            return 0.0 if type(n) is float else np.zeros_like(n)
        return self.time(op, n, p)


@functools.cache
def _term_ranges() -> tuple:
    """``(field, minimum, maximum, unit)`` of :func:`_check_terms`: the bandwidth and step
    latency a fabric's link takes (compute/data/limits.toml), the efficiency from a
    profile's least (1e-4) to 1."""
    from compute.profiles import PARAMETERS

    span = limits("quantity")
    bw, lat = span["link_bandwidth"], span["link_latency"]
    return (("bandwidth", bw.minimum, bw.maximum, bw.unit),
            ("step_latency", lat.minimum, lat.maximum, lat.unit),
            ("efficiency", PARAMETERS["gemm_efficiency"].minimum, 1.0, ""))


def _check_terms(model: object) -> None:
    """Each of a closed-form model's ``bandwidth``, ``step_latency`` and ``efficiency`` a
    plain float in its range (:func:`_term_ranges`), set so, or one line naming it: a
    Decimal, text, an array or 10**30 raised numpy's TypeError from the check, a subnormal
    bandwidth or efficiency (5e-324) gave infinite times, True was 1 B/s."""
    for key, lo, hi, unit in _term_ranges():
        value = getattr(model, key)
        if type(value) is not float or not lo <= value <= hi:   # a float in range: as given
            object.__setattr__(model, key, number("", key, value, minimum=lo, maximum=hi,
                                                  unit=unit))


@dataclass(frozen=True)
class RingAlphaBeta(_ByFormula):
    """Ring algorithms on a uniform network (:func:`compute.roofline.ring_comm`): the
    calibrated mode's default when no fabric is given (engine profiles were fitted with
    it), and the study's ``ring`` network. Not a bound on what engines measure where latency
    dominates (their one-shot and two-shot all-reduces take fewer steps) nor on NCCL's NVLS
    at large sizes: :class:`ScaleUpLowerBound`, the roofline's default, is one.

    Each GPU sends and receives ``bandwidth`` bytes/s per direction (its scale-up
    bandwidth), and each of the ring's steps costs ``step_latency`` seconds. For ``p`` GPUs
    and ``n`` bytes (textbook Hockney costs, e.g. Thakur, Rabenseifner & Gropp 2005):

    * all-reduce: ``2(p-1) alpha + 2(p-1)/p n / B``
    * reduce-scatter, all-gather: ``(p-1) alpha + (p-1)/p n / B``
    * all-to-all (pairwise exchange): ``(p-1) alpha + (p-1)/p n / B``
    * broadcast, reduce (pipelined ring): ``(p-1) alpha + n / B``
    * send-recv: ``alpha + n / B``

    Defaults: ``step_latency`` 1.9 us is NCCL's per-step hardware latency for ring/LL128 on
    NVLink (../shared/reference/nccl_tuning_constants.csv, from NVIDIA/nccl
    src/graph/tuning.cc); ``efficiency`` 0.92 is NCCL's LL128 bandwidth factor (120 of
    every 128 bytes are payload), from the same file.

    >>> m = RingAlphaBeta(bandwidth=100e9, step_latency=1e-6, efficiency=1.0)
    >>> round(float(m.collective_time("all-reduce", 8e9, 8)), 9)  # 14 us + 2*7/8*8e9/1e11 s
    0.140014
    >>> float(m.collective_time("all-reduce", 8e9, 1))
    0.0
    """

    #: how outputs name the model (``netmodel infer``'s collectives line and JSON)
    label: ClassVar[str] = "ring alpha-beta over scale-up bandwidth"
    bandwidth: float
    step_latency: float = 1.9e-6
    efficiency: float = 0.92

    def __post_init__(self):
        _check_terms(self)

    def time(self, op: str, n: float | np.ndarray, p: int) -> float | np.ndarray:
        """The formula of :meth:`collective_time` for a known ``op``, ``p > 1`` GPUs and
        ``n`` bytes (a float or an array), unchecked: ``fixed + share * n * beta`` with
        the :meth:`terms` of ``(op, p)``."""
        fixed, share, beta = self.terms(op, p)
        return fixed + share * n * beta

    def terms(self, op: str, p: int) -> tuple[float, float, float]:
        """``(fixed, share, beta)`` of a known ``op`` among ``p > 1`` GPUs: ``n`` bytes
        take ``fixed + share * n * beta`` seconds (evaluated in that order; a caller that
        times many messages of one operation asks once).

        >>> RingAlphaBeta(bandwidth=100e9, step_latency=1e-6, efficiency=1.0).terms(
        ...     "all-reduce", 8)
        (1.4e-05, 1.75, 1e-11)
        """
        beta = 1.0 / (self.bandwidth * self.efficiency)
        a = self.step_latency
        if op == "all-reduce":
            return 2 * (p - 1) * a, 2 * (p - 1) / p, beta
        if op in ("reduce-scatter", "all-gather", "all-to-all"):
            return (p - 1) * a, (p - 1) / p, beta
        if op in ("broadcast", "reduce"):
            return (p - 1) * a, 1.0, beta   # 1.0 * n is n exactly
        return a, 1.0, beta  # send-recv


@functools.lru_cache(maxsize=1024)
def least_time(pairs: tuple, n: float, beta: float) -> float:
    """The least ``fixed + share * n * beta`` over ``pairs`` of ``(fixed, share)``, for
    one message of ``n`` bytes (plain floats: the formula of
    :meth:`ScaleUpLowerBound.time`, which a caller holding its :meth:`~ScaleUpLowerBound.terms`
    evaluates without the method).

    >>> round(least_time(((1e-06, 7.0), (2e-06, 1.75)), 8e3, 1e-11), 12)   # one-shot
    1.56e-06
    """
    fixed, share = pairs[0]
    t = fixed + share * n * beta
    for fixed, share in pairs[1:]:
        u = fixed + share * n * beta
        if u < t:
            t = u
    return t


def _bound_terms(op: str, p: int, a: float, in_switch: bool) -> tuple:
    """The ``(fixed, share)`` pairs of :meth:`ScaleUpLowerBound.terms`: each algorithm's
    cost ``fixed + share * n * beta``, less any another matches or beats in both terms."""
    q = (p - 1) / p
    if op == "all-reduce":
        algs = [(2 * (p - 1) * a, 2 * q), (a, float(p - 1)), (2 * a, 2 * q)]
        if in_switch:
            algs.append((a, 1.0))
    elif op in ("reduce-scatter", "all-gather", "all-to-all"):
        algs = [((p - 1) * a, q), (a, q)]
    elif op in ("broadcast", "reduce"):
        algs = [((p - 1) * a, 1.0), (a, float(p - 1)), (2 * a, 2 * q)]
        if in_switch:
            algs.append((a, 1.0))
    else:   # send-recv
        algs = [(a, 1.0)]
    kept = []
    for k, (f, s) in enumerate(algs):
        if not any((g <= f and t <= s) and (g, t) != (f, s) or ((g, t) == (f, s) and j < k)
                   for j, (g, t) in enumerate(algs)):
            kept.append((f, s))
    return tuple(kept)


@dataclass(frozen=True)
class ScaleUpLowerBound(_ByFormula):
    """A lower bound on a collective inside one scale-up domain (NVSwitch-class, a full
    crossbar): the least time of the algorithms engines run there; the roofline's default
    when no fabric is given (:func:`compute.roofline.bound_comm` makes it for a GPU).

    Each GPU sends and receives ``bandwidth`` bytes/s per direction and each dependent step
    costs at least ``step_latency`` seconds. For ``p`` GPUs, ``n`` bytes (nccl-tests
    sizes) and ``alpha`` the step latency, each operation costs the least of:

    * all-reduce: NCCL's ring ``2(p-1) alpha + 2(p-1)/p n/B``; one-shot (every GPU reads
      every peer's whole buffer and reduces it itself: vLLM's custom all-reduce,
      vllm-project/vllm PR 2192; TensorRT-LLM's ONESHOT) ``alpha + (p-1) n/B``; two-shot
      (a direct reduce-scatter then all-gather: TensorRT-LLM's TWOSHOT and MultiShot,
      NVIDIA's '3x Faster AllReduce with NVSwitch and TensorRT-LLM MultiShot')
      ``2 alpha + 2(p-1)/p n/B``; and where the switch reduces (``in_switch``: NVLink
      SHARP, NCCL's NVLS, each GPU's buffer reduce-stored through the switch into every
      GPU's once) ``alpha + n/B``, which keeps the bound below NCCL's NVLS at large sizes
      (busbw 480 GB/s on 8 H100 and H200, above any algorithm without the switch's
      reduction: ``2(p-1)/p n/B`` is 450 GB/s of busbw at most);
    * reduce-scatter, all-gather, all-to-all: direct, each GPU to every other at once,
      ``alpha + (p-1)/p n/B`` (a ring's ``(p-1) alpha`` never beats it);
    * broadcast, reduce: pipelined ring ``(p-1) alpha + n/B``, direct ``alpha +
      (p-1) n/B``, scatter (reduce-scatter) and all-gather (gather) ``2 alpha +
      2(p-1)/p n/B``, and with ``in_switch`` multicast (in-switch reduction)
      ``alpha + n/B``;
    * send-recv: ``alpha + n/B``.

    Defaults, each chosen as the least a sourced constant supports, so that the time is a
    bound: ``step_latency`` 0.6 us is the smallest per-step NVLink hardware latency in
    NCCL's table (the LL protocol's, ring and tree alike;
    ../shared/reference/nccl_tuning_constants.csv, NVIDIA/nccl src/graph/tuning.cc),
    without NCCL's base latency of a launch (6.6-14 us), which engines' CUDA-graph kernels
    largely avoid: a step that writes data with its flag as LL does, the fastest way a
    one-shot kernel knows its peers' data arrived. Measured small all-reduces among 8 GPUs
    on H100's NVLink stay above it: NCCL's 12.5-16.7 us on 8 H20
    (../shared/reference/nccl_small_message_latency.csv), SGLang's TensorRT-LLM-derived
    custom all-reduce 5.7-5.9 us and vLLM's 9.3-10.1 us at 512 B-4 KiB on 8 H100 without
    CUDA graphs (sgl-project/sglang PR 2904). ``efficiency`` 1.0 is the Simple
    protocol's (NCCL applies LL128's 0.92 and LL's 0.5, and no factor to Simple): no protocol
    carries payload faster than the link. ``in_switch`` follows the GPU's
    ``scaleup_reduction`` in :func:`compute.roofline.bound_comm`.

    >>> m = ScaleUpLowerBound(bandwidth=100e9, step_latency=1e-6, in_switch=False)
    >>> m.terms("all-reduce", 8)   # one-shot and two-shot; the ring is two-shot's or more
    (((1e-06, 7.0), (2e-06, 1.75)), 1e-11)
    >>> round(float(m.collective_time("all-reduce", 8e3, 8)), 12)   # one-shot: 1 + 0.56 us
    1.56e-06
    >>> round(float(m.collective_time("all-reduce", 8e9, 8)), 9)    # two-shot: 2 us + 0.14 s
    0.140002
    >>> ScaleUpLowerBound(bandwidth=100e9, step_latency=1e-6).terms("all-reduce", 8)[0]
    ((1e-06, 1.0),)
    >>> float(m.collective_time("all-reduce", 8e9, 1))
    0.0
    """

    #: how outputs name the model (``netmodel infer``'s collectives line and JSON)
    label: ClassVar[str] = "lower bound over scale-up switch algorithms"
    bandwidth: float
    step_latency: float = 0.6e-6
    efficiency: float = 1.0
    in_switch: bool = True

    def __post_init__(self):
        _check_terms(self)   # the same checks as RingAlphaBeta's
        # numpy's bool kept as Python's (compute.validate.flag)
        object.__setattr__(self, "in_switch", flag("", "in_switch", self.in_switch))

    def time(self, op: str, n: float | np.ndarray, p: int) -> float | np.ndarray:
        """The formula of :meth:`collective_time` for a known ``op``, ``p > 1`` GPUs and
        ``n`` bytes (a float or an array), unchecked: the least ``fixed + share * n *
        beta`` over the :meth:`terms` of ``(op, p)``."""
        pairs, beta = self.terms(op, p)
        if type(n) is float:
            return least_time(pairs, n, beta)
        fixed, share = pairs[0]
        t = fixed + share * n * beta
        for fixed, share in pairs[1:]:
            t = np.minimum(t, fixed + share * n * beta)
        return t

    def terms(self, op: str, p: int) -> tuple[tuple, float]:
        """``(pairs, beta)`` of a known ``op`` among ``p > 1`` GPUs: ``n`` bytes take the
        least ``fixed + share * n * beta`` over the ``(fixed, share)`` pairs (evaluated in
        that order), one pair per algorithm that some size makes the cheapest."""
        return (_bound_terms(op, int(p), float(self.step_latency), self.in_switch),
                1.0 / (self.bandwidth * self.efficiency))
