"""The two phases of LLM inference, what a step of each processes, and their latency SLOs.

* **prefill**: ``batch`` prompts of ``prompt`` tokens each go through the model in one step;
  the step's time is the time to first token (TTFT). Tokens/s counts prompt tokens.
* **decode**: ``batch`` sequences each generate one token while attending to ``context``
  tokens (the new one included); the step's time is the time between tokens (TBT).
  Tokens/s counts generated tokens.

Defaults come from the Splitwise coding trace (Patel et al., "Splitwise: Efficient generative
LLM inference using phase splitting", ISCA 2024, trace statistics): the median coding request
has a **1500-token prompt** and generates a median of **13 tokens**. A decode step therefore
runs at a context between 1501 and 1513 tokens; the default ``context`` is **1513**, the last
(longest) step of the median request, so KV-cache reads and the memory fit are taken where
they are largest (at most 0.8% above the request's average step). SLOs: TTFT <= 1 s and
TBT <= 50 ms.

>>> w = Workload("prefill")
>>> w.tokens_per_sequence, w.kv_tokens, w.attention_pairs_per_sequence
(1500, 1500, 1125750.0)
>>> d = Workload("decode")
>>> d.tokens_per_sequence, d.kv_tokens, d.latency_name
(1, 1513, 'tbt')
>>> Slo().limit("decode")
0.05
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from compute.errors import UserError, chosen, known, lookalike
from compute.units import check_plausible, format_time
from compute.validate import MAX_WHOLE, an_int, describe, is_finite, is_whole, of_type

__all__ = [
    "BOTH",
    "DECODE",
    "DEFAULT_CONTEXT",
    "DEFAULT_OUTPUT",
    "DEFAULT_PROMPT",
    "DEFAULT_TBT",
    "DEFAULT_TTFT",
    "PHASES",
    "PREFILL",
    "Slo",
    "Workload",
    "check_phase",
    "check_slo",
    "latency_name",
    "refuse_unread_tokens",
    "slo_text",
]

PREFILL, DECODE = "prefill", "decode"
PHASES = (PREFILL, DECODE)
#: What a command taking one phase or both accepts for the two (``--phases both``).
BOTH = "both"

#: Median prompt of the Splitwise coding trace (tokens).
DEFAULT_PROMPT = 1500
#: Median output of the Splitwise coding trace (tokens).
DEFAULT_OUTPUT = 13
#: Decode context: the median coding prompt plus its median output (tokens).
DEFAULT_CONTEXT = DEFAULT_PROMPT + DEFAULT_OUTPUT
#: Time-to-first-token SLO for prefill (seconds).
DEFAULT_TTFT = 1.0
#: Time-between-tokens SLO for decode (seconds).
DEFAULT_TBT = 0.050


def check_phase(phase: str, *, both: bool = False) -> str:
    """Return ``phase`` if it is ``'prefill'`` or ``'decode'``, else raise :class:`UserError`.
    ``both=True``: the caller also takes ``'both'`` (the two phases, handled before this
    check), so the error lists it with the others.

    >>> check_phase("decod", both=True)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: unknown phase 'decod'; known: 'decode', 'prefill' or 'both'
    """
    text = chosen(phase, PHASES)   # ' decode' is 'decode', as every choice
    if text is None:
        also = f" or {BOTH!r}" if both else ""
        # 'bоth' (a Cyrillic о) asked about too where 'both' is taken
        asked = lookalike(phase, (*PHASES, BOTH) if both else PHASES)
        raise UserError(f"unknown phase {describe(phase)}{asked}; known: "
                        f"{known(PHASES)}{also}")
    return text


def refuse_unread_tokens(phase: object, prompt: object, context: object,
                         name: str = "phase") -> None:
    """Refuse ``prompt`` where no phase chosen is a prefill and ``context`` where none is a
    decode step, as ``infer`` and ``search`` refuse ``--prompt`` and ``--context``: those
    phases never read it (:class:`Workload`), so the steps would run at the default
    instead. ``phase``: one phase, or (``name`` ``"phases"``: compare, sweep) the list
    chosen; a name that is no phase is left to the phase check, which names it. The
    library's one rule (netmodel's evaluate, search, compare, sweep and the reliability
    cluster's search).

    >>> refuse_unread_tokens("prefill", None, 5)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: context 5 sets a decode step's context (the tokens in the KV cache); with phase 'prefill' give prompt (the tokens of each prompt)
    """
    chosen = [phase] if isinstance(phase, str) else phase
    if not (isinstance(chosen, list) and chosen
            and all(isinstance(p, str) and p in PHASES for p in chosen)):
        return
    shown = ", ".join(repr(p) for p in dict.fromkeys(chosen))
    if PREFILL not in chosen and prompt is not None:
        raise UserError(f"prompt {describe(prompt)} sets a prefill's prompt; with {name} "
                        f"{shown} give context (the tokens in the KV cache)")
    if DECODE not in chosen and context is not None:
        raise UserError(f"context {describe(context)} sets a decode step's context (the "
                        f"tokens in the KV cache); with {name} {shown} give prompt (the "
                        f"tokens of each prompt)")


def latency_name(phase: str) -> str:
    """The name of a phase's step latency: ``'ttft'`` (time to first token) for prefill,
    ``'tbt'`` (time between tokens, what serving engines print as TPOT or ITL) for decode.
    Upper-case it for display (``latency_name(p).upper()``).

    >>> latency_name("prefill"), latency_name("decode").upper()
    ('ttft', 'TBT')
    """
    return "ttft" if check_phase(phase) == PREFILL else "tbt"


#: Most tokens a prompt or context may hold (:data:`compute.validate.MAX_WHOLE`).
MAX_TOKENS = MAX_WHOLE


def _check_tokens(what: str, v) -> int:
    """``v`` as an int if it is a whole number from 1 to :data:`MAX_TOKENS` (Python or
    numpy), else a UserError."""
    raw = v
    if is_finite(v) and v > MAX_TOKENS:   # a float too: past the range either way
        raise UserError(f"{what} must be a whole number of tokens from 1 to {MAX_TOKENS:,}, "
                        f"got {describe(raw)}")
    if not (is_whole(v) and v >= 1):   # is_whole: no bool; a float, 1024.0 too, is no int
        raise UserError(f"{what} must be a whole number of tokens >= 1{an_int(raw)}, got "
                        f"{describe(raw)}")
    return int(v)


#: Most draft tokens a step taken: a bound on the input (engines run 1 to a few steps);
#: beyond it a value is a slip.
MAX_MTP_TOKENS = 16


def check_mtp_tokens(k: object) -> int:
    """``k`` as an int if it is a Python or numpy integer from 0 to :data:`MAX_MTP_TOKENS`,
    else a :class:`UserError` (a float, 1.0 too, is no count given in code:
    :func:`compute.validate.an_int`; the command line's ``--mtp-tokens 1`` is read as its
    int before it comes here)."""
    if not (is_whole(k) and 0 <= k <= MAX_MTP_TOKENS):   # is_whole: no bool, no timedelta64
        raise UserError(f"MTP draft tokens (mtp_tokens) must be a whole number from 0 (off) "
                        f"to {MAX_MTP_TOKENS}{an_int(k)}, got {describe(k)}")
    return int(k)


@dataclass(frozen=True)
class Workload:
    """What one step of a phase processes, per sequence (token counts).

    ``prompt`` is used by prefill, ``context`` by decode (KV entries each new token attends
    to, itself included). ``draft`` (decode only; 0 by default): draft tokens a sequence's
    step verifies besides its next token (multi-token prediction, :mod:`compute.mtp`): the
    step pushes ``1 + draft`` tokens a sequence through the layers, the ``i``-th of them
    attending to ``context + i`` keys.

    >>> v = Workload("decode", context=1000, draft=1)
    >>> v.tokens_per_sequence, v.kv_tokens, v.attention_pairs_per_sequence
    (2, 1001, 2001.0)
    """

    phase: str
    prompt: int = DEFAULT_PROMPT
    context: int = DEFAULT_CONTEXT
    draft: int = 0

    def __post_init__(self):
        object.__setattr__(self, "phase", check_phase(self.phase))
        object.__setattr__(self, "prompt", _check_tokens("prompt", self.prompt))
        object.__setattr__(self, "context", _check_tokens("context", self.context))
        if type(self.draft) is not int or self.draft != 0:
            object.__setattr__(self, "draft", check_mtp_tokens(self.draft))
            if self.draft and self.phase != DECODE:
                raise UserError(f"draft tokens are verified in decode, not {self.phase}")

    @cached_property
    def tokens_per_sequence(self) -> int:
        """Tokens each sequence pushes through the layers in one step."""
        return self.prompt if self.phase == PREFILL else 1 + self.draft

    @cached_property
    def kv_tokens(self) -> int:
        """KV-cache entries per sequence at the end of the step (the longest context held)."""
        return self.prompt if self.phase == PREFILL else self.context + self.draft

    @cached_property
    def kv_read_tokens(self) -> int:
        """KV entries per sequence that attention reads from HBM, once (FlashAttention)."""
        return self.kv_tokens

    @cached_property
    def attention_pairs_per_sequence(self) -> float:
        """(query, key) pairs per sequence and head. Prefill is causal: token ``i`` attends to
        ``i + 1`` keys, ``P (P + 1) / 2`` in all (FlashAttention skips masked tiles, so the
        work is this, not ``P^2``). Decode: the new token attends to ``context`` keys (with
        ``draft`` tokens, ``(draft + 1) context + draft (draft + 1) / 2``)."""
        if self.phase == PREFILL:
            return self.prompt * (self.prompt + 1) / 2.0
        if self.draft:   # token i of the 1 + draft attends to context + i keys
            k = self.draft
            return float((k + 1) * self.context + k * (k + 1) // 2)
        return float(self.context)

    @property
    def latency_name(self) -> str:
        """``'ttft'`` for prefill, ``'tbt'`` for decode."""
        return latency_name(self.phase)


@dataclass(frozen=True)
class Slo:
    """Latency service-level objectives (seconds), each kept as a Python float (a numpy
    scalar or a Fraction given is converted here, once).

    >>> import numpy as np
    >>> Slo(ttft=np.float32(0.5)).ttft, type(Slo(tbt=np.float64(0.05)).tbt).__name__
    (0.5, 'float')
    """

    ttft: float = DEFAULT_TTFT
    tbt: float = DEFAULT_TBT

    def __post_init__(self):
        for key in ("ttft", "tbt"):   # each within its plausible range (limits.toml [quantity])
            v = getattr(self, key)
            if not (is_finite(v) and v > 0):
                raise UserError(f"{key} SLO must be a finite number of seconds > 0, got "
                                f"{describe(v)}")
            check_plausible(key, v, f"{key} SLO")
            # kept as a float: a numpy float32 failed every report's JSON, a Fraction the
            # search's limit ('latency_limit ... > 0, got 0.5')
            object.__setattr__(self, key, float(v))

    def limit(self, phase: str) -> float:
        """The latency limit of ``phase``: TTFT for prefill, TBT for decode (seconds)."""
        return self.ttft if check_phase(phase) == PREFILL else self.tbt

    def to_dict(self) -> dict:
        """JSON-ready, as every report's ``settings.slo`` records it (seconds).

        >>> Slo(ttft=2.0).to_dict()
        {'ttft_s': 2.0, 'tbt_s': 0.05}
        """
        return {"ttft_s": self.ttft, "tbt_s": self.tbt}


def slo_text(phase: str, limit: float, *, mtp: bool = False) -> str:
    """The SLO a phase's search meets, as tables and titles print it: ``'TBT <= 50 ms'``
    (``mtp``: ``'TPOT <= 50 ms'``, the limit a multi-token-prediction step's time per
    token meets).

    >>> slo_text("decode", 0.05), slo_text("prefill", 2.0), slo_text("decode", 0.05, mtp=True)
    ('TBT <= 50 ms', 'TTFT <= 2 s', 'TPOT <= 50 ms')
    """
    if isinstance(limit, bool) or not (is_finite(limit) and limit > 0):
        raise UserError(f"limit must be a finite number of seconds > 0, got {describe(limit)}")
    return f"{'TPOT' if mtp else latency_name(phase).upper()} <= {format_time(limit)}"


def check_slo(slo: object) -> Slo:
    """``slo``, or the default :class:`Slo` for None; anything else is refused by name.

    >>> check_slo(None) == Slo()
    True
    >>> check_slo(0.05)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: slo must be a compute.phases.Slo (e.g. Slo(ttft=1.0, tbt=0.05), seconds) or None for the defaults, got 0.05
    """
    return of_type("slo", slo, Slo, "Slo(ttft=1.0, tbt=0.05), seconds") or _DEFAULT_SLO


_DEFAULT_SLO = Slo()
