"""A search's grid re-scored under other link scales and per-hop latencies, without
searching again (:class:`GridScorer`): only its collective stages depend on the network,
so they are costed anew and the step latencies, tokens/s/SM and feasibility worked out as
:func:`compute.roofline.evaluate_grid` and :func:`compute.search.search` do, to the last
bit. What a scorer reads of the grid alone is its :class:`GridLayout`, the same on every
fabric; a ``circuits = "best"`` scenario's grid is scored with the layouts chosen at each
scale and latency (:class:`BestScorer`, :class:`ChosenLayouts`). The crossover search
(:mod:`netmodel.study.crossovers`) evaluates through them.
"""

from __future__ import annotations

import numpy as np

from compute.dp_collectives import running, stage_ops
from netmodel.study.adjusted_comm import AdjustedComm, adjusted_lines, hop_latency_slopes

__all__ = ["BestScorer", "ChosenLayouts", "GridLayout", "GridScorer"]


class ChosenLayouts:
    """The costs of a ``circuits = "best"`` scenario's instances with each group size's
    circuits set as the layout chosen for it at ``scale`` and ``hop``
    (:meth:`~netmodel.study.adjusted_comm.AdjustedComm.layout_comm`), read as a
    :class:`GridScorer` reads its collectives: ``parts``, ``part_ranges`` and the
    per-hop slopes of each size's layout (its
    :meth:`~netmodel.study.scenario_collectives.ScenarioCollectives.with_circuits`
    costs). :attr:`chosen` says what was chosen for the sizes asked."""

    def __init__(self, coll, scale: float, hop: float):
        self._comm = AdjustedComm(coll, scale, hop)
        self._by: dict[int, object] = {}

    def of(self, size: int):
        """The costs of the layout chosen for ``size``."""
        p = int(size)
        if p not in self._by:
            self._by[p] = self._comm.layout_comm(p).c
        return self._by[p]

    def chosen(self, sizes) -> tuple:
        """``((size, layout), ...)`` for ``sizes``."""
        return tuple((int(p), self.of(p).scenario.circuits) for p in sizes)

    def parts(self, op: str, size: int):
        return self.of(size).parts(op, size)

    def part_ranges(self, op: str, size: int, scale: float):
        return self.of(size).part_ranges(op, size, scale)

    def slopes(self):
        def slope(op: str, size: int):
            c = self.of(size)
            return hop_latency_slopes(c.scenario, c, c.slopes_cache)(op, size)

        return slope


class BestScorer:
    """A search's grid re-scored on a ``circuits = "best"`` scenario: at each scale and
    per-hop latency the layout of each of the grid's group sizes is chosen as
    :meth:`~netmodel.study.adjusted_comm.AdjustedComm.layout_comm` chooses it (what the
    choice depends on: the size, the scale and the latency), and the grid is scored by
    the :class:`GridScorer` of those layouts' lines (:class:`ChosenLayouts`), one kept
    per set of choices (the key: each size's layout)."""

    def __init__(self, layout: GridLayout, coll):
        self.layout, self.coll = layout, coll
        self.sizes = sorted({size for _, size in layout.keys})
        self._scorers: dict[tuple, GridScorer] = {}

    @classmethod
    def build(cls, grid, coll, scale: float, hop: float,
              best: float | None) -> BestScorer | None:
        """As :meth:`GridScorer.build`: None where the scorer of the layouts chosen at
        ``scale`` and ``hop`` would not reproduce ``grid``'s times and ``best``."""
        links = ChosenLayouts(coll, scale, hop)
        scorer = GridScorer.build(grid, links, links.slopes, scale, hop, best)
        if scorer is None:
            return None
        self = cls(scorer.layout, coll)   # its layout, shared by the scorers of every choice
        self._scorers[links.chosen(self.sizes)] = scorer
        return self

    def __call__(self, scale: float, hop: float = 0.0) -> float | None:
        links = ChosenLayouts(self.coll, scale, hop)
        key = links.chosen(self.sizes)
        scorer = self._scorers.get(key)
        if scorer is None:
            scorer = self._scorers[key] = GridScorer(None, links, links.slopes,
                                                      self.layout)
        return scorer(scale, hop)


class GridLayout:
    """What a :class:`GridScorer` reads of its grid alone, the same on every fabric
    (worked out once per grid, shared by the scorers of every fabric that starts from
    it): the (operation, group size) keys the grid's collective stages ask for in the
    cells that fit (as a search's evaluation asks: a key only cells that do not fit use
    is never compiled), each
    key's distinct message sizes and where their times go among the fitting cells, each
    row's keys, and the compute and memory times, counts, tokens per step, SMs and
    latency limit of the cells that fit."""

    def __init__(self, grid):
        fits = np.asarray(grid.fits, dtype=bool)
        nf = int(fits.sum())
        column = np.full(fits.size, -1)
        column[fits.ravel()] = np.arange(nf)
        column = column.reshape(fits.shape)    # each fitting cell's column, -1 elsewhere
        keys, sizes, places = [], [], []
        # the cells each (op, group size) costs, as compute.roofline._network_times asks
        for op in sorted({o for x in grid.ops for o in stage_ops(x)}):
            ks = np.array([k for k, x in enumerate(grid.ops) if op in stage_ops(x)])
            g = grid.groups[ks]
            active = (grid.counts[ks] > 0) & (g > 1)
            runs = running(grid.ops, ks, op, fits.shape)   # None: every cell runs op
            for size in np.unique(g[active]).tolist():
                kk, rr = np.nonzero(active & (g == size))
                col = column[rr]                              # (cells, batches)
                on = col >= 0 if runs is None else (col >= 0) & runs[kk, rr]
                if not on.any():   # no cell that fits asks: never compiled for it
                    continue
                n = grid.net_bytes[ks[kk], rr][on]
                place = (ks[kk][:, None] * nf + col)[on]      # into (stages, fitting)
                uniq, inverse = np.unique(n, return_inverse=True)
                keys.append((op, int(size)))
                sizes.append(uniq)
                places.append((place, inverse.reshape(-1)))
        self.keys = keys
        self.which = np.concatenate([np.full(len(u), i) for i, u in enumerate(sizes)]
                                    + [np.zeros(0, int)]).astype(np.intp)
        self.n = np.concatenate(sizes + [np.zeros(0)])
        offsets = np.cumsum([0] + [len(u) for u in sizes])[:-1]
        self.place = np.concatenate([p for p, _ in places] + [np.zeros(0, int)]
                                    ).astype(np.intp)
        self.source = np.concatenate([i + o for (_, i), o in zip(places, offsets, strict=True)]
                                     + [np.zeros(0, int)]).astype(np.intp)
        self.fits, self.nf = fits, nf
        # the row (configuration) of each fitting cell, and the keys each row's cells use
        self.row = np.nonzero(fits)[0]
        key_of = self.which[self.source]
        row_of = self.row[self.place % max(nf, 1)]
        self.row_keys = [np.unique(key_of[row_of == i]) for i in range(fits.shape[0])]
        self.shape = (grid.net_bytes.shape[0], nf)
        self.compute_t, self.memory_t = grid.compute_time[:, fits], grid.memory_time[:, fits]
        self.busiest = np.maximum(self.compute_t, self.memory_t)
        self.overlap = grid.options.mode == "overlap"
        self.counts = grid.counts[:, self.row]
        self.tokens_per_step = np.broadcast_to(grid.tokens_per_step, fits.shape)[fits]
        self.sms = np.broadcast_to(grid.gpus * grid.gpu.sms, fits.shape)[fits]
        self.limit = grid.latency_limit


class GridScorer:
    """A search's grid re-scored under other link scales and per-hop latencies: only
    the collective stages change (the compute and memory times, the counts, the message
    sizes and what fits do not depend on the network), so each call recomputes the
    collective times (:func:`~netmodel.study.adjusted_comm.adjusted_lines`, as
    :class:`~netmodel.study.adjusted_comm.AdjustedComm` does), then the
    stage times, step latency, tokens/s/SM and feasibility as
    :func:`compute.roofline.evaluate_grid` and :func:`compute.search.search` do, and
    returns the best feasible tokens/s/SM (None when none is feasible). Only the cells
    that fit in memory are scored (no other can be feasible), and each distinct message
    size of an (operation, group size) once. Under a per-hop latency, the slopes of an
    (operation, group size) (a compilation of the fabric each) are measured only for
    the configurations that may still be the best (see :meth:`__call__`)."""

    def __init__(self, grid, coll, slopes, layout: GridLayout | None = None):
        lay = GridLayout(grid) if layout is None else layout
        self.layout = lay
        keys = lay.keys
        parts = [coll.parts(op, size) for op, size in keys]
        width = max((len(p[0]) for p in parts), default=1)
        # every key's candidates in one row, padded with lines that are never the least
        pad = (np.inf, 0.0, 0.0, 0.0, 0.0)
        self.parts = tuple(np.array([np.concatenate([p[i], np.full(width - len(p[i]), v)])
                                     for p in parts]).reshape(len(keys), width)
                           for i, v in enumerate(pad))
        self.keys, self.slopes = keys, slopes
        # per-hop slopes, learnt per key when a row may need them (NaN: not yet; the
        # padding 0 keeps its lines never the least)
        self.slope = np.array([np.r_[np.full(len(p[0]), np.nan), np.zeros(width - len(p[0]))]
                               for p in parts]).reshape(len(keys), width)
        self.learnt = np.zeros(len(keys), dtype=bool)
        self.monotone = True
        self.coll, self.width = coll, width
        self._ranges: dict[float, tuple | None] = {}
        vars(self).update(vars(lay))  # every layout field read as the scorer's own

    def ranges(self, scale: float) -> tuple[np.ndarray, np.ndarray] | None:
        """``(lo, hi)`` of every key's lines at ``scale``, padded as :attr:`parts` (lines
        that run at every size), or None where all run at every size (NCCL's send/recv
        picks LL or Simple by size: :meth:`~netmodel.study.scenario_collectives.
        ScenarioCollectives.part_ranges`)."""
        if scale not in self._ranges:
            got = [self.coll.part_ranges(op, size, scale) for op, size in self.keys]
            if all(r[0] is None for r in got):
                self._ranges[scale] = None
            else:
                lo = np.zeros((len(self.keys), self.width))
                hi = np.full((len(self.keys), self.width), np.inf)
                for k, r in enumerate(got):
                    if r[0] is not None:
                        lo[k, :len(r[0])], hi[k, :len(r[1])] = r
                self._ranges[scale] = (lo, hi)
        return self._ranges[scale]

    @classmethod
    def build(cls, grid, coll, slopes, scale: float, hop: float,
              best: float | None) -> GridScorer | None:
        """The scorer of ``grid`` (evaluated at ``scale`` and ``hop``, its best
        tokens/s/SM ``best``), or None where it would not reproduce it: configurations
        beyond plain tensor parallelism, collectives hidden behind their GEMMs, a
        profile's overheads, an MTP decode step (its draft passes lie outside the stages
        re-scored: every call then searches again, as compare's and a sweep's points do),
        or a grid whose collective times, latencies or best it does not reproduce to the
        last bit."""
        o = grid.options
        if o.overlap_collectives or o.profile is not None or grid.overhead is not None \
                or grid.mtp_expected is not None or o.mode not in ("overlap", "serial") \
                or not all(c.is_plain for c in grid.configs):
            return None
        scorer = cls(grid, coll, slopes)
        if hop:
            scorer.learn(range(len(scorer.keys)))
        network_t, latency = scorer.times(scale, hop)
        fits = scorer.fits
        if not (np.array_equal(network_t, grid.network_time[:, fits])
                and np.array_equal(latency, grid.latency[fits])
                and scorer.best(latency) == best):
            return None
        return scorer

    def times(self, scale: float, hop: float) -> tuple[np.ndarray, np.ndarray]:
        """The collective time of every stage ``(stages, cells)`` and the step latency of
        every cell that fits (in the order of ``grid.fits``'s nonzero cells)."""
        a, b = adjusted_lines(*self.parts, self.slope if hop else None, scale, hop)
        n = self.n
        t = a[self.which] + b[self.which] * n[:, None]
        rng = self.ranges(scale)
        if rng is not None:
            lo, hi = rng[0][self.which], rng[1][self.which]
            t = np.where((n[:, None] > lo) & (n[:, None] <= hi), t, np.inf)
        t = t.min(1)
        t = np.where(n > 0, t, 0.0)
        known = self.learnt[self.which] if hop else True
        if not np.all((np.isfinite(t) & (t >= 0)) | ~known):
            raise ValueError("collective model returned a negative or non-finite time")
        network_t = np.zeros(self.shape)
        network_t.flat[self.place] = t[self.source]
        if self.overlap:
            stage_t = np.maximum(self.busiest, network_t)
        else:
            stage_t = self.compute_t + self.memory_t + network_t
        return network_t, (self.counts * stage_t).sum(axis=0)

    def best(self, latency: np.ndarray) -> float | None:
        feasible = latency <= self.limit
        if not feasible.any():
            return None
        return float((self.tokens_per_step[feasible] / latency[feasible]
                      / self.sms[feasible]).max())

    def learn(self, keys) -> None:
        """Measure the per-hop slopes of ``keys`` (indices into :attr:`keys`)."""
        slope = self.slopes()
        for k in keys:
            if not self.learnt[k]:
                x = slope(*self.keys[k])
                self.slope[k, :len(x)] = x
                self.learnt[k] = True
                if np.any(x < 0):  # latency that saves time: no row can be skipped
                    self.monotone = False

    def __call__(self, scale: float, hop: float = 0.0) -> float | None:
        if not hop or self.learnt.all():
            return self.best(self.times(scale, hop)[1])
        if not self.monotone:
            self.learn(range(len(self.keys)))
            return self.best(self.times(scale, hop)[1])
        # Added latency only lengthens every candidate (slopes >= 0), so each row's best
        # is at most its best without it: the slopes of a row's collectives are measured
        # (one compilation of the fabric per (op, size)) only while that bound beats the
        # best found; a cell whose slopes are not known scores NaN (infeasible).
        bound = np.full(len(self.row_keys), -np.inf)
        no_hop = self.times(scale, 0.0)[1]
        ok = no_hop <= self.limit
        np.maximum.at(bound, self.row[ok], self.tokens_per_step[ok] / no_hop[ok]
                      / self.sms[ok])
        while True:
            best = self.best(self.times(scale, hop)[1])
            floor = -np.inf if best is None else best
            todo = [i for i in np.argsort(-bound, kind="stable").tolist()
                    if bound[i] > floor and not self.learnt[self.row_keys[i]].all()]
            if not todo:
                return best
            self.learn(self.row_keys[todo[0]].tolist())
            if not self.monotone:
                return self(scale, hop)
