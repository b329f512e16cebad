"""A model's parameter counts from its shape: attention, MLPs and experts, norms,
embeddings and the LM head, per layer and in all (:class:`ParameterCounts`, a base of
:class:`~compute.model_spec.ModelSpec`), and the elements of each kind of norm
(:data:`NORM_ELEMENTS`).

>>> from compute.model_spec import ModelSpec
>>> m = ModelSpec("tiny", 2, 64, 4, 4, 16, 128, 100)
>>> m.attention_parameters, m.mlp_parameters(128), m.norm_parameters
(16384, 24576, 64)
"""

from __future__ import annotations

__all__ = ["NORMS", "NORM_ELEMENTS", "ParameterCounts"]

#: Elements each norm kind keeps per element of the width it normalises: an RMSNorm a
#: scale, a LayerNorm a scale and a shift, OLMo's (v1) LayerNorm neither ("weightless").
NORM_ELEMENTS = {"rmsnorm": 1, "layernorm": 2, "weightless": 0}
NORMS = tuple(NORM_ELEMENTS)


class ParameterCounts:
    """The parameter counts of :class:`~compute.model_spec.ModelSpec` (a base: the counts
    are read on the spec), from its fields (``hidden``, ``heads``, ``head_dim``,
    ``kv_heads``, ``ffn``, ``experts``, ``norm``, biases, ...) and its layer mix
    (``is_moe``, ``moe_layers``, ``is_mla``, ``v_dim``)."""

    __slots__ = ()

    def norm_elements(self, width: int) -> int:
        """Elements of one norm over ``width`` (scale, and shift for layernorm)."""
        return width * NORM_ELEMENTS[self.norm]

    def mlp_parameters(self, width: int) -> int:
        """One MLP of ``width`` intermediate columns: up (and gate) and down, with biases."""
        up = (2 if self.gated_mlp else 1) * width
        n = self.hidden * up + width * self.hidden
        return n + ((up + self.hidden) if self.mlp_biased else 0)

    @property
    def mlp_biased(self) -> bool:
        """Whether the MLPs carry biases: every linear layer does (:attr:`bias`), or the
        MLPs' do (:attr:`mlp_bias`)."""
        return self.bias or self.mlp_bias

    @property
    def qkv_biased(self) -> bool:
        """Whether the Q, K and V projections carry biases (:attr:`bias` or
        :attr:`qkv_bias`)."""
        return self.bias or self.qkv_bias

    @property
    def o_biased(self) -> bool:
        """Whether the attention's output projection carries a bias (:attr:`bias` or
        :attr:`o_bias`)."""
        return self.bias or self.o_bias

    @property
    def attention_parameters(self) -> int:
        """Attention of one layer, with biases where the model has them.

        Q, K, V and output projections; with MLA (DeepSeek-V2/V3, as in its reference code):
        the query down-projection ``hidden x q_lora_rank``, its norm and up-projection
        ``q_lora_rank x heads head_dim`` (or one ``hidden x heads head_dim`` when
        ``q_lora_rank`` is 0); the KV down-projection ``hidden x (kv_lora_rank +
        qk_rope_head_dim)`` and the latent's norm; the KV up-projection ``kv_lora_rank x
        heads (head_dim - qk_rope_head_dim + v_head_dim)`` (keys' non-rotary part and
        values); the output ``heads v_head_dim x hidden``. The query and key norms
        (:attr:`qk_norm`) are counted here.
        """
        h, a, d = self.hidden, self.heads, self.head_dim
        if self.is_mla:
            c, r, ql = self.kv_lora_rank, self.qk_rope_head_dim, self.q_lora_rank
            q = (h * ql + self.norm_elements(ql) + ql * a * d) if ql else h * a * d
            kv = h * (c + r) + self.norm_elements(c) + c * a * (d - r + self.v_dim)
            return q + kv + a * self.v_dim * h
        q, kv = a * d, self.kv_heads * d
        n = h * (q + 2 * kv) + q * h + self.qk_norm
        return n + ((q + 2 * kv) if self.qkv_biased else 0) + (h if self.o_biased else 0)

    @property
    def expert_parameters(self) -> int:
        """One routed expert (the MLP of a dense layer when the model is dense)."""
        return self.mlp_parameters(self.ffn)

    @property
    def shared_parameters(self) -> int:
        """The shared expert(s) of one MoE layer and their gate (0 when there are none)."""
        if not self.shared_ffn:
            return 0
        return self.mlp_parameters(self.shared_ffn) + (self.hidden if self.shared_expert_gate else 0)

    @property
    def norm_parameters(self) -> int:
        """Elements of one normalisation layer (scale, and shift for layernorm)."""
        return self.norm_elements(self.hidden)

    @property
    def dense_layer_parameters(self) -> int:
        """One layer with a dense MLP: attention, the MLP, its :attr:`layer_norms` norms."""
        width = self.dense_ffn or self.ffn
        return (self.attention_parameters + self.mlp_parameters(width)
                + self.layer_norms * self.norm_parameters)

    @property
    def moe_layer_parameters(self) -> int:
        """One MoE layer: attention, every routed expert, the router, shared experts, its
        norms (0 for a dense model)."""
        if not self.is_moe:
            return 0
        return (self.attention_parameters + self.experts * self.expert_parameters
                + self.hidden * self.experts + self.shared_parameters
                + self.layer_norms * self.norm_parameters)

    @property
    def embedding_parameters(self) -> int:
        """Token embedding, learned positions, the embedding norm if any, the LM head
        unless tied to the embedding, and its bias if any (:attr:`lm_head_bias`)."""
        head = 0 if self.tied_embeddings else self.vocab * self.hidden
        norm = self.norm_parameters if self.embedding_norm else 0
        bias = self.vocab if self.lm_head_bias else 0
        return (self.vocab + self.learned_positions) * self.hidden + head + norm + bias

    @property
    def token_parameters(self) -> int:
        """The token embedding, learned positions and the LM head unless tied, with the
        head's bias (:attr:`lm_head_bias`): the tensors stored in ``embedding_dtype``, as
        :mod:`compute.memory` holds them."""
        head = 0 if self.tied_embeddings else self.vocab * self.hidden
        bias = self.vocab if self.lm_head_bias else 0
        return (self.vocab + self.learned_positions) * self.hidden + head + bias

    @property
    def parameters(self) -> int:
        """Total parameters (every expert counted)."""
        dense = self.layers - self.moe_layers
        return (dense * self.dense_layer_parameters + self.moe_layers * self.moe_layer_parameters
                + self.embedding_parameters + self.norm_parameters)

    @property
    def non_mlp_parameters(self) -> int:
        """Parameters outside the MLPs (attention, norms, routers, embeddings, the LM head,
        the shared experts' gates): those stored in ``weight_dtype`` when the MLPs use
        ``mlp_weight_dtype``."""
        mlp = (self.layers - self.moe_layers) * self.mlp_parameters(self.dense_ffn or self.ffn)
        if self.is_moe:
            mlp += self.moe_layers * (self.experts * self.expert_parameters
                                      + (self.mlp_parameters(self.shared_ffn)
                                         if self.shared_ffn else 0))
        return self.parameters - mlp

    @property
    def active_parameters(self) -> int:
        """Parameters one token passes through (only its routed experts; embeddings, the LM
        head, shared experts and routers included)."""
        idle = (self.experts - self.experts_per_token) * self.expert_parameters
        return self.parameters - self.moe_layers * idle
