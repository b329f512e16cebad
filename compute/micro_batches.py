"""The two-stream schedule of two-batch overlap (:mod:`compute.two_batch`), for one
configuration and for every cell of a grid at once.

A step is a chain of ``(compute, communication)`` segments; two micro-batches run on one
compute and one communication stream: plain floats in :func:`two_batch_time`, numpy arrays
over a grid's cells in :func:`grid_two_batch_time` (one pass over the segments, each a few
array operations over every cell, the same additions and comparisons in the same order as
the scalar code, so each cell equals :func:`two_batch_time` of its chains to the last bit).

Kept apart from :mod:`compute.two_batch` (which evaluates with
:func:`compute.evaluate_one.evaluate`) so that :mod:`compute.roofline`'s grid can use it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from compute.parallel import dense_data_parallel, layout
from compute.stages import layer_counts

__all__ = ["AFTER_MLP", "ATTENTION", "BEFORE_MLP", "MLP", "TOKEN_DISTRIBUTION_THRESHOLD",
           "grid_two_batch_time", "halves_options", "rank_halves", "splits", "two_batch_time"]

#: SGLang's ``--tbo-token-distribution-threshold`` default (python/sglang/srt/server_args.py;
#: used by python/sglang/srt/batch_overlap/two_batch_overlap.py, ``_is_two_chunk_split_enabled``):
#: a prefill split by whole sequences that leaves either micro-batch under this share of
#: the rank's tokens is replaced by a split at half its tokens, cutting one sequence.
TOKEN_DISTRIBUTION_THRESHOLD = 0.48


def _larger_half(phase: str, x, tokens: int):
    """The sequences of the larger of the two micro-batches a rank holding ``x`` sequences
    (of ``tokens`` tokens each) splits its own into (see :func:`rank_halves`)."""
    whole = np.ceil(x / 2.0)
    if phase == "decode":
        return whole
    # the balanced split by sequences, unless one side is below the threshold's share
    cut = whole * tokens > (x * tokens) * (1.0 - TOKEN_DISTRIBUTION_THRESHOLD)
    return np.where(cut, x / 2.0, whole)


def rank_halves(phase: str, batch, attention_dp, tokens: int = 1):
    """The two micro-batches of two-batch overlap as each attention data-parallel rank cuts
    its own sequences in two (SGLang's ``two_batch_overlap.py``: every DP rank splits its
    own batch; DeepSeek's serving likewise): ``((sequences, busiest), (sequences,
    busiest))``, the larger micro-batch first, ``sequences`` over every rank and
    ``busiest`` on the busiest rank (arrays broadcast over ``batch`` x ``attention_dp``).

    ``batch`` sequences of ``tokens`` tokens each spread over ``a`` ranks: ``batch mod a``
    ranks hold ``ceil(batch / a)``, the others ``floor``. A rank holding ``x`` sequences
    splits them:

    * decode: by sequences, ``floor(x / 2)`` and ``ceil(x / 2)`` (SGLang:
      ``(num_tokens // token_num_per_seq) // 2``);
    * prefill: by sequences balancing the two sides' tokens (``ceil(x / 2)`` and
      ``floor(x / 2)`` for prompts of one length), unless the larger side holds more than
      ``1 -`` :data:`TOKEN_DISTRIBUTION_THRESHOLD` of the rank's tokens (an odd ``x``
      below 25, one prompt among them): then at half its tokens, one prompt cut in two
      (SGLang's two-chunk split), ``x / 2`` sequences' tokens on each side. The cut
      prompt's two chunks' attention is taken at their mean (the second reads the first's
      KV cache: ``P^2/8`` pairs a head and layer more than the mean, the first as many
      fewer); the attention stage takes no prefix, so the overlapped step may be low by
      up to the layers times those pairs' time (docs/compute.md: +4.3% at most in its
      cases).

    With ``a`` 1 (or a batch every rank holds as many of) decode's micro-batches are
    ``ceil(batch / 2)`` and ``floor(batch / 2)`` sequences as before.

    >>> rank_halves("prefill", 32, 32)    # DeepSeek-V3 wide EP: a prompt a rank, cut in two
    ((16.0, 0.5), (16.0, 0.5))
    >>> rank_halves("decode", 33, 32)     # one rank holds 2, the 31 others 1
    ((32.0, 1.0), (1.0, 1.0))
    >>> rank_halves("prefill", 64, 32), rank_halves("decode", 7, 1)
    (((32.0, 1.0), (32.0, 1.0)), ((4.0, 4.0), (3.0, 3.0)))
    """
    s = np.asarray(batch, dtype=float)
    a = np.asarray(attention_dp, dtype=float)
    q = np.floor(s / a)                    # every rank's floor(s / a) ...
    rem = s - q * a                        # ... and one more on rem of them
    r = q + (rem > 0)                      # the busiest rank's, ceil(s / a)
    big_r, big_q = _larger_half(phase, r, tokens), _larger_half(phase, q, tokens)
    big = rem * big_r + (a - rem) * big_q
    small = s - big
    if np.ndim(big) == 0:
        return (float(big), float(big_r)), (float(small), float(r - big_r))
    return (big, big_r), (small, r - big_r)


def splits(phase: str, batch, attention_dp):
    """Whether a batch of ``batch`` sequences over ``attention_dp`` ranks runs as two
    micro-batches (arrays broadcast): at least 2 sequences, and in decode every rank that
    holds any holding at least 2 (``batch >= 2 attention_dp``): a decode rank of one
    sequence has nothing to put in its first micro-batch, its split is none, and SGLang
    then runs no rank's step as two (``TboDPAttentionPreparer``: each rank's
    ``local_can_run_tbo``, the minimum over the ranks). A prefill rank cuts a prompt.

    >>> splits("decode", 64, 32), splits("decode", 63, 32), splits("prefill", 2, 32)
    (True, False, True)
    """
    s = np.asarray(batch)
    ok = s >= 2
    if phase == "decode":
        ok = ok & (s >= 2 * np.asarray(attention_dp))
    return bool(ok) if np.ndim(ok) == 0 else ok


#: A layer's compute stages before the MLP's collectives, and the MLP's.
ATTENTION = ("qkv", "attention", "out_proj")
MLP = ("mlp_up", "mlp_down")
#: The collectives on either side of the MLP, in a step's order.
BEFORE_MLP = ("allreduce_attn", "attn_scatter", "dp_gather", "moe_dispatch")
AFTER_MLP = ("allreduce_mlp", "dp_scatter", "attn_gather", "moe_combine", "dp_regather")


def halves_options(options):
    """The :class:`~compute.roofline_options.RooflineOptions` the two micro-batches are evaluated
    with: ``options`` without two-batch overlap and without ``overlap_collectives``. Each
    collective is one segment on the communication stream, in full: the other
    micro-batch's compute is what hides it. Hiding it behind its own producer GEMM as well
    (the visible part ``max(0, network - producer)`` as the segment) put less on that
    stream than the collectives take, so the overlapped step could end before the stream's
    own work, and a GPU with more HBM bandwidth (a shorter producer, so a longer visible
    part) got a slower step (gpt-oss-20b prefill, GB200-NVL72, TP 32 x DP-attention 2,
    batch 128: 98.87 ms, below its collectives' 99.18 ms; 99.44 ms with 1.5x the FLOP/s
    and HBM bandwidth). ``None`` stays ``None`` (the defaults have neither)."""
    if options is None:
        return None
    return replace(options, two_batch_overlap=False, overlap_collectives=False)


def two_batch_time(chains: Sequence[Sequence[tuple[float, float]]]) -> float:
    """Seconds for micro-batches given as chains of ``(compute, communication)`` segments
    (seconds each; every chain as long as the first) on one compute stream and one
    communication stream, each taking segment ``i`` of every micro-batch in turn, in the
    chains' order, then segment ``i + 1``: a segment computes once the compute stream is
    free and its micro-batch's previous segment has communicated, then communicates once
    the communication stream is free (at once if it has nothing to send).

    >>> two_batch_time([[(1.0, 0.0)]])                 # one micro-batch: its own chain
    1.0
    >>> two_batch_time([[(2.0, 1.0)] * 3] * 2)        # 2 x 3 x max(2, 1) + min(2, 1)
    13.0
    >>> two_batch_time([[(1.0, 2.0)] * 3] * 2)        # 2 x 3 x 2 + 1
    13.0
    """
    n = len(chains[0])
    if any(len(c) != n for c in chains):
        raise ValueError("every micro-batch's chain has the same segments")
    compute_free = network_free = 0.0
    done = [0.0] * len(chains)
    for i in range(n):
        for m, chain in enumerate(chains):
            c, a = chain[i]
            start = compute_free if compute_free > done[m] else done[m]
            compute_free = start + c
            if a > 0.0:
                begin = network_free if network_free > compute_free else compute_free
                network_free = begin + a
                done[m] = network_free
            else:
                done[m] = compute_free
    return max(done)


def _layer_segments(model, configs, stage_time, counts, names, rows, cols, dense_mlp_tp=None):
    """The distinct segments of the cells ``(rows[n], cols[n])`` of a grid's step (1-D
    arrays, one entry a cell): ``(embedding, head, dense, moe)``, ``dense`` and ``moe`` a
    layer's two segments ``((compute, comm), (compute, comm))``; a stage a row does not
    run counts 0 s (as :func:`compute.two_batch.step_segments` reads a result's stages)."""
    def t(name):
        if name not in names:
            return np.zeros(rows.size)
        k = names.index(name)
        return np.where(counts[k][rows] > 0, stage_time[k][rows, cols], 0.0)

    sh = layout(model, configs)
    if dense_mlp_tp is not None:   # the dense layers' MLPs data-parallel, as the grid's
        sh = dense_data_parallel(model, configs, sh, dense_mlp_tp)
    attention = 0.0
    for k in ATTENTION:
        attention = attention + t(k)
    mlp = 0.0
    for k in MLP:
        mlp = mlp + t(k)
    times = {k: t(k) for k in BEFORE_MLP + AFTER_MLP}

    def layer(moe: float):
        c = layer_counts(model, sh, 1.0, moe)
        sides = []
        for side in (BEFORE_MLP, AFTER_MLP):
            total = 0.0
            for k in side:
                total = total + np.asarray(c[k], dtype=float).reshape(-1)[rows] * times[k]
            sides.append(total)
        return ((attention, sides[0]), (mlp, sides[1]))

    return (t("embedding"), None), (t("lm_head"), None), layer(0.0), layer(1.0)


def grid_two_batch_time(model, configs, halves, rows, cols, dense_mlp_tp=None) -> np.ndarray:
    """The two-batch time (:func:`two_batch_time`) of the grid cells ``(rows[n],
    cols[n])`` at once (a 1-D array): ``halves`` the two micro-batches' ``(stage_time,
    counts, names, column)`` (a grid's arrays, the first the ``ceil`` half's; ``column``
    maps a cell's column to the half grid's), every cell's chain the embedding, the dense
    layers, the MoE layers and the LM head (:func:`compute.two_batch.step_segments`'s). A
    loop over the chain's segments, none over cells: each segment a few operations in
    place over every cell, the scalar schedule's additions in its order (its ``a if a > b
    else b`` is ``np.maximum`` on numbers). ``dense_mlp_tp``: the grid's
    :class:`~compute.roofline_options.RooflineOptions` ``dense_mlp_tp`` (its layers' collectives
    counted as the grid counted them)."""
    parts = [_layer_segments(model, configs, st, counts, names, rows, col[cols], dense_mlp_tp)
             for st, counts, names, col in halves]
    # every segment of a micro-batch's chain is one of these: (compute, comm, kind), kind
    # None (nothing sent), "all" (every cell sends) or a mask of the cells that send
    def prepared(seg):
        c, a = seg
        if a is None or not np.any(a > 0.0):
            return c, None, None
        sent = a > 0.0
        return c, a, (None if sent.all() else sent)

    distinct = [[prepared(emb), prepared(head), [prepared(x) for x in dense],
                 [prepared(x) for x in moe]] for emb, head, dense, moe in parts]
    # the chain: the embedding, the dense layers, the MoE layers, the LM head
    runs = [(0, 1), (2, model.layers - model.moe_layers), (3, model.moe_layers), (1, 1)]
    n = rows.size
    compute_free, network_free = np.zeros(n), np.zeros(n)
    done = [np.zeros(n) for _ in parts]
    scratch = np.empty(n)

    def step(m, c, a, sent):
        np.maximum(compute_free, done[m], out=compute_free)   # start
        np.add(compute_free, c, out=compute_free)
        if a is None:
            done[m][...] = compute_free
            return
        if sent is None:       # every cell sends
            np.maximum(network_free, compute_free, out=network_free)
            np.add(network_free, a, out=network_free)
            done[m][...] = network_free
            return
        np.maximum(network_free, compute_free, out=scratch)
        np.add(scratch, a, out=scratch)
        np.copyto(network_free, scratch, where=sent)
        np.copyto(done[m], np.where(sent, network_free, compute_free))

    for which, repeat in runs:
        if which < 2:   # the embedding (first), the LM head (last)
            for m, d in enumerate(distinct):
                step(m, *d[which])
            continue
        for _ in range(repeat):
            for seg in range(2):
                for m, d in enumerate(distinct):
                    step(m, *d[which][seg])
    out = done[0].copy()
    for d in done[1:]:
        np.copyto(out, d, where=d > out)   # max(done), the first of equals
    return out
