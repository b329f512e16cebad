"""The prefill cells of disaggregated serving (:mod:`netmodel.study.serving`): each cell's
KV-cache transfer to the decode instance, what of it shows in the TTFT and the cycle a
prefill instance takes a batch at; computed again for each decode instance the service
weighs (:func:`~netmodel.study.serving_queue.decode_choices`)."""

from __future__ import annotations

import numpy as np

from compute.parallel import Parallelism, kv_copies, stage_layers

__all__ = ["cell_transfer"]


def _prefill_interval(grid) -> np.ndarray:
    """Seconds a prefill instance spends on each batch in steady state (configurations x
    batches): the grid's own ``interval`` (:func:`compute.roofline.evaluate_grid`: with
    pipeline stages ``b`` periods of the slowest stage, the next batch filling the
    pipeline as this one drains), its latency where the grid has none (no pipeline)."""
    return np.asarray(grid.latency if grid.interval is None else grid.interval, dtype=float)


def _last_stage_left(grid, t_x, ratio, batches, layers: int) -> np.ndarray:
    """Seconds of a pipelined prefill's KV transfer left after its TTFT on the pairs of its
    last stage (see the module docstring), configurations x batches: those pairs carry
    the last stage's layers, ``t_x x ratio x n / layers`` (``ratio``: one layer's bytes a
    pair over ``t_x``'s; ``n`` the stage's layers, :func:`compute.parallel.stage_layers`),
    and only while that stage computes, from when the first micro-batch reaches it (``(pp
    - 1) / pp`` of a pass, stages taken as balanced) to the end of the TTFT, over which its
    ``k x n`` layer passes produce them (``k = ceil(b / micro)`` micro-batches of one prompt
    an attention group, :func:`compute.parallel.micro_batch`): ``T_s - W (1 - 1 / (k
    n))``. Rows without pipeline stages get 0."""
    pps = np.array([c.pp for c in grid.configs], dtype=float).reshape(-1, 1)
    n = np.array([float(np.subtract(*stage_layers(layers, c.pp)[-1][::-1]))
                  for c in grid.configs]).reshape(-1, 1)
    k = batches if grid.micro_batches is None else np.ceil(batches / grid.micro_batches)
    period = _prefill_interval(grid) / k
    start = (grid.latency - (k - 1) * period) * (pps - 1) / pps
    window = grid.latency - start
    left = t_x * ratio * n / layers - window * (1 - 1 / (k * n))
    return np.where(pps > 1, left, 0.0)


def cell_transfer(model, wl, grid, dec, kv: float, xfer) -> tuple:
    """The KV transfer of each prefill cell (configurations x batches) to the decode
    instance ``dec`` (None: one output token, nothing sent), as the module docstring of
    :mod:`netmodel.study.serving` says: the GPU pairs it moves on at once (``streams``),
    its seconds ``t_x``, what of it shows in the TTFT (``visible``) and the cycle
    ``max(I, t_x)`` a prefill instance takes a batch at."""
    # the transfer of each cell's batch, on as many pairs as both instances hold its KV
    # shards on: with attention DP a request's cache lives in one attention group, so a
    # batch of b requests covers min(b, groups) of them
    batches = grid.batches.reshape(1, -1).astype(float)

    def group(par):          # distinct KV shards of one attention group
        return max(1, round(par.attention_tp * par.pp / kv_copies(model, par)))

    def shards(par):
        return group(par) * np.minimum(float(par.attention_dp), batches)

    def busiest(par):        # bytes on one GPU of the group holding the most whole requests
        return np.ceil(batches / par.attention_dp) * kv / group(par)

    def layer_group(par):    # distinct KV shards of one layer in one attention group
        return max(1, round(par.attention_tp / kv_copies(model, par)))

    def layer_shards(par):   # ... of the batch: one stage's, whichever the stage
        return layer_group(par) * np.minimum(float(par.attention_dp), batches)

    def layer_busiest(par):  # a request's bytes on one GPU of a layer's busiest group
        return np.ceil(batches / par.attention_dp) * kv / layer_group(par)

    dec_par = None if dec is None else Parallelism.of(dec)
    dec_gpus = dec.gpus if dec is not None else 1
    streams = np.concatenate([np.minimum(shards(c), shards(dec_par)) if dec_par else shards(c)
                              for c in grid.configs])
    # a request's cache is whole in one group: b requests over a groups put ceil(b / a) on
    # the busiest, whose pairs carry them (an even split of the bytes would undercount)
    most = np.concatenate([np.maximum(busiest(c), busiest(dec_par)) if dec_par else busiest(c)
                           for c in grid.configs])
    per_stream = np.maximum(batches * kv / streams, most)
    # each side's bytes a GPU: where the pools' GPUs differ, each at its own links' rate
    # (their larger is per_stream: the side with the fewer shards, or the busiest group)
    sides = None if dec_par is None else (
        np.concatenate([np.maximum(batches * kv / shards(c), busiest(c)) for c in grid.configs]),
        np.broadcast_to(np.maximum(batches * kv / shards(dec_par), busiest(dec_par)),
                        per_stream.shape))
    # one layer moves on the pairs that hold it: with pipeline stages, its stage's only
    # (the same bytes as per_stream where neither instance is pipelined: a ratio of 1)
    layer_streams = np.concatenate([np.minimum(layer_shards(c), layer_shards(dec_par))
                                    if dec_par else layer_shards(c) for c in grid.configs])
    layer_most = np.concatenate([np.maximum(layer_busiest(c), layer_busiest(dec_par))
                                 if dec_par else layer_busiest(c) for c in grid.configs])
    # a pipelined prefill finishes its prompts one at a time (each a micro-batch): only the
    # last prompt's last layer is left when its TTFT ends, on the pairs of its own group
    one = np.array([kv / min(layer_group(c), layer_group(dec_par)) if dec_par
                    else kv / layer_group(c) for c in grid.configs]).reshape(-1, 1)
    piped = np.array([c.pp > 1 for c in grid.configs]).reshape(-1, 1)
    layer_ratio = np.where(piped, one, np.maximum(batches * kv / layer_streams,
                                                  layer_most)) / per_stream
    t_x = np.zeros_like(grid.latency)
    if dec is None:   # one output token: no decode pool, no cache to send
        streams = np.zeros_like(streams)
    for g in sorted({c.gpus for c in grid.configs}) if dec is not None else ():
        rows = np.array([c.gpus == g for c in grid.configs])
        t_x[rows] = xfer.time(per_stream[rows], g, dec_gpus,
                              None if sides is None else (sides[0][rows], sides[1][rows]))
    layers = model.layers
    held = model.kv_tokens_after_prefill(wl.prompt)   # per layer, on average
    if held == wl.prompt or model.windowed_layers == layers:   # every layer alike
        last = t_x * layer_ratio / layers
    else:   # the last layer attends fully (gpt-oss, Gemma, Llama-4): a whole prompt's share
        last = t_x * layer_ratio * (wl.prompt / (layers * held))
    visible = np.maximum(last, t_x - grid.latency * (layers - 1) / layers)
    if piped.any():
        visible = np.where(piped, np.maximum(visible, _last_stage_left(
            grid, t_x, np.maximum(batches * kv / layer_streams, layer_most) / per_stream,
            batches, layers)), visible)
    cycle = np.maximum(_prefill_interval(grid), t_x)
    return streams, t_x, visible, cycle
