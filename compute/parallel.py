"""How a model instance is spread over GPUs: tensor, pipeline, expert and attention data
parallelism, and the configurations the SLO search tries.

A :class:`Parallelism` ``(tp, pp, ep, attention_dp)`` places one model instance on
``tp x pp`` GPUs:

* **pipeline parallelism** (``pp`` stages, 1 to the layers): the layers are cut into ``pp``
  stages of consecutive layers, ``layers // pp`` each and the rest one each to the stages
  before the last, as vLLM splits them (:func:`stage_layers`; DeepSeek-V3's 61 on 2
  stages: 31 + 30); each stage runs on its own ``tp`` GPUs and sends its output
  activations to the next stage point to point. A stage holds the weights and KV cache of
  its own layers (an MoE model's dense layers and the sliding-window layers where the
  model puts them, :func:`stage_mix`), the token embedding on the first stage and the LM
  head on the last; the memory fit is that of the fullest stage, and the pipeline's period
  the time of the slowest (:func:`compute.roofline.evaluate_grid`).
* **tensor parallelism** (``tp`` GPUs per stage): attention heads, MLP columns and the
  vocabulary are split over the stage's GPUs (:mod:`compute.sharding`).
* **attention data parallelism** (``attention_dp`` groups per stage, dividing ``tp``):
  attention is sharded by request: the stage's GPUs form ``attention_dp`` groups of
  ``tp / attention_dp`` GPUs, each running tensor-parallel attention over whole KV heads of
  its own requests (no KV head is replicated while ``tp / attention_dp`` is at most the KV
  heads); the attention weights are replicated in every group. The MLP still runs over all
  ``tp`` GPUs of the stage, so the groups' activations are all-gathered before it and
  reduce-scattered after it (the scheme of SGLang's DP attention and DeepSeek's serving).
  The embedding and the LM head run per group too, the vocabulary split over the group's
  ``tp / attention_dp`` GPUs (replicated in every group): SGLang's ``--enable-dp-lm-head``,
  vLLM's data-parallel attention (:mod:`compute.stages` has the sources).
* **expert parallelism** (``ep`` groups per stage, dividing ``tp``): the routed experts of
  each MoE layer are placed on ``ep`` groups of ``tp / ep`` GPUs (``experts / ep`` experts
  per group, each split over the group's GPUs); each token is dispatched to its experts'
  GPUs and their outputs combined back by two all-to-alls, or, without attention DP (every
  GPU then holds every token before the MoE layer), each GPU runs its experts on the tokens
  routed to them and one all-reduce sums the outputs, as a tensor-parallel MLP: a step
  takes the cheaper (:mod:`compute.moe_exchange`). An ``ep`` that does not divide
  the experts (or exceeds them) places redundant copies, as DeepSeek's serving does
  (DeepSeek-V3/R1 Inference System Overview, Feb 2025,
  github.com/deepseek-ai/open-infra-index: decode EP144, "32 redundant routed experts,
  where each GPU manages 2 routed experts"): every group holds ``ceil(experts / ep)`` expert slots, ``ep x ceil(experts / ep) -
  experts`` of them copies (:func:`expert_slots`). The weights per GPU count the slots;
  the replicas spread the load, so each group still runs ``tokens x top_k / ep`` routed
  token copies (times ``expert_skew``) and the all-to-alls are unchanged; a step reads
  the weights of the touched share of its slots.

``Parallelism(tp)`` (``pp = ep = attention_dp = 1``) is plain tensor parallelism, the
search's default; the other dimensions are opt-in (:func:`configurations`).

>>> from compute.models import get_model
>>> p = check_parallelism(get_model("Mixtral-8x7B"), Parallelism(8, pp=2, ep=8, attention_dp=2))
>>> p.gpus, p.attention_tp, p.expert_tp, p.label
(16, 4, 1, 'TP 8 x PP 2 x EP 8 x DP-attention 2')
>>> [c.label for c in configurations(get_model("Llama-3-70B"), 16, tp=(8, 16), pp=(1, 2))]
['TP 8', 'TP 8 x PP 2', 'TP 16', 'TP 16 x PP 2']
>>> expert_slots(256, 144)          # DeepSeek-V3's decode EP: 2 slots a GPU, 32 copies
(2, 32)
>>> check_parallelism(get_model("Mixtral-8x7B"), Parallelism(3, ep=3, attention_dp=3)).describe(1)
'TP 3 x EP 3 (1 redundant expert) x DP-attention 3'
>>> check_parallelism(get_model("Llama-3-70B"), Parallelism(8, pp=3)).label   # 27 + 27 + 26
'TP 8 x PP 3'
>>> check_parallelism(get_model("Llama-3-70B"), Parallelism(8, pp=81))
Traceback (most recent call last):
...
compute.errors.UserError: PP degree 81 exceeds the 80 layers of Llama-3-70B; allowed: 1 to 80 (a stage holds at least one layer)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

import numpy as np

from compute.errors import UserError
from compute.parallel_rules import DENSE_MLP_TP_DEGREES
from compute.sharding import Shards, check_tp, kv_heads_per_gpu, valid_tp_degrees
from compute.validate import MAX_WHOLE, an_int, describe, in_range, is_flag, is_whole, number

if TYPE_CHECKING:
    from compute.models import ModelSpec

__all__ = ["DIMENSIONS", "MAX_EXPERT_SKEW", "Parallelism",
           "check_parallelism", "configurations", "dense_data_parallel", "expert_slots", "kv_copies", "layout", "micro_batch", "stage_layers", "stage_mix"]

#: Largest expert skew taken (the busiest EP group's share of routed tokens over the mean;
#: 1 is uniform routing): checked by compute.roofline.check_skew and calibrate's rows.
MAX_EXPERT_SKEW = 1e6

#: The dimensions of a configuration, as the search's keywords and the results' fields.
DIMENSIONS = ("tp", "pp", "ep", "attention_dp")


@dataclass(frozen=True)
class Parallelism:
    """One way to spread a model instance (see the module docstring)."""

    tp: int                #: GPUs per pipeline stage (tensor-parallel degree of the stage)
    pp: int = 1            #: pipeline stages
    ep: int = 1            #: expert-parallel groups per stage (divides tp; see expert_slots)
    attention_dp: int = 1  #: attention data-parallel groups per stage (divides tp)

    def __post_init__(self) -> None:
        # True == 1 would pass every later check as a degree of 1: refused here, once
        # (numpy's bool too: np.True_ was taken as a degree of 1)
        for what, v in zip(_NAMES, (self.tp, self.pp, self.ep, self.attention_dp),
                           strict=True):
            if is_flag(v):
                raise UserError(f"{what} must be a whole number >= 1, got {describe(v)}")

    @classmethod
    def of(cls, obj: object) -> Parallelism:
        """The configuration of anything that carries ``tp``, ``pp``, ``ep`` and
        ``attention_dp`` (an InferenceResult, a front point, a study row).

        >>> Parallelism.of(Parallelism(8, 2, 4, 1)).label
        'TP 8 x PP 2 x EP 4'
        """
        return cls(obj.tp, obj.pp, obj.ep, obj.attention_dp)  # type: ignore[attr-defined]

    @property
    def gpus(self) -> int:
        """GPUs of the instance: ``tp x pp``."""
        return self.tp * self.pp

    @property
    def attention_tp(self) -> int:
        """GPUs each attention group splits its heads over: ``tp / attention_dp``."""
        return self.tp // self.attention_dp

    @property
    def expert_tp(self) -> int:
        """GPUs each routed expert is split over: ``tp / ep``."""
        return self.tp // self.ep

    @property
    def is_plain(self) -> bool:
        """True for plain tensor parallelism (``pp = ep = attention_dp = 1``)."""
        return self.pp == 1 and self.ep == 1 and self.attention_dp == 1

    @property
    def label(self) -> str:
        """``TP 8``, ``TP 8 x PP 2 x EP 8``: the dimensions that are not 1 after TP."""
        return self.describe()

    def describe(self, redundant_experts: int = 0) -> str:
        """:attr:`label`, its EP saying how many of the expert slots are redundant copies
        (``redundant_experts``, :func:`expert_slots`; 0: none, the plain label)."""
        parts = [f"TP {self.tp}"]
        if self.pp > 1:
            parts.append(f"PP {self.pp}")
        if self.ep > 1:
            copies = redundant_experts
            parts.append(f"EP {self.ep}" + (f" ({copies} redundant expert{'s' * (copies > 1)})"
                                             if copies else ""))
        if self.attention_dp > 1:
            parts.append(f"DP-attention {self.attention_dp}")
        return " x ".join(parts)

    def to_dict(self) -> dict:
        return {"tp": self.tp, "pp": self.pp, "ep": self.ep, "attention_dp": self.attention_dp}


#: How errors name each dimension of :data:`DIMENSIONS`.
_NAMES = ("TP degree", "PP degree", "EP degree", "attention DP degree")


def _whole(what: str, v) -> int:
    if not (is_whole(v) and not isinstance(v, bool) and v >= 1):   # 2.0 too: an int
        raise UserError(f"{what} must be a whole number >= 1{an_int(v)}, got {describe(v)}")
    return int(v)


def _divisors_of_tp(tp: int) -> str:
    """The degrees that divide ``tp``, as a refusal lists them.

    >>> _divisors_of_tp(8)
    '1, 2, 4, 8 (the divisors of TP 8)'
    """
    return f"{', '.join(map(str, _divisors(tp)))} (the divisors of TP {tp})"


def expert_slots(experts: int, ep: int) -> tuple[int, int]:
    """``(slots, redundant)``: the routed-expert slots each of ``ep`` expert-parallel groups
    holds, ``ceil(experts / ep)``, and how many of the ``ep`` groups' slots are redundant
    copies, ``ep x slots - experts`` (0 when ``ep`` divides the experts). The one place
    the placement of an EP degree that does not divide the experts is worked out.

    >>> expert_slots(8, 4), expert_slots(8, 3), expert_slots(256, 32), expert_slots(8, 16)
    ((2, 0), (3, 1), (8, 0), (1, 8))
    """
    if not (type(experts) is int and type(ep) is int and 1 <= experts <= MAX_WHOLE
            and 1 <= ep <= MAX_WHOLE):
        # a numpy integer too; ep 0 raised ZeroDivisionError, None or text TypeError
        experts = in_range("", "model", "experts", experts)
        ep = number("", "ep", ep, minimum=1, maximum=MAX_WHOLE, integer=True)
    slots = -(-experts // ep)
    return slots, ep * slots - experts


def stage_layers(layers: int, pp: int) -> tuple[tuple[int, int], ...]:
    """The ``(start, end)`` layer range of each of ``pp`` pipeline stages, as vLLM splits
    them (``get_pp_indices``, vllm/distributed/utils.py, commit 5a6541db): ``layers // pp``
    each, and the ``layers mod pp`` left over one each to the stages just before the last
    (the last holds the final norm and the LM head; VLLM_PP_LAYER_PARTITION overrides it,
    not modelled). SGLang's default split is the same equal one when ``pp`` divides the
    layers.

    >>> stage_layers(92, 2), stage_layers(61, 2)
    (((0, 46), (46, 92)), ((0, 31), (31, 61)))
    >>> stage_layers(20, 4), stage_layers(10, 4)
    (((0, 5), (5, 10), (10, 15), (15, 20)), ((0, 2), (2, 5), (5, 8), (8, 10)))
    >>> stage_layers(10, 11)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: pp must be a whole number from 1 to 10 (a stage holds at least one layer), got 11
    """
    # checked first: a PP degree of 10**12 built a list of 10**12 stages (MemoryError)
    layers = in_range("", "model", "layers", layers)
    pp = number("", "pp", pp, minimum=1, maximum=layers, integer=True,
                unit="(a stage holds at least one layer)")
    sizes = [layers // pp] * pp
    for i in range(2, layers % pp + 2):
        sizes[-i] += 1
    starts = [sum(sizes[:i]) for i in range(pp)]
    return tuple((a, a + n) for a, n in zip(starts, sizes, strict=True))


@lru_cache(maxsize=256)
def stage_mix(model: ModelSpec, pp: int) -> np.ndarray:
    """What each of ``pp`` pipeline stages holds (:func:`stage_layers`), shape ``(pp, 3)``:
    its layers, how many of them have a dense MLP (an MoE model's dense layers, where
    :attr:`~compute.models.ModelSpec.moe_layer_step` puts them) and how many a windowed
    attention (:meth:`~compute.models.ModelSpec.layer_mix`). The first stage also holds
    the token embedding, the last the LM head.

    >>> from compute.models import get_model
    >>> stage_mix(get_model("DeepSeek-V3"), 1).astype(int).tolist()
    [[61, 3, 0]]
    >>> stage_mix(get_model("gpt-oss-120b"), 4).astype(int).tolist()  # sliding: even layers
    [[9, 0, 5], [9, 0, 4], [9, 0, 5], [9, 0, 4]]
    """
    rows = [(b - a, *model.layer_mix(a, b)) for a, b in stage_layers(model.layers, pp)]
    out = np.array(rows, dtype=float)
    out.flags.writeable = False
    return out


def micro_batch(batch, pp, attention_dp, phase: str) -> np.ndarray:
    """Sequences in one pipeline micro-batch of a step of ``batch`` sequences on ``pp``
    stages of ``attention_dp`` attention groups (arrays broadcast; the whole batch where
    ``pp`` is 1). Decode: ``ceil(batch / pp)``, one micro-batch per stage in flight.
    Prefill: one prompt per attention group, ``min(batch, attention_dp)``, so
    ``ceil(batch / attention_dp)`` micro-batches go through the stages one after another
    (GPipe): each group runs its own prompts, one a micro-batch, and the groups' prompts
    share the stage's MLP, its collectives and its expert exchange, as data-parallel
    attention ranks run their own batches in step (SGLang's DP attention, vLLM's
    data-parallel engines); a micro-batch of one prompt alone would leave every other
    group's GPUs idle in attention. One prompt without attention DP, as GPipe.

    >>> micro_batch(64, 2, 1, "decode").item(), micro_batch(5, 1, 1, "prefill").item()
    (32.0, 5.0)
    >>> [micro_batch(b, 2, 16, "prefill").item() for b in (1, 16, 32)]
    [1.0, 16.0, 16.0]
    >>> micro_batch(4, 2, 1, "prefill").item()
    1.0
    """
    b = np.asarray(batch, dtype=float)
    if phase == "decode":
        return np.ceil(b / pp)
    return np.where(np.asarray(pp) > 1, np.minimum(b, attention_dp), b)


def _divisors(n: int, limit: int | None = None) -> list[int]:
    return [d for d in range(1, (n if limit is None else min(n, limit)) + 1) if n % d == 0]


#: The pipeline degrees a search over every dimension tries (``serve``, ``--parallelism
#: all``): powers of two up to 8, whether or not they divide the layers (uneven stages as
#: vLLM splits them), as deployments pipeline over whole nodes (2 to 8 of them); other
#: degrees (3, 5, 6, ...) only when asked. At most 4 degrees keep a search's grid the size
#: it had for a model whose layers 8 divides (a model of 61 layers had PP 1 alone).
SEARCH_PP = (1, 2, 4, 8)


def search_pp(model: ModelSpec, gpus: int | None = None) -> tuple[int, ...]:
    """The degrees of :data:`SEARCH_PP` up to ``model``'s layers and ``gpus``.

    >>> from compute.models import get_model
    >>> search_pp(get_model("DeepSeek-V3")), search_pp(get_model("Llama-3-70B"), gpus=4)
    ((1, 2, 4, 8), (1, 2, 4))
    """
    return tuple(p for p in SEARCH_PP if p <= model.layers and (gpus is None or p <= gpus))


def _check_pp(model, pp) -> int:
    """``pp`` if it is a whole number from 1 to the model's layers
    (:data:`~compute.parallel_rules.PP_RULE`; any such degree, as vLLM's ``get_pp_indices``
    splits them: :func:`stage_layers`)."""
    pp = _whole("PP degree", pp)
    if pp > model.layers:
        raise UserError(f"PP degree {pp} exceeds the {model.layers} layers of {model.name}; "
                        f"allowed: 1 to {model.layers} (a stage holds at least one layer)")
    return pp


def _check_ep(model, ep) -> int:
    ep = _whole("EP degree", ep)
    if ep > 1 and not model.is_moe:
        raise UserError(f"EP degree {ep} needs a mixture-of-experts model; {model.name} is "
                        f"dense (EP 1 only)")
    return ep   # one that does not divide the experts places redundant copies (expert_slots)


def _fits_domain(par: Parallelism, model, max_instance: int | None) -> str:
    """Why ``par``'s tensor-parallel groups do not fit the scale-up domain of
    ``max_instance`` GPUs ("" when they do). A stage wider than the domain is allowed when
    it runs only expert-parallel MoE layers across it: attention groups and each expert's
    group must fit the domain."""
    if max_instance is None or par.tp <= max_instance:
        return ""
    if not (model.is_moe and par.ep > 1):
        return (f"TP degree {par.tp} exceeds the largest instance of this GPU ({max_instance}); "
                f"allowed: 1..{max_instance} dividing {model.heads} (a wider stage needs "
                f"expert parallelism)")
    if par.attention_tp > max_instance:
        return (f"its attention groups of {par.attention_tp} GPUs exceed the largest instance "
                f"of this GPU ({max_instance}); raise attention DP")
    if par.expert_tp > max_instance:
        return (f"each expert's group of {par.expert_tp} GPUs exceeds the largest instance of "
                f"this GPU ({max_instance}); raise EP")
    return ""


def check_parallelism(model: ModelSpec, par: Parallelism, max_instance: int | None = None
                     ) -> Parallelism:
    """``par`` with whole-number degrees if it is valid for ``model``, else a
    :class:`UserError` naming the degree and what is allowed: TP divides the heads (with
    attention DP, its attention groups of ``tp / attention_dp`` GPUs divide them), PP is
    at most the layers (:data:`~compute.parallel_rules.PP_RULE`), EP divides TP (one that
    does not divide the experts places redundant copies, :func:`expert_slots`), attention
    DP divides TP; every tensor-parallel group fits ``max_instance`` GPUs (the GPU's
    scale-up domain): TP itself, or, for a stage of expert-parallel MoE layers wider than
    that, its attention groups and each expert's group (:func:`_fits_domain`)."""
    adp = _whole("attention DP degree", par.attention_dp)
    tp = check_tp(model, par.tp) if adp == 1 else _whole("TP degree", par.tp)
    pp, ep = _check_pp(model, par.pp), _check_ep(model, par.ep)
    if tp % ep:
        raise UserError(f"EP degree {ep} does not divide TP degree {tp} (the experts are placed "
                        f"on the {tp} GPUs of each pipeline stage); allowed: {_divisors_of_tp(tp)}")
    if tp % adp:
        raise UserError(f"attention DP degree {adp} does not divide TP degree {tp}; allowed: "
                        f"{_divisors_of_tp(tp)}")
    if model.heads % (tp // adp):
        raise UserError(f"TP degree {tp} over attention DP degree {adp} gives attention groups "
                        f"of {tp // adp} GPUs, which do not divide the {model.heads} attention "
                        f"heads of {model.name}")
    out = Parallelism(tp, pp, ep, adp)
    why = _fits_domain(out, model, max_instance)
    if why:
        raise UserError(f"{out.label}: {why}")
    return out


def _degrees(what: str, given, check) -> tuple[int, ...]:
    values = sorted({check(v) for v in np.atleast_1d(np.asarray(given, dtype=object)).tolist()})
    if not values:
        raise UserError(f"no {what} given to search")
    return tuple(values)


def configurations(model: ModelSpec, max_instance: int, *, tp: int | Sequence[int] | None = None,
                   pp: int | Sequence[int] | None = None,
                   ep: int | Sequence[int] | Literal[True] | None = None,
                   attention_dp: int | Sequence[int] | Literal[True] | None = None,
                   max_gpus: int | None = None) -> tuple[Parallelism, ...]:
    """The configurations the SLO search tries, TP-major.

    Parameters
    ----------
    model : ModelSpec
    max_instance : int
        Largest tensor-parallel group (the GPU's scale-up domain).
    tp : iterable of int, optional
        GPUs per pipeline stage. Default: every TP degree from 1 to ``max_instance``
        dividing the heads; with expert parallelism and ``max_gpus``, also the wider stages
        up to ``max_gpus`` that divide the heads or span a power of two of whole scale-up
        domains (``max_instance x 2^k``) with at most one routed expert per GPU, whose
        attention groups (``tp / attention_dp`` GPUs) divide the heads (each expert's and
        attention group's GPUs within ``max_instance``). Other widths are tried when given
        in ``tp``.
    pp : iterable of int, optional
        Pipeline stages (default ``(1,)``: no pipeline); each from 1 to the layers
        (:data:`~compute.parallel_rules.PP_RULE`).
    ep : iterable of int or True, optional
        Expert-parallel degrees (default ``(1,)``); ``True`` tries every divisor of the
        experts. One given that does not divide the experts places redundant copies
        (:func:`expert_slots`); a degree that does not divide a TP degree is skipped for it.
    attention_dp : iterable of int or True, optional
        Attention data-parallel degrees (default ``(1,)``); ``True`` tries every divisor of
        each TP degree. A degree that does not divide a TP degree is skipped for it.
    max_gpus : int, optional
        Largest instance (``tp x pp``), e.g. the GPUs of a fabric.

    Returns
    -------
    tuple of Parallelism
        Never empty (a :class:`UserError` says why when nothing is left).
    """
    if max_gpus is not None:
        max_gpus = _whole("max_gpus", max_gpus)
    pps = (1,) if pp is None else _degrees("PP degree", pp, lambda p: _check_pp(model, p))
    if is_flag(ep) and ep:   # numpy's True too (np.True_ was refused as a degree)
        eps = tuple(_divisors(model.experts, 1 << 20))
    else:
        eps = (1,) if ep is None else _degrees("EP degree", ep, lambda e: _check_ep(model, e))
    wide = model.is_moe and max(eps) > 1        # stages wider than the scale-up domain
    every_adp = bool(is_flag(attention_dp) and attention_dp)
    adps = (1,) if attention_dp is None or every_adp else _degrees(
        "attention DP degree", attention_dp, lambda a: _whole("attention DP degree", a))
    # a wide stage's TP need not divide the heads, only its attention groups (TP / DP)
    grouped = lambda t: any(t % a == 0 and model.heads % (t // a) == 0  # noqa: E731
                            for a in (_divisors(t) if every_adp else adps))
    if tp is None:
        tps = valid_tp_degrees(model, max_instance)
        if wide and max_gpus is not None:
            # Beyond the heads' divisors, a stage widens only to spread the experts: whole
            # scale-up domains, a power of two of them, up to one routed expert per GPU
            # (wide-EP deployments span whole nodes with about an expert a GPU: DeepSeek-V3's
            # decode EP 320 on 40 nodes of 8 holds its 256 experts and 64 redundant copies,
            # Technical Report 3.4.2; other widths are asked for with ``tp``). Any width whose
            # attention groups divide the heads would be almost every width, each compiled
            # and searched for nothing (the study's MoE part 2.8 -> 32.9 s).
            domains = {max_instance << k for k in range(max_gpus.bit_length())}
            tps += tuple(t for t in range(max_instance + 1, max_gpus + 1)
                         if (model.heads % t == 0 or (t in domains and t <= model.experts))
                         and grouped(t))
    elif wide:
        tps = _degrees("TP degree", tp, lambda t: _whole("TP degree", t) if grouped(
            _whole("TP degree", t)) else check_tp(model, t))
    else:
        tps = _degrees("TP degree", tp, lambda t: check_tp(model, t, max_instance))
    out, why = [], ""
    for t in tps:
        for p in pps:
            if max_gpus is not None and t * p > max_gpus:
                why = why or f"max_gpus {max_gpus} is below TP {t} x PP {p}"
                continue
            for e in eps:
                if t % e:
                    continue
                for a in (_divisors(t) if every_adp else adps):
                    if t % a or model.heads % (t // a):
                        continue
                    c = Parallelism(t, p, e, a)
                    reason = _fits_domain(c, model, max_instance)
                    if reason:
                        why = why or f"{c.label}: {reason}"
                        continue
                    out.append(c)
    if not out:
        adp = "" if attention_dp is None or every_adp else \
            f", attention DP {', '.join(map(str, adps))}"   # the degrees asked for
        raise UserError(f"no configuration to search: TP {', '.join(map(str, tps))}, PP "
                        f"{', '.join(map(str, pps))}, EP {', '.join(map(str, eps))}{adp}"
                        f" (EP and attention DP must divide TP)" + (f"; {why}" if why else ""))
    return tuple(out)


def layout(model: ModelSpec, configs: Iterable[Parallelism | int]) -> Shards:
    """Per-GPU sizes of ``model`` for each configuration (rows, column vectors ``(nc, 1)``):
    attention, the embedding and the LM head split over ``attention_tp`` GPUs (heads, KV
    heads and the vocabulary: each attention group runs its own tokens through them, see
    :mod:`compute.stages`), MLP columns over ``tp``, each routed expert over ``expert_tp``
    under EP, in ``ceil(experts / ep)`` slots a group (:func:`expert_slots`).

    >>> from compute.models import get_model
    >>> m = get_model("DeepSeek-V3")                  # 129,280 tokens in the vocabulary
    >>> sh = layout(m, [Parallelism(128, ep=128, attention_dp=a) for a in (1, 4, 32)])
    >>> sh.vocab.ravel().tolist(), sh.ffn.ravel().tolist()   # ceil(129280 / (128 / a))
    ([1010.0, 4040.0, 32320.0], [16.0, 16.0, 16.0])
    """
    configs = [c if isinstance(c, Parallelism) else Parallelism(int(c)) for c in configs]
    col = lambda xs: np.asarray(xs, dtype=float).reshape(-1, 1)  # noqa: E731
    ceil = lambda a, b: -(-a // b)  # noqa: E731
    return Shards(
        tp=col([c.tp for c in configs]),
        heads=col([model.heads // c.attention_tp for c in configs]),
        kv_heads=col([kv_heads_per_gpu(model, c.attention_tp) for c in configs]),
        ffn=col([ceil(model.ffn, c.tp) for c in configs]),
        vocab=col([ceil(model.vocab, c.attention_tp) for c in configs]),
        shared_ffn=col([ceil(model.shared_ffn, c.tp) for c in configs]),
        dense_ffn=col([ceil(model.dense_ffn or model.ffn, c.tp) for c in configs]),
        pp=col([c.pp for c in configs]),
        ep=col([c.ep if model.is_moe else 1 for c in configs]),
        attention_dp=col([c.attention_dp for c in configs]),
        expert_ffn=col([ceil(model.ffn, c.expert_tp) for c in configs]),
        expert_slots=col([expert_slots(model.experts, c.ep if model.is_moe else 1)[0]
                          for c in configs]),
    )


def dense_data_parallel(model: ModelSpec, configs: Sequence[Parallelism], sh: Shards,
                        degree: int) -> Shards:
    """``sh`` with ``model``'s dense MLP layers run at TP ``degree`` (1: data-parallel,
    each GPU holding the whole dense MLP and running it on its own ``n / tp`` tokens
    between the attention group's reduce-scatter and all-gather, as the EP layers; no
    gather or scatter across attention groups). Refused (UserError, one line) for a degree
    other than :data:`DENSE_MLP_TP_DEGREES`, a model without dense layers among MoE ones
    and configurations none of which has attention DP; in a grid, the rows without it keep
    the dense MLPs tensor-parallel over ``tp`` (``dense_dp`` 0 there).

    >>> from compute.models import get_model
    >>> m = get_model("DeepSeek-V3")
    >>> c = [Parallelism(32, ep=32, attention_dp=32)]
    >>> dense_data_parallel(m, c, layout(m, c), 1).dense_ffn.ravel().tolist()
    [18432.0]
    """
    if isinstance(degree, bool) or degree not in DENSE_MLP_TP_DEGREES:
        raise UserError(f"dense MLP TP degree must be 1 (each GPU runs the dense MLPs whole "
                        f"on its own tokens, SGLang's --moe-dense-tp-size 1) or left unset "
                        f"(the stage's TP), got {describe(degree)}")
    if not (model.is_moe and model.dense_layers):
        raise UserError(f"{model.name} has no dense MLP layers among MoE ones; a dense MLP "
                        f"TP degree (dense_mlp_tp {describe(degree)}) applies to MoE models "
                        f"with dense layers (DeepSeek-V3's first 3): leave it unset")
    dp = np.asarray([float(c.attention_dp > 1) for c in configs]).reshape(-1, 1)
    if not dp.any():
        who = f"{configs[0].label} has none" if len(configs) == 1 else \
            "no configuration searched has it"
        raise UserError(f"dense MLP TP 1 runs beside attention DP; {who} (give attention "
                        f"DP > 1, or leave dense_mlp_tp unset)")
    full = float(model.dense_ffn or model.ffn)
    return replace(sh, dense_ffn=np.where(dp > 0, full, sh.dense_ffn), dense_dp=dp)


def kv_copies(model: ModelSpec, par: Parallelism) -> float:
    """Copies of the KV cache the instance holds (1.0: none replicated); see
    :func:`compute.sharding.kv_replication`, applied to the attention groups.

    >>> from compute.models import get_model
    >>> m = get_model("Llama-3-70B")
    >>> kv_copies(m, Parallelism(16)), kv_copies(m, Parallelism(8, pp=2)), \\
    ...     kv_copies(m, Parallelism(16, attention_dp=2))
    (2.0, 1.0, 1.0)
    """
    from compute.sharding import kv_replication

    return kv_replication(model, par.attention_tp)

