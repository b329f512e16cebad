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
    if attention is not None:
        t_att = stage_t[names.index("attention")]
    base = layer_counts(model, sh, 1.0, 0.0)
    moe = layer_counts(model, sh, 1.0, 1.0)
    shape = stage_t.shape[1:]
    a = np.zeros(shape)
    m = np.zeros(shape)
    for name in LAYER_STAGES:
        if name not in names:
            continue
        t = stage_t[names.index(name)]
        ca = np.asarray(base[name], dtype=float).reshape(-1, 1)
        cb = np.asarray(moe[name], dtype=float).reshape(-1, 1) - ca
        a += np.where(ca != 0, ca * t, 0.0)
        m += np.where(cb != 0, cb * t, 0.0)
    k_e, k_h = names.index("embedding"), names.index("lm_head")
    e = c3[k_e] * stage_t[k_e]
    h = c3[k_h] * stage_t[k_h]
    out = np.full(shape, np.nan)
    for p in np.unique(pps).astype(int).tolist():
        if p == 1:
            continue
        rows = np.flatnonzero(pps == p)
        mix = stage_mix(model, p)
        moe_s = (mix[:, 0] - mix[:, 1]) if model.is_moe else np.zeros(p)
        full_s = mix[:, 0] - mix[:, 2]            # full-attention layers
        worst = None
        for s in range(p):
            t = mix[s, 0] * a[rows] + moe_s[s] * m[rows]
            if gap is not None:   # the stage's own MoE and dense layers' MLPs
                t = t + (moe_s[s] - mix[s, 0] * model.moe_layers / model.layers) * gap[rows]
            if attention is not None:   # the stage's own full-attention and windowed layers
                t = t + (full_s[s] * attention[0][rows] + mix[s, 2] * attention[1][rows]
                         - mix[s, 0] * t_att[rows])
            if s == 0:
                t = t + e[rows]
            if s == p - 1:
                t = t + h[rows]
            worst = t if worst is None else np.maximum(worst, t)
        out[rows] = worst
    return out


def pipeline_latency(pass_t, pp, b, micro, stage_t, bound, c3, names, options, workload,
                     parts, busy=None, slowest=None):
    """Latency of the pipelined rows (see :func:`compute.roofline.evaluate_grid`), and for prefill the
    steady-state seconds per batch (``batch x period`` on those rows, the latency on the
    others; None for decode, whose TBT is already a steady state); fills the
    ``pipeline_wait`` stage (in place) with what the latency adds to the micro-batch's own
    pass (the other micro-batches' work on the same stages), charged to the resource
    busiest over the pass (``busy``: those sums over every row, when already formed)."""
    ks, kw = names.index("pp_send"), names.index("pipeline_wait")
    rows = np.flatnonzero(pp.ravel() > 1)         # only the pipelined rows change
    p = pp[rows]
    if b.shape[0] > 1:                            # a batch per row (evaluate_many)
        b = b[rows]
    mine = pass_t[rows]
    send = stage_t[ks, rows]
    period = pipeline_period(mine, send, p, options.mode,
                             None if slowest is None else slowest[rows])
    own = mine + (p - 1) * send                  # a micro-batch through every stage
    interval = None
    if workload.phase == "decode":
        k = np.minimum(b, p)   # in flight: one micro-batch per stage (fewer sequences: each)
        piped = np.maximum(own, k * period)
    else:
        piped = (b - 1) * period + own
        interval = pass_t.copy()      # a stream of batches: one every b periods
        interval[rows] = b * period
    latency = pass_t.copy()
    latency[rows] = piped
    wait = np.maximum(piped - own, 0.0)
    n = len(names) - len(PIPELINE_STAGES)             # the pipeline's stages come last
    assert names[n:] == PIPELINE_STAGES
    if busy is None:
        busy = np.stack([np.einsum("kc,kcb->cb", c3[:n, :, 0], part[:n])[rows]
                         for part in parts])     # each resource's busy time over the pass
    else:  # the same sums (each resource's, :func:`compute.grid_parts.stage_times`)
        busy = np.stack([total[rows] for total in busy])
    dominant = np.argmax(busy, axis=0).astype(np.int8)
    stage_t[kw, rows] = wait
    bound[kw, rows] = dominant
    for r, part in enumerate(parts):
        part[kw, rows] = np.where(dominant == r, wait, 0.0)
    return latency, interval
