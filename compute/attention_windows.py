"""What a model's windowed attention layers hold and read, on average over its layers:
the KV-cache tokens a sequence keeps (:meth:`AttentionWindows.kv_tokens_held`), what a
decode needs right after a prefill and what a step holds, the tokens a decode step reads and
the (query, key) pairs a prefill computes. A sliding-window layer attends to the last
``window`` tokens, a chunked one to its own chunk of ``window`` tokens; a model without a
window attends to every token. :class:`AttentionWindows` is a base of
:class:`~compute.model_spec.ModelSpec`, whose ``layers``, ``sliding_window``,
``sliding_layers`` and ``window_kind`` it reads.

>>> from compute.model_spec import ModelSpec
>>> m = ModelSpec("g", 42, 3584, 16, 8, 256, 14336, 256000, sliding_window=4096,
...               sliding_layers=21)
>>> m.windowed_layers, m.kv_tokens_held(8192)
(21, 6144.0)
"""

from __future__ import annotations

from functools import cached_property

__all__ = ["AttentionWindows"]


class AttentionWindows:
    """The windowed attention arithmetic of :class:`~compute.model_spec.ModelSpec` (a base:
    read on the spec)."""

    __slots__ = ()

    @cached_property
    def windowed_layers(self) -> int:
        """Layers whose attention is limited to the last ``sliding_window`` tokens."""
        return (self.sliding_layers or self.layers) if self.sliding_window else 0

    def kv_tokens_held(self, tokens: int) -> float:
        """KV-cache entries one sequence of ``tokens`` tokens keeps per layer, on average
        over the layers: ``tokens`` in a full-attention layer, ``min(tokens, window)`` in a
        windowed one (its cache is a ring of the last ``window`` tokens; a chunked layer
        keeps at most its current chunk, and room for a whole chunk is what a sequence
        needs, as every sequence passes through every position of its chunks). It is also
        what a sliding-window layer's decode step reads and attends to. Exactly ``tokens``
        without a window.

        >>> from compute.model_spec import ModelSpec
        >>> m = ModelSpec("g", 42, 3584, 16, 8, 256, 14336, 256000, sliding_window=4096,
        ...               sliding_layers=21)
        >>> m.kv_tokens_held(8192), m.kv_tokens_held(1000)
        (6144.0, 1000)
        """
        w = self.sliding_window
        if not w or tokens <= w:
            return tokens
        k = self.windowed_layers
        return ((self.layers - k) * tokens + k * w) / self.layers

    def kv_tokens_after_prefill(self, prompt: int) -> float:
        """KV-cache entries per layer, on average over the layers, that the decode of a
        sequence needs right after a prefill of ``prompt`` tokens (what disaggregated
        serving moves): ``prompt`` in a full-attention layer, ``min(prompt, window)`` in a
        sliding-window one, and in a chunked one only the tokens of the current, partial
        chunk, ``prompt mod chunk`` (the next token starts at position ``prompt`` and attends
        to its own chunk alone; none when the prompt ends on a chunk boundary), where
        :meth:`kv_tokens_held` counts room for a whole chunk.

        >>> from compute.model_spec import ModelSpec
        >>> m = ModelSpec("l4", 4, 64, 4, 4, 16, 128, 100, sliding_window=8,
        ...               sliding_layers=3, window_kind="chunked")
        >>> m.kv_tokens_after_prefill(6), m.kv_tokens_after_prefill(16)  # (16 + 3 x 0) / 4
        (6, 4.0)
        >>> m.kv_tokens_after_prefill(19)                                # (19 + 3 x 3) / 4
        7.0
        """
        w = self.sliding_window
        if self.window_kind != "chunked" or not w or prompt < w:
            return self.kv_tokens_held(prompt)
        k = self.windowed_layers
        return ((self.layers - k) * prompt + k * (prompt % w)) / self.layers

    def kv_tokens_in_step(self, workload) -> float:
        """KV-cache entries per sequence and layer, on average over the layers, that the
        cache holds while a step of ``workload`` runs (what the memory fit counts). A decode
        step holds :meth:`kv_tokens_held` of its context. A prefill step writes the keys and
        values of every prompt token into every layer's cache, windowed and chunked layers
        too (attention then reads them there), so it holds the whole prompt in every layer;
        a windowed layer frees the blocks that left its window only after the step. vLLM's
        hybrid KV-cache manager allocates a sliding-window layer ``window - 1`` tokens plus
        the step's newly scheduled ones, and a chunked layer a chunk plus them
        (``SlidingWindowSpec`` and ``ChunkedLocalAttentionSpec.max_memory_usage_bytes``,
        vllm/v1/kv_cache_interface.py), which for an unchunked prefill is the prompt.

        >>> from compute.model_spec import ModelSpec
        >>> from compute.phases import Workload
        >>> m = ModelSpec("g", 42, 3584, 16, 8, 256, 14336, 256000, sliding_window=4096,
        ...               sliding_layers=21)
        >>> m.kv_tokens_in_step(Workload("prefill", 8192, 8192))
        8192
        >>> m.kv_tokens_in_step(Workload("decode", 8192, 8192))
        6144.0
        """
        if workload.phase == "decode":   # with draft tokens, theirs too (kv_tokens)
            return self.kv_tokens_held(workload.kv_tokens)
        return workload.prompt

    def decode_tokens_read(self, context: int) -> float:
        """Cached tokens a decode step at ``context`` reads and attends to per layer, on
        average over the layers: ``context`` in a full-attention layer; ``min(context,
        window)`` in a sliding-window layer; in a chunked layer the tokens of the current
        chunk, ``context`` up to the first chunk boundary and beyond it, on average over
        the positions a long decode passes through, ``(chunk + 1) / 2`` (its new token sits
        at any of the chunk's ``chunk`` positions; a batch of long sequences holds all of
        them), where a sliding window of the same size always reads ``window``.

        >>> from compute.model_spec import ModelSpec
        >>> m = ModelSpec("l4", 4, 64, 4, 4, 16, 128, 100, sliding_window=8,
        ...               sliding_layers=3, window_kind="chunked")
        >>> m.decode_tokens_read(6), m.decode_tokens_read(100)   # (1 x 100 + 3 x 4.5) / 4
        (6, 28.375)
        """
        w = self.sliding_window
        if not w or context <= w:
            return context
        if self.window_kind == "sliding":
            return self.kv_tokens_held(context)
        k = self.windowed_layers
        return ((self.layers - k) * context + k * (w + 1) / 2.0) / self.layers

    def prefill_pairs(self, prompt: int) -> float:
        """(query, key) pairs of causal attention over a prompt of ``prompt`` tokens, per
        sequence and layer on average over the layers: ``P (P + 1) / 2`` in a full-attention
        layer; in a sliding-window one token ``i`` attends to ``min(i, w)`` keys, ``w (w +
        1) / 2 + (P - w) w`` once ``P`` exceeds ``w``; in a chunked one each whole chunk
        gives ``w (w + 1) / 2`` and the last, partial one of ``r = P mod w`` tokens ``r (r
        + 1) / 2``.

        >>> from compute.model_spec import ModelSpec
        >>> m = ModelSpec("m", 2, 64, 4, 4, 16, 128, 100, sliding_window=2, sliding_layers=1)
        >>> m.prefill_pairs(4)   # full: 1+2+3+4 = 10; windowed: 1+2+2+2 = 7
        8.5
        >>> from dataclasses import replace
        >>> replace(m, window_kind="chunked").prefill_pairs(5)  # full 15; chunked 3+3+1 = 7
        11.0
        """
        full = prompt * (prompt + 1) / 2.0
        w = self.sliding_window
        if not w or prompt <= w:
            return full
        k = self.windowed_layers
        if self.window_kind == "chunked":
            r = prompt % w
            windowed = (prompt // w) * w * (w + 1) / 2.0 + r * (r + 1) / 2.0
        else:
            windowed = w * (w + 1) / 2.0 + (prompt - w) * w
        return ((self.layers - k) * full + k * windowed) / self.layers

    def attention_span(self, workload) -> tuple[float, float]:
        """``(pairs, kv_read)`` of one sequence of ``workload`` per layer, on average over the
        layers: the (query, key) pairs its attention computes and the cached tokens whose K
        and V it reads. Without a window, the workload's own figures
        (:attr:`~compute.phases.Workload.attention_pairs_per_sequence`,
        :attr:`~compute.phases.Workload.kv_read_tokens`). A windowed layer's decode step
        attends to and reads :meth:`decode_tokens_read` tokens; prefill computes
        :meth:`prefill_pairs` pairs and reads each prompt token's K and V once, as without
        a window."""
        pairs, kv_read = workload.attention_pairs_per_sequence, workload.kv_read_tokens
        if not self.sliding_window:
            return pairs, kv_read
        if workload.phase == "decode":
            held = float(self.decode_tokens_read(workload.context))
            return held, held
        return self.prefill_pairs(workload.prompt), kv_read
