"""The time of a pipelined step in a grid (:func:`compute.roofline.evaluate_grid`): each
row's slowest pipeline stage, its own mix of layers with the embedding or the LM head, and
the latency (for prefill also the steady-state interval) of micro-batches flowing through
the stages, with the ``pipeline_wait`` stage that latency adds.
"""

from __future__ import annotations

import numpy as np

from compute.grid_parts import pipeline_period
from compute.parallel import stage_mix
from compute.stages import LAYER_STAGES, PIPELINE_STAGES, layer_counts


def slowest_stage(model, sh, stage_t, c3, names, gap=None, attention=None) -> np.ndarray:
    """Each row's slowest pipeline stage's time for one micro-batch, shape like a stage's
    times (``nan`` where a row has one stage): stage ``s`` of ``p`` runs its own layers
    (:func:`compute.parallel.stage_mix`: ``n_s`` layers, ``m_s`` of them MoE), the
    embedding if first and the LM head if last, ``T_s = n_s A + m_s B + E_s + H_s``, where
    ``A`` and ``B`` are the per-layer and per-MoE-layer sums of ``count x time``
    (:func:`compute.stages.layer_counts` is linear in the layers and the MoE layers). The
    pass's per-layer MLP times average an MoE model's MoE and dense layers (weighted ``M /
    L`` and ``1 - M / L``); a stage holding ``m_s`` MoE layers of its ``n_s`` runs ``(m_s
    - n_s M / L) x gap`` more (``gap``: an MoE layer's MLP time less a dense layer's,
    :func:`compute.grid_parts.mlp_kind_gap`), which the stages' sum leaves the pass's.

    The pass's ``attention`` time averages a windowed model's full-attention and windowed
    layers; a stage runs its own instead: its ``f_s`` full-attention and ``w_s`` windowed
    layers (:attr:`~compute.models.ModelSpec.full_layer_step` says which it holds), each
    timed as such (``attention``: ``(full, windowed)`` per layer,
    :func:`compute.grid_parts.attention_kind_times`), in place of ``n_s`` times the
    pass's average. Where both kinds are bound by the same resource (decode: memory) the
    stages' sum is the pass's; where they are not (a long prefill: full layers
    compute-bound, 128-token windows memory-bound) the pass's average, the larger of the
    mean compute and the mean memory time, is below the mean of the two layers' times,
    and each stage is timed exactly while the pass keeps its average."""
    pps = np.asarray(sh.pp, dtype=float).ravel()
    shape = stage_t.shape[1:]
    out = np.full(shape, np.nan)
    # each pipeline degree's rows (only those are timed here), their per-layer and
    # per-MoE-layer sums formed on those rows alone, each stage's times taken once
    degrees = [(p, np.flatnonzero(pps == p)) for p in np.unique(pps).astype(int).tolist()
               if p != 1]
    if not degrees:
        return out
    every = len(degrees) == 1 and degrees[0][1].size == shape[0]   # a view, not a copy

    def cut(v, rows):   # ``v``'s rows ``rows`` (a row for every row: itself), an array
        if every:        # (``v`` may take its rows where asked: moe_dp_cells.GridRows)
            return np.asarray(v)
        return np.asarray(v) if v.shape[0] == 1 else v[rows]

    base = layer_counts(model, sh, 1.0, 0.0)
    moe = layer_counts(model, sh, 1.0, 1.0)
    a = [np.zeros((rows.size, shape[1])) for _, rows in degrees]
    m = [np.zeros((rows.size, shape[1])) for _, rows in degrees]
    for name in LAYER_STAGES:
        if name not in names:
            continue
        t = stage_t[names.index(name)]
        ca = np.asarray(base[name], dtype=float).reshape(-1, 1)
        cb = np.asarray(moe[name], dtype=float).reshape(-1, 1) - ca
        for j, (_, rows) in enumerate(degrees):
            tr = cut(t, rows)
            _add_counted(a[j], cut(ca, rows), tr)
            _add_counted(m[j], cut(cb, rows), tr)
    k_e, k_h = names.index("embedding"), names.index("lm_head")
    for j, (p, rows) in enumerate(degrees):
        e = cut(c3[k_e], rows) * cut(stage_t[k_e], rows)
        h = cut(c3[k_h], rows) * cut(stage_t[k_h], rows)
        g = None if gap is None else cut(gap, rows)
        if attention is not None:
            full, windowed = (cut(x, rows) for x in attention)
            t_att = cut(stage_t[names.index("attention")], rows)
        mix = stage_mix(model, p)
        moe_s = (mix[:, 0] - mix[:, 1]) if model.is_moe else np.zeros(p)
        full_s = mix[:, 0] - mix[:, 2]            # full-attention layers
        worst = None
        for s in range(p):
            t = mix[s, 0] * a[j] + moe_s[s] * m[j]
            if g is not None:   # the stage's own MoE and dense layers' MLPs
                t = t + (moe_s[s] - mix[s, 0] * model.moe_layers / model.layers) * g
            if attention is not None:   # the stage's own full-attention and windowed layers
                t = t + (full_s[s] * full + mix[s, 2] * windowed - mix[s, 0] * t_att)
            if s == 0:
                t = t + e
            if s == p - 1:
                t = t + h
            worst = t if worst is None else np.maximum(worst, t)
        if every:
            return worst
        out[rows] = worst
    return out


def _add_counted(total, count, t) -> None:
    """``total += np.where(count != 0, count * t, 0.0)`` in place (``count`` a column, one
    per row of ``t``), the same sum bit for bit without its temporaries: a row counted 0
    adds 0.0, which changes nothing (``total`` starts at +0.0, so never -0.0), and a
    count of 1 multiplies exactly."""
    col = count[:, 0]
    if not col.any():
        return
    if (col == 1.0).all():
        np.add(total, t, out=total)
        return
    term = np.multiply(count, t)
    if not col.all():
        term[np.broadcast_to(col == 0, term.shape[:1])] = 0.0
    np.add(total, term, out=total)


def pipeline_latency(pass_t, pp, b, micro, stage_t, bound, c3, names, options, workload,
                     parts, busy=None, slowest=None):
    """Latency of the pipelined rows (see :func:`compute.roofline.evaluate_grid`), and for prefill the
    steady-state seconds per batch (``n x period`` on those rows, ``n = ceil(batch /
    micro)`` the batch's micro-batches of ``micro`` prompts, the latency on the
    others; None for decode, whose TBT is already a steady state); fills the
    ``pipeline_wait`` stage (in place) with what the latency adds to the micro-batch's own
    pass (the other micro-batches' work on the same stages), charged to the resource
    busiest over the pass (``busy``: those sums over every row, when already formed)."""
    ks, kw = names.index("pp_send"), names.index("pipeline_wait")
    rows = np.flatnonzero(pp.ravel() > 1)         # only the pipelined rows change
    every = rows.size == pass_t.shape[0]          # every row: views, not copies
    at = slice(None) if every else rows
    p = pp[at]
    if b.shape[0] > 1:                            # a batch per row (evaluate_many)
        b = b[at]
    mine = pass_t[at]
    send = stage_t[ks, at]
    period = pipeline_period(mine, send, p, options.mode,
                             None if slowest is None else slowest[at])
    # a micro-batch through every stage; here and below each sum in place where a product
    # made an array of its own (the same operations, operands in the same order)
    own = (p - 1) * send
    own = np.add(mine, own, out=own if own.shape == mine.shape else None)
    interval = None
    if workload.phase == "decode":
        k = np.minimum(b, p)   # in flight: one micro-batch per stage (fewer sequences: each)
        piped = k * period
        piped = np.maximum(own, piped, out=piped if piped.shape == own.shape else None)
    else:   # the batch's micro-batches (compute.parallel.micro_batch), one after another
        m = np.asarray(micro, dtype=float)
        if m.ndim and m.shape[0] > 1:
            m = m[at]
        n = np.ceil(b / m)            # b itself at one prompt a micro-batch
        piped = (n - 1) * period
        piped = np.add(piped, own, out=piped if piped.shape == own.shape else None)
        if every:                     # a stream of batches: one every n periods
            interval = _whole(n * period, pass_t.shape)
        else:
            interval = pass_t.copy()
            interval[rows] = n * period
    wait = np.subtract(piped, own, out=own if own.shape == piped.shape else None)
    np.maximum(wait, 0.0, out=wait)
    if every:
        latency = _whole(piped, pass_t.shape)
    else:
        latency = pass_t.copy()
        latency[rows] = piped
    n = len(names) - len(PIPELINE_STAGES)             # the pipeline's stages come last
    assert names[n:] == PIPELINE_STAGES
    if busy is None:
        busy = [np.einsum("kc,kcb->cb", c3[:n, :, 0], part[:n])[rows]
                for part in parts]     # each resource's busy time over the pass
    else:  # the same sums (each resource's, :func:`compute.grid_parts.stage_times`)
        busy = [total[at] for total in busy]
    dominant = first_largest(*busy)
    stage_t[kw, at] = wait
    bound[kw, at] = dominant
    for r, part in enumerate(parts):
        if every and part[kw].shape == wait.shape:   # in place: the wait where r, else 0
            part[kw] = 0.0
            np.copyto(part[kw], wait, where=dominant == r)
        else:
            part[kw, at] = np.where(dominant == r, wait, 0.0)
    return latency, interval


def _whole(x, shape) -> np.ndarray:
    """``x``, an array of its own of ``shape`` (broadcast, a copy, where not so already)."""
    return x if x.shape == shape else np.array(np.broadcast_to(x, shape))


def first_largest(x0, x1, x2) -> np.ndarray:
    """The index of the largest of three arrays, cell by cell, as int8: ``np.argmax`` of
    them stacked on a first axis, bit for bit (the first on ties; a NaN is the largest, the
    first NaN taken), without the stack and argmax's pass across it.

    >>> nan = float("nan")
    >>> first_largest(np.array([1., 2, 2, nan, 1, 1, 0]), np.array([2., 2, 1, 5, nan, 1, 0]),
    ...               np.array([1., 3, 2, nan, 9, nan, -0.0])).tolist()
    [1, 2, 0, 0, 1, 2, 0]
    """
    out = np.greater(x1, x0).astype(np.int8)
    best = np.maximum(x0, x1)           # NaN where either is
    out[x2 > best] = 2
    lost = np.isnan(best)
    if lost.any():                      # x1 NaN where x0 is not: x1
        out[lost & ~np.isnan(x0)] = 1
    late = np.isnan(x2)
    if late.any():                      # x2 NaN where neither before it is: x2
        out[late & ~lost] = 2
    return out
