"""What each stage of one inference step does on one GPU: FLOPs, HBM bytes and collective
bytes, vectorised over configuration (TP degree, or a :class:`~compute.parallel.Parallelism`)
x batch. :mod:`compute.roofline` turns them into times. The attention stage's work (fused
attention over its pairs and reads, sliding windows, multi-head latent attention and its
``qkv``; the busiest attention group's sequences) is :mod:`compute.stage_attention`'s, the
MLP stages' (dense MLPs, routed experts split by TP or by expert parallelism, the dispatch's
bytes) :mod:`compute.stage_mlp`'s, and the peak FLOP/s each stage runs at
:mod:`compute.stage_peaks`'.

A step runs these stages on every GPU of a tensor-parallel instance of ``t`` GPUs, for
``n`` tokens (prefill: batch x prompt; decode: batch) of ``s`` sequences (the batch)::

    embedding       vocab-parallel lookup, then an all-reduce of n x hidden     (once)
    qkv             GEMM  n x hidden . hidden x (a + 2g) d                     (per layer)
    attention       fused (FlashAttention): K and V read once, no n x n matrix  (per layer)
    out_proj        GEMM  n x a d . a d x hidden                               (per layer)
    allreduce_attn  all-reduce of n x hidden activations                       (per layer)
    mlp_up          GEMM  n x hidden . hidden x (2 if gated) f/t, activation fused
    mlp_down        GEMM  n x f/t . f/t x hidden                               (per layer)
    allreduce_mlp   all-reduce of n x hidden activations                       (per layer)
    lm_head         GEMM  s x hidden . hidden x vocab/t, then an all-gather of the logits
                    (s (1 + draft) rows with multi-token prediction's draft tokens)

with ``a`` query heads, ``g`` KV heads (replicated when ``t`` > KV heads) and ``d`` the head
dimension per GPU (:mod:`compute.sharding`). For each stage: FLOPs (2 per multiply-add),
HBM bytes (weights read once per step; activations read and written once; KV cache read
once and the new entries written) and collective bytes (nccl-tests convention), per GPU.
Attention counts ``4 a d`` FLOPs per (query, key) pair, a causal prefill's pairs and a
sliding window's shorter span as :mod:`compute.stage_attention` says, and multi-head latent
attention (DeepSeek-V2/V3) caches only the latent and the rotary key, its ``qkv`` and
``attention`` stages counted as served (decode on absorbed weights, prefill decompressed:
the same module).

**Mixture of experts** (experts split by TP unless expert parallelism is asked for, see
below): each token runs
``experts_per_token`` experts and the shared experts; the weights read are those of the
expected number of distinct experts the step's tokens touch
(:func:`compute.models.expected_experts_touched`). A model with dense MLP layers among its
MoE layers (DeepSeek-V3's first 3 of 61) counts ``mlp_up`` and ``mlp_down`` per layer as
the average over the two kinds (a stage's bound is then that of the average layer). Softmax,
norms, rotary embeddings and residual adds are elementwise and fused into the GEMMs'
reads and writes: their FLOPs are not counted. Prefill computes logits for the last token
of each prompt only.

**Pipeline, attention data and expert parallelism** (:mod:`compute.parallel`; opt-in, a
grid with any of them has the stages of :data:`EXTENDED_STAGES`, the others have
:data:`STAGES` only). With ``tp`` GPUs per stage, ``a`` attention groups of ``tp / a``
GPUs and ``e`` expert groups, for ``n`` tokens of the ``s`` sequences of the (micro-)batch,
per layer (the embedding and the LM head once)::

    embedding       lookup of the group's n/a tokens in its vocabulary shard (vocab / (tp/a)
                    rows), then an all-reduce of n/a x hidden among tp/a
    allreduce_attn  all-reduce of n x hidden among tp (TP-MLP layers, no DP attention; none
                    where a = tp, groups of one GPU); with tp/a > 1 (:func:`attn_tp_ops`, per cell) a reduce-scatter
                    of n_a x hidden among tp/a where SGLang takes MAX_LEN, nothing where it
                    takes SUM_LEN (the dp_gather's all-reduce completes the group's sum)
    attn_scatter    reduce-scatter of n/a x hidden among tp/a (EP layers: each GPU then owns
                    n/tp tokens)
    dp_gather       all-gather of a x n_a x hidden among tp (DP attention, TP MLP: every GPU
                    needs every token; every group padded to the busiest's n_a; each GPU
                    gives n_a/(tp/a) rows, its shard of its group's), or where SGLang takes
                    SUM_LEN (prefill; decode where 2 n < a x n_a) an all-reduce of
                    n x hidden among tp, every GPU's out_proj partial sums in its group's
                    rows (:func:`dp_ops`, per cell)
    moe_dispatch    all-to-all of n/tp x top-k x tp/e x hidden x skew per GPU among tp
                    (each owned token to its experts' GPUs; EP layers), in fp8 with 1 x 128
                    tile scales when the experts are stored in fp8 (:func:`dispatch_bytes`);
                    at least the busiest sender's n_a / (tp/a) x top-k x tp/e x hidden,
                    n_a the busiest group's tokens (above n/a where a does not divide s)
    allreduce_mlp   all-reduce of n x hidden among tp (plain TP)
    dp_scatter      reduce-scatter of a x n_a x hidden among tp (DP attention, TP MLP), or
                    where dp_gather all-reduces, the MLP's all-reduce of n x hidden among tp
    attn_gather     all-gather of n_a x hidden among tp/a after that reduce-scatter (tp/a >
                    1, MAX_LEN cells; SUM_LEN's all-reduce leaves every row on every GPU)
    moe_combine     all-to-all, the dispatch reversed (EP layers)
    dp_regather     all-gather of n/a x hidden among tp/a (EP layers: back to the attention
                    groups)
    lm_head         GEMM  s/a x hidden . hidden x vocab/(tp/a), then an all-gather of the
                    s/a x vocab logits among tp/a
    pp_send         send-recv of the micro-batch's n/a x hidden to the next stage (x pp - 1)
    pipeline_wait   the time a micro-batch waits behind the others
                    (:func:`compute.roofline.evaluate_grid`)

Without attention DP (``a = 1``) every GPU holds every token before an EP layer, and each
cell takes the cheaper of that schedule and the all-reduce exchange
(:mod:`compute.moe_exchange`): ``attn_scatter`` and ``dp_regather`` are then all-reduces of
``n x hidden`` among ``tp`` (the attention output's, the experts' partial outputs'; a
cell's breakdown names them ``allreduce_attn_ep`` and ``allreduce_mlp_ep``:
:func:`compute.moe_exchange.shown_name`), no ``moe_dispatch`` or ``moe_combine`` runs, and
the router and the shared experts (split over ``tp``) run on every token. With attention DP
each cell takes the cheaper of that schedule and the gather exchange (vLLM's
``allgather_reducescatter``): ``moe_dispatch`` an all-gather among ``tp`` of every group's
tokens (padded to the busiest group's in decode), ``moe_combine`` a reduce-scatter of the
experts' outputs back, named ``allgather_moe_ep`` and ``reducescatter_moe_ep``; the rest as
above.

Attention runs on the busiest group's ``ceil(s / a)`` sequences with ``heads / (tp / a)``
heads per GPU; under EP the busiest GPU runs ``skew x n top-k / e`` token copies (``skew``
at most ``e x min(top-k, slots) / top-k``, every copy one group can take:
:func:`busiest_share`) through its ``slots = ceil(experts / e)`` expert slots (``ffn / (tp / e)`` columns each; redundant copies
where ``e`` does not divide the experts, :func:`compute.parallel.expert_slots`), reads the
weights of its share of the distinct experts touched, and runs the router and the shared experts (replicated) on its own
tokens, the busiest group's ``n_a`` over its ``tp / a`` GPUs (the mean ``n / tp`` where
``a`` divides ``s``: :func:`own_tokens`; a step waits on its slowest GPU). Degree 1 in every dimension is plain TP, bit for bit. With
``Shards.dense_dp`` (``RooflineOptions.dense_mlp_tp = 1``, SGLang's ``--moe-dense-tp-size
1``) an MoE model's dense layers run their whole MLP on each GPU's own tokens (as above),
scattered and regathered within the attention group as the EP layers (no ``dp_gather`` or
``dp_scatter``).

The embedding and the LM head run per attention group (``n/a`` and ``s/a`` above are the
busiest group's ``ceil(s / a)`` sequences), their weights split over the group's ``tp / a``
GPUs and replicated in every group (:func:`compute.parallel.layout`), as tuned wide-EP
deployments run them: SGLang's ``--enable-dp-lm-head`` ("vocabulary parallel across the
attention TP group to avoid all-gather across DP groups", SGLang server arguments,
docs.sglang.io), which its DeepSeek-V3 prefill/decode + wide-EP instructions pass with
``--enable-dp-attention`` (github.com/sgl-project/sglang issue 7998); vLLM runs each
data-parallel attention rank as its own engine with ``--tensor-parallel-size`` GPUs, every
layer but the experts inside it (docs.vllm.ai, 'Data Parallel Deployment'). Split over the
whole stage instead, the logits of every sequence would be all-gathered across all ``tp``
GPUs (DeepSeek-V3 decode at TP 128 x EP 128 x DP-attention 32, batch 1024: 1024 x 129,280 x
2 B = 264.8 MB, against 8.3 MB among a group of 4).
"""

from __future__ import annotations

import numpy as np

from compute.dp_collectives import (
    _none_where,
    attn_tp_ops,
    dp_ops,
    gathered_tokens,
    sum_len,
)
from compute.models import expected_experts_touched
from compute.moe_exchange import exchange_slots, flagged
from compute.phases import Workload
from compute.stage_attention import _attention_work, _mla_work, busiest_group
from compute.stage_mlp import _dense_mlp, _mlp_work, _mlp_work_ep, busiest_share, dispatch_bytes

__all__ = ["EXTENDED_STAGES", "PIPELINE_STAGES", "PRODUCERS", "STAGES", "plain_step_work",
           "stage_work"]

#: Stages in the order a step runs them.
STAGES = ("embedding", "qkv", "attention", "out_proj", "allreduce_attn", "mlp_up", "mlp_down",
          "allreduce_mlp", "lm_head")


def own_tokens(sh, n, n_att):
    """The tokens the busiest GPU owns once its attention group's tokens are scattered over
    the group's ``tp / a`` GPUs (the router, the shared experts and a data-parallel dense
    MLP run on them): the busiest group's ``n_att`` over ``tp / a``, at least the mean
    ``n / tp`` (equal to it where ``a`` divides the batch, bit for bit)."""
    if n_att is n:
        return n / sh.tp
    return np.maximum(n, n_att * sh.attention_dp) / sh.tp


def mlp_work_by_kind(model, sh, batch, w: Workload, skew: float = 1.0) -> dict:
    """``{stage: ((flops, hbm) of an MoE layer, (flops, hbm) of a dense layer)}`` for
    ``mlp_up`` and ``mlp_down`` of an MoE model with dense layers, per GPU (the averages
    :func:`stage_work` gives those stages weigh them by the layers of each kind): what a
    pipeline stage's own mix of layers runs (:func:`compute.pipeline_time.slowest_stage`)."""
    n = batch * w.tokens_per_sequence
    own = own_tokens(sh, n, busiest_group(sh, batch, w)[1])
    touched = expected_experts_touched(model, n)
    up, down = _mlp_work(model, sh, n, touched, average=False)
    if not sh.plain and np.any(sh.ep > 1):
        eu, ed = _mlp_work_ep(model, sh, n, touched, skew, average=False, own=own,
                              replicated=_all_reduced(sh))
        is_ep = sh.ep > 1
        up = [np.where(is_ep, a, b) for a, b in zip(eu, up, strict=True)]
        down = [np.where(is_ep, a, b) for a, b in zip(ed, down, strict=True)]
    d_up, d_down = _dense_mlp(model, sh, n, own)
    return {"mlp_up": (tuple(up), tuple(d_up)), "mlp_down": (tuple(down), tuple(d_down))}


def replicated_mlp_work(model, sh, batch, w: Workload, skew: float = 1.0) -> tuple:
    """``((flops, hbm), (flops, hbm))`` of ``mlp_up`` and ``mlp_down`` per GPU as
    :func:`stage_work` gives them on rows of ``sh`` that all run expert parallelism with
    every GPU holding every token of the (micro-)batch ``batch`` (the all-reduce exchange or
    SGLang's DP-attention gather, ``_all_reduced``), without the other stages' work: the
    router on every token, the shared experts split over ``tp``
    (:func:`compute.stage_mlp._mlp_work_ep`, ``replicated``)."""
    n = batch * w.tokens_per_sequence
    return _mlp_work_ep(model, sh, n, expected_experts_touched(model, n), skew,
                        replicated=True)


def residual_bytes(model, n):
    """Bytes of ``n`` tokens of the residual stream (``hidden`` activations each): what an
    all-reduce of a layer's output moves per GPU (:func:`stage_work`'s ``ar_bytes``)."""
    return n * float(model.hidden) * model.act_bytes


def allreduce_exchange_work(model, sh, batch, w: Workload, skew: float = 1.0) -> dict:
    """The entries of :func:`stage_work` that the all-reduce exchange changes on rows of
    ``sh`` flagged ``Shards.ep_allreduce`` (every row expert-parallel, no DP attention), as
    ``{stage: (flops, hbm_bytes, op, net_bytes, group)}`` before the rule that a collective
    among one GPU does not run: the four slots of
    :func:`compute.moe_exchange.exchange_slots` (each all-reduce of :func:`residual_bytes`
    of the (micro-)batch ``batch``'s tokens) and ``mlp_up`` and ``mlp_down``
    (:func:`replicated_mlp_work`), each formed by the function :func:`stage_work` calls for
    it, so bit for bit its entries (the counts are the all-to-all schedule's)."""
    n = batch * w.tokens_per_sequence
    zero = np.zeros(np.broadcast_shapes(sh.tp.shape, batch.shape))
    out = {k: v[1:] for k, v in exchange_slots(model, sh, zero, n, n, w.phase,
                                                residual_bytes(model, n)).items()}
    for name, (flops, hbm) in zip(("mlp_up", "mlp_down"),
                                  replicated_mlp_work(model, sh, batch, w, skew), strict=True):
        out[name] = (flops, hbm, "", 0.0, 1.0)
    return out


def _dp_entries(sh, n, n_att, phase: str, ar_bytes, attn_bytes, attn_tp, zero, h,
                ab) -> tuple:
    """``(entries, attn_op, regather_op)``: :func:`stage_work`'s entries of the dense
    layers' collectives across attention groups under DP attention (``dp_gather``,
    ``dp_scatter``, ``attn_gather``: SGLang's, in its padding mode cell by cell) and the
    collectives of an attention group's output and of its rows after the MLP
    (:func:`compute.dp_collectives.attn_tp_ops`), for ``n`` tokens of which the busiest
    group holds ``n_att``."""
    summed = sum_len(sh, n, n_att, phase)   # SGLang's padding mode, per cell
    gathered = gathered_tokens(sh, n, n_att, phase, summed)
    dp_bytes = ar_bytes if gathered is n else gathered * h * ab
    gather_op, scatter_op = dp_ops(sh, n, n_att, phase, summed)
    attn_op, regather_op = attn_tp_ops(sh, n, n_att, phase, summed)
    return {
        # SGLang gathers among the whole stage (tp GPUs) where DP attention runs
        "dp_gather": (None, zero, zero, gather_op, dp_bytes,
                      np.where(sh.attention_dp > 1, sh.tp, sh.attention_dp)),
        "dp_scatter": (None, zero, zero, scatter_op, dp_bytes, sh.tp),
        "attn_gather": (None, zero, zero, regather_op, _none_where(regather_op, attn_bytes),
                        attn_tp),
    }, attn_op, regather_op


def dp_gather_exchange_work(model, sh, batch, w: Workload, skew: float = 1.0) -> dict:
    """:func:`allreduce_exchange_work` for SGLang's DP-attention gather (rows of ``sh``
    flagged ``Shards.ep_dp_gather``, every one under DP attention): the four slots of
    :func:`compute.moe_exchange.exchange_slots` (the dense layers' collectives across
    attention groups, :func:`_dp_entries`) and the MLP's two stages, each formed by the
    functions :func:`stage_work` calls for it."""
    h, ab = float(model.hidden), model.act_bytes
    n = batch * w.tokens_per_sequence
    n_att = busiest_group(sh, batch, w, None)[1]   # stage_work's, DP attention in every row
    ar_bytes = residual_bytes(model, n)
    attn_bytes = ar_bytes if n_att is n else n_att * h * ab
    attn_tp = sh.tp / sh.attention_dp
    zero = np.zeros(np.broadcast_shapes(sh.tp.shape, batch.shape))
    dense, attn_op, _ = _dp_entries(sh, n, n_att, w.phase, ar_bytes, attn_bytes, attn_tp,
                                    zero, h, ab)
    out = {k: v[1:] for k, v in exchange_slots(
        model, sh, zero, n, n_att, w.phase, ar_bytes, dense,
        (attn_op, _none_where(attn_op, attn_bytes), attn_tp)).items()}
    for name, (flops, hbm) in zip(("mlp_up", "mlp_down"),
                                  replicated_mlp_work(model, sh, batch, w, skew), strict=True):
        out[name] = (flops, hbm, "", 0.0, 1.0)
    return out


def attention_group_ops(sh, batch, w: Workload) -> tuple:
    """``(attn_op, regather_op)``: the collectives :func:`stage_work` gives the attention
    output within an attention group of several GPUs and its rows after the MLP
    (:func:`compute.dp_collectives.attn_tp_ops`) on rows of ``sh`` under DP attention, for
    the (micro-)batch ``batch``."""
    n = batch * w.tokens_per_sequence
    n_att = busiest_group(sh, batch, w)[1]
    return attn_tp_ops(sh, n, n_att, w.phase, sum_len(sh, n, n_att, w.phase))


def lm_head_weights(model, vs):
    """Bytes of the LM head one GPU reads: ``vs`` vocabulary rows (its share) of
    ``hidden`` weights, and their biases where the model has them
    (:attr:`~compute.model_spec.ModelSpec.lm_head_bias`), in the embedding's dtype, as
    :func:`compute.memory.weight_bytes` holds them."""
    w = float(model.hidden) * vs * model.embedding_bytes
    return w + vs * model.embedding_bytes if model.lm_head_bias else w


def stage_work(model, sh, batch, w: Workload, skew: float = 1.0, busiest=None):
    """(name, count, flops, hbm_bytes, collective op, collective bytes, group size) per
    stage, per GPU, as arrays broadcast over configurations (rows) x batches (columns).
    ``batch`` is the (micro-)batch one pass through the layers carries; ``busiest`` the
    busiest attention group's sequences of it where not ``ceil(batch / a)``
    (:func:`~compute.stage_attention.busiest_group`). Counts are per pass (a scalar, or one
    per row for the extended stages); group sizes one per row.

    Parameters
    ----------
    model : ModelSpec
        The model.
    sh : Shards
        Its shards per GPU for each configuration: :func:`compute.sharding.shards` of TP
        degrees, or :func:`compute.parallel.layout` of
        :class:`~compute.parallel.Parallelism` configurations.
    batch : float or numpy.ndarray
        Sequences one pass carries: a float (one configuration and batch) or an array
        broadcast against the configurations.
    w : Workload
        The phase: tokens per sequence, the KV context, draft tokens.
    skew : float
        The busiest GPU's routed tokens over the mean under expert parallelism (1: even).
    busiest : optional
        The busiest attention group's sequences, as said above.

    Returns
    -------
    list of tuple
        One ``(name, count, flops, hbm_bytes, op, net_bytes, group)`` a stage, in
        :data:`STAGES` order for plain tensor parallelism, else :data:`EXTENDED_STAGES`
        order; a stage a configuration does not run counts 0 there.

    Examples
    --------
    >>> from compute.models import get_model
    >>> from compute.roofline import make_workload
    >>> from compute.sharding import shards
    >>> m = get_model("Llama-3-70B")
    >>> work = stage_work(m, shards(m, [8]), np.array([[1.0]]), make_workload("decode"))
    >>> [x[0] for x in work] == list(STAGES)
    True
    """
    h, d, L = float(model.hidden), float(model.head_dim), model.layers
    dv = float(model.v_dim)
    wb, ab = model.weight_bytes, model.act_bytes
    a, g, vs = sh.heads, sh.kv_heads, sh.vocab
    s = batch                                 # sequences
    n = batch * w.tokens_per_sequence         # tokens through the layers
    plain = sh.plain
    if plain or np.all(sh.attention_dp == 1):
        s_att, n_att = s, n                   # every attention group sees every sequence
    else:                                     # DP attention: the busiest group's share
        s_att, n_att = busiest_group(sh, batch, w, busiest)
    # logits: the last token of each prompt, each decode sequence's token, and with draft
    # tokens (multi-token prediction) every one of the 1 + draft a sequence verifies
    s_head = s_att if not w.draft else s_att * w.tokens_per_sequence
    o_bias = 1.0 if model.o_biased else 0.0
    qkv_bias = 1.0 if model.qkv_biased else 0.0
    touched = expected_experts_touched(model, n)  # distinct experts whose weights are read
    ar_bytes = residual_bytes(model, n)
    # one configuration and batch (evaluate's scalar path): plain floats throughout
    zero = 0.0 if type(batch) is float else np.zeros(np.broadcast_shapes(sh.tp.shape,
                                                                          batch.shape))
    eb = model.embedding_bytes   # token embedding, positions, LM head
    positions = n * h * eb if model.learned_positions else 0.0
    if model.is_mla:
        (qkv_flops, qkv_hbm), (attn_flops, attn_hbm) = _mla_work(model, sh, s_att, n_att, w)
    else:
        qkv_cols = (a + 2 * g) * d
        qkv_flops = 2 * n_att * h * qkv_cols
        qkv_hbm = (h * qkv_cols + qkv_bias * qkv_cols) * wb + n_att * h * ab \
            + n_att * qkv_cols * ab
        attn_flops, attn_hbm = _attention_work(model, sh, s_att, n_att, w)
    own = own_tokens(sh, n, n_att)           # the busiest GPU's own tokens (router, shared)
    (up_flops, up_hbm), (down_flops, down_hbm) = _mlp_work(model, sh, n, touched, own=own)
    attn_tp = sh.tp if plain else sh.tp / sh.attention_dp
    attn_bytes = ar_bytes if n_att is n else n_att * h * ab
    if not plain and model.is_moe and np.any(sh.ep > 1):
        (eu_f, eu_h), (ed_f, ed_h) = _mlp_work_ep(model, sh, n, touched, skew, own=own,
                                                  replicated=_all_reduced(sh))
        is_ep = sh.ep > 1
        up_flops, up_hbm = np.where(is_ep, eu_f, up_flops), np.where(is_ep, eu_h, up_hbm)
        down_flops, down_hbm = np.where(is_ep, ed_f, down_flops), np.where(is_ep, ed_h, down_hbm)
    # the embedding and the LM head run per attention group, the vocabulary split over its
    # tp/a GPUs (plain TP: the stage's, tp); see the module docstring
    if n_att is not n:
        positions = n_att * h * eb if model.learned_positions else 0.0
    work = [
        ("embedding", 1, zero, n_att * h * eb / attn_tp + positions + n_att * h * ab,
         "all-reduce", attn_bytes, attn_tp),
        ("qkv", L, qkv_flops, qkv_hbm, "", 0.0, 1.0),
        ("attention", L, attn_flops, attn_hbm, "", 0.0, 1.0),
        ("out_proj", L, 2 * n_att * a * dv * h,
         (a * dv * h + o_bias * h) * wb + n_att * a * dv * ab + n_att * h * ab, "", 0.0, 1.0),
        ("allreduce_attn", L, zero, zero, "all-reduce", attn_bytes, attn_tp),
        ("mlp_up", L, up_flops, up_hbm, "", 0.0, 1.0),
        ("mlp_down", L, down_flops, down_hbm, "", 0.0, 1.0),
        ("allreduce_mlp", L, zero, zero, "all-reduce", ar_bytes, sh.tp),
        ("lm_head", 1, 2 * s_head * h * vs, lm_head_weights(model, vs) + s_head * h * ab
         + s_head * vs * ab,
         "all-gather", s_head * vs * attn_tp * ab, attn_tp),
    ]
    if plain:
        return _within_one_gpu(work)
    # ---- pipeline, attention DP and expert parallelism: counts per row ---------------------
    pp = sh.pp.ravel()
    counts = layer_counts(model, sh, L, model.moe_layers)
    # elements per GPU (x bytes below): the busiest receiver's, or the busiest sender's
    # copies where an uneven attention split gives one GPU more than n/tp tokens
    a2a = n * model.experts_per_token * h * busiest_share(model, sh, skew) / sh.ep
    if n_att is not n:
        a2a = np.maximum(a2a, n_att * sh.attention_dp * model.experts_per_token * h / sh.ep)
    dense, attn_op, regather_op = _dp_entries(sh, n, n_att, w.phase, ar_bytes, attn_bytes,
                                              attn_tp, zero, h, ab)
    if attn_op != "all-reduce":   # attention groups of several GPUs: SGLang's collectives
        by_name = {x[0]: x for x in work}
        ar = by_name["allreduce_attn"]
        counts["allreduce_attn"] = counts["allreduce_attn"] * (attn_op != "")
        work[work.index(ar)] = (*ar[:4], attn_op, _none_where(attn_op, attn_bytes), ar[6])
    if regather_op == "":
        counts["attn_gather"] = counts["attn_gather"] * 0.0
    extra = {
        "allreduce_attn": None, "allreduce_mlp": None,
        "attn_scatter": (None, zero, zero, "reduce-scatter", attn_bytes, attn_tp),
        **dense,
        "moe_dispatch": (None, zero, zero, "all-to-all", a2a * dispatch_bytes(model), sh.tp),
        "moe_combine": (None, zero, zero, "all-to-all", a2a * ab, sh.tp),
        "dp_regather": (None, zero, zero, "all-gather", attn_bytes, attn_tp),
        "pp_send": (pp - 1, zero, zero, "send-recv", n_att * h * ab,
                    np.where(pp > 1, 2.0, 1.0)),
        "pipeline_wait": ((pp > 1).astype(float), zero, zero, "", 0.0, 1.0),
    }
    # the EP layers' slots under another exchange than the all-to-alls (compute.moe_exchange)
    extra.update(exchange_slots(model, sh, zero, n, n_att, w.phase, ar_bytes, extra,
                                (attn_op, _none_where(attn_op, attn_bytes), attn_tp)))
    by_name = {x[0]: x for x in work}
    out = []
    for name in EXTENDED_STAGES:
        if name in counts and name in by_name:
            x = (name, counts[name], *by_name[name][2:])
        elif name in counts:
            x = (name, counts[name], *extra[name][1:])
        elif name in by_name:
            x = by_name[name]
        else:
            x = (name, *extra[name])
        if x[4] and name not in (*_WITH_WORK, *counts):  # no collective within one GPU
            alone = np.broadcast_to(np.asarray(x[6]).reshape(-1), pp.shape) <= 1
            x = (name, x[1] * ~alone, *x[2:])
        out.append(x)
    return _within_one_gpu(out, counted=True)


#: The stages with work of their own and a collective after it.
_WITH_WORK = ("embedding", "lm_head")


def _all_reduced(sh) -> bool:
    """True where every GPU of ``sh``'s rows holds every token in their EP MoE layers: the
    all-reduce exchange (``Shards.ep_allreduce``) or SGLang's DP-attention gather
    (``Shards.ep_dp_gather``; every row or none: :mod:`compute.moe_exchange` evaluates
    such rows as a grid of their own)."""
    return flagged(sh, "ep_allreduce") or flagged(sh, "ep_dp_gather")


def _within_one_gpu(work: list, counted: bool = False) -> list:
    """``work`` (:func:`stage_work`'s entries) with the rule that a collective among one
    GPU does not run: it moves no bytes, and a stage that is that collective alone runs 0
    times (``counted``: its counts already say so), so a GPU of TP 1 lists no all-reduce
    and no network-bound stage; the embedding and the LM head keep their work."""
    out = []
    for x in work:
        if x[4]:
            count = x[1]
            if isinstance(x[6], float):   # one configuration (evaluate's scalar path)
                runs = x[6] > 1
                if not counted and x[0] not in _WITH_WORK:
                    count = count * runs
            else:                          # a group size per row: (rows, 1) against bytes
                runs = (np.asarray(x[6]) > 1).reshape(-1, 1)
                if not counted and x[0] not in _WITH_WORK:
                    count = count * runs[:, 0]
            x = (x[0], count, x[2], x[3], x[4], x[5] * runs, x[6])
        out.append(x)
    return out


#: The stages that run once per layer of a pass (:func:`layer_counts`).
LAYER_STAGES = ("qkv", "attention", "out_proj", "allreduce_attn", "attn_scatter", "dp_gather",
                "moe_dispatch", "mlp_up", "mlp_down", "allreduce_mlp", "dp_scatter",
                "attn_gather", "moe_combine", "dp_regather")


def layer_counts(model, sh, layers, moe_layers) -> dict:
    """How many times each stage of :data:`LAYER_STAGES` runs over ``layers`` layers of
    which ``moe_layers`` are MoE (the whole model's, or a pipeline stage's:
    :func:`compute.parallel.stage_mix`), one count per row of ``sh`` (a configuration
    that is not plain TP): every layer's attention and MLP; under expert parallelism the
    MoE layers' all-to-alls and reduce-scatter, the other layers' all-reduces; under
    attention data parallelism the gathers and scatters around the MLP; with ``sh.dense_dp``
    the dense layers' MLPs run on each GPU's own tokens, scattered and regathered within
    the attention group as the EP layers (no gather or scatter across groups). A collective
    among one GPU does not run (count 0). Linear in ``layers`` and ``moe_layers``."""
    tp, pp, ep, adp = (np.asarray(x, dtype=float).ravel() for x in
                       (sh.tp, sh.pp, sh.ep, sh.attention_dp))
    attn_tp = tp / adp
    l_ep = np.where((ep > 1) & model.is_moe, float(moe_layers), 0.0)  # EP MoE layers
    l_tp = layers - l_ep                              # layers whose MLP is tensor-parallel
    dp = (adp > 1).astype(float)
    l_sc = l_ep                        # layers whose MLP runs on scattered tokens
    if np.any(sh.dense_dp) and model.is_moe:  # dense MLPs data-parallel: scattered as EP's
        l_dd = np.asarray(sh.dense_dp, dtype=float).ravel() * float(layers - moe_layers)
        l_tp, l_sc = l_tp - l_dd, l_ep + l_dd
    groups = {"allreduce_attn": attn_tp, "attn_scatter": attn_tp,
              "dp_gather": np.where(adp > 1, tp, adp), "moe_dispatch": tp,
              "allreduce_mlp": tp, "dp_scatter": tp, "attn_gather": attn_tp,
              "moe_combine": tp, "dp_regather": attn_tp}
    out = {"qkv": layers, "attention": layers, "out_proj": layers, "allreduce_attn": l_tp,
           "attn_scatter": l_sc, "dp_gather": l_tp * dp, "moe_dispatch": l_ep,
           "mlp_up": layers, "mlp_down": layers, "allreduce_mlp": l_tp * (1 - dp),
           "dp_scatter": l_tp * dp, "attn_gather": l_tp * dp, "moe_combine": l_ep,
           "dp_regather": l_sc}
    for name, g in groups.items():       # no collective within one GPU
        out[name] = out[name] * (g > 1)
    return out


def plain_step_work(model, sh, w: Workload):
    """For plain tensor parallelism with ``sh`` of floats (one configuration): a function of
    one float batch giving ``(flops, hbm, coll)``, one float per stage of :data:`STAGES`
    each (``coll`` the collective bytes, 0.0 for a stage without one), equal bit for bit
    to what :func:`stage_work` gives for that batch: what does not depend on the batch is
    formed once here, and each formula keeps its order of operations (a batch-independent
    part is taken out only where it is the leading operands of a product, evaluated left
    to right). ``None`` for a model this does not cover (multi-head latent attention,
    shared experts, dense layers among MoE ones): :func:`stage_work` serves those.

    >>> from compute.models import get_model
    >>> from compute.phases import Workload
    >>> from compute.sharding import shards
    >>> m = get_model("Llama-3-8B")
    >>> sh = shards(m, [2])
    >>> sh = type(sh)(**{f: float(getattr(sh, f)[0, 0]) for f in
    ...                  ("tp", "heads", "kv_heads", "ffn", "vocab", "shared_ffn", "dense_ffn")})
    >>> w = Workload("decode", 1500, 1513)
    >>> flops, hbm, coll = plain_step_work(m, sh, w)(8.0)
    >>> flops == [x[2] for x in stage_work(m, sh, 8.0, w)]
    True
    """
    if model.is_mla or model.shared_ffn or model.dense_layers or w.draft:
        return None
    h, d, dv = float(model.hidden), float(model.head_dim), float(model.v_dim)
    wb, kvb, ab = model.weight_bytes, model.kv_bytes, model.act_bytes
    mb = model.mlp_weight_bytes
    a, g, vs, tp = sh.heads, sh.kv_heads, sh.vocab, sh.tp
    tokens = w.tokens_per_sequence
    pairs, kv_read = model.attention_span(w)
    mlp_bias = 1.0 if model.mlp_biased else 0.0
    o_bias = 1.0 if model.o_biased else 0.0
    qkv_bias = 1.0 if model.qkv_biased else 0.0
    learned = bool(model.learned_positions)
    qkv_cols = (a + 2 * g) * d
    qkv_weights = (h * qkv_cols + qkv_bias * qkv_cols) * wb
    attn_head = 4 * a * d                     # 4 * a * d * s * pairs, left to right
    out_weights = (a * dv * h + o_bias * h) * wb
    fs = sh.ffn
    up_cols = (2 if model.gated_mlp else 1) * fs
    k = model.experts_per_token
    router_weights = (h * model.experts if model.is_moe else 0.0) * wb
    up_w = h * up_cols + mlp_bias * up_cols
    down_w = fs * h + mlp_bias * h
    eb = model.embedding_bytes
    lm_weights = lm_head_weights(model, vs)
    e = model.experts
    dense = e == 1
    alone = not tp > 1   # TP 1: no collective runs (_within_one_gpu)
    if not dense:   # expected_experts_touched's operations, its constants formed once
        power, keep = np.power, 1.0 - k / e
        every = k >= e
        fe = float(e)

    def work(b: float) -> tuple:
        n = b * tokens
        nh = n * h
        nh2 = 2 * n * h
        nhab = nh * ab
        if dense:
            touched = 1.0
        elif every:
            touched = fe
        else:
            touched = e * (1.0 - float(power(keep, n)))
        nad_ab = n * a * d * ab
        nfk_ab = n * fs * k * ab
        svs = b * vs
        flops = [0.0, nh2 * qkv_cols, attn_head * b * pairs, 2 * n * a * dv * h, 0.0,
                 nh2 * up_cols * k + (0.0 if dense else nh2 * fe), 2 * n * fs * h * k, 0.0,
                 2 * b * h * vs]
        hbm = [nh * eb / tp + (nh * eb if learned else 0.0) + nhab,
               qkv_weights + nhab + n * qkv_cols * ab,
               nad_ab + b * kv_read * 2 * g * d * kvb + n * 2 * g * d * kvb + nad_ab,
               out_weights + n * a * dv * ab + nhab, 0.0,
               touched * up_w * mb + router_weights + nhab + nfk_ab,
               touched * down_w * mb + nfk_ab + nhab, 0.0,
               lm_weights + b * h * ab + svs * ab]
        if alone:   # a collective among one GPU moves nothing (_within_one_gpu)
            return flops, hbm, [0.0] * 9
        return flops, hbm, [nhab, 0.0, 0.0, 0.0, nhab, 0.0, 0.0, nhab, svs * tp * ab]

    return work


#: Every stage of an extended grid (pipeline, attention DP or expert parallelism), in the
#: order a step runs them; a plain TP grid has :data:`STAGES` only.
EXTENDED_STAGES = ("embedding", "qkv", "attention", "out_proj", "allreduce_attn",
                   "attn_scatter", "dp_gather", "moe_dispatch", "mlp_up", "mlp_down",
                   "allreduce_mlp", "dp_scatter", "attn_gather", "moe_combine", "dp_regather",
                   "lm_head", "pp_send", "pipeline_wait")
#: Stages that are not part of one pass through the layers (pipeline parallelism only).
PIPELINE_STAGES = ("pp_send", "pipeline_wait")
#: Each per-layer all-reduce and the GEMM producing its input (``overlap_collectives``).
PRODUCERS = {"allreduce_attn": "out_proj", "allreduce_mlp": "mlp_down"}
