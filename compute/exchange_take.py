"""Writing another exchange's cells into a grid where they are the faster:
:func:`take_faster`, which :func:`compute.moe_exchange.cheaper_exchange` calls once for
each alternative exchange it weighs (vLLM's gather, the all-reduce, SGLang's DP-attention
gather) against the all-to-alls' grid, and the step each cell is weighed by
(:func:`serial_step`). A cell takes the other exchange's figures where they fit where the
grid's do not, or fit as they do and its serial step is the faster; the grid records the
exchange taken (``exchange``) and each stage's collective per cell (a
:class:`~compute.dp_collectives.CellOps` where the cells differ).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from compute.dp_collectives import CellOps
from compute.moe_dp_cells import GRID_OWN, GridRows

__all__ = ["serial_step", "take_faster"]

#: The Grid fields with a stage axis first, then configurations x batches.
_STAGE_FIELDS = ("flops", "hbm_bytes", "net_bytes", "compute_time", "memory_time",
                 "network_time", "stage_time", "bound")
#: The Grid fields of configurations x batches the two schedules may differ in (the
#: weights: the shared experts split over ``tp`` or replicated).
_CELL_FIELDS = ("latency", "overhead", "interval", "two_batch_latency", "two_batch_hidden",
                "weights", "kv_cache", "activations", "fits")

#: At most this share of the cells a :func:`take_faster` weighs taken: written one by
#: one (a cell's row and column); more: the rows taken whole, written and put back.
_SPARSE = 0.25


def take_faster(grid, alt, idx: np.ndarray, cols=None, only=None, code: int = 0):
    """``grid`` with the cells of its rows ``idx`` (and columns ``cols``, None: every one)
    where ``alt`` (those cells under another exchange) fits where ``grid`` does not, or fits
    as it does and its serial step (without two-batch overlap) is the faster taking
    ``alt``'s figures (of the stages ``only`` names, where given: the others the same in
    both); NaN (untimed, unfit) keeps ``grid``'s. An ``alt`` evaluated without
    two-batch overlap (the gather) where ``grid`` has it: a cell taking ``alt`` keeps
    ``grid``'s overlapped step (the all-to-alls' micro-batches) where that beats ``alt``'s
    serial one, so the step is the least of the serial steps and the overlapped one, and
    the stages those of the faster serial step, as without two-batch overlap. ``code``:
    ``alt``'s exchange (:data:`compute.exchange_names.EXCHANGES`), which the grid's ``exchange`` records in the
    cells taking it."""
    if cols is not None and np.array_equal(cols, np.arange(grid.latency.shape[1])):
        cols = None   # every column: the rows taken whole (np.ix_'s outer index is slower)
    at = (idx, slice(None)) if cols is None else np.ix_(idx, cols)
    fits_a, fits_m = np.broadcast_to(alt.fits, alt.latency.shape), grid.fits[at]
    sub = (fits_a & ~fits_m) | ((fits_a == fits_m)
                                & (serial_step(alt) < serial_step(grid)[at]))
    if not sub.any():
        return grid
    cells = {name: getattr(alt, name) for name in _CELL_FIELDS}
    if grid.two_batch_latency is not None and alt.two_batch_latency is None:
        t = grid.two_batch_latency[at]
        ovh = 0.0 if alt.overhead is None else alt.overhead
        step = alt.latency if alt.overhead is None else alt.latency - ovh
        faster = t < step          # NaN (nothing to split): the serial step
        cells.update(two_batch_latency=t, two_batch_hidden=np.where(faster, step - t, 0.0),
                     latency=np.where(faster, t + ovh, alt.latency))
    if grid.interval is not None and alt.interval is None:
        # alt's rows run one stage each (no pipeline): a batch every serial step, as
        # compute.pipeline_time gives a row of pp 1 (not grid's interval, of the other exchange)
        cells["interval"] = serial_step(alt)
    changes = {}
    buffers = {}   # one buffer of the cells ``at`` a dtype, reused (no pages faulted anew)
    # few cells taken: each written alone (its row and column), the others untouched;
    # else the rows ``idx`` taken whole, written where ``sub`` and put back
    if sub.sum() <= _SPARSE * sub.size:
        r, c = np.nonzero(sub)
        rr, cc = idx[r], c if cols is None else cols[c]
    else:
        r = None
        mask = None   # the grid's cells taken (a grid's own stage: copied where so)

    def put(out, a):
        """``a`` written into ``out``'s cells ``at`` where ``sub``, the others kept."""
        nonlocal mask
        if a is GRID_OWN:   # the grid's own figures there: nothing changes
            return
        if r is not None:   # the cells alone
            if isinstance(a, GridRows):   # another stage of the grid: read where written
                out[rr, cc] = a.x[a.k][rr, cc]
            else:
                out[rr, cc] = np.broadcast_to(a, sub.shape)[r, c]
            return
        if cols is None and isinstance(a, GridRows) and a.x[a.k].shape == out.shape:
            if mask is None:
                mask = np.zeros(out.shape, dtype=bool)
                mask[idx] = sub
            np.copyto(out, a.x[a.k], casting="unsafe", where=mask)   # one pass, no copy
            return
        if cols is None:   # the rows ``idx`` taken whole, then put back
            buf = buffers.get(out.dtype)
            if buf is None:
                buf = buffers[out.dtype] = np.empty(sub.shape, dtype=out.dtype)
            np.take(out, idx, axis=0, out=buf, mode="clip")   # "raise" buffers ``out``
            if isinstance(a, GridRows):   # another stage of the grid: in a buffer too
                src = buffers.get((out.dtype, 1))
                if src is None:
                    src = buffers[out.dtype, 1] = np.empty(sub.shape, dtype=out.dtype)
                a = a.take(src)
            np.copyto(buf, a, casting="unsafe", where=sub)   # as np.where's, then assigned
        else:   # then their columns ``cols`` (faster than np.ix_)
            buf = np.take(out, idx, axis=0)
            part = buf[:, cols]
            np.copyto(part, a, casting="unsafe", where=sub)
            buf[:, cols] = part
        out[idx] = buf

    for name in _STAGE_FIELDS:
        # written in place (the grid is body's, fresh, its stage arrays its own: copies of
        # what compute.grid_parts keeps): a copy of a cluster-scale grid's 61-111 MB stage
        # array cost 3-5 s of the 16,384-GPU compare (bench_collectives), its pages faulted in
        out = getattr(grid, name)
        if not (isinstance(out, np.ndarray) and out.flags.writeable):
            out = np.array(out, copy=True)
        a = getattr(alt, name)
        for ka, stage in enumerate(alt.stages):
            if only is None or stage in only:
                put(out[grid.stages.index(stage)], a[ka])
        changes[name] = out
    for name in _CELL_FIELDS:
        g, a = getattr(grid, name), cells[name]
        if g is None or a is None:
            continue
        out = np.array(np.broadcast_to(g, grid.latency.shape), copy=True)
        put(out, a)
        changes[name] = out
    taken = np.zeros(grid.latency.shape, dtype=np.int8) if grid.exchange is None \
        else np.array(grid.exchange, copy=True)
    put(taken, code)
    changes["exchange"] = taken
    ops = list(grid.ops)
    for ka, stage in enumerate(alt.stages):
        k = grid.stages.index(stage)
        if alt.ops[ka] != grid.ops[k]:
            ops[k] = _merged_op(grid.ops[k], alt.ops[ka], at, sub, grid.latency.shape)
    changes["ops"] = tuple(ops)
    return replace(grid, **changes)


def serial_step(grid) -> np.ndarray:
    """``grid``'s step without two-batch overlap: its latency plus what the overlap hid."""
    hidden = grid.two_batch_hidden
    return grid.latency if hidden is None else grid.latency + np.nan_to_num(hidden)


def _indexed(op, shape) -> tuple[list, np.ndarray]:
    """``(names, index)``: a stage's collective ``op`` (a name or a
    :class:`~compute.dp_collectives.CellOps`) as its names and each cell's index among them,
    an int array of ``shape``."""
    if isinstance(op, CellOps):
        which = op.which   # intp or bool (CellOps): a copy only for bool
        return list(op.ops), np.broadcast_to(which if which.dtype == np.intp
                                             else which.astype(np.intp), shape)
    return [op], np.zeros(shape, dtype=np.intp)


def _merged_op(main, alt, at, sub, shape):
    """The collective of a stage whose all-to-all grid runs ``main`` and whose cells ``at``
    (an index of rows and columns) run ``alt`` under another exchange (names or
    :class:`~compute.dp_collectives.CellOps`): ``alt``'s in the cells ``sub`` of those,
    ``main``'s elsewhere, a :class:`CellOps`.

    >>> op = _merged_op("reduce-scatter", "all-reduce", (np.array([1]), slice(None)),
    ...                 np.array([[True, False]]), (2, 2))
    >>> op, [op.at(i, j) for i in (0, 1) for j in (0, 1)]
    (CellOps('reduce-scatter', 'all-reduce'), ['reduce-scatter', 'reduce-scatter', 'all-reduce', 'reduce-scatter'])
    """
    names, which = _indexed(main, shape)
    which = np.array(which, dtype=np.intp)   # of its own (one copy of a broadcast)
    alt_names, alt_which = _indexed(alt, sub.shape)
    lut = []
    for name in alt_names:
        if name not in names:
            names.append(name)
        lut.append(names.index(name))
    which[at] = np.where(sub, np.asarray(lut, dtype=np.intp)[alt_which], which[at])
    return CellOps(tuple(names), which)
