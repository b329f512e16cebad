"""Hostile-input round 38, on public library functions no round before called (scripts/
hostile_round15.py .. 37.py, each name grepped): the queueing formulas
(``netmodel.study.queueing.md1_wait``, ``mdc_wait``, ``batch_wait``), a reliability
``Catalog`` made by ``dataclasses.replace``, ``FabricCostModel.moe_all_to_all_time``'s
``copies`` and ``reach``, ``netmodel.study.availability_analytic.kaufman_roberts``,
``compute.mtp.expected_tokens`` and ``mean_steps``,
``netmodel.collectives.algorithms.transfer_count`` and
``netmodel.collectives.results.bus_factor``, each given text, NaN, inf, None, True, a
negative, ``10**30``, a Decimal, numpy 0-d and 1-d arrays, and a generator where a list is
read more than once. At the HEAD before cff6ecfa: 69 library invocations, 63 failed (one,
``expected_tokens(10**30, 0.7)``, summed without end); the fixes are in
tests/netmodel/test_hostile_round38.py's (a)-(f).

What each gets (the project's promise, docs/units-and-errors.md): a library refusal is a
UserError (a ValueError) holding the words listed; a library value taken gives the result
it shows.

Usage: ``python scripts/hostile_round38.py [-k SUBSTRING] [-v]``; prints each failure
(FAIL), the counts, and exit status 1 if any failed. In process; a few seconds.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hostile_round29 import library_case, library_taken_case  # noqa: E402
from hostile_tally import Case, run_round  # noqa: E402

NAN, INF = float("nan"), float("inf")
#: The wrong values each number is given: (label, value).
WRONG = (("'0.5'", "0.5"), ("nan", NAN), ("inf", INF), ("None", None), ("True", True),
         ("-1", -1), ("10**30", 10**30), ("Decimal('2')", Decimal(2)),
         ("np.array([1, 2])", np.array([1, 2])))


def _lib(module: str, name: str, *args, **kw) -> Callable[[], object]:
    def call() -> object:
        import importlib

        return getattr(importlib.import_module(module), name)(*args, **kw)
    return call


Q = "netmodel.study.queueing"


def _catalog(**kw) -> Callable[[], object]:
    """A copy of the shipped reliability catalog with ``kw``, asked a Lite's host."""
    def call() -> object:
        from netmodel.study.reliability_catalog import catalog

        return dataclasses.replace(catalog(), **kw).gpus_per_host("Lite")
    return call


def _moe(copies: object, reach: object = None) -> Callable[[], object]:
    """A 1 MB MoE all-to-all among 16 GPUs of two 8-GPU servers (rail-optimized)."""
    def call() -> object:
        from netmodel.collectives.model import FabricCostModel
        from topologies import build

        m = FabricCostModel(build("rail-optimized:domains=4,domain_size=8,gpus_per_server=8"))
        return m.moe_all_to_all_time(1e6, 16, copies,
                                     (lambda u: min(u, 2.0)) if reach is None else reach)
    return call


def _kr(*args) -> Callable[[], object]:
    return _lib("netmodel.study.availability_analytic", "kaufman_roberts", *args)


def _library() -> dict[str, tuple[Callable[[], object], tuple[str, ...]]]:
    out: dict[str, tuple[Callable[[], object], tuple[str, ...]]] = {}
    for label, v in WRONG:
        # a rate of -1 or 10**30 is a load out of range, refused before; an int array is
        # batches and cycles taken elementwise, 10**30 s a cycle in range
        if label not in ("-1", "10**30"):
            out[f"md1_wait(rate={label})"] = (_lib(Q, "md1_wait", v, 1.0),
                                              ("md1_wait: rate must be a number from 0",))
        if label != "np.array([1, 2])":
            out[f"batch_wait(batch={label})"] = (_lib(Q, "batch_wait", 0.5, v, 1.0),
                                                 ("batch_wait: batch must be a whole number",))
        if label not in ("np.array([1, 2])", "10**30"):
            out[f"batch_wait(cycle={label})"] = (_lib(Q, "batch_wait", 0.5, 4, v),
                                                 ("batch_wait: cycle must be",))
        out[f"replace(catalog(), host_sms={label})"] = (
            _catalog(host_sms=v), ("Catalog: host_sms must be a whole number from 1",))
        out[f"moe_all_to_all_time(copies={label})"] = (
            _moe(v), ("moe_all_to_all_time: copies must be a whole number from 1",))
        out[f"transfer_count(p={label})"] = (
            _lib("netmodel.collectives.algorithms", "transfer_count", "ring", "all-reduce",
                 v), ("transfer_count: p must be a whole number from 1",))
    out.update({
        "mdc_wait(service=-1)": (_lib(Q, "mdc_wait", 0.5, 2, -1.0),
                                 ("mdc_wait: service must be a number from 0",)),
        "replace(catalog(), host_gpus=0)": (_catalog(host_gpus=0), ("Catalog: host_gpus",)),
        "replace(catalog(), repair='nope')": (_catalog(repair="nope"),
                                              ("Catalog: repair 'nope' is unknown",)),
        "moe_all_to_all_time(reach=5)": (_moe(2, 5), ("reach must be a function",)),
        "moe_all_to_all_time(reach giving nan)": (_moe(2, lambda u: NAN),
                                                  ("reach(2) must be a number from 1 to 2",)),
        "kaufman_roberts(capacity=-1)": (_kr(-1, [0.5], [1]), ("capacity must be a whole",)),
        "kaufman_roberts(loads=[-1])": (_kr(4, [-1], [1]), ("loads must be a number from 0",)),
        "kaufman_roberts(loads=[nan])": (_kr(4, [NAN], [1]), ("loads must be a number",)),
        "kaufman_roberts(units=['1'])": (_kr(4, [0.5], ["1"]), ("units must be a whole",)),
        "expected_tokens(k=10**30)": (_lib("compute.mtp", "expected_tokens", 10**30, 0.7),
                                      ("expected_tokens: k must be a whole number from 0 to 16",)),
        "expected_tokens(a=nan)": (_lib("compute.mtp", "expected_tokens", 2, NAN),
                                   ("expected_tokens: a must be a number from 0 to 1",)),
        "mean_steps(n=-1)": (_lib("compute.mtp", "mean_steps", 2, 0.7, -1),
                             ("mean_steps: n must be a whole number from 1",)),
        "bus_factor(p=nan)": (_lib("netmodel.collectives.results", "bus_factor", "all-reduce",
                                   NAN), ("bus_factor: p must be a whole number from 1",)),
    })
    return out


#: Library calls refused: name -> (call, words of the UserError).
LIBRARY = _library()

#: Library calls taken: name -> (call, what the result shows).
LIBRARY_TAKEN: dict[str, tuple[Callable[[], object], Callable[[object], bool]]] = {
    # R D^2 / (2 (1 - R D)) at 0.25/s and 2 s: 1 s
    "md1_wait(np.float64(0.25), 2)": (_lib(Q, "md1_wait", np.float64(0.25), 2),
                                      lambda w: abs(w - 1.0) < 1e-12),
    # one a batch: M/D/1 in cycles, 0.5 cycle at load 0.5
    "batch_wait(0.5, np.array([1, 1]), np.array([1.0, 2.0]))": (
        _lib(Q, "batch_wait", 0.5, np.array([1, 1]), np.array([1.0, 2.0])),
        lambda w: np.allclose(w, [0.5, 1.0])),
    "replace(catalog(), host_sms=np.int64(528))": (_catalog(host_sms=np.int64(528)),
                                                   lambda n: n == 16),
    # generators read once: as the lists (q1 / q0 = 0.5, q2 / q0 = 0.325 by hand)
    "kaufman_roberts(4, generator, generator)": (
        lambda: _kr(4, (x for x in [0.5, 0.2]), (u for u in [1, 2]))(),
        lambda q: abs(q[1] / q[0] - 0.5) < 1e-12 and abs(q[2] / q[0] - 0.325) < 1e-12),
    "expected_tokens(np.int64(2), 0.5)": (_lib("compute.mtp", "expected_tokens",
                                               np.int64(2), 0.5), lambda e: e == 1.75),
    "transfer_count('direct', 'all-reduce', np.int64(4))": (
        _lib("netmodel.collectives.algorithms", "transfer_count", "direct", "all-reduce",
             np.int64(4)), lambda n: n == 12),
    "moe_all_to_all_time(copies=np.int64(2))": (_moe(np.int64(2)),
                                                 lambda t: 0 < float(t) < 1e-3),
}


def cases() -> Iterator[Case]:
    yield from (library_case(n, c, w) for n, (c, w) in LIBRARY.items())
    yield from (library_taken_case(n, c, h) for n, (c, h) in LIBRARY_TAKEN.items())


def main() -> int:
    os.environ.pop("NETMODEL_JOBS", None)   # the cases' own settings alone
    return run_round(cases(), "hostile38-")


if __name__ == "__main__":
    sys.exit(main())
