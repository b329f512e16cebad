"""The availability Monte Carlo's share of time below the capacity threshold for many spare
pools at once, on one draw of the failures: what the spare search asks of it
(:func:`~netmodel.study.availability.spares_needed`).

**Common random numbers.** :func:`~netmodel.study.availability_mc.simulate` draws a run's
failures from its seed alone: the chunks of trials, each chunk's stream, and every draw
from it (counts, times, kinds, pools, sets) read the kinds, the horizon, the trials and
the number of pools, never the spares they hold (:func:`~netmodel.study.availability_mc.
_plan`, :func:`~netmodel.study.availability_mc._draw`). So every pool of one search, run
with one seed, sees the same failures; only which of them find spares free (the loss
system's grants, :func:`~netmodel.study.availability_mc._grants`) differs, and the
capacity lost reads the spares through those grants alone. :class:`PoolRuns` draws each
chunk once and grants and integrates per pool: :meth:`PoolRuns.below` is, for every pool,
``simulate(kinds, pools, ...).below_threshold``, the same float (and :meth:`PoolRuns.mean`
its ``mean``).

**Pools that grant alike.** Every ask of the kinds is a whole multiple of ``g``, the
greatest common divisor of their spares asked, grains and instances' spares
(:attr:`~netmodel.study.availability_kinds.Kind.units`, ``grain``, ``each``); the spares a
grant takes (``Kind.take``, :func:`~netmodel.study.availability_kinds.best_grant`'s sums)
are too. A pool's held spares are then a multiple of ``g`` at every step, and each grant
compares the free spares with sums of asks or reads a table that steps at multiples of
``g``, so a pool of ``r`` spares grants as one of ``g floor(r / g)`` (lite-flat's Llama-3-70B
decode asks global spares in instances of 16: 17 to 31 spares grant as 16). Such pools are run once;
pools whose grants come out the same are integrated once.

>>> from netmodel.study.availability_kinds import Kind
>>> from netmodel.study.availability_mc import simulate
>>> from netmodel.study.reliability_spares import SparePools
>>> k = Kind("host", "x", 2e-6, down=2, slow=0.0, units=4, restored=0.0, d_repair=3e5,
...          d_swap=600.0, hold=3e5, d_slow=0.0, per=2)
>>> pools = [SparePools("global", s, 1, (s,)) for s in range(6)]
>>> runs = PoolRuns([k], 40, horizon="1y", trials=20, seed=4, threshold=0.99, pools=pools[0])
>>> runs.below(pools) == [simulate([k], p, 40, horizon="1y", trials=20, seed=4).below_threshold
...                       for p in pools]
True
>>> runs.mean(pools) == [simulate([k], p, 40, horizon="1y", trials=20, seed=4).mean
...                      for p in pools]
True
>>> runs.runs   # 0-1, 2-3, 4-5 spares: granted alike, each run once
3
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

import numpy as np

from netmodel.study.availability_kinds import Kind
from netmodel.study.availability_mc import _draw, _grants, _integrate, _plan, check_run
from netmodel.study.reliability_spares import SparePools

__all__ = ["PoolRuns", "ask_quantum"]


def ask_quantum(kinds: Sequence[Kind]) -> int:
    """The spares every ask of ``kinds`` comes in a whole multiple of (see the module
    doc): the greatest common divisor of their spares asked, grains and instances'
    spares; 1 where a grain table does not step at its multiples alone, 0 where no kind
    asks spares.

    >>> from dataclasses import replace
    >>> from netmodel.study.availability_kinds import Kind
    >>> k = Kind("host", "x", 1e-6, 2, 0.0, 32, 0.0, 1.0, 0.1, 1.0, 0.0, per=16)
    >>> ask_quantum([k]), ask_quantum([k, replace(k, units=128)]), ask_quantum([])
    (16, 16, 0)
    >>> ask_quantum([k, replace(k, units=5, per=0, each=(2, 3))])
    1
    """
    g = 0
    for k in kinds:
        if k.units > 0:
            g = math.gcd(g, k.units, k.grain, *k.each)
    if g > 1:   # a grain table steps only where a whole multiple of g more spares are free
        for k in kinds:
            if 0 < k.grain < k.units and any(
                    k.take(f) != k.take(f - f % g) for f in range(k.units + g)):
                return 1
    return g


class PoolRuns:
    """One seeded Monte Carlo run's failures (``kinds`` over ``instances`` instances,
    ``horizon``, ``trials``, ``seed``: as :func:`~netmodel.study.availability_mc.simulate`
    takes them, checked alike) and the share of time below ``threshold`` for any spare
    pools of ``pools``' placement and number (:meth:`below`). A run of one chunk keeps its
    draw for every call; one of several draws each chunk again per call (as much memory
    as one :func:`~netmodel.study.availability_mc.simulate`): ask for many pools at once.
    :meth:`mean` gives a pool's mean capacity from the same integration."""

    def __init__(self, kinds: Sequence[Kind], instances: int, *, horizon: str | float,
                 trials: int, seed: int, threshold: float, pools: SparePools):
        self.trials, self.h = check_run(trials, horizon)
        self._plan = _plan(kinds, self.trials, self.h, seed)
        self.kinds, self.instances, self.threshold = tuple(kinds), instances, threshold
        self._shape = (pools.pools, pools.groups)
        self._pools = pools
        self.quantum = ask_quantum(kinds)
        self._kept: dict = {}      # chunk -> (kinds, trace), where the run is one chunk
        self._got: dict = {}       # a class of pools (_key) -> (mean, share of time below)
        #: loss systems run and runs integrated (pools granting alike run once)
        self.runs = self.integrated = 0

    def _key(self, pools: SparePools) -> tuple:
        if (pools.pools, pools.groups) != self._shape:
            raise ValueError(f"pools must be {self._shape[0]} pools of {self._shape[1]} "
                             f"group(s) as the run's, got {pools.pools} of {pools.groups}")
        g = self.quantum
        return tuple(r // g * g for r in pools.reachable) if g else ()

    def _trace(self, i: int):
        kept = self._kept.get(i)
        if kept is not None:
            return kept
        (lo, hi), ss = self._plan.chunks[i], self._plan.streams[i]
        got = _draw(self.kinds, self._plan.draw, self._pools, self.h, self._plan.warm,
                    hi - lo, np.random.default_rng(ss))
        if len(self._plan.chunks) == 1:
            self._kept[i] = got
        return got

    def below(self, pools: Sequence[SparePools]) -> list[float]:
        """Per pool of ``pools``, the share of time below the threshold,
        ``simulate(...).below_threshold`` of this run with that pool (the same float)."""
        return [below for _, below in self.figures(pools)]

    def mean(self, pools: Sequence[SparePools]) -> list[float]:
        """Per pool of ``pools``, the mean delivered capacity, ``simulate(...).mean`` of
        this run with that pool (the same float)."""
        return [mean for mean, _ in self.figures(pools)]

    def figures(self, pools: Sequence[SparePools]) -> list[tuple[float, float]]:
        """Per pool of ``pools``, ``(mean, below_threshold)`` of ``simulate(...)`` of this
        run with that pool (the same floats), each class of pools run once across calls."""
        pools = list(pools)
        keys = [self._key(p) for p in pools]
        todo: dict = {}
        for key, p in zip(keys, pools, strict=True):
            if key not in self._got:
                todo.setdefault(key, p)
        if todo:
            parts: dict = {key: [] for key in todo}
            for i, (lo, hi) in enumerate(self._plan.chunks):
                kinds, trace = self._trace(i)
                done: dict = {}   # grants' digest -> the chunk's (mean, time below) per trial
                for key, p in todo.items():
                    fd, fs = _grants(kinds, trace, p)
                    self.runs += 1
                    d = hashlib.blake2b(fd.tobytes() + fs.tobytes(), digest_size=20).digest()
                    if d not in done:
                        done[d] = _integrate(kinds, trace, (fd, fs), self.instances, self.h,
                                             hi - lo, self.threshold, None, short=True)
                        self.integrated += 1
                    parts[key].append(done[d])
            for key, got in parts.items():
                self._got[key] = tuple(float(np.concatenate(x).mean()) for x in zip(*got, strict=True))
        return [self._got[key] for key in keys]
