"""The wait of a request for its prefill batch at a stated load: M/D/1 at batch 1
(DistServe), bulk service for a batch of up to B, a batch of k at its own cycle
(:func:`bulk_wait`) or every batch at the full one's (:func:`batch_wait`, M/D^B/1), and
for a decode slot as those batches bring the requests (:func:`mxdc_wait`), for
:mod:`netmodel.study.serving`'s TTFT with queueing.

**One prompt at a time: M/D/1.** DistServe (Zhong et al., OSDI 2024, arXiv 2401.09670,
Section 3.1) models a prefill instance serving one request at a time as an M/D/1 queue:
Poisson arrivals at ``R`` requests/s, each taking ``D`` s, so that
``Avg_TTFT = D + R D^2 / (2 (1 - R D))``: the Pollaczek-Khinchine mean wait of a
deterministic service (:func:`md1_wait`).

**A batch of up to ``B`` prompts: M/D^B/1, bulk service** (Bailey, 'On queueing processes
with bulk service', J. R. Stat. Soc. B 16, 1954; the 'dynamic batching' of Yang et al.,
arXiv 2407.05347, Section IV). The instance is a server that, whenever it is free and a
request waits, starts a batch of every waiting request up to ``B``, and each batch takes
``c`` seconds whatever its size: the step at batch ``B`` (or, pipelined, the interval at
which the pipeline takes a batch; with the KV transfer, the larger of that and the
transfer, :mod:`~netmodel.study.serving`'s cycle). Arrivals are Poisson at the ``load``
``rho`` of the instance's capacity ``B / c``: ``a = rho B`` arrive in a step on average.

The requests left waiting at a batch's end, ``X``, follow ``X' = max(X - B, 0) + A`` (``A``
Poisson of mean ``a``; an idle server starts on the first arrival alone, which gives the
same step), whose generating function is Bailey's::

    P(z) = (B - a) (z - 1) e^(a (z - 1)) / (z^B - e^(a (z - 1))) x prod_k (z - z_k) / (1 - z_k)

over the ``B - 1`` roots ``z_k`` of ``z^B = e^(a (z - 1))`` inside the unit circle
(``z_k = w_k e^(rho (z_k - 1))``, ``w_k`` the ``B``-th roots of unity but 1). From it:
``E[X] = a - (B (B - 1) - a^2) / (2 (B - a)) + sum_k 1 / (1 - z_k)``, ``P(X = 0) = p0 =
(B - a) prod_k -z_k / (1 - z_k)``. A step carries ``Y = max(X - B, 0)`` requests over from
the one before (``E[Y] = E[X] - a``) and gathers ``a / 2`` on average while it runs; steps
come every ``c + p0 / lambda`` on average (an idle wait after an empty end), so by Little's
law the mean wait before a request's batch starts is::

    W = c (E[Y] + a / 2) / (a + p0)

With ``B = 1``: ``E[Y] = rho^2 / (2 (1 - rho))``, ``p0 = 1 - rho``, ``W = rho c / (2 (1 -
rho))``, DistServe's M/D/1. As the load goes to 0 the roots go to the roots of unity,
``sum_k 1 / (1 - w_k) = (B - 1) / 2`` and ``W`` to 0: the step's TTFT alone. At a high
load a large batch's instance runs back to back and a request waits about half a step, for
the batch in progress (0.51 steps at ``B = 256``, ``rho = 0.95``), a small batch's several
(9.5 steps at ``B = 1``, 2.74 at ``B = 4``), every one growing without bound as ``rho ->
1``.

**A partial batch at its own time** (:func:`bulk_wait`, what
:mod:`~netmodel.study.serving` charges). A batch of ``k <= B`` requests takes ``S_k``, the
prefill's cycle at batch ``k``, so a lightly loaded instance runs short batches: the
bulk-service queue with batch-size-dependent service (M/G_k^(1,B)/1 with ``G_k``
deterministic). The policy is the one above: a free instance takes every waiting request
up to ``B``; an idle one starts on the first arrival alone (a batch of 1, ``S_1``). The
arrival rate is the load's share of the full batch's rate, ``lambda = rho B / S_B``, and the
queue is stable for ``rho < 1`` (a long queue runs full batches). Its exact mean wait, by
the embedded chain of the requests left waiting at a batch's end, ``X``: from ``x >= 1`` the
next batch takes ``k = min(x, B)`` and ``X' = x - k + A_k`` (``A_k`` Poisson of mean ``a_k =
lambda S_k``); from 0, ``X' = A_1`` after an idle wait of ``1 / lambda``. Above ``B - 1`` the
chain is the full-batch one (``a = a_B``), so it is solved on its ``B`` boundary states
``0 .. B - 1``: from ``j`` it goes to ``A_j`` (``A_1`` from 0), and from there, if
``A_j = y >= B``, steps ``x -> x - B + A`` until it drops below ``B``, landing at ``l`` with
probabilities ``r_y``. Since ``z^X`` is a martingale above ``B - 1`` for each root ``z_k`` of
``z^B = e^(a (z - 1))`` in the closed unit disk (1 included), ``sum_l r_y[l] z_k^l = z_k^y``:
``r_y`` holds the coefficients of ``z^y mod Pi(z)``, ``Pi = prod_k (z - z_k)``, so ``r_B =
z^B - Pi`` (Pi's coefficients from its values on the unit circle, by an FFT) and
``r_(y+1) = shift(r_y) + r_y[B - 1] r_B``: sums of nonnegative terms, no cancellation.
Wald's identities give the excursion's mean steps ``T(y) = (y - E[L_y]) / (B - a)`` and mean
sum of ``x``, ``(y^2 - E[L_y^2] + T(y) ((B - a)^2 + a)) / (2 (B - a))``. The boundary
chain's stationary law ``nu`` (a ``B x B`` stochastic matrix, solved directly) and
renewal-reward then give the time-average number waiting, ``L``, and ``W = L / lambda``
(Little): per boundary visit, the queue grows from 0 over the batch (``lambda S_j^2 / 2``
request-seconds), and each excursion state ``x`` adds ``(x - B) S_B + lambda S_B^2 / 2``
over ``S_B`` seconds. ``A_j`` is cut ``12 sqrt(a_j) + 40`` past its mean (Bernstein's bound:
the mass cut is below ``1e-25``; the computed one is checked below ``1e-13``). With every
``S_k = S_B`` it is :func:`batch_wait` (to ``1e-9``); at ``B = 1``, M/D/1. A full cycle for
every batch overstates the wait at a moderate load, where most batches are short:
DeepSeek-V3's batch 112 on ``h100-dgx`` (a cycle of 769.2 ms at 112 prompts, 95.1 ms at
one) waits 123.3 ms at load 0.8, 384.8 ms were every batch a full one.

Assumptions: Poisson arrivals, each prefill instance its own queue at the pool's load (the
pool's instances share the load evenly), first come first served, a batch's time that of
its own size (:func:`bulk_wait`; :func:`batch_wait`: of a full batch), no batch waiting to
fill (a free instance starts at once). A decode instance is M^X/D/c (:func:`mxdc_wait`):
a request waits for one of its batch's ``c`` slots (continuous batching: a sequence leaves
when done, the next joins), held for the request's decode time, the requests coming in
the bunches a prefill batch sends at once, of the sizes the prefill queue's batches take
(:func:`bulk_sizes`), at Poisson instants (one at a time: M/D/c, :func:`mdc_wait`); its
TBT is the step of the full batch, which the load does not lengthen while the pool is
below capacity.

>>> md1_wait(0.5, 1.0)        # rho = 0.5: half a service
0.5
>>> float(batch_wait(0.5, 1, 1.0)) == md1_wait(0.5, 1.0)
True
"""

from __future__ import annotations

import contextlib
import functools
import math
import numbers
import threading
from typing import TYPE_CHECKING

from compute.errors import UserError
from compute.validate import describe, number

if TYPE_CHECKING:
    import numpy as np

__all__ = ["LOAD_HELP", "LOAD_RANGE", "MIN_LOAD", "batch_wait", "bulk_sizes", "bulk_wait",
           "check_load", "load_text", "md1_wait", "mdc_wait", "mxdc_wait"]

#: The least load a workload may state: a millionth of the pools' capacity. Below it the
#: wait is nil (under 1e-6 of a cycle at any batch) and a rate's pools, sized to run at the
#: load, grow past any count (``--load 1e-305 --rate 1e9``: more instances than a float
#: holds).
MIN_LOAD = 1e-6
#: What a stated load must be, in the refusal's words.
LOAD_RANGE = f"a number from {MIN_LOAD:g} to 1, 1 excluded (a fraction of the pools' capacity)"
#: What a load of the queue must be (a pool's achieved load may be far below MIN_LOAD).
_ANY_LOAD = "a number between 0 and 1, both excluded (a fraction of the pools' capacity)"
#: What a load is: the description of
#: :attr:`netmodel.study.serving.ServingWorkload.load` and of ``serve --load`` (this module
#: loads numpy only to compute, so that the command's help is written without it).
LOAD_HELP = ("Fraction of the pools' capacity at which requests arrive (Poisson), from "
             f"{MIN_LOAD:g} to 1 (1 excluded): the TTFT then includes the mean wait for a "
             "prefill batch (M/D/1 for one prompt a batch, as DistServe; bulk service for a "
             "batch of up to B, a batch of k prompts taking the cycle at batch k) and for a "
             "decode slot (M^X/D/c over the decode batch's slots, the requests coming in "
             "the prefill's batches), and the SLO is checked on it. Unset: the TTFT of the steps alone, no queueing.")


def check_load(value: object, where: str = "", least: float = MIN_LOAD) -> float:
    """``value`` as a float if it is a load (a finite number from ``least`` to 1, 1
    excluded; ``least`` 0: above 0), else one line naming it and the range.

    >>> check_load(0.8)
    0.8
    >>> check_load(1)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: load must be a number from 1e-06 to 1, 1 excluded (a fraction \
of the pools' capacity), got 1
    >>> check_load(1e-9, least=0)
    1e-09
    """
    v = math.nan
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        try:
            v = float(value)
        except (TypeError, ValueError, OverflowError, ArithmeticError):
            v = math.nan   # an integer past a float's range
    if not (0 < v < 1 and v >= least):
        head = f"{where}: " if where else ""
        raise UserError(f"{head}load must be {LOAD_RANGE if least else _ANY_LOAD}, got "
                        f"{describe(value)}")
    return v


def load_text(load: float, digits: int = 6) -> str:
    """``load`` to ``digits`` significant digits, more where fewer would round it to 1 (a
    load is below 1).

    >>> load_text(0.8), load_text(0.999999999), load_text(0.99996, 3)
    ('0.8', '0.999999999', '0.99996')
    """
    text = f"{load:.{digits}g}"
    while float(text) >= 1 and digits < 17:
        digits += 1
        text = f"{load:.{digits}g}"
    return text


#: The most a rate or a service time may be (a float's range is far past any queue's).
_MOST = 1e30

#: The most servers (a decode instance's slots) or batch a wait is worked out for: each
#: takes that many roots in complex arrays (16 bytes each, a few at once: about 0.1 GB here;
#: 10^9, which was taken, needed about 16 GB). A million sequences at once is far past any
#: serving engine's batch (vLLM's max_num_seqs defaults to 256-1024).
MOST_SERVERS = 2**20


def _seconds(where: str, key: str, value: object) -> float:
    """``value`` as seconds a request holds a server: a number from 0 to 1e30."""
    return number(where, key, value, minimum=0, maximum=_MOST, unit="s")


def _batches(batch: object) -> np.ndarray:
    """:func:`batch_wait`'s ``batch``, a whole number from 1 to ``MOST_SERVERS`` or an array
    of them, as an int array (each is a root-finding of that many roots: checked first)."""
    import numpy as np

    b = np.asarray(batch) if isinstance(batch, np.ndarray) else None
    if b is None:
        return np.asarray(number("batch_wait", "batch", batch, minimum=1, maximum=MOST_SERVERS,
                                 integer=True))
    ok = b.size and b.dtype.kind in "iu" and b.min() >= 1 and b.max() <= MOST_SERVERS
    if not ok:
        raise UserError(f"batch_wait: batch must be a whole number from 1 to "
                        f"{MOST_SERVERS:,} or an array of them, got {describe(batch)}")
    return b.astype(int)


def _cycles(cycle: object) -> float | np.ndarray:
    """:func:`batch_wait`'s ``cycle``, seconds from 0 to 1e30, or an array of them."""
    import numpy as np

    if not isinstance(cycle, np.ndarray):
        return _seconds("batch_wait", "cycle", cycle)
    c = cycle.astype(float) if cycle.dtype.kind in "iuf" and cycle.size else None
    if c is None or not (np.all(c >= 0) and np.all(c <= _MOST)):
        raise UserError(f"batch_wait: cycle must be seconds from 0 to {_MOST:g} or an array "
                        f"of them, got {describe(cycle)}")
    return c


def md1_wait(rate: float, service: float) -> float:
    """Mean wait in queue of an M/D/1 queue, ``R D^2 / (2 (1 - R D))`` (DistServe's
    ``Avg_TTFT`` less ``D``), for ``rate`` ``R`` arrivals/s and a service of ``service``
    ``D`` seconds (``R D < 1``)."""
    rate = number("md1_wait", "rate", rate, minimum=0, maximum=_MOST, unit="/s")
    service = _seconds("md1_wait", "service", service)
    rho = check_load(rate * service, "M/D/1 with rate x service", least=0)
    return rate * service ** 2 / (2 * (1 - rho))


def _roots(rho: float, batch: int) -> np.ndarray:
    """The ``batch - 1`` roots of ``z^B = e^(rho B (z - 1))`` inside the unit circle:
    ``z = w e^(rho (z - 1))`` for each ``B``-th root of unity ``w`` but 1, by fixed-point
    steps (a contraction of factor ``rho``), then Newton's."""
    import numpy as np

    w = np.exp(2j * np.pi * np.arange(1, batch) / batch)
    z = w * math.exp(-rho)
    for _ in range(5):
        z = w * np.exp(rho * (z - 1))
    for _ in range(100):   # quadratic: 4 or 5 steps to the rounding of |z| <= 1
        f = w * np.exp(rho * (z - 1))
        step = (z - f) / (1 - rho * f)
        z = z - step
        if not np.any(np.abs(step) > 1e-14):
            break
    return z


@functools.lru_cache(maxsize=4096)
def _carried(rho: float, batch: int) -> tuple[float, float]:
    """``E[Y] = E[max(X - B, 0)]`` and ``p0 = P(X = 0)`` of the chain ``X' = max(X - B, 0) +
    A``, ``A`` Poisson of mean ``rho B`` (Bailey's roots and products, the module docstring)."""
    import numpy as np

    if batch == 1:
        return rho * rho / (2 * (1 - rho)), 1 - rho
    a = rho * batch
    z = _roots(rho, batch)
    carried = -(batch * (batch - 1) - a * a) / (2 * (batch - a)) + float(np.sum(1 / (1 - z)).real)
    p0 = (batch - a) * math.exp(float(np.sum(np.log(-z / (1 - z))).real))
    return max(carried, 0.0), p0


@functools.lru_cache(maxsize=4096)
def _unit_wait(rho: float, batch: int) -> float:
    """:func:`batch_wait` in steps (``c = 1``)."""
    carried, p0 = _carried(rho, batch)
    a = rho * batch
    return (carried + a / 2) / (a + p0)


def mdc_wait(load: float, servers: int, service: float) -> float:
    """Mean wait in queue of M/D/c: Poisson arrivals at ``load`` of ``servers`` servers'
    capacity, each request holding one for ``service`` seconds, first come first served.
    Exact (Crommelin, 'Delay probability formulae when the holding times are constant',
    Post Office Electrical Engineers' Journal 25, 1932): the requests present at instants
    ``service`` apart follow the bulk chain ``X' = max(X - c, 0) + A`` (those in service all
    leave within one service, those starting in it do not), ``A`` Poisson of mean ``load x
    c``, so the time-average queue is ``E[max(X - c, 0)]`` (:func:`_carried`) and the wait
    ``service x E[max(X - c, 0)] / (load c)`` (Little).

    >>> mdc_wait(0.5, 1, 2.0) == md1_wait(0.25, 2.0)     # one server: M/D/1
    True
    >>> round(mdc_wait(0.9, 2, 1.0), 5)            # two servers at 0.9
    2.14692
    """
    rho = check_load(load, least=0)
    c = number("mdc_wait", "servers", servers, minimum=1, maximum=MOST_SERVERS, integer=True)
    service = _seconds("mdc_wait", "service", service)
    return service * _carried(rho, c)[0] / (rho * c)


def batch_wait(load: float, batch: int | np.ndarray, cycle: float | np.ndarray) -> np.ndarray:
    """Mean seconds a request waits before its prefill batch starts (see the module
    docstring): M/D^B/1 bulk service at ``load`` of the instance's capacity, batches of
    up to ``batch`` requests each taking ``cycle`` seconds; elementwise over ``batch`` and
    ``cycle`` (arrays broadcast).

    >>> round(float(batch_wait(0.5, 2, 1.0)), 6)   # 1 / (1 - 2 z), z = -e^((z - 1) / 2)
    0.51142
    """
    import numpy as np

    rho = check_load(load, least=0)
    b = _batches(batch)
    cycle = _cycles(cycle)
    units = {int(n): _unit_wait(rho, int(n)) for n in np.unique(b)}
    per = np.vectorize(units.__getitem__, otypes=[float])(b) if b.ndim else units[int(b)]
    return per * np.asarray(cycle, dtype=float)


#: Where :func:`bulk_wait` cuts a batch's Poisson arrivals: this many standard deviations
#: past their mean, plus :data:`_CUT_PLUS` (Bernstein: ``P(A >= a + t) <= exp(-t^2 / (2 (a +
#: t / 3)))``, below 1e-25 at either end of ``a``).
_CUT_SD = 12.0
_CUT_PLUS = 40


@functools.lru_cache(maxsize=512)
def _landing(rho: float, batch: int) -> np.ndarray:
    """``r_B``: where the full-batch chain started at ``batch`` first drops below it, the
    coefficients of ``z^B - Pi(z)`` (see the module docstring), from ``Pi``'s values at the
    ``M > B`` roots of unity (each a product of ``B`` factors, ``|Pi| <= 2`` there) by an FFT.
    Kept (read-only) for the cells of a search that share the load and ``B``: five a
    ``B`` in ``serve`` Llama-3-70B on ``h100-dgx`` at load 0.9999."""
    import numpy as np

    if batch == 1:
        r = np.ones(1)
        r.setflags(write=False)
        return r
    z = _roots(rho, batch)                        # and 1: Pi(w) = (w - 1) prod (w - z_k)
    m = 1 << batch.bit_length()                   # > batch
    w = np.exp(2j * np.pi * np.arange(m) / m)
    logs = np.zeros(m, dtype=complex)             # the product by 32 factors at a time
    for k in range(0, batch - 1, 32):             # (each in (0, 2]: no over- or underflow)
        logs += np.log(np.prod(w[:, None] - z[None, k:k + 32], axis=1))
    values = (w - 1) * np.exp(logs)
    r = np.maximum(-np.fft.fft(values / m)[:batch].real, 0.0)
    r /= r.sum()
    r.setflags(write=False)
    return r


@functools.lru_cache(maxsize=4096)
def _bulk_wait(rho: float, services: bytes) -> float:
    """:func:`bulk_wait` of one cell, ``services`` the float64 bytes of ``S_1 .. S_B``."""
    return _bulk_chain(rho, services)[0]


#: OpenBLAS's (get, set) thread-count functions by the names its builds export: numpy's
#: and scipy's wheels prefix them, numpy's with the 64-bit integers' suffix.
_OPENBLAS_THREADS = (("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
                     ("scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"),
                     ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
                     ("openblas_get_num_threads", "openblas_set_num_threads"))
_BLAS_LOCK = threading.Lock()
#: How many :func:`_one_blas_thread` blocks are open, and the counts they put back.
_blas_open = [0, ()]


@functools.cache
def _openblas() -> tuple:
    """The (get, set) thread-count functions of each OpenBLAS this process has mapped (read
    from ``/proc/self/maps`` once numpy is loaded); none where there is no such file (not
    Linux), none is mapped or a library exports no such names."""
    import ctypes

    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            paths = {f[5].strip() for f in (line.split(None, 5) for line in maps)
                     if len(f) == 6 and "openblas" in f[5].rsplit("/", 1)[-1].lower()}
    except OSError:
        return ()
    found = []
    for path in sorted(paths):
        try:
            lib = ctypes.CDLL(path)       # the one already loaded (same file): its own state
        except OSError:
            continue
        for get_name, set_name in _OPENBLAS_THREADS:
            get, put = getattr(lib, get_name, None), getattr(lib, set_name, None)
            if get is not None and put is not None:
                get.restype, get.argtypes = ctypes.c_int, []
                put.restype, put.argtypes = None, [ctypes.c_int]
                found.append((get, put))
                break
    return tuple(found)


@contextlib.contextmanager
def _one_blas_thread():
    """OpenBLAS on one thread within the block, its counts put back after the last open
    block closes. The bulk chain's products and solve are small (``B`` at most a few
    hundred), and OpenBLAS's threads, started for each and spinning between them, cost
    more CPU than they save: ``serve`` Llama-3-70B on ``h100-dgx`` at load 0.9999, 833
    chains, took 5-7 times the CPU of one thread on two contended cores, the same answer."""
    libs = _openblas()
    with _BLAS_LOCK:
        if not _blas_open[0]:
            _blas_open[1] = tuple(get() for get, _ in libs)
            for _, put in libs:
                put(1)
        _blas_open[0] += 1
    try:
        yield
    finally:
        with _BLAS_LOCK:
            _blas_open[0] -= 1
            if not _blas_open[0]:
                for (_, put), count in zip(libs, _blas_open[1], strict=True):
                    put(count)


@functools.lru_cache(maxsize=4096)
def _bulk_chain(rho: float, services: bytes) -> tuple[float, bytes]:
    """The mean wait of one cell (``services`` the float64 bytes of ``S_1 .. S_B``) and the
    float64 bytes of the share of its batches of each size ``1 .. B`` (:func:`bulk_sizes`),
    OpenBLAS on one thread (:func:`_one_blas_thread`)."""
    with _one_blas_thread():
        return _solve_chain(rho, services)


def _solve_chain(rho: float, services: bytes) -> tuple[float, bytes]:
    """:func:`_bulk_chain`'s work."""
    import numpy as np

    s_k = np.frombuffer(services, dtype=float)
    b = len(s_k)
    s_b = float(s_k[-1])
    lam = rho * b / s_b
    a = rho * b
    s = np.concatenate([s_k[:1], s_k[:-1]])      # the batch started from state j (0: 1)
    a_j = lam * s
    top = max(b, math.ceil(float(a_j.max()) + _CUT_SD * math.sqrt(float(a_j.max())) + _CUT_PLUS))
    n = np.arange(top + 1)
    log_fact = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1.0, top + 1)))])
    pmf = n * np.log(a_j)[:, None]                # (B, top + 1), in place from here
    pmf -= a_j[:, None]
    pmf -= log_fact
    np.exp(pmf, out=pmf)
    total = pmf.sum(axis=1, keepdims=True)
    if not np.all(np.abs(total - 1) < 1e-9):   # the cut's mass is below 1e-25; rounding aside
        raise ArithmeticError(f"bulk_wait: a batch's arrivals sum to {total.min():.17g}")
    pmf /= total
    r_b = _landing(rho, b)
    above = np.zeros((top + 1 - b, b))            # r_y, y = B .. top
    above[0] = r_b
    for m in range(top - b):
        above[m + 1, 1:] = above[m, :-1]
        above[m + 1] += above[m, -1] * r_b
    low, high = pmf[:, :b], pmf[:, b:]
    moved = low + high @ above                    # the boundary chain's transitions
    gap = b - a
    y = n[b:].astype(float)
    landed = np.arange(b, dtype=float)
    steps = (y - above @ landed) / gap           # T(y): excursion steps, each of S_B
    summed = (y * y - above @ (landed * landed) + steps * (gap * gap + a)) / (2 * gap)
    over = summed - b * steps                    # sum of x - B over the excursion
    m_chain = moved.T.copy()
    m_chain.flat[::b + 1] -= 1.0
    m_chain[-1] = 1.0                             # the probabilities sum to 1
    nu = np.linalg.solve(m_chain, np.r_[np.zeros(b - 1), 1.0])
    excursion = high @ steps                      # full batches after a visit to j
    length = s + s_b * excursion
    length[0] += 1 / lam                          # an idle instance waits for an arrival
    area = lam * s * s / 2 + s_b * (high @ over) + lam * s_b * s_b / 2 * excursion
    wait = max(float(nu @ area), 0.0) / (lam * float(nu @ length))
    # per boundary visit from j: one batch of max(j, 1), then the excursion's full ones
    sizes = np.bincount(np.maximum(np.arange(b), 1) - 1, weights=np.maximum(nu, 0.0),
                        minlength=b)
    sizes[-1] += float(np.maximum(nu, 0.0) @ excursion)
    return wait, (sizes / sizes.sum()).tobytes()


def bulk_wait(load: float, services: np.ndarray) -> float:
    """Mean seconds a request waits before its prefill batch starts when a batch of ``k``
    requests takes ``services[k - 1]`` seconds (``k = 1 .. B``, ``B = len(services)``), at
    ``load`` of the full batch's rate ``B / services[-1]`` (see the module docstring:
    a free instance takes every waiting request up to ``B``, an idle one the first alone).

    Every batch at the full one's time is :func:`batch_wait`; one request a batch, M/D/1:

    >>> round(bulk_wait(0.5, [1.0, 1.0]), 6), round(float(batch_wait(0.5, 2, 1.0)), 6)
    (0.51142, 0.51142)
    >>> bulk_wait(0.5, [2.0]) == md1_wait(0.25, 2.0)
    True
    >>> round(bulk_wait(0.5, [0.5, 1.0]), 6)      # a batch of 1 in half the time: less
    0.193343
    """
    import numpy as np

    rho = check_load(load, least=0)
    s = np.ascontiguousarray(services, dtype=float).reshape(-1)
    if not (s.size and np.all(s > 0)):
        raise ValueError(f"bulk_wait: services must be positive seconds, got {services!r}")
    if not np.all(np.isfinite(s)):
        return math.inf
    return _bulk_wait(rho, s.tobytes())


def bulk_sizes(load: float, services: np.ndarray) -> np.ndarray:
    """The share of a bulk-service instance's batches (:func:`bulk_wait`'s queue, same
    arguments) that hold ``k`` requests, ``k = 1 .. B``: of the boundary chain's visits
    (its stationary law ``nu`` over the ``B`` states left at a batch's end below ``B``),
    each starts a batch of ``max(j, 1)`` from state ``j``, and each excursion above ``B - 1``
    runs ``T(y)`` full batches (Wald's mean steps, as the wait's), so the shares are ``nu_j``
    at ``max(j, 1)`` and ``nu @ E[T]`` at ``B``, over their sum. Requests are conserved: the
    mean size is the arrivals per batch, ``lambda`` times the mean time between batch
    starts.

    >>> bulk_sizes(0.5, [2.0]).tolist()          # one a batch
    [1.0]
    >>> [round(float(p), 6) for p in bulk_sizes(0.5, [1.0, 1.0])]   # M/D^2/1 at 0.5
    [0.676741, 0.323259]
    """
    import numpy as np

    rho = check_load(load, least=0)
    s = np.ascontiguousarray(services, dtype=float).reshape(-1)
    if not (s.size and np.all(s > 0) and np.all(np.isfinite(s))):
        raise ValueError(f"bulk_sizes: services must be positive seconds, got {services!r}")
    return np.frombuffer(_bulk_chain(rho, s.tobytes())[1], dtype=float).copy()


def _compound_roots(rho: float, servers: int, sizes: np.ndarray) -> np.ndarray:
    """The ``servers - 1`` roots but 1 of ``z^c = e^(m (K(z) - 1))`` in the unit disk
    (:func:`mxdc_wait`): ``z = w e^(m (K(z) - 1) / c)`` for each ``c``-th root of unity ``w``
    but 1, a map of the disk into itself contracting by ``m K'(|z|) / c <= rho`` there, so
    one fixed point each (Banach); found by fixed-point steps, then Newton's where it lowers
    the residual (a fixed-point step elsewhere), to ``|z - w e^(...)| < 1e-13``."""
    import numpy as np

    c = servers
    coef = np.r_[0.0, sizes]                      # K(z) = sum_k sizes[k - 1] z^k
    dcoef = coef[1:] * np.arange(1, coef.size)
    g = rho / float(np.arange(1, coef.size) @ sizes)   # m / c: batches a service per server
    w = np.exp(2j * np.pi * np.arange(1, c) / c)

    def step(z):
        return w * np.exp(g * (np.polynomial.polynomial.polyval(z, coef) - 1))

    z = w * math.exp(-g)
    for _ in range(3):
        z = step(z)
    f = step(z)
    for _ in range(400):
        res = np.abs(z - f)
        if not np.any(res >= 1e-13):
            return z
        newton = z - (z - f) / (1 - g * f * np.polynomial.polynomial.polyval(z, dcoef))
        f_newton = step(newton)
        # Newton's where it lowers the residual, else the contraction's own step (which
        # never moves away from the root)
        better = np.isfinite(f_newton) & (np.abs(newton - f_newton) < res) & (
            np.abs(newton) <= 1 + 1e-12)
        z = np.where(better, newton, f)
        f = np.where(better, f_newton, step(f)) if not better.all() else f_newton
    raise ArithmeticError(f"M^X/D/c roots at load {rho!r}, c {c}: residual {res.max():.3g}")


@functools.lru_cache(maxsize=4096)
def _mxdc_queue(rho: float, servers: int, sizes: bytes) -> float:
    """``E[max(X - c, 0)]`` of :func:`mxdc_wait`'s chain, ``sizes`` the float64 bytes of the
    batch sizes' law (``sizes[k - 1]``: batches of ``k``)."""
    import numpy as np

    p = np.frombuffer(sizes, dtype=float)
    k = np.arange(1, p.size + 1, dtype=float)
    if p[0] == 1.0:                               # one at a time: M/D/c, Crommelin's
        return _carried(rho, servers)[0]
    c = servers
    a = rho * c
    m = a / float(k @ p)                          # batches a service
    second = m * float(k * k @ p) + a * a - a     # E[A (A - 1)] of the compound Poisson A
    queue = -(c * (c - 1) - second) / (2 * (c - a))
    if c > 1:
        queue += float(np.sum(1 / (1 - _compound_roots(rho, c, p))).real)
    return max(queue, 0.0)


def mxdc_wait(load: float, servers: int, service: float, sizes: np.ndarray) -> float:
    """Mean wait in queue of M^X/D/c: batches of requests at Poisson instants, ``sizes[k -
    1]`` of them of ``k`` requests, at ``load`` of ``servers`` servers' capacity, each request
    holding one for ``service`` seconds, first come first served (a batch's requests in
    any order). Exact: Crommelin's argument (:func:`mdc_wait`) holds for any arrivals, so
    the requests present ``service`` apart follow ``X' = max(X - c, 0) + A``, here ``A``
    compound Poisson, ``m = load c / E[K]`` batches of law ``K`` a service, ``E[A] = a =
    load c``, ``E[A (A - 1)] = m E[K^2] + a^2 - a``. Its generating function is Bailey's
    with ``e^(a (z - 1))`` made ``A(z) = e^(m (K(z) - 1))``, whence ``E[max(X - c, 0)] =
    -(c (c - 1) - E[A (A - 1)]) / (2 (c - a)) + sum_k 1 / (1 - z_k)`` over the ``c - 1``
    roots but 1 of ``z^c = A(z)`` in the unit disk (:func:`_compound_roots`), and the wait
    ``service x E[max(X - c, 0)] / (load c)`` (Little). Never below M/D/c's at the same load
    (a batch of ``k`` is above ``k`` lone arrivals in the convex order, and Lindley's
    ``max(Y + A - c, 0)`` is increasing and convex).

    One server: the Pollaczek-Khinchine mean of a batch as one customer of ``K D``, plus
    the wait behind those before it in its own batch, ``D E[K (K - 1)] / (2 E[K])``:

    >>> w = mxdc_wait(0.5, 1, 1.0, [0.5, 0.5])   # pairs half the time: E[K] 1.5, E[K^2] 2.5
    >>> lam_b = 0.5 / 1.5
    >>> round(w, 12) == round(lam_b * 2.5 / (2 * 0.5) + 1.0 / (2 * 1.5), 12)
    True
    >>> mxdc_wait(0.9, 46, 0.6, [1.0]) == mdc_wait(0.9, 46, 0.6)   # one at a time
    True
    """
    import numpy as np

    rho = check_load(load, least=0)
    c = number("mxdc_wait", "servers", servers, minimum=1, maximum=MOST_SERVERS, integer=True)
    service = _seconds("mxdc_wait", "service", service)
    p = np.ascontiguousarray(sizes, dtype=float).reshape(-1)
    if not (p.size and np.all(p >= 0) and abs(p.sum() - 1) < 1e-9):
        raise ValueError(f"mxdc_wait: sizes must be a law over 1 .. B, got {sizes!r}")
    return service * _mxdc_queue(rho, c, (p / p.sum()).tobytes()) / (rho * c)
