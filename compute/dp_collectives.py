"""The collectives of DP attention around a tensor-parallel MLP, as SGLang runs them, and
how a stage's collective is chosen cell by cell (:class:`CellOps`): which padding mode a
step takes (:func:`sum_len`), the rows ``dp_gather`` and ``dp_scatter`` move
(:func:`gathered_tokens`) and their collectives (:func:`dp_ops`), and those of the
attention group's own stages where it has several GPUs (:func:`attn_tp_ops`).
:func:`compute.stages.stage_work` costs them (its module docstring has the stage table).

**Attention groups of several GPUs** (``k = tp / a > 1``). SGLang does not all-reduce
the out_proj partial sums within the attention group before the gather: every GPU hands
its partial sums to ``dp_gather_partial`` (python/sglang/srt/layers/communicator.py,
``_mlp_input_dp_partial``, chosen by ``_mlp_input_order`` where ``attn_tp_size > 1``;
earlier ``CommunicateWithAllReduceAndLayerNormFn._gather_hidden_states_and_residual``),
and python/sglang/srt/layers/dp_attention.py runs, per TP-MLP layer:

* ``SUM_LEN`` (``_dp_gather_via_all_reduce``, ``is_partial``): every GPU writes its
  partial sums into its group's rows of a zeroed buffer of the ``n`` rows, and one
  all-reduce among the whole TP group (``tensor_model_parallel_all_reduce``, ``tp``
  GPUs) sums the ``k`` partials of every group and places every group's rows at once;
  after the MLP's own all-reduce among ``tp``, ``dp_scatter`` copies the group's rows
  out (no collective).
* ``MAX_LEN`` (``_dp_gather_via_all_gather``): a reduce-scatter of the group's ``n_a``
  rows among its ``k`` GPUs (``attn_tp_group.reduce_scatter_tensor``), then an all-gather
  of every GPU's ``n_a / k`` rows among ``tp`` (``tp_group.all_gather_into_tensor``:
  ``a n_a`` rows in all); after the MLP, ``dp_reduce_scatter_tensor``: a reduce-scatter
  of the ``a n_a`` rows among ``tp`` and an all-gather of the group's ``n_a`` rows among
  its ``k`` GPUs.

So ``allreduce_attn`` is a reduce-scatter among ``k`` (``MAX_LEN``) or nothing
(``SUM_LEN``), ``dp_gather`` runs among ``tp`` (not ``a``), ``attn_gather`` is the
all-gather among ``k`` after ``dp_scatter``'s reduce-scatter (``MAX_LEN`` only). With
``k = 1`` (``a = tp``) the two gathers among ``tp`` are those among ``a`` and neither
attention-group stage runs: every figure as before, bit for bit.

Bytes a GPU sends on a ring (``b`` = hidden x activation bytes a row; bytes in the
nccl-tests convention: an all-reduce's and a reduce-scatter's input, an all-gather's
output), before the MLP, as modelled before and as SGLang runs it:

* ``SUM_LEN``, ``a`` groups of ``n / a`` rows: before, an all-reduce of ``n / a`` rows
  among ``k`` and of ``n`` rows among ``a``, ``2 (k-1)/k n/a + 2 (a-1)/a n =
  2 n (k - 1 + k (a - 1)) / (k a) = 2 (tp-1)/tp n`` row-bytes; SGLang, one all-reduce of
  ``n`` rows among ``tp``, ``2 (tp-1)/tp n``: equal. An uneven split (``n_a > n / a``)
  sent more before (the ``n_a`` rows), as much now. Ring steps ``2 (k-1) + 2 (a-1)`` ->
  ``2 (tp-1)``: the latency grows with ``tp`` where it grew with ``k + a``. After the
  MLP the all-gather of ``n_a`` rows among ``k`` before (``(k-1)/k n_a``) is gone.
* ``MAX_LEN``: before, an all-reduce of ``n_a`` rows among ``k`` and an all-gather of
  ``a n_a`` among ``a``, ``2 (k-1)/k n_a + (a-1) n_a = (a + 1 - 2/k) n_a``; SGLang, a
  reduce-scatter of ``n_a`` among ``k`` and an all-gather of ``a n_a`` among ``tp``,
  ``(k-1)/k n_a + (tp-1)/tp a n_a = (a + 1 - 2/k) n_a``: equal; steps ``2 (k-1) + (a-1)``
  -> ``(k-1) + (tp-1)``. After the MLP unchanged (the reduce-scatter among ``tp`` and the
  all-gather among ``k``).

E.g. DeepSeek-V3 (hidden 7,168, bf16: ``b`` = 14,336 B) decode at TP 16 x EP 16 x
DP-attention 4 on H100s, ring alpha-beta (1.9 us a step, 414 GB/s), each of its 3 dense
layers: batch 1 (``SUM_LEN``: 2 x 1 < 4 x 1) all-reduces 14,336 B among 16, 2 x 15 x 1.9
us + 2 x 15/16 x 14,336 B / 414 GB/s = 57.07 us, where the all-reduces among 4 and 4 took
11.45 + 11.45 us and the all-gather after the MLP 5.73 us.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CellOps", "attn_tp_ops", "dp_ops", "gathered_tokens", "op_at", "running",
           "stage_ops", "sum_len"]


def sum_len(sh, n, n_att, phase: str):
    """Where SGLang's DP attention all-reduces the rows ``dp_gather`` moves (``SUM_LEN``)
    rather than padding every attention group's to the busiest group's ``n_att`` and
    all-gathering them (``MAX_LEN``), per ``n`` tokens of a (micro-)batch among ``a``
    groups: python/sglang/srt/layers/dp_attention.py, ``DpPaddingMode.get_dp_padding_mode``
    (``if is_extend_in_batch and gather_width > 1: return SUM_LEN``; else ``MAX_LEN`` where
    ``sum_len * 2 >= max_len * gather_width``, "prefer MAX_LEN when communication cost is
    equal", else ``SUM_LEN``). A step with a prefill in it always (True); a decode step
    where ``2 n < a n_att``: a bool per cell, False where ``a`` divides the batch
    (``a n_att = n``) and without attention DP (``n_att is n``).

    >>> from types import SimpleNamespace
    >>> sh = SimpleNamespace(attention_dp=np.array([8.0]))    # 8 groups, a token a sequence
    >>> [bool(sum_len(sh, n, np.ceil(n / 8), "decode")[0]) for n in (3.0, 4.0, 9.0, 64.0)]
    [True, False, False, False]
    """
    if phase != "decode":
        return True
    if n_att is n:
        return False
    return 2 * n < n_att * sh.attention_dp


def gathered_tokens(sh, n, n_att, phase: str, summed=None):
    """The tokens ``dp_gather`` and ``dp_scatter`` move per ``n`` tokens of a (micro-)batch
    whose busiest attention group holds ``n_att``, in the bytes of the collectives they run
    (:func:`dp_ops`), as SGLang's DP attention moves them (python/sglang/srt/layers/
    dp_attention.py, ``_dp_gather``, ``dp_reduce_scatter_tensor``): where it takes
    ``MAX_LEN`` (:func:`sum_len`), every group's rows padded to the busiest group's and
    all-gathered, ``a x n_att`` rows (``all_gather_into_tensor``, reduce-scattered back
    after the MLP); where it takes ``SUM_LEN``, each group's rows written into a zeroed
    buffer of the ``n`` rows and all-reduced, ``n`` rows (the MLP's own all-reduce then
    returns them), unpadded whatever the split. Never below ``n``; ``n`` itself, bit for
    bit, in decode where ``a`` divides the batch, and without attention DP.

    >>> from types import SimpleNamespace
    >>> sh = SimpleNamespace(attention_dp=np.array([8.0]))    # 8 groups, a token a sequence
    >>> [float(gathered_tokens(sh, n, np.ceil(n / 8), "decode")[0]) for n in (3.0, 9.0, 64.0)]
    [3.0, 16.0, 64.0]
    >>> float(gathered_tokens(sh, 3.0, 1.0, "prefill"))
    3.0
    """
    if n_att is n or phase != "decode":
        return n
    if summed is None:
        summed = sum_len(sh, n, n_att, phase)
    return np.where(summed, n, np.maximum(n, n_att * sh.attention_dp))


#: The collectives of ``dp_gather`` and ``dp_scatter``: where SGLang takes ``MAX_LEN``
#: (an all-gather among the groups, a reduce-scatter among tp) and ``SUM_LEN`` (an
#: all-reduce among the groups, the MLP's all-reduce among tp).
_DP_OPS = {False: ("all-gather", "reduce-scatter"), True: ("all-reduce", "all-reduce")}


def dp_ops(sh, n, n_att, phase: str, summed=None) -> tuple:
    """The collectives ``dp_gather`` and ``dp_scatter`` run, in the bytes of
    :func:`gathered_tokens`: an all-gather among ``tp`` and a reduce-scatter
    among ``tp`` where SGLang takes ``MAX_LEN``, an all-reduce of the rows among the groups
    and the MLP's own all-reduce of them among ``tp`` where it takes ``SUM_LEN``
    (:func:`sum_len`); strings where every cell takes one, else each a :class:`CellOps`
    (a decode grid whose cells take both).

    >>> from types import SimpleNamespace
    >>> sh = SimpleNamespace(attention_dp=np.array([[8.0]]))
    >>> dp_ops(sh, 3.0, 1.0, "prefill"), dp_ops(sh, 64.0, 8.0, "decode")
    (('all-reduce', 'all-reduce'), ('all-gather', 'reduce-scatter'))
    >>> gather, scatter = dp_ops(sh, np.array([[3.0, 64.0]]), np.array([[1.0, 8.0]]), "decode")
    >>> gather, gather.at(0, 0), gather.at(0, 1), scatter.at(0, 0)
    (CellOps('all-gather', 'all-reduce'), 'all-reduce', 'all-gather', 'all-reduce')
    """
    which = sum_len(sh, n, n_att, phase) if summed is None else summed
    if np.all(which) or not np.any(which):
        return _DP_OPS[bool(np.all(which))]
    return tuple(CellOps((a, b), which) for a, b in zip(*_DP_OPS.values(), strict=True))


def attn_tp_ops(sh, n, n_att, phase: str, summed=None) -> tuple:
    """The collectives of ``allreduce_attn`` and ``attn_gather`` (TP-MLP layers), as
    SGLang runs them where an attention group has ``tp / a > 1`` GPUs under DP attention:
    it does not all-reduce within the group first (python/sglang/srt/layers/
    communicator.py, ``_mlp_input_dp_partial``; ``dp_gather_partial``, every GPU's
    out_proj partial sum): ``SUM_LEN`` (:func:`sum_len`) writes them into the zeroed
    buffer of ``n`` rows, which one all-reduce among ``tp`` (``dp_gather``) sums, and after
    the MLP's all-reduce each GPU copies its rows out (``dp_scatter``): neither stage runs
    (``""``); ``MAX_LEN`` reduce-scatters the group's ``n_att`` rows among ``tp / a``
    (here) and all-gathers the shards among ``tp`` (``dp_gather``,
    ``_dp_gather_via_all_gather``), and after the MLP reduce-scatters among ``tp``
    (``dp_scatter``) and all-gathers ``n_att`` rows among ``tp / a`` (``attn_gather``,
    ``dp_reduce_scatter_tensor``). Elsewhere (no DP attention: the all-reduce among the
    stage's ``tp``; groups of one GPU, ``a = tp``: the stage does not run) as before.
    Strings where every cell takes one, else a :class:`CellOps` each. ``summed``:
    :func:`sum_len`'s answer where the caller has it.

    >>> from types import SimpleNamespace
    >>> sh = SimpleNamespace(tp=np.array([[8.0], [16.0], [16.0]]),
    ...                      attention_dp=np.array([[1.0], [4.0], [16.0]]))
    >>> attn_tp_ops(sh, 3.0, 1.0, "prefill")      # SUM_LEN: TP 16 x 4 groups runs neither
    (CellOps('all-reduce', ''), '')
    >>> n = np.array([[1.0, 64.0]])                  # decode: 1 and 64 sequences
    >>> ar, ag = attn_tp_ops(sh, n, np.ceil(n / sh.attention_dp), "decode")
    >>> ar, [ar.at(1, j) for j in (0, 1)], [ag.at(i, 1) for i in (0, 1, 2)]
    (CellOps('all-reduce', 'reduce-scatter', ''), ['', 'reduce-scatter'], ['', 'all-gather', ''])
    """
    split = (sh.attention_dp > 1) & (sh.tp > sh.attention_dp)   # DP, groups of several
    if not np.any(split):
        return "all-reduce", "all-gather"
    summed = np.asarray(sum_len(sh, n, n_att, phase) if summed is None else summed, dtype=bool)
    # which of the three each kind of cell takes, found on the rows (cheap) before any
    # array of cells is made: rows without split groups, split rows' SUM_LEN and MAX_LEN
    in_split = summed[np.broadcast_to(split, summed.shape)] if summed.ndim else summed
    others, any_sum = not np.all(split), bool(np.any(in_split))
    any_max = not bool(np.all(in_split))
    attn = [o for o, used in (("all-reduce", others), ("reduce-scatter", any_max),
                              ("", any_sum)) if used]
    gather = [o for o, used in (("all-gather", any_max), ("", others or any_sum)) if used]
    if len(attn) > 1:   # the index of each cell's among those used
        code = np.where(split, np.where(summed, 2, 1), 0)
        lut = np.cumsum([others, any_max, any_sum]) - 1
        attn = CellOps(tuple(attn), lut[code])
    if len(gather) > 1:
        gather = CellOps(tuple(gather), ~(split & ~summed))
    return (attn if isinstance(attn, CellOps) else attn[0],
            gather if isinstance(gather, CellOps) else gather[0])


class CellOps:
    """A stage's collective chosen cell by cell (configurations x batches): ``ops[i]``
    where ``which`` is ``i`` (a bool for two: ``ops[1]`` where True; :func:`dp_ops`), ``""``
    among them where the stage runs no collective in that cell (:func:`attn_tp_ops`). It
    stands where a stage's collective is named (:func:`~compute.stages.stage_work`'s entries,
    :attr:`compute.roofline.Grid.ops`) and is true, as a name is; :func:`stage_ops` lists
    what a stage may run, :func:`running` where."""

    __slots__ = ("ops", "which")

    def __init__(self, ops: tuple[str, ...], which) -> None:
        self.ops = tuple(ops)
        which = np.asarray(which)
        self.which = which.astype(bool if len(self.ops) == 2 and which.dtype == bool
                                  else np.intp)
        self.which.flags.writeable = False

    def __repr__(self) -> str:
        return f"CellOps({', '.join(repr(o) for o in self.ops)})"

    def at(self, i: int, j: int) -> str:
        """The collective of cell ``(i, j)``."""
        w = self.which
        return self.ops[int(w[i if w.shape[0] > 1 else 0, j if w.shape[1] > 1 else 0])]

    def where(self, op: str):
        """Where the stage runs ``op``: bool, the shape of ``which``."""
        return self.which == self.ops.index(op)


def stage_ops(op) -> tuple[str, ...]:
    """The collectives a stage whose collective is ``op`` (a name, ``""`` for none, or a
    :class:`CellOps`) runs in some cell.

    >>> stage_ops("all-gather"), stage_ops(""), stage_ops(CellOps(("all-reduce", ""), [1, 0]))
    (('all-gather',), (), ('all-reduce',))
    """
    return tuple(o for o in op.ops if o) if isinstance(op, CellOps) else (op,) if op else ()


def op_at(op, i: int, j: int) -> str:
    """The collective a stage whose collective is ``op`` runs in cell ``(i, j)``.

    >>> ops = CellOps(("all-gather", "all-reduce"), np.array([[False, True]]))
    >>> op_at(ops, 0, 0), op_at(ops, 0, 1), op_at("all-gather", 3, 5)
    ('all-gather', 'all-reduce', 'all-gather')
    """
    return op.at(i, j) if isinstance(op, CellOps) else op


def running(ops, ks, op: str, shape: tuple):
    """Where each stage ``ks`` of ``ops`` (a stage's collective each) runs ``op``, bool
    ``(len(ks),) + shape`` (configurations x batches); None where none of them chooses its
    collective cell by cell (each runs ``op`` in every cell).

    >>> ops = ("all-reduce", CellOps(("all-gather", "all-reduce"), np.array([[False, True]])))
    >>> running(ops, [0, 1], "all-reduce", (1, 2)).tolist(), running(ops, [0], "x", (1, 2))
    ([[[True, True]], [[False, True]]], None)
    """
    if not any(isinstance(ops[k], CellOps) for k in ks):
        return None
    return np.stack([np.broadcast_to(ops[k].where(op), shape)
                     if isinstance(ops[k], CellOps) else np.ones(shape, dtype=bool)
                     for k in ks])


def _none_where(op, size):
    """``size`` (collective bytes), 0 in the cells where ``op`` (:func:`attn_tp_ops`)
    runs no collective."""
    if isinstance(op, CellOps):
        return np.where(op.where(""), 0.0, size) if "" in op.ops else size
    return size * 0.0 if op == "" else size
