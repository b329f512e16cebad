"""Decode with multi-token prediction (MTP, self-speculative decoding): the model's own MTP
module drafts ``K`` tokens a step and the main model verifies them
(:class:`~compute.roofline_options.RooflineOptions` ``mtp_tokens`` and ``mtp_acceptance``;
off by default). The acceptance's default and its check are
:mod:`compute.roofline_options`' (:data:`~compute.roofline_options.DEFAULT_ACCEPTANCE`).

A decode step of ``b`` sequences with ``K`` draft tokens is costed as

* the **verification pass**: the main model on ``K + 1`` tokens a sequence
  (:class:`~compute.phases.Workload` ``draft = K``): every GEMM on ``b (K + 1)`` tokens
  against weights read once, attention with ``K + 1`` queries a sequence reading the KV
  cache once, logits for every one of the ``K + 1`` tokens;
* plus ``K`` sequential **draft passes** of the MTP module on ``b`` tokens each: one
  transformer layer of the main model's kind (DeepSeek-V3: an MoE layer, with its own KV
  cache) read from the model's own shapes (:func:`mtp_module`), the embedding and output
  head it shares with the main model (read again each pass), and its projection of the
  concatenated ``[norm(h); norm(emb)]`` (``2 hidden x hidden``, :func:`projection_time`).
  The module's RMSNorms (``3 x hidden`` weights) are left out.

Each draft is accepted with probability ``a`` (``mtp_acceptance``) and the drafts are
accepted in order, so a sequence emits ``1 + a + ... + a^K`` tokens a step on average
(:func:`expected_tokens`). A decode result's ``latency`` stays the step's time;
``tokens_per_step`` counts the expected tokens emitted, so tokens/s is ``b x E / step``
and the time per output token (TPOT, which the TBT SLO checks) is ``step / E``. A
request with ``n`` tokens left to decode takes no more than ``n`` of a step: its mean
steps are :func:`mean_steps` (``n / E`` and more when ``n`` is short).

The MTP module's weights (its layer and projection; the embedding and head are shared)
and its layer's KV cache are counted in the memory fit. Prefill is costed as without MTP
(the module's one pass over the prompt, which an engine runs to draft the first tokens,
is left out: the roofline stays a lower bound on time). Not modelled, refused in one line:
a model without MTP modules (no draft model is modelled), a windowed model, pipeline
parallelism, an engine profile, two-batch overlap and :func:`compute.evaluate_many`.

>>> expected_tokens(1, 0.8), expected_tokens(2, 0.5), expected_tokens(0, 0.3)
(1.8, 1.75, 1.0)
>>> mean_steps(3, 0.8, 1), mean_steps(1, 0.5, 2), mean_steps(1, 0.5, 3), mean_steps(2, 1.0, 7)
(1.0, 1.5, 2.25, 3.0)
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from compute.errors import UserError
from compute.phases import MAX_MTP_TOKENS, check_mtp_tokens
from compute.validate import MAX_WHOLE, number

__all__ = ["MAX_MTP_TOKENS", "capped_best", "check_mtp_tokens", "expected_tokens", "mean_steps",
           "mtp_grid", "mtp_module", "projection_time"]


def expected_tokens(k: int, a: float) -> float:
    """Tokens a sequence emits a step on average with ``k`` drafts each accepted with
    probability ``a``, in order (the first rejected draft ends the step's run; the
    verification pass always gives one token): ``sum_{i=0..k} a^i``.

    >>> expected_tokens(2, 0.5)   # 1 + 0.5 + 0.25
    1.75
    """
    k, a = _drafts("expected_tokens", k, a)
    return float(sum(a ** i for i in range(k + 1)))


def _drafts(where: str, k: object, a: object) -> tuple[int, float]:
    """``k`` (draft tokens a step, 0 to MAX_MTP_TOKENS) and ``a`` (each one's acceptance,
    a probability) checked, naming them: text raised TypeError, NaN gave a NaN count,
    10**30 drafts summed without end."""
    return (number(where, "k", k, minimum=0, maximum=MAX_MTP_TOKENS, integer=True),
            number(where, "a", a, minimum=0, maximum=1))


#: Past this many tokens :func:`mean_steps` goes on at ``1 / E`` steps a token from a count
#: of the same remainder modulo ``k + 1`` (the rest of its error decays geometrically).
_EXACT_STEPS = 4096


def mean_steps(k: int, a: float, n: int) -> float:
    """Mean decode steps a sequence takes to emit ``n`` tokens with ``k`` drafts a step each
    accepted with probability ``a``, in order: a step emits ``j`` tokens (``j <= k``) with
    probability ``a^(j-1) (1 - a)`` and ``k + 1`` with ``a^k``, but no more than are left,
    so ``S(n) = 1 + sum_j P(j) S(n - j)``, ``S(m <= 0) = 0``. ``n / S(n)`` is the mean
    tokens a step, :func:`expected_tokens` as ``n`` grows, less when ``n`` is short (one
    token left: one step, whatever ``k``)."""
    k, a = _drafts("mean_steps", k, a)
    n = number("mean_steps", "n", n, minimum=1, maximum=MAX_WHOLE, integer=True)
    p = [a ** (j - 1) * (1.0 - a) for j in range(1, k + 1)] + [a ** k]
    m = n
    if n > _EXACT_STEPS:   # the same remainder modulo k + 1 (exact where a = 1)
        m = n - (k + 1) * ((n - _EXACT_STEPS) // (k + 1))
    s = [0.0] * (m + 1)
    for i in range(1, m + 1):
        s[i] = 1.0 + sum(pj * s[i - j] for j, pj in enumerate(p, 1) if j < i)
    return s[m] + (n - m) / expected_tokens(k, a)


def capped_best(res, n: int):
    """A decode search's (:func:`compute.search.search`) best where a sequence has ``n``
    tokens to decode, and why none (``""`` where one): with MTP a step emits no more than
    are left, so its mean tokens a step are ``n`` over :func:`mean_steps` (fewer than the
    search's where ``n`` is short), by which its TPOT (on the TBT SLO) and rate go; the
    search's best as it is without MTP. ``n`` is a whole number of at least 1: with no
    token to decode there is no decode step to choose (refused in one line).

    >>> capped_best(None, 0)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: capped_best: n (the tokens to decode a request) must be a whole \
number of at least 1, got 0 (with no token to decode there is no decode step: take no decode \
pool)
    """
    from compute.validate import describe, is_whole

    if not is_whole(n) or n < 1:

        raise UserError(f"capped_best: n (the tokens to decode a request) must be a whole "
                        f"number of at least 1, got {describe(n)} (with no token to decode "
                        f"there is no decode step: take no decode pool)")
    grid = res.grid
    if res.best is None or grid.mtp_expected is None:
        return res.best, res.reason
    from compute.units import counted

    o = grid.options
    grid = replace(grid, mtp_expected=n / mean_steps(o.mtp_tokens, o.mtp_acceptance, n))
    ok = grid.feasible
    if not ok.any():
        return None, (f"no configuration that fits in memory meets TBT <= "
                      f"{grid.latency_limit * 1e3:.4g} ms at {grid.mtp_expected:.3g} tokens a "
                      f"step (MTP: {counted(n, 'token')} to decode a request)")
    i, j = np.unravel_index(int(np.argmax(np.where(ok, grid.tokens_per_s_per_sm, -np.inf))),
                            ok.shape)
    return grid.result(int(i), int(j)), ""


def mtp_module(model):
    """The MTP module's transformer layer as a one-layer model of ``model``'s shapes (an MoE
    layer for an MoE model, full attention), with the embedding and output head it shares;
    its projection is :func:`projection_time`'s."""
    return replace(model, name=f"{model.name} MTP module", layers=1,
                   dense_layers=0, dense_ffn=0, moe_layer_step=0,
                   mlp_dtype_layers=min(model.mlp_dtype_layers, 1),
                   sliding_window=0, sliding_layers=0, full_layer_step=0)


def check_model(model) -> None:
    """Refuse MTP on a model it is not modelled for (one line)."""
    if not model.mtp_modules:
        raise UserError(f"{model.name} has no multi-token-prediction module (mtp_modules 0; "
                        f"config.json num_nextn_predict_layers); MTP decode needs one (a "
                        f"separate draft model is not modelled): give mtp_tokens 0")
    if model.sliding_window:
        raise UserError(f"MTP decode is not modelled for a windowed model ({model.name}); "
                        f"give mtp_tokens 0")


def _tokens_per_gpu(configs, batches) -> np.ndarray:
    """Tokens each GPU's (busiest attention group's) share of a pass carries, (nc, nb)."""
    adp = np.array([c.attention_dp for c in configs], dtype=float).reshape(-1, 1)
    return np.ceil(np.asarray(batches, dtype=float).reshape(1, -1) / adp)


def projection_time(model, gpu, configs, batches, options) -> np.ndarray:
    """Seconds of one draft pass's projection ``[norm(h); norm(emb)] (2 hidden) -> hidden``
    per GPU, shape (nc, nb): replicated on every GPU of an attention group (as SGLang's
    ``eh_proj``), on that group's tokens ``n``: ``2 n (2 h) h`` FLOPs at the attention
    GEMMs' peak, ``2 h h`` weights (the model's weight dtype) plus ``3 n h`` activations
    read or written; the larger of the two times in ``overlap`` mode, their sum in
    ``serial`` mode."""
    from compute.stage_peaks import stage_peaks

    h = float(model.hidden)
    n = _tokens_per_gpu(configs, batches)
    peak = stage_peaks(model, gpu, ("qkv",), options.compute_dtype)[0]
    flops = 2 * n * 2 * h * h
    hbm = 2 * h * h * model.weight_bytes + 3 * n * h * model.act_bytes
    c = flops / (peak * options.flops_efficiency)
    m = hbm / (gpu.hbm_bandwidth * options.memory_efficiency)
    return np.maximum(c, m) if options.mode == "overlap" else c + m


def module_memory(model, sh, batches, workload) -> tuple[np.ndarray, np.ndarray]:
    """``(weights, kv)`` bytes per GPU the MTP module adds, shapes broadcast to (nc, nb):
    one more layer of the model's (the module's, an MoE layer of an MoE model) and its KV
    cache (:mod:`compute.memory`, the model with one more layer less the model), plus the
    projection's ``2 h h`` weights on every GPU."""
    from compute.memory import kv_cache_bytes, weight_bytes

    more = replace(model, layers=model.layers + 1)   # one more MoE layer (dense ones first)
    w = weight_bytes(more, sh) - weight_bytes(model, sh)
    w = w + 2.0 * model.hidden * model.hidden * model.weight_bytes
    kv = kv_cache_bytes(more, sh, batches, workload) - kv_cache_bytes(model, sh, batches, workload)
    return w, kv


def mtp_grid(grid, model, gpu, configs, sh, plain, batches, b, workload, comm, options, skew,
             latency_limit, time_unfit):
    """The grid of an MTP decode step (the module docstring): ``grid`` is
    :func:`compute.roofline.grid_body`, run for the verification pass and for one draft pass
    of the module."""
    from compute.parallel import layout
    from compute.sharding import shards

    check_model(model)
    pp = max(c.pp for c in configs)
    if pp > 1:
        raise UserError(f"MTP decode models one pipeline stage; got PP {pp}; allowed: PP 1")
    k = options.mtp_tokens
    base = replace(options, mtp_tokens=0)
    verify = replace(workload, draft=k)
    main = grid(model, gpu, configs, sh, plain, batches, b, verify, comm, base, skew,
                latency_limit, time_unfit=time_unfit)
    module = mtp_module(model)
    msh = shards(module, [c.tp for c in configs]) if plain else layout(module, configs)
    one = grid(module, gpu, configs, msh, plain, batches, b, workload, comm,
               replace(base, dense_mlp_tp=None), skew, latency_limit, time_unfit=time_unfit)
    drafts = k * (one.latency + projection_time(model, gpu, configs, batches, options))
    w, kv = module_memory(model, sh, b, verify)
    weights = main.weights + w
    kv_cache = main.kv_cache + kv
    fits = (weights + kv_cache + main.activations) <= main.usable
    return replace(main, options=options, latency=main.latency + drafts,
                   weights=np.broadcast_to(weights, main.latency.shape),
                   kv_cache=np.broadcast_to(kv_cache, main.latency.shape), fits=fits,
                   mtp_time=drafts, mtp_expected=expected_tokens(k, options.mtp_acceptance))
