"""HuggingFace ``config.json`` files read offline into a :class:`~compute.model_spec.ModelSpec`:
where each figure is found in each family's config (:data:`HF_ALIASES`, :data:`HF_FAMILIES`),
mixture-of-experts and latent-attention layouts, sliding and chunked windows; the
``quantization_config`` of a quantized checkpoint is read by :mod:`compute.hf_quant`, a
vision-language wrapper's vision tower counted by :mod:`compute.hf_vision`.
:func:`compute.models.get_model` reads a ``.json`` path through it.
"""

from __future__ import annotations

from os import PathLike
from pathlib import Path
from typing import Any

from compute import validate
from compute.config_files import parse_table, read_text
from compute.errors import UserError, known
from compute.hf_quant import read_quantization, with_sidecar
from compute.hf_vision import vision_tower
from compute.model_spec import ModelSpec, _model_from_entry

__all__ = ["HF_ALIASES", "HF_FAMILIES", "load_hf_config"]

# ---- HuggingFace config.json -----------------------------------------------------------------

#: Where each number is found in a HuggingFace ``config.json``: the keys of each family, the
#: first present and not null wins (GPT-2 ``n_*``, BLOOM ``n_layer``/``n_head``, Falcon
#: ``num_kv_heads``/``n_head_kv``, Llama/Mistral/Qwen2 ``num_*``, Mixtral
#: ``num_local_experts``, Qwen-MoE ``num_experts``, DeepSeek ``n_routed_experts``).
HF_ALIASES: dict[str, tuple[str, ...]] = {
    "layers": ("num_hidden_layers", "n_layer", "num_layers", "n_layers"),
    "hidden": ("hidden_size", "n_embd", "n_embed", "d_model"),
    "heads": ("num_attention_heads", "n_head", "n_heads", "num_heads"),  # GPT-Neo: num_heads
    # ChatGLM / GLM-4 (chatglm): multi_query_group_num, read only with multi_query_attention
    "kv_heads": ("num_key_value_heads", "num_kv_heads", "n_head_kv", "kv_n_heads",
                 "multi_query_group_num"),
    # Hunyuan: attention_head_dim; ChatGLM: kv_channels (its heads' width, Q's too)
    "head_dim": ("head_dim", "attention_head_dim", "kv_channels"),
    "ffn": ("intermediate_size", "n_inner", "ffn_hidden_size", "ffn_dim"),  # dense MLP
    # the embedding's rows: ChatGLM builds its embedding and output layer padded_vocab_size
    # wide, whatever vocab_size says
    "vocab": ("padded_vocab_size", "vocab_size"),
    "max_context": ("max_position_embeddings", "n_positions", "n_ctx", "seq_length",
                    "max_seq_len"),
    # only families with learned positions (GPT-Neo: max_position_embeddings)
    "learned_positions": ("n_positions", "max_position_embeddings"),
    "tied_embeddings": ("tie_word_embeddings",),
    "experts": ("num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts"),
    # gpt-oss: both of the first two; DBRX: moe_top_k
    # ERNIE-4.5: moe_k
    "experts_per_token": ("num_experts_per_tok", "experts_per_token", "moe_top_k", "moe_k",
                          "moe_topk"),                  # Hunyuan: moe_topk
    "expert_ffn": ("moe_intermediate_size",),           # per routed expert (Mixtral: ffn)
    # DeepSeek-V2/V3 group-limited routing (n_group 8, topk_group 4 in V3)
    "expert_groups": ("n_group",),
    "groups_per_token": ("topk_group",),
    # Qwen-MoE: all shared experts; GraniteMoeHybrid: its shared_mlp, beside any experts (with
    # none, num_local_experts 0, that MLP alone: the dense MLP)
    "shared_ffn": ("shared_expert_intermediate_size", "shared_intermediate_size"),
    # DeepSeek, ERNIE-4.5: n x moe_intermediate_size
    # (Hunyuan: num_shared_expert, with use_mixed_mlp_moe)
    # (Ling / bailing_moe: num_shared_experts)
    "shared_experts": ("n_shared_experts", "moe_num_shared_experts", "num_shared_expert",
                       "num_shared_experts"),
    "first_dense": ("first_k_dense_replace",),           # DeepSeek, GLM-4.5: leading dense
    # every k-th layer is MoE (Llama-4 Maverick: interleave_moe_layer_step 2)
    # (ERNIE-4.5: moe_layer_interval)
    # (Snowflake Arctic: moe_layer_frequency)
    "moe_every": ("moe_layer_freq", "decoder_sparse_step", "interleave_moe_layer_step",
                  "moe_layer_interval", "moe_layer_frequency"),
    "moe_list": ("moe_layers",),                         # Llama-4: the MoE layers' indices
    "dense_mlp_ffn": ("intermediate_size_mlp",),         # Llama-4: its dense layers' MLP
    "dense_only": ("mlp_only_layers",),                  # Qwen-MoE: layers kept dense
    # DeepSeek-V3/R1, GLM-4.5: multi-token-prediction modules (used by MTP decode only)
    "mtp_modules": ("num_nextn_predict_layers",),
    "residual_mlp": ("use_residual",),                  # Arctic's dense residual MLP
    # Grok-2: a dense MLP intermediate_size wide beside the experts on every layer, its output
    # averaged with theirs (SGLang's Grok1DecoderLayer: (mlp(x) + moe(x)) / sqrt(2))
    "residual_moe": ("residual_moe",),
    "kv_lora_rank": ("kv_lora_rank",),
    "q_lora_rank": ("q_lora_rank",),
    "qk_nope_head_dim": ("qk_nope_head_dim",),
    "qk_rope_head_dim": ("qk_rope_head_dim",),
    "v_head_dim": ("v_head_dim",),
    # Falcon: bias; StarCoder2: use_bias; ChatGLM: add_bias_linear; OPT: enable_bias:
    # every linear layer
    "bias": ("bias", "use_bias", "add_bias_linear", "enable_bias"),
    # Llama family: Q, K, V (and O); ChatGLM: add_qkv_bias (its fused Q, K, V); StableLM:
    # use_qkv_bias
    "attention_bias": ("attention_bias", "add_qkv_bias", "use_qkv_bias"),
    "sliding_window": ("sliding_window",),              # tokens a windowed layer attends to
    "window_pattern": ("sliding_window_pattern", "_sliding_window_pattern"),  # Gemma-3
    "max_window_layers": ("max_window_layers",),        # Qwen2: the first ones are full
    "attention_chunk": ("attention_chunk_size",),       # Llama-4: chunked local attention
    # Cohere's own key (Cohere2 configs: Command R7B, Command A, Aya; true in every published
    # one): whether the MLP is gated (SwiGLU); where given it decides, in any family
    "gated_mlp": ("use_gated_activation",),
}

#: HF transformers' Gemma3TextConfig defaults for keys Google's config.json files omit
#: (google/gemma-3-4b-it's text_config names only hidden_size, intermediate_size,
#: num_hidden_layers and sliding_window: 8 heads, 4 KV heads of 256 are these defaults).
_GEMMA3 = {"vocab_size": 262_208, "max_position_embeddings": 131_072, "hidden_size": 2304,
           "intermediate_size": 9216, "num_hidden_layers": 26, "num_attention_heads": 8,
           "num_key_value_heads": 4, "head_dim": 256, "sliding_window": 4096}

#: What each ``model_type`` builds where its config.json does not say (the defaults of the
#: family's code in HF transformers): MLP gating, norm, biases, tied embeddings (HF's default
#: for configs that omit the key), learned positions, an embedding norm.
HF_FAMILIES: dict[str, dict] = {
    "gpt2": dict(gated_mlp=False, norm="layernorm", bias=True, tied_embeddings=True,
                 learned_positions=True),
    # GPT-BigCode (StarCoder, SantaCoder, WizardCoder; HF transformers models/gpt_bigcode):
    # GPT-2's layers and learned positions, but multi-query attention unless multi_query is
    # false (GPTBigCodeConfig's default true): one K and one V head of n_embd / n_head
    "gpt_bigcode": dict(gated_mlp=False, norm="layernorm", bias=True, tied_embeddings=True,
                        learned_positions=True, multi_query=True),
    "bloom": dict(gated_mlp=False, norm="layernorm", bias=True, tied_embeddings=True,
                  embedding_norm=True),
    # Falcon (HF models/falcon): multi-query attention unless multi_query is false
    # (FalconConfig's default true) or new_decoder_architecture is (its num_kv_heads); its
    # norms a layer: _falcon_norms
    "falcon": dict(gated_mlp=False, norm="layernorm", tied_embeddings=True, multi_query=True),
    # GPT-NeoX / Pythia: rotary (no position table), biases on every linear layer,
    # layernorms, an untied LM head (HF GPTNeoXConfig); GPT-J: rotary too (its n_positions
    # is the context, not a table), untied, one LayerNorm a layer (HF GPTJBlock's ln_1:
    # attention and MLP in parallel); its biases are on fc_in, fc_out and the LM head only,
    # read as biases on every linear layer (Q, K, V and O's 4 x hidden a layer more, the LM
    # head's vocab less)
    "gpt_neox": dict(gated_mlp=False, norm="layernorm", bias=True),
    "gptj": dict(gated_mlp=False, norm="layernorm", bias=True, layer_norms=1),
    "llama": {}, "mistral": {}, "mixtral": {},
    "qwen2": dict(qkv_bias=True),
    # Qwen2-VL / Qwen2.5-VL (HF models/qwen2_vl, qwen2_5_vl): Qwen2's language model (biases
    # on Q, K and V) in a flat config beside its vision_config (the tower: compute.hf_vision)
    "qwen2_vl": dict(qkv_bias=True), "qwen2_5_vl": dict(qkv_bias=True),
    "qwen2_moe": dict(qkv_bias=True, shared_expert_gate=True),
    "deepseek_v2": {}, "deepseek_v3": {},
    # GemmaConfig / Gemma2Config default tie_word_embeddings=True and Google's config.json
    # files omit the key (HF transformers models/gemma*/configuration_gemma*.py)
    "gemma": dict(tied_embeddings=True),
    # Gemma-2 (HF Gemma2DecoderLayer): four RMSNorms a layer, before and after attention
    # and the MLP
    "gemma2": dict(tied_embeddings=True, window="alternate", layer_norms=4),
    # Gemma-3 (HF transformers models/gemma3): GeGLU, tied embeddings, 5 windowed layers of
    # every 6; "gemma3" is the multimodal wrapper whose text model is in text_config
    # Google's gemma-3-4b/12b/27b config.json files leave vocab_size and
    # max_position_embeddings out of their text_config: Gemma3TextConfig's defaults,
    # 262,208 and 131,072. Gemma-2's four norms a layer, and Gemma3Attention's q_norm and
    # k_norm, an RMSNorm over head_dim each
    "gemma3_text": dict(tied_embeddings=True, window="pattern", config_defaults=_GEMMA3,
                        layer_norms=4, qk_norm="head"),
    "gemma3": dict(tied_embeddings=True, window="pattern", config_defaults=_GEMMA3,
                   layer_norms=4, qk_norm="head"),
    # Qwen3 / Qwen3-MoE (HF models/qwen3, qwen3_moe): Qwen3Attention's q_norm and k_norm, an
    # RMSNorm over head_dim each (no Q/K/V biases)
    "qwen3": dict(qk_norm="head"), "qwen3_moe": dict(qk_norm="head"),
    # OLMo-2 and OLMoE (HF models/olmo2, olmoe): SwiGLU; q_norm and k_norm RMSNorms over the
    # whole query and key widths, heads x head_dim and kv_heads x head_dim
    "olmo2": dict(qk_norm="heads"), "olmoe": dict(qk_norm="heads"),
    # Cohere Command-R (cohere) and Command R7B / Command A (cohere2; HF transformers
    # models/cohere*/configuration_cohere*.py): tie_word_embeddings defaults to true and the
    # published config.json files leave it out; Cohere2Config windows all but every
    # sliding_window_pattern-th layer (default 4) when layer_types is absent. Their single
    # weight-only LayerNorm per layer (parallel attention and MLP: one scale, as an RMSNorm);
    # Command-R's use_qk_norm (CohereConfig's default false; command-r-plus true) adds
    # per-head LayerNorm scales on Q and K, (heads + kv_heads) x head_dim a layer.
    # The MLP is gated (HF CohereMLP / Cohere2MLP: gate, up and down projections; the
    # Command R configs give no key for it), unless the config's use_gated_activation
    # (Cohere2 configs carry it, true) says false: HF_ALIASES["gated_mlp"]
    "cohere": dict(tied_embeddings=True, layer_norms=1, qk_norm="heads",
                   qk_norm_key="use_qk_norm"),
    "cohere2": dict(tied_embeddings=True, window="pattern", window_every=4, layer_norms=1),
    # gpt-oss (HF transformers models/gpt_oss): biases on Q, K, V and O (attention_bias
    # true), on every expert's gate_up and down projections and on the router; SwiGLU
    # with a clamp; attention sinks (one learned logit per head and layer, 64 x 36 = 2,304
    # parameters in gpt-oss-120b, and one more softmax term: left out); sliding-window and
    # full layers alternate through layer_types
    "gpt_oss": dict(bias=True),
    # Grok-1 (xAI's JAX release, as ported to HF's remote Grok1ModelForCausalLM): 8 experts,
    # each a gated GELU MLP (linear, linear_v, linear_1: three matrices) intermediate_size
    # wide; the config names no activation, so the family says gated (the base's default);
    # four RMSNorms a layer, before and after attention and the MoE (Grok-2 the same, in
    # SGLang's Grok1DecoderLayer)
    "grok-1": dict(layer_norms=4),
    # Granite-4.0 (HF models/granitemoehybrid): Mamba-2 and attention layers as layer_types
    # lists them ("mamba" refused, "attention" read as full attention: granite-4.0-micro is
    # all attention); each layer's MLP is shared_mlp (shared_intermediate_size wide, SwiGLU)
    # beside num_local_experts routed experts, if any; tied embeddings
    "granitemoehybrid": dict(tied_embeddings=True),
    # Llama-4 (HF transformers models/llama4, Llama4TextConfig and Llama4TextMoe): every
    # MoE layer adds to its routed experts one shared expert as wide as a routed one
    # (intermediate_size); the dense layers of Maverick (interleave_moe_layer_step 2) are
    # intermediate_size_mlp wide; chunked local attention (attention_chunk_size, default
    # 8192) on the RoPE layers, full attention on the NoPE ones (no_rope_layers 0, by
    # default every no_rope_layer_interval-th = 4th layer); its q/k norm (use_qk_norm) is
    # an L2 norm without weights; "llama4" is the multimodal wrapper (text_config), whose
    # vision encoder, adapter and projector compute.hf_vision counts
    "llama4_text": dict(llama4=True), "llama4": dict(llama4=True),
    # Phi-3.5-MoE (HF transformers models/phimoe): LayerNorm (scale and shift), Mixtral-style
    # experts; its attention_bias also puts a bias on O and lm_head_bias one on the LM head
    # (4,096 x 32 + 32,064 parameters in Phi-3.5-MoE: left out)
    "phimoe": dict(norm="layernorm"),
    # DBRX (HF transformers models/dbrx): the shape is split into attn_config (kv_n_heads)
    # and ffn_config (ffn_hidden_size, moe_num_experts, moe_top_k), read flattened; GLU
    # experts; LayerNorms without bias (a scale only, counted as an RMSNorm's); untied
    "dbrx": {},
    # MiniMax-M2 (HF transformers models/minimax_m2): Mixtral-style experts, each
    # intermediate_size wide, no shared expert; attn_type_list all 1 (softmax attention on
    # every layer); its Q/K RMSNorms over the heads' whole widths where use_qk_norm (HF
    # MiniMaxM2Attention: heads x head_dim + kv_heads x head_dim, 7,168 a layer); the 3
    # multi-token-prediction modules (num_mtp_modules) not counted
    "minimax_m2": dict(qk_norm="heads", qk_norm_key="use_qk_norm"),
    # Hunyuan (HF models/hunyuan_v1_moe, hunyuan_v1_dense; Tencent's remote "hunyuan"):
    # Llama-style, with query_layernorm and key_layernorm RMSNorms over head_dim: always in
    # HF's HunYuanMoEV1Attention / HunYuanDenseV1Attention, where use_qk_norm in the remote
    # code (the published configs set it true)
    "hunyuan": dict(qk_norm="head", qk_norm_key="use_qk_norm"),
    "hunyuan_v1_moe": dict(qk_norm="head"), "hunyuan_v1_dense": dict(qk_norm="head"),
    # ERNIE-4.5 MoE (HF transformers models/ernie4_5_moe): SwiGLU experts
    # moe_intermediate_size wide, moe_num_shared_experts shared ones as wide, MoE on the
    # layers from moe_layer_start_index to moe_layer_end_index (null: the last)
    "ernie4_5": {}, "ernie4_5_moe": {},
    # ChatGLM2/3 and GLM-4 (THUDM's chatglm code, model_type chatglm): SwiGLU (dense_h_to_4h
    # is 2 x ffn_hidden_size wide, gate and up, whatever the config's activation); Q of
    # num_attention_heads x kv_channels, K and V of multi_query_group_num x kv_channels when
    # multi_query_attention is true (ChatGLMConfig's default false: as many as Q's);
    # RMSNorm unless its rmsnorm key is false; a separate output_layer
    "chatglm": dict(chatglm=True),
    # StarCoder2 (HF transformers models/starcoder2): a GELU MLP (c_fc, c_proj), LayerNorms
    # with bias, biases on every linear layer unless use_bias is false; Starcoder2Config
    # leaves tie_word_embeddings to PretrainedConfig's default, true (starcoder2-3b and -7b
    # omit the key, starcoder2-15b says false)
    "starcoder2": dict(gated_mlp=False, norm="layernorm", bias=True, tied_embeddings=True),
    # Snowflake Arctic (remote code modeling_arctic.py, ArcticDecoderLayer): with use_residual
    # every MoE layer adds to its routed experts a dense SwiGLU "residual MLP" as wide as the
    # hidden size (ArcticMLP with is_residual_mlp), run on every token: read as a shared
    # expert of hidden columns (its own RMSNorm, hidden elements a layer, left out)
    "arctic": dict(residual_mlp=True),
    # Qwen (v1; remote code modeling_qwen.py, QWenMLP): SwiGLU whose w1 and w2 are each
    # intermediate_size / 2 wide (the config gives the two together), biases on c_attn (Q, K
    # and V) only, no hidden_act key
    "qwen": dict(qkv_bias=True, ffn_halved=True),
    # Phi-1 / 1.5 / 2 (HF transformers models/phi): biases on Q, K, V, dense, fc1 and fc2, a
    # GELU MLP, LayerNorms (one per layer, attention and MLP in parallel; and a bias on the
    # LM head, vocab elements: left out)
    "phi": dict(gated_mlp=False, norm="layernorm", bias=True, layer_norms=1),
    # StableLM (HF models/stablelm): LayerNorms with bias; use_qkv_bias puts biases on Q, K, V
    "stablelm": dict(norm="layernorm"),
    # Nemotron-4 / Minitron (HF models/nemotron): a squared-ReLU MLP without gate, LayerNorm1P
    # (scale and shift)
    "nemotron": dict(gated_mlp=False, norm="layernorm"),
    # OPT (HF transformers models/opt): a ReLU MLP of ffn_dim, biases on every linear layer
    # (enable_bias, default true), LayerNorms, a learned position table of
    # max_position_embeddings (OPTConfig's default 2048) + 2 rows
    # (OPTLearnedPositionalEmbedding's offset), the LM head tied to the embedding (OPTConfig
    # leaves tie_word_embeddings to its default, true)
    "opt": dict(gated_mlp=False, norm="layernorm", bias=True, tied_embeddings=True,
                learned_positions=True, position_offset=2,
                config_defaults={"max_position_embeddings": 2048}),
    # GPT-Neo (HF transformers models/gpt_neo): GPT-2's layers (its Q, K and V have no bias:
    # 3 x hidden a layer counted too), a position table of max_position_embeddings rows,
    # tied; attention_layers (or attention_types, expanded as HF does) makes its "local"
    # layers attend to the last window_size tokens (GPT-Neo 1.3B / 2.7B: every other layer,
    # 256): read as a layer_types list
    "gpt_neo": dict(gated_mlp=False, norm="layernorm", bias=True, tied_embeddings=True,
                    learned_positions=True),
}
#: Model types whose layers are not the decoder-only attention + MLP blocks netmodel
#: models (what each is instead): refused with one line rather than read Llama-style.
HF_UNMODELLED: dict[str, str] = {
    **dict.fromkeys(("qwen3_next", "kimi_linear"),
                    "a hybrid of linear attention (Gated DeltaNet) and full attention layers"),
    **dict.fromkeys(("jamba", "zamba", "zamba2", "bamba", "falcon_h1", "nemotron_h",
                     "plamo2"),
                    "a hybrid of Mamba state-space and attention layers"),
    **dict.fromkeys(("mamba", "mamba2", "falcon_mamba"), "a Mamba state-space model"),
    **dict.fromkeys(("rwkv", "rwkv5", "rwkv6", "rwkv7"), "an RWKV recurrent model"),
    **dict.fromkeys(("minimax", "minimax_m1", "minimax_text_01"),
                    "a hybrid of lightning (linear) attention and softmax attention layers"),
    **dict.fromkeys(("recurrent_gemma", "xlstm", "lfm2", "lfm2_moe"),
                    "a recurrent or convolution hybrid"),
    **dict.fromkeys(("t5", "mt5", "umt5", "longt5", "switch_transformers", "bart", "mbart",
                     "pegasus", "marian", "whisper", "encoder-decoder", "t5gemma"),
                    "an encoder-decoder model"),
    "mpt": "a model whose shape is in nested attn_config / ffn_config tables, not read",
    # Phi-3-small (microsoft/Phi-3-small-*, remote code Phi3SmallForCausalLM):
    # block-sparse attention (local blocks and vertical strides) on all layers but every
    # dense_attention_every_n_layers-th, a GEGELU MLP ff_intermediate_size wide, muP scales
    "phi3small": "a model with block-sparse attention on all layers but every "
                 "dense_attention_every_n_layers-th (blocksparse_* keys)",
    # DeepSeek-V3.2-Exp, GLM-5: a lightning indexer (its own projections and a key cache of
    # index_head_dim per token and layer) picks index_topk tokens each query attends to
    **dict.fromkeys(("deepseek_v32", "glm_moe_dsa"),
                    "a model with DeepSeek Sparse Attention (a lightning indexer picks "
                    "index_topk tokens per query: its weights, key cache and top-k reads are "
                    "not modelled)"),
    # Llama-3.2-Vision (HF models/mllama): its text model interleaves cross-attention layers
    # (cross_attention_layers, 8 of 40 in the 11B) that attend to the image tokens, keeping
    # a KV cache per image, not per token
    **dict.fromkeys(("mllama", "mllama_text_model"),
                    "a vision-language model whose text layers include cross-attention layers "
                    "(cross_attention_layers)"),
    # Baichuan-M1: a short convolution over K and V (conv_window) and windows on the layers
    # sliding_window_layers lists
    "baichuan_m1": "a model with a convolution over keys and values (conv_window) and "
                   "windows on the layers sliding_window_layers lists",
    # StepFun Step3 (remote code Step3vAttention): multi-matrix factorization attention, one
    # KV head of head_dim and queries through a share_q_dim low-rank projection; MoE only on
    # the layers moe_layers_enum lists, beside a share_expert_dim shared expert
    **dict.fromkeys(("step3_text", "step3_vl"),
                    "Step3, with multi-matrix factorization attention (one KV head, queries "
                    "through share_q_dim) and MoE on the layers moe_layers_enum lists"),
    # NVIDIA's Llama-Nemotron Super / Ultra (DeciLM, remote code): per-layer block_configs
    # whose attention (n_heads_in_group) and MLP (ffn_mult) differ from layer to layer, or are
    # skipped (no_op) or replaced by one linear layer (replace_with_linear)
    **dict.fromkeys(("nemotron-nas", "deci", "deci_lm", "decilm"),
                    "a model whose layers differ one from another (block_configs: per-layer "
                    "n_heads_in_group, ffn_mult, no_op, replace_with_linear)"),
    # Meituan LongCat-Flash (HF models/longcat_flash): each of its num_layers holds two
    # attention blocks and two dense MLPs beside one MoE whose zero_expert_num "zero
    # experts" pass the token through, so the experts a token computes vary
    "longcat_flash": "LongCat-Flash, with two attention blocks and two MLPs a layer and "
                     "zero-computation experts (zero_expert_num)",
    # JetMoE (HF models/jetmoe): mixture of attention heads (MoA: num_local_experts query
    # and output projections, num_experts_per_tok of them a token) beside its MoE MLP
    "jetmoe": "a model with a mixture of attention experts (MoA: num_local_experts query and "
              "output projections, num_experts_per_tok a token)",
    # Gemma-3n: per-layer embeddings, AltUp streams, LAuReL blocks, KV shared across layers,
    # per-layer MLP widths
    **dict.fromkeys(("gemma3n", "gemma3n_text"),
                    "Gemma-3n, with per-layer embeddings, AltUp, LAuReL and a KV cache shared "
                    "between layers"),
}
#: Config keys (exact, or prefixes ending in "_") of structures the reader does not model:
#: state-space, linear-attention and hybrid-layout settings; MiniCPM4's sparse_config (InfLLM
#: v2 sparse attention: past dense_len tokens each query attends to topk blocks of block_size
#: keys chosen by a block score, plus init_blocks and a window_size window; the card's
#: config.json enables it by adding the key).
_UNMODELLED_KEYS = ("ssm_", "mamba_", "linear_", "attn_type_list", "hybrid_override_pattern",
                    "layers_block_type", "attn_layer_period", "block_types", "ffn_config",
                    "attn_config", "index_topk", "num_kv_shared_layers", "altup_num_inputs",
                    "use_cla", "blocksparse_", "dense_attention_every_n_layers",
                    "cross_attention_layers", "sliding_window_layers", "conv_window",
                    "share_q_dim", "moe_layers_enum", "block_configs", "zero_expert_num",
                    "sparse_config")
_FAMILY_ALIASES = {"refinedweb": "falcon", "refinedwebmodel": "falcon", "rw": "falcon"}
#: The family of a config whose model_type is not one, by its first ``architectures`` entry:
#: Grok-2 (xai-org/grok-2) says model_type "git" and Grok1ForCausalLM (SGLang's grok.py,
#: Grok-1's layers with residual_moe).
_ARCHITECTURE_FAMILIES = {"Grok1ForCausalLM": "grok-1", "Grok1ModelForCausalLM": "grok-1"}
# Other model types whose MLP is gated (SwiGLU / GeGLU), read Llama-style.
_GATED_TYPES = {"phi3", "olmo",
                "granite", "granitemoe", "internlm2", "yi", "deepseek"}


def _softmax_only(key: str, value: Any) -> bool:
    """MiniMax's ``attn_type_list`` of 1s only: softmax attention on every layer (MiniMax-M2),
    the layout read; a 0 (lightning attention, MiniMax-Text-01) is refused."""
    return key == "attn_type_list" and isinstance(value, list) and bool(value) and all(
        v == 1 and not isinstance(v, bool) for v in value)
#: HuggingFace ``torch_dtype`` values (torch's dtype names and their aliases) -> netmodel's
#: dtypes; any other value is refused with this list.
_HF_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32",
              "float": "fp32", "float64": "fp32", "double": "fp32", "float8_e4m3fn": "fp8",
              "float8_e4m3fnuz": "fp8", "float8_e5m2": "fp8", "float8_e5m2fnuz": "fp8"}
#: Architecture defaults of a Llama-like model, the base every family entry changes.
_BASE_FAMILY = dict(gated_mlp=True, norm="rmsnorm", bias=False, qkv_bias=False,
                    tied_embeddings=False, learned_positions=False, embedding_norm=False,
                    shared_expert_gate=False, window="all", window_every=6, llama4=False,
                    chatglm=False, multi_query=False, residual_mlp=False, ffn_halved=False,
                    position_offset=0, config_defaults={}, layer_norms=2, qk_norm="",
                    qk_norm_key="")
#: Entries of a config.json's ``layer_types`` the reader models (HF transformers' names;
#: GraniteMoeHybrid calls a full-attention layer "attention").
_LAYER_TYPES = ("full_attention", "sliding_attention", "attention")
#: ``layer_types`` entries of layers that are not attention, refused by name (GraniteMoeHybrid:
#: "mamba"), with the key prefix of their settings, inert where layer_types lists no such
#: layer (granite-4.0-micro's config carries mamba_* keys and no Mamba layer). Other entries
#: (Qwen3-Next's "linear_attention") are refused by :func:`_layer_types`.
_UNMODELLED_LAYERS = {"mamba": ("Mamba-2 state-space", "mamba_")}
#: ... and of Llama-4's, whose local layers are chunked.
_LLAMA4_LAYER_TYPES = ("full_attention", "chunked_attention")
#: Model types whose ``sliding_window`` applies only when ``use_sliding_window`` is true
#: (HF Qwen2Config and its kin default it to false; their configs name a window anyway).
_WINDOW_OPT_IN = {"qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "qwen2_vl", "qwen2_5_vl"}


class _Config:
    """A config.json being read: ``get(field)`` follows :data:`HF_ALIASES` and checks the
    value's type and range, naming the config key in any error."""

    def __init__(self, cfg: dict, where: str):
        self.cfg, self.where = cfg, where

    def key(self, field: str) -> str | None:
        return next((k for k in HF_ALIASES[field] if self.cfg.get(k) is not None), None)

    def has(self, field: str) -> bool:
        return self.key(field) is not None

    def raw(self, field: str) -> Any:
        k = self.key(field)
        return None if k is None else self.cfg[k]

    def count(self, field: str, *, limit: str | None = None, default: int | None = None,
              minimum: int | None = None) -> int:
        """An integer from the config, checked against the range of ``limit`` (default
        ``field``) in limits.toml; ``default`` when absent (required when it is None)."""
        k = self.key(field)
        if k is None:
            if default is None:
                keys = " or ".join(map(repr, HF_ALIASES[field]))
                raise UserError(f"{self.where}: config.json lacks {keys}")
            return default
        r = validate.limits("model")[limit or field]
        lo = r.minimum if minimum is None else minimum
        return validate.number(self.where, k, self.cfg[k], minimum=lo, maximum=r.maximum,
                               integer=True)

    def flag(self, field: str, default: bool) -> bool:
        k = self.key(field)
        return default if k is None else validate.flag(self.where, k, self.cfg[k])

    def option(self, key: str, default: bool | None) -> bool | None:
        """The true/false config key ``key`` itself (no aliases), checked; ``default`` when
        absent or null."""
        v = self.cfg.get(key)
        return default if v is None else validate.flag(self.where, key, v)

    def text(self, key: str, default: str = "") -> str:
        v = self.cfg.get(key)
        return default if v is None else validate.string(self.where, key, v, max_length=200)


def _architectures(c: _Config) -> list[str]:
    """The config's ``architectures``: HuggingFace writes a list of class names; any other
    shape (a bare string, numbers, nested lists, a table) is refused naming the key, since the
    family of a model type of its own is read from its first entry."""
    arch = c.cfg.get("architectures")
    if arch is None:
        return []
    if not isinstance(arch, list) or not all(isinstance(a, str) for a in arch):
        raise UserError(f"{c.where}: architectures must be a list of class names (strings, "
                        f"e.g. [\"LlamaForCausalLM\"]), got {validate.describe(arch)}")
    return arch


def _hf_family(c: _Config) -> tuple[str, dict]:
    """The model type and its architecture defaults (:data:`HF_FAMILIES`). An unknown type
    whose first ``architectures`` entry names a known architecture
    (:data:`_ARCHITECTURE_FAMILIES`: Grok-2's model_type "git" with Grok1ForCausalLM) takes
    that family's; any other is read GPT-2-style if it has ``n_embd``, else Llama-style,
    with a gated MLP for the gated families and ``silu``/``swish``/``swiglu`` activations."""
    model_type = c.text("model_type").lower()
    model_type = _FAMILY_ALIASES.get(model_type, model_type)
    # a wrapper whose language model's keys sit at its own top level (DeepSeek-OCR's
    # config.json repeats its language_config there): the language model's family
    model_type = _WRAPPED_TEXT_TYPES.get(model_type, model_type)
    if model_type in HF_FAMILIES:
        return model_type, {**_BASE_FAMILY, **HF_FAMILIES[model_type]}
    arch = _architectures(c)
    family = _ARCHITECTURE_FAMILIES.get(arch[0]) if arch else None
    if family is not None:   # a model type of its own naming a known architecture
        return model_type, {**_BASE_FAMILY, **HF_FAMILIES[family]}
    if "n_embd" in c.cfg and model_type not in _GATED_TYPES:
        return model_type, {**_BASE_FAMILY, **HF_FAMILIES["gpt2"]}
    act = (c.text("hidden_act") or c.text("activation_function")).lower()
    gated = model_type in _GATED_TYPES or act in ("silu", "swish", "swiglu")
    return model_type, {**_BASE_FAMILY, "gated_mlp": gated}


#: Activations that name a gated MLP (two input projections, one through the activation,
#: multiplied): Jais's activation_function "swiglu" on a GPT-2-style config (its c_fc, c_fc2
#: and c_proj).
_GATED_ACTIVATIONS = ("swiglu", "geglu")
#: ``position_embedding_type`` values without a learned position table: Jais "alibi",
#: GraniteMoeHybrid "rope" / "nope".
_TABLELESS_POSITIONS = ("alibi", "rope", "rotary", "rope_gptj", "nope")
#: ``position_embedding_type`` values of a learned position table (GPT-2 style).
_TABLE_POSITIONS = ("absolute", "learned")


def _keyed_architecture(c: _Config, fam: dict) -> dict:
    """The family's defaults with what the config's own architectural keys say, in any
    family: ``use_gated_activation`` (Cohere) or a gated activation (``swiglu``) makes the
    MLP gated; a ``position_embedding_type`` of ``alibi``, ``rope`` or ``nope`` means no
    learned position table (a GPT-2-style Jais config keeps ``n_positions`` as its context)."""
    act = (c.text("activation_function") or c.text("hidden_act")).lower()
    gated = c.flag("gated_mlp", fam["gated_mlp"] or act in _GATED_ACTIVATIONS)
    positions = c.text("position_embedding_type").lower()
    if positions and positions not in _TABLELESS_POSITIONS + _TABLE_POSITIONS:
        raise UserError(f"{c.where}: position_embedding_type {positions!r} is unknown; known: "
                        f"{', '.join(_TABLE_POSITIONS)} (a learned table), "
                        f"{', '.join(_TABLELESS_POSITIONS)} (no table)")
    learned = fam["learned_positions"] and positions not in _TABLELESS_POSITIONS
    return {**fam, "gated_mlp": gated, "learned_positions": learned}


def _refuse_unmodelled(c: _Config, model_type: str) -> None:
    """One-line refusal of a model whose layers are not what the reader models: a type of
    :data:`HF_UNMODELLED`, a ``layer_types`` listing layers that are not attention
    (:data:`_UNMODELLED_LAYERS`: GraniteMoeHybrid's "mamba"), an encoder-decoder
    (``is_encoder_decoder``), or keys of state-space, linear-attention or hybrid layouts
    (:data:`_UNMODELLED_KEYS`; those of a layer kind ``layer_types`` does not list are
    inert)."""
    what = HF_UNMODELLED.get(model_type)
    types = c.cfg.get("layer_types")
    types = types if isinstance(types, list) else None
    inert = ()   # settings of a layer kind layer_types does not list
    if types is not None:
        inert = tuple(p for kind, (_, p) in _UNMODELLED_LAYERS.items() if kind not in types)
        kind = next((t for t in types if isinstance(t, str) and t in _UNMODELLED_LAYERS), None)
        if what is None and kind is not None:
            what = (f"a hybrid with {types.count(kind)} {_UNMODELLED_LAYERS[kind][0]} "
                    f"layers of {len(types)} (layer_types entries {kind!r})")
    if what is None and c.option("is_encoder_decoder", False):
        what = "an encoder-decoder model (is_encoder_decoder)"
    if what is None:  # a key set to null, false or empty says the structure is absent
        key = next((k for k, v in c.cfg.items() for p in _UNMODELLED_KEYS
                    if (k.startswith(p) if p.endswith("_") else k == p)
                    and v not in (None, False, [], {}) and not _softmax_only(k, v)
                    and not k.startswith(inert)), None)
        if key is not None:
            what = f"a layout netmodel does not model (its config has {key!r})"
    if what is not None:
        raise UserError(f"{c.where}: model_type {model_type!r} is {what}; netmodel reads "
                        f"decoder-only transformers with full, sliding-window or chunked "
                        f"attention")


def _layer_types(c: _Config, layers: int, allowed: tuple[str, ...] = _LAYER_TYPES
                 ) -> list[str] | None:
    """The config's ``layer_types`` (None when absent), checked: one entry per layer, each
    one of ``allowed`` (linear attention, Qwen3-Next, and others are refused)."""
    types = c.cfg.get("layer_types")
    if types is None:
        return None
    if not isinstance(types, list) or len(types) != layers or not all(
            isinstance(t, str) for t in types):
        raise UserError(f"{c.where}: layer_types must be a list of {layers} strings (one "
                        f"per layer), got {validate.describe(types)}")
    other = next((t for t in types if t not in allowed), None)
    if other is not None:  # linear (Qwen3-Next), ...: not modelled
        raise UserError(f"{c.where}: layer_types entry {validate.describe(other)} is not "
                        f"modelled; known: {known(allowed)}")
    return types


def _layer_flags(c: _Config, key: str, layers: int) -> list[int] | None:
    """A per-layer list of 0/1 (Llama-4 ``no_rope_layers``), or None when absent or empty
    (HF then derives it)."""
    v = c.cfg.get(key)
    if v is None or v == []:
        return None
    if not isinstance(v, list) or len(v) != layers or any(x not in (0, 1) or isinstance(
            x, bool) for x in v):
        raise UserError(f"{c.where}: {key} must be a list of {layers} entries 0 or 1 (one "
                        f"per layer), got {validate.describe(v)}")
    return v


def _chunked_attention(c: _Config, layers: int) -> dict:
    """Llama-4's chunked local attention as model keys (``{}`` when none):
    ``attention_chunk_size`` (HF default 8192; null: none) on the layers that
    ``layer_types`` calls ``chunked_attention``, else those whose ``no_rope_layers`` entry
    is 1 (RoPE layers), else all but every ``no_rope_layer_interval``-th (default 4), as
    HF's Llama4TextConfig derives them."""
    if "attention_chunk_size" in c.cfg and c.cfg["attention_chunk_size"] is None:
        return {}
    chunk = c.count("attention_chunk", limit="sliding_window", default=8192)
    types = _layer_types(c, layers, _LLAMA4_LAYER_TYPES)
    flags = _layer_flags(c, "no_rope_layers", layers)
    if types is not None:
        full = {i for i, t in enumerate(types) if t != "chunked_attention"}
    elif flags is not None:
        full = {i for i, f in enumerate(flags) if not f}
    else:
        every = c.cfg.get("no_rope_layer_interval")
        every = 4 if every is None else validate.number(
            c.where, "no_rope_layer_interval", every, minimum=1, maximum=layers, integer=True)
        full = {i for i in range(layers) if (i + 1) % every == 0}
    k = layers - len(full)
    if chunk == 0 or k == 0:
        return {}
    return {"sliding_window": chunk, "sliding_layers": k, "window_kind": "chunked",
            **_full_layer_step(full, layers)}


def _full_layer_step(full: set[int], layers: int) -> dict:
    """``{"full_layer_step": k}`` when the full-attention layers ``full`` are exactly those
    ``i`` with ``i + 1`` a multiple of ``k`` (HF transformers' rule for gpt-oss and Gemma-2,
    k = 2, Gemma-3's and Cohere2's sliding_window_pattern, Llama-4's no_rope_layer_interval;
    :attr:`~compute.models.ModelSpec.full_layer_step`), else ``{}`` (none, or another
    placement, such as Qwen2's full layers first: taken as spread evenly, which only a
    pipeline's split of the layers sees)."""
    if not full or len(full) == layers:
        return {}
    k = min(full) + 1                   # the first full layer is layer k - 1
    if k >= 2 and full == set(range(k - 1, layers, k)):
        return {"full_layer_step": k}
    return {}


def _moe_layer_set(c: _Config, layers: int) -> set[int]:
    """The MoE layers' indices: DeepSeek's ``first_k_dense_replace`` and ``moe_layer_freq``,
    Qwen-MoE's ``decoder_sparse_step`` and ``mlp_only_layers``, Llama-4's ``moe_layers``
    (indices) or ``interleave_moe_layer_step``."""
    listed = c.raw("moe_list")
    if listed is not None:  # HF: a given list, even empty, is the MoE layers
        c.count("moe_every", limit="layers", default=1)   # unused then, still checked
        if not isinstance(listed, list) or len(listed) > layers:
            raise UserError(f"{c.where}: moe_layers must be a list of at most {layers} layer "
                            f"indices, got {validate.describe(listed)}")
        return {validate.number(c.where, "moe_layers", i, minimum=0, maximum=layers - 1,
                                integer=True) for i in listed}
    first = c.count("first_dense", limit="dense_layers", default=0)
    every = c.count("moe_every", limit="layers", default=1)
    only = c.raw("dense_only") or []
    if not isinstance(only, list) or len(only) > layers:
        raise UserError(f"{c.where}: mlp_only_layers must be a list of at most {layers} layer "
                        f"indices, got {validate.describe(only)}")
    dense = {validate.number(c.where, "mlp_only_layers", i, minimum=0, maximum=layers - 1,
                             integer=True) for i in only}
    if c.key("moe_every") == "moe_layer_interval" or "moe_layer_start_index" in c.cfg:
        # ERNIE-4.5 (HF Ernie4_5_MoeConfig): MoE on layer i when (i + 1) % interval == 0
        # and start <= i <= end (defaults 1 and -1); end null or -1 is the last layer
        start = c.cfg.get("moe_layer_start_index")
        start = 1 if start is None else validate.number(
            c.where, "moe_layer_start_index", start, minimum=0, maximum=layers - 1, integer=True)
        end = c.cfg.get("moe_layer_end_index")
        end = layers - 1 if end is None or end == -1 else validate.number(
            c.where, "moe_layer_end_index", end, minimum=0, maximum=layers - 1, integer=True)
        return {i for i in range(layers) if i not in dense and (i + 1) % every == 0
                and start <= i <= end}
    if c.key("moe_every") in ("decoder_sparse_step", "interleave_moe_layer_step",
                              "moe_layer_frequency"):
        # Qwen-MoE, Llama-4, Arctic: layer i if (i + 1) % step == 0
        return {i for i in range(layers) if i not in dense and (i + 1) % every == 0}
    return {i for i in range(layers) if i >= first and i not in dense and i % every == 0}


def _expert_groups(c: _Config) -> dict:
    """``expert_groups`` and ``groups_per_token`` from DeepSeek's ``n_group`` and
    ``topk_group`` (``{}`` without groups: ``n_group`` absent, null, 0 or 1). Either key,
    when given, is checked even where it does not take effect (Kimi-K2's n_group 1,
    topk_group 1): a whole number, ``topk_group`` at most a given ``n_group`` (a token
    picks that many of the groups; DeepseekV3's router takes the top ``topk_group`` of the
    ``n_group`` group scores), and ``n_group`` > 1 needs ``topk_group``."""
    g = c.count("expert_groups", limit="experts", minimum=0, default=0)
    t = c.count("groups_per_token", limit="experts", minimum=0, default=0)
    if g and t > g:
        raise UserError(f"{c.where}: topk_group {t} exceeds n_group {g}; allowed: 1 to {g} "
                        f"(the groups a token's experts are picked from)")
    if g <= 1:
        return {}
    if not t:
        raise UserError(f"{c.where}: n_group {g} needs topk_group, the groups a token picks "
                        f"its experts from; allowed: 1 to {g}")
    return {"expert_groups": g, "groups_per_token": t}


def _moe_layer_step(moe: set[int], layers: int) -> int:
    """Where the dense layers sit, as :attr:`~compute.models.ModelSpec.moe_layer_step`: 0
    when they are the first layers (first_k_dense_replace, ERNIE-4.5's start index), ``k``
    when exactly every ``k``-th layer is MoE (Llama-4's interleave_moe_layer_step, Qwen-MoE's
    decoder_sparse_step); any other placement (mlp_only_layers in the middle) is taken as
    dense-first, which only a pipeline's split of the layers sees."""
    dense = layers - len(moe)
    if not dense or moe == set(range(dense, layers)):
        return 0
    for k in range(2, layers + 1):
        if moe == {i for i in range(layers) if (i + 1) % k == 0}:
            return k
    return 0


def _sliding_window(c: _Config, model_type: str, fam: dict, layers: int) -> dict:
    """``sliding_window`` and ``sliding_layers`` from a config.json (``{}`` when no layer is
    windowed), as HF transformers builds the layers:

    * ``layer_types`` (newer configs of every family): the ``"sliding_attention"`` entries;
    * Gemma-2: every other layer, starting with the first (21 of 42);
    * Gemma-3, Cohere2 and any config naming a ``sliding_window_pattern``: all but every
      pattern-th layer (default 6, Cohere2 4);
    * Qwen2 / Qwen2-MoE / Qwen3: only with ``use_sliding_window`` true, and then the layers
      from ``max_window_layers`` on;
    * any other family (Mistral, Mixtral, Phi-3, ...): every layer when ``sliding_window`` is
      not null.
    """
    if not c.has("sliding_window"):
        return {}
    use = c.option("use_sliding_window", None)
    if use is False:
        return {}
    if use is None and model_type in _WINDOW_OPT_IN:
        return {}
    window = c.count("sliding_window")
    if window == 0:  # no window, as null (ModelSpec's 0)
        return {}
    types = _layer_types(c, layers)
    if types is not None:
        full = {i for i, t in enumerate(types) if t != "sliding_attention"}
    elif fam["window"] == "alternate":   # Gemma-2: layer i full when i + 1 is even
        full = set(range(1, layers, 2))
    elif fam["window"] == "pattern" or c.has("window_pattern"):
        # Gemma-3, Cohere2, EXAONE-4 and other families naming a sliding_window_pattern:
        # layer i is full attention when (i + 1) % pattern == 0
        every = c.count("window_pattern", limit="layers", default=fam["window_every"])
        full = set(range(every - 1, layers, every))
    elif model_type in _WINDOW_OPT_IN:   # Qwen2: the first max_window_layers are full
        full = set(range(min(layers, c.count("max_window_layers", limit="layers", minimum=0,
                                             default=layers))))
    else:
        full = set()
    k = layers - len(full)
    if k == 0:
        return {}
    return {"sliding_window": window, "sliding_layers": k, **_full_layer_step(full, layers)}


def load_hf_config(path: str | PathLike[str], name: str | None = None) -> ModelSpec:
    """A model from a local HuggingFace ``config.json`` (no network access).

    Keys are found through one alias table, :data:`HF_ALIASES` (GPT-2, BLOOM, Falcon,
    Llama, Mistral, Qwen2, Mixtral, Qwen-MoE and DeepSeek-V2/V3 spell them differently), and
    what a config leaves to its model code comes from :data:`HF_FAMILIES` by ``model_type``:

    * GPT-2 / BLOOM: ``n_inner`` null means ``4 x hidden``; biases on every linear layer,
      layernorm, tied embeddings; GPT-2's ``n_positions`` learned positions; BLOOM's
      embedding layernorm.
    * Falcon: ``new_decoder_architecture`` reads ``num_kv_heads``; otherwise ``multi_query``
      (default true) means one KV head; ``bias`` key; ``ffn_hidden_size`` (default 4 x hidden).
    * Qwen2 / Qwen-MoE: biases on the Q, K and V projections.
    * MoE: ``num_local_experts`` / ``num_experts`` / ``n_routed_experts``,
      ``num_experts_per_tok``, ``moe_intermediate_size`` (per expert; Mixtral uses
      ``intermediate_size``), shared experts (``shared_expert_intermediate_size`` or
      ``n_shared_experts`` x ``moe_intermediate_size``), dense layers
      (``first_k_dense_replace``, ``moe_layer_freq``, ``decoder_sparse_step``,
      ``mlp_only_layers``) whose MLP is ``intermediate_size`` wide.
    * MLA (``kv_lora_rank``, unless ``use_mla`` is false: DeepSeek-VL2-Tiny's plain
      attention): ``head_dim`` = ``qk_nope_head_dim + qk_rope_head_dim``, ``v_head_dim``,
      ``q_lora_rank`` (null: full rank).
    * ``tie_word_embeddings`` when given; otherwise the family's default.

    A float32 checkpoint is taken as served in bf16; an fp8 ``quantization_config`` gives fp8
    weights, or, when its ``modules_to_not_convert`` lists attention modules (Meta's FP8
    Llama-3.1), fp8 MLPs only, less those of the layers it lists. AWQ, GPTQ,
    compressed-tensors and bitsandbytes configs give the linear layers' dtype
    (:mod:`compute.hf_quant`; compressed-tensors w8a8 fp8 or int8 also the GEMMs' compute
    dtype) and keep the embedding and LM head (``embedding_dtype``) in ``torch_dtype``;
    ``mxfp4`` (gpt-oss) stores only the routed experts in MXFP4; ``modelopt`` (in
    config.json, or an ``hf_quant_config.json`` beside it) FP8 or NVFP4; any other method
    is refused. The name defaults to the file's ``_name_or_path``, else its folder's name for
    a ``config.json``, else the file's own name (``llama.json``: ``llama``). Every
    number is checked for type and range (``compute/data/limits.toml``); an error names the
    config key.
    """
    path = Path(path)
    try:
        folder = path.is_dir()
    except OSError:   # a name over the file system's limit: read_text says so in one line
        folder = False
    if folder:
        path = path / "config.json"
    cfg = parse_table(read_text(path, "config.json"), "json", str(path))
    return _hf_from_dict(cfg, path, name)


#: Where a multimodal wrapper keeps its language model: Gemma-3, LLaVA, Llama-4, Mistral-3
#: (text_config), InternVL (llm_config), DeepSeek-VL2 (language_config).
_TEXT_MODEL_KEYS = ("text_config", "llm_config", "language_config")
#: HF transformers' config defaults for keys a wrapper's nested config leaves out (HF writes
#: a sub-config as its differences from its class's defaults: llava-1.5-7b-hf's text_config
#: names no layers): LlamaConfig's (models/llama/configuration_llama.py).
_NESTED_DEFAULTS = {"llama": {"vocab_size": 32000, "hidden_size": 4096,
                              "intermediate_size": 11008, "num_hidden_layers": 32,
                              "num_attention_heads": 32, "max_position_embeddings": 2048}}


#: The language model's ``model_type`` of a wrapper whose nested config names none:
#: DeepSeek-VL2's DeepseekVLV2Config builds its ``language_config`` as a DeepseekV2Config
#: (deepseek_vl2/models/modeling_deepseek_vl_v2.py; DeepSeek-OCR's published
#: language_config gives no model_type).
_WRAPPED_TEXT_TYPES = {"deepseek_vl_v2": "deepseek_v2"}


def _text_model(cfg: dict, where: str) -> tuple[dict, str]:
    """The language model of a config.json and the key it was read from ("" for the file
    itself, whose errors then name it): the file itself, or, for a multimodal wrapper that
    keeps it in one of :data:`_TEXT_MODEL_KEYS` and names no layers at its top level, that
    table, with the wrapper's ``torch_dtype``, ``quantization_config`` and
    ``tie_word_embeddings`` where it gives none and its model type's defaults
    (:data:`_NESTED_DEFAULTS`) for the keys it leaves out. Its vision tower is
    :func:`compute.hf_vision.vision_tower`'s."""
    keys = [k for k in _TEXT_MODEL_KEYS if cfg.get(k) is not None]
    if not keys or any(cfg.get(k) is not None for k in HF_ALIASES["layers"]):
        return cfg, ""
    if len(keys) > 1:   # which is the language model is not ours to guess
        raise UserError(f"{where}: the config holds {' and '.join(keys)}; a "
                        f"wrapper keeps its language model in one of "
                        f"{', '.join(_TEXT_MODEL_KEYS)}")
    key = keys[0]
    text = validate.table(f"{where}: {key}", cfg[key])
    inner = dict(text)
    for k in ("torch_dtype", "dtype", "quantization_config", "tie_word_embeddings"):
        if inner.get(k) is None and cfg.get(k) is not None:
            inner[k] = cfg[k]
    if inner.get("model_type") is None:   # the wrapper's language model type, else its own
        wrapper = str(cfg.get("model_type", "")).lower()
        inner["model_type"] = _WRAPPED_TEXT_TYPES.get(wrapper, cfg.get("model_type"))
    for k, v in _NESTED_DEFAULTS.get(str(inner.get("model_type", "")).lower(), {}).items():
        inner.setdefault(k, v)
    return inner, key


#: HF transformers' DbrxAttentionConfig / DbrxFFNConfig defaults for keys a DBRX config.json
#: leaves out (models/dbrx/configuration_dbrx.py): one KV head, 4 experts, top-1, 3,584 wide.
_DBRX_DEFAULTS = {"kv_n_heads": 1, "moe_num_experts": 4, "moe_top_k": 1,
                  "ffn_hidden_size": 3584}


def _flatten_dbrx(cfg: dict, where: str) -> dict:
    """A DBRX config.json with its ``attn_config`` and ``ffn_config`` tables merged into the
    top level (each key once, their ``model_type`` dropped; the other families' configs are
    returned as they are)."""
    if str(cfg.get("model_type", "")).lower() != "dbrx":
        return cfg
    flat = {k: v for k, v in cfg.items() if k not in ("attn_config", "ffn_config")}
    for table in ("attn_config", "ffn_config"):
        inner = cfg.get(table)
        inner = {} if inner is None else validate.table(f"{where}: {table}", inner)
        inner = {k: v for k, v in inner.items() if k != "model_type"}  # HF writes "" there
        twice = next((k for k in inner if k in flat), None)
        if twice is not None:
            raise UserError(f"{where}: {table}.{twice} is also given at the top level")
        flat.update(inner)
    for key, default in _DBRX_DEFAULTS.items():  # what HF builds where the file is silent
        if flat.get(key) is None:
            flat[key] = default
    return flat


#: Keys Hunyuan's config.json spells per layer (a list of one value per layer); read when
#: every layer has the same value.
_PER_LAYER_KEYS = ("moe_topk", "moe_intermediate_size", "num_shared_expert", "num_experts")


def _uniform_per_layer(cfg: dict, where: str) -> dict:
    """The config with each per-layer list of :data:`_PER_LAYER_KEYS` (Hunyuan-A13B's
    ``moe_topk`` [8] x 32) replaced by its one value; lists whose values differ from layer
    to layer are refused (netmodel's layers are alike). Hunyuan's shared expert exists only
    with ``use_mixed_mlp_moe`` true (HF HunYuanMoEV1)."""
    out = dict(cfg)
    for key in _PER_LAYER_KEYS:
        v = out.get(key)
        if isinstance(v, list):
            if not v or any(x != v[0] or isinstance(x, bool) for x in v):
                raise UserError(f"{where}: {key} must be one value, or the same value for "
                                f"every layer (layers that differ are not modelled), got "
                                f"{validate.describe(v)}")
            layers = out.get("num_hidden_layers")
            if isinstance(layers, int) and not isinstance(layers, bool) and len(v) != layers:
                raise UserError(f"{where}: {key} lists {len(v)} values for "
                                f"{layers} layers (num_hidden_layers): a per-layer list "
                                f"has one value per layer")
            out[key] = v[0]
    mixed = out.get("use_mixed_mlp_moe")
    if mixed is not None and not validate.flag(where, "use_mixed_mlp_moe", mixed):
        out.pop("num_shared_expert", None)
    return out


def _new_decoder(c: _Config) -> bool:
    """Falcon's new decoder architecture (grouped KV heads, two LayerNorms a layer):
    ``new_decoder_architecture``, or RW's ``n_head_kv`` (tiiuae's remote RefinedWeb code for
    Falcon-40B, the layer TGI calls ``FlashRWLargeLayer``, before HF's ``falcon`` configs
    spelled it ``new_decoder_architecture``)."""
    return c.option("new_decoder_architecture", False) or c.key("kv_heads") == "n_head_kv"


def _multi_query(c: _Config) -> bool:
    """Whether a family whose ``multi_query`` defaults to true (Falcon, GPT-BigCode: their HF
    configs') builds one K and one V head: ``multi_query`` (default true) unless the config's
    own KV-head count decides, with Falcon's new decoder architecture (:func:`_new_decoder`).
    Another KV-head key beside a true ``multi_query`` does not make the attention multi-head
    (HF's FalconAttention and GPTBigCodeAttention take one head then)."""
    if _new_decoder(c):
        return False
    return c.option("multi_query", True)


def _falcon_norms(c: _Config) -> int:
    """Falcon's LayerNorms a layer, in HF FalconDecoderLayer's order: two
    (``input_layernorm``, ``post_attention_layernorm``) unless ``parallel_attn`` (default
    true); with it, ``num_ln_in_parallel_attn`` of them (``ln_attn`` and ``ln_mlp`` when 2,
    else one ``input_layernorm``), None meaning 2 under the new decoder architecture
    (:func:`_new_decoder`; Falcon-40B/180B) and 1 otherwise (Falcon-7B)."""
    if not c.option("parallel_attn", True):
        return 2
    n = c.cfg.get("num_ln_in_parallel_attn")
    if n is None:
        return 2 if _new_decoder(c) else 1
    return int(validate.number(c.where, "num_ln_in_parallel_attn", n, minimum=1, maximum=2,
                               integer=True))


def _chatglm_layout(c: _Config, heads: int, fam: dict) -> tuple[int, dict]:
    """ChatGLM's KV heads and norm: ``multi_query_group_num`` KV heads when
    ``multi_query_attention`` is true, else one per query head (ChatGLMConfig's defaults:
    false, 1 group; THUDM's SelfAttention builds K and V of ``kv_channels`` x that many);
    an RMSNorm unless ``rmsnorm`` is false (then a LayerNorm)."""
    kv_heads = c.count("kv_heads", default=1) if c.option("multi_query_attention", False) \
        else heads
    if c.key("kv_heads") not in (None, "multi_query_group_num"):
        kv_heads = c.count("kv_heads")    # a num_key_value_heads of its own decides
    return kv_heads, {**fam, "norm": "rmsnorm" if c.option("rmsnorm", True) else "layernorm"}


#: What each family's HF code builds when its experts key is 0, by ``model_type`` (the one
#: place this is said): the key whose 0 means the dense MLP, GraniteMoeHybrid (``if
#: config.num_local_experts > 0``: granite-4.0-micro's 0) and Qwen-MoE
#: (Qwen2MoeDecoderLayer / Qwen3MoeDecoderLayer: ``config.num_experts > 0 and ...``); or
#: None, a family that builds a routed MoE block on its MoE layers whatever the count
#: (MixtralSparseMoeBlock, PhimoeSparseMoeBlock, OlmoeSparseMoeBlock, DeepseekV2/V3MoE,
#: MiniMaxM2SparseMoeBlock, GptOssMLP, GraniteMoeMoE, DbrxFFN, Llama4TextMoe on its
#: ``moe_layers``: a router onto 0 experts, no dense MLP to fall back on), refused. Any
#: other family reads 0 as dense only where no other key speaks of experts
#: (:data:`_EXPERT_FIELDS`).
_ZERO_EXPERTS: dict[str, str | None] = {
    "granitemoehybrid": "num_local_experts", "qwen2_moe": "num_experts",
    "qwen3_moe": "num_experts",
    **dict.fromkeys(("mixtral", "phimoe", "olmoe", "deepseek_v2", "deepseek_v3", "minimax_m2",
                     "gpt_oss", "granitemoe", "dbrx", "llama4", "llama4_text"), None)}
#: :data:`HF_ALIASES` fields that speak of experts: a config giving one a value other than
#: 0 beside an experts key of 0 (tokens routed, experts sized, shared experts, a list of
#: MoE layers) is malformed, in any family.
_EXPERT_FIELDS = ("experts_per_token", "expert_ffn", "shared_experts", "moe_list")


def _speaks(c: _Config, field: str) -> bool:
    """Whether the config's ``field`` (one of :data:`_EXPERT_FIELDS`) speaks of experts: a
    list that is not empty, or a count other than 0. Anything else is refused naming the
    key (a false, 0.0, -0.0 or '' was read as 0, a NaN or a table as a count)."""
    v = c.raw(field)
    if isinstance(v, list):
        return bool(v)
    if field == "moe_list":   # Llama-4's moe_layers: indices
        raise UserError(f"{c.where}: {c.key(field)} must be a list of layer indices, got "
                        f"{validate.describe(v)}")
    top = validate.limits("model")[_EXPERT_LIMITS[field]].maximum
    return validate.number(c.where, c.key(field), v, minimum=0, maximum=top,
                           integer=True) != 0


#: The limits.toml row bounding each count of :data:`_EXPERT_FIELDS` (``moe_list`` is a list).
_EXPERT_LIMITS = {"experts_per_token": "experts_per_token", "expert_ffn": "ffn",
                  "shared_experts": "experts"}


def _zero_experts(c: _Config, model_type: str) -> int:
    """1 (a dense MLP) for a config whose experts key is 0 where its family's code reads 0
    so (:data:`_ZERO_EXPERTS`), or, in a family the table does not name, where no other
    key speaks of experts (:data:`_EXPERT_FIELDS`); refused in one line otherwise."""
    key = c.key("experts")
    known_type = model_type in _ZERO_EXPERTS
    if known_type and _ZERO_EXPERTS[model_type] == key:
        return 1
    always = known_type and _ZERO_EXPERTS[model_type] is None
    other = next((c.key(f) for f in _EXPERT_FIELDS if c.has(f) and _speaks(c, f)), None)
    if always or other:
        why = (f"its {other} is for experts" if other else
               f"model_type {model_type!r} always builds experts")
        raise UserError(f"{c.where}: {key} is 0 but {why}; a mixture of experts needs "
                        f"{key} >= 2 (a dense model omits {key}, or gives 1)")
    return 1


def _latent_attention(c: _Config) -> bool:
    """Whether the attention is MLA: the config's ``use_mla`` where it gives one (DeepSeek-VL2's
    DeepseekV2 code builds ``LlamaAttention``, heads x hidden / heads Q, K and V, when it is
    false, whatever ``kv_lora_rank`` says: deepseek-vl2-tiny's MHA), else a ``kv_lora_rank``
    that is not null. ``use_mla`` true without a ``kv_lora_rank`` is refused."""
    use = c.option("use_mla", None)
    if use and not c.has("kv_lora_rank"):
        raise UserError(f"{c.where}: use_mla is true but kv_lora_rank is null or absent; "
                        f"allowed: a kv_lora_rank >= 1 (the latent's width), or use_mla "
                        f"false (plain attention)")
    return c.has("kv_lora_rank") if use is None else use


def _refuse_projected_embedding(c: _Config, hidden: int) -> None:
    """A ``word_embed_proj_dim`` other than the hidden size (OPT-350m: the embedding
    projected in and out) is refused, in any family."""
    proj = c.cfg.get("word_embed_proj_dim")
    widest = validate.limits("model")["hidden"].maximum
    if proj is not None and validate.number(c.where, "word_embed_proj_dim", proj, minimum=1,
                                            maximum=widest, integer=True) != hidden:
        raise UserError(f"{c.where}: word_embed_proj_dim {proj} differs from hidden_size "
                        f"{hidden} (an embedding projected in and out, OPT-350m) and is not "
                        f"modelled; allowed: null or {hidden}")


def _gpt_neo_windows(cfg: dict, where: str) -> dict:
    """A GPT-Neo config with its ``attention_layers`` (or ``attention_types``, expanded as
    HF's GPTNeoConfig does: ``[[["global", "local"], 12]]`` is 12 x global, local) written as
    ``layer_types`` and its ``window_size`` (HF default 256) as ``sliding_window``; other
    families' configs are returned as they are."""
    if str(cfg.get("model_type", "")).lower() != "gpt_neo" or cfg.get("layer_types") is not None:
        return cfg
    kinds = cfg.get("attention_layers")
    if kinds is None and cfg.get("attention_types") is not None:
        kinds = []
        types = cfg["attention_types"]
        if not isinstance(types, list) or not all(
                isinstance(t, list) and len(t) == 2 and isinstance(t[0], list)
                and isinstance(t[1], int) and not isinstance(t[1], bool) and 0 <= t[1] <= 10_000
                for t in types):
            raise UserError(f"{where}: attention_types must be a list of [kinds, repeats] "
                            f"pairs, as [[[\"global\", \"local\"], 12]], got "
                            f"{validate.describe(types)}")
        for pattern, repeats in types:
            kinds.extend(pattern * repeats)
    if kinds is None:
        return cfg
    if not isinstance(kinds, list) or any(k not in ("global", "local") for k in kinds):
        raise UserError(f"{where}: attention_layers must list 'global' or 'local' for each "
                        f"layer, got {validate.describe(kinds)}")
    out = {k: v for k, v in cfg.items() if k not in ("attention_layers", "attention_types")}
    out["layer_types"] = ["sliding_attention" if k == "local" else "full_attention"
                          for k in kinds]
    if "local" in kinds:
        out["sliding_window"] = 256 if cfg.get("window_size") is None else cfg["window_size"]
    return out


def _hf_from_dict(cfg, path: Path, name: str | None = None) -> ModelSpec:
    """:func:`load_hf_config` on a parsed config.json read from ``path``."""
    if not isinstance(cfg, dict):
        raise UserError(f"{path}: a HuggingFace config.json must hold a JSON object, got "
                        f"{validate.describe(cfg)}")
    where = str(path)
    cfg = with_sidecar(cfg, path)
    # a checkpoint's config.json is named by its folder; a config saved under another name
    # by that name (two configs of one folder are two models)
    name = name or _Config(cfg, where).text("_name_or_path") or (
        path.parent.name if path.name == "config.json" else "") or path.stem
    top = cfg
    cfg, nested = _text_model(cfg, where)
    where = f"{where}: {nested}" if nested else where   # errors name the nested table
    cfg = _uniform_per_layer(_flatten_dbrx(cfg, where), where)
    cfg = _gpt_neo_windows(cfg, where)
    c = _Config(cfg, where)
    validate.name(where, "model", name)
    model_type, fam = _hf_family(c)
    fam = _keyed_architecture(c, fam)
    _refuse_unmodelled(c, model_type)
    for key, value in fam["config_defaults"].items():  # the family's own defaults
        if cfg.get(key) is None:
            cfg[key] = value

    layers, hidden, heads = c.count("layers"), c.count("hidden"), c.count("heads")
    kv_heads = c.count("kv_heads", default=heads)
    if fam["multi_query"] and _multi_query(c):   # Falcon, GPT-BigCode
        kv_heads = 1
    if fam["chatglm"]:
        kv_heads, fam = _chatglm_layout(c, heads, fam)
    entry: dict = {"layers": layers, "hidden": hidden, "heads": heads, "kv_heads": kv_heads}
    if fam["ffn_halved"]:   # Qwen v1: intermediate_size is both halves of its SwiGLU
        dense_ffn = c.count("ffn") // 2
    elif fam["gated_mlp"]:
        dense_ffn = c.count("ffn")
    else:  # GPT-2, BLOOM, Falcon: n_inner / ffn_hidden_size null means 4 x hidden
        dense_ffn = c.count("ffn", default=4 * hidden)

    # attention: MLA or plain
    if _latent_attention(c):
        rope, nope = c.count("qk_rope_head_dim"), c.count("qk_nope_head_dim", limit="head_dim")
        entry.update(kv_lora_rank=c.count("kv_lora_rank", minimum=1),
                     q_lora_rank=c.count("q_lora_rank", default=0),
                     qk_rope_head_dim=rope, head_dim=nope + rope, kv_heads=heads,
                     v_head_dim=c.count("v_head_dim", default=0))
    elif c.has("head_dim"):
        entry["head_dim"] = c.count("head_dim")

    # MLP: dense, or experts (with shared experts and dense layers)
    experts = c.count("experts", minimum=0, default=1) or _zero_experts(c, model_type)
    entry["experts"] = experts
    if experts > 1:
        entry["experts_per_token"] = c.count("experts_per_token")
        entry["ffn"] = c.count("expert_ffn", limit="ffn") if c.has("expert_ffn") else dense_ffn
        moe_set = _moe_layer_set(c, layers)
        moe = len(moe_set)
        if moe == 0:
            raise UserError(f"{where}: the config names {experts} experts but no layer is a "
                            f"mixture of experts")
        entry["dense_layers"] = layers - moe
        if _moe_layer_step(moe_set, layers):
            entry["moe_layer_step"] = _moe_layer_step(moe_set, layers)
        if entry["dense_layers"]:
            entry["dense_ffn"] = (c.count("dense_mlp_ffn", limit="ffn", default=dense_ffn)
                                  if fam["llama4"] else dense_ffn)
        if fam["llama4"]:  # one shared expert as wide as a routed one (Llama4TextMoe)
            entry["shared_ffn"] = entry["ffn"]
        elif c.has("shared_ffn"):
            entry["shared_ffn"] = c.count("shared_ffn")
        elif c.has("shared_experts"):
            n = c.count("shared_experts", limit="experts", minimum=0)
            entry["shared_ffn"] = n * entry["ffn"]
        elif fam["residual_mlp"] and c.flag("residual_mlp", False):   # Arctic
            entry["shared_ffn"] = hidden
        elif c.flag("residual_moe", False):   # Grok-2: the dense MLP, run on every token
            entry["shared_ffn"] = dense_ffn
        if entry.get("shared_ffn") and fam["shared_expert_gate"]:
            entry["shared_expert_gate"] = True
        entry.update(_expert_groups(c))
    elif c.key("shared_ffn") == "shared_intermediate_size":
        # GraniteMoeHybrid without experts (granite-4.0-micro): its shared_mlp is the MLP
        entry["ffn"] = c.count("shared_ffn", limit="ffn")
    else:
        entry["ffn"] = dense_ffn

    if fam["llama4"]:
        entry.update(_chunked_attention(c, layers))
    else:
        entry.update(_sliding_window(c, model_type, fam, layers))
    _layer_types(c, layers, _LLAMA4_LAYER_TYPES if fam["llama4"] else _LAYER_TYPES)
    # (checked even where no window is read)

    # embeddings, biases, norms
    entry["vocab"] = c.count("vocab")
    entry["tied_embeddings"] = c.flag("tied_embeddings", fam["tied_embeddings"])
    if fam["learned_positions"]:   # OPT's table has position_offset (2) rows more
        entry["learned_positions"] = c.count("learned_positions", default=0) + \
            fam["position_offset"]
    _refuse_projected_embedding(c, hidden)
    entry["max_context"] = c.count("max_context", default=0)
    if c.has("mtp_modules"):
        entry["mtp_modules"] = c.count("mtp_modules", minimum=0)
    entry["layer_norms"] = _falcon_norms(c) if model_type == "falcon" else fam["layer_norms"]
    head_dim = entry.get("head_dim", hidden // heads)
    # the Q and K norms: over head_dim each ("head"), or over all the heads' widths
    # ("heads"), where the family builds them (and its qk_norm_key, if any, is true)
    qk = fam["qk_norm"] and not entry.get("kv_lora_rank") and (
        not fam["qk_norm_key"] or c.option(fam["qk_norm_key"], False))
    if qk:
        entry["qk_norm"] = 2 * head_dim if fam["qk_norm"] == "head" else \
            (heads + kv_heads) * head_dim
    bias = c.flag("bias", fam["bias"])
    qkv_bias = fam["qkv_bias"] or c.flag("attention_bias", False)
    entry.update(gated_mlp=fam["gated_mlp"], norm=fam["norm"], bias=bias,
                 qkv_bias=qkv_bias and not bias, embedding_norm=fam["embedding_norm"])

    # dtypes
    torch_dtype = cfg.get("torch_dtype", cfg.get("dtype"))
    torch_dtype = "bfloat16" if torch_dtype is None else validate.string(
        where, "torch_dtype", torch_dtype, max_length=100)
    dtype = _HF_DTYPES.get(torch_dtype.removeprefix("torch."))
    if dtype is None:
        raise UserError(f"{where}: torch_dtype {torch_dtype!r} is unknown; known: "
                        f"{known(_HF_DTYPES)}")
    if dtype == "fp32":
        dtype = "bf16"  # a 32/64-bit checkpoint is served in 16-bit, as inference servers do
    weight_dtype = dtype
    act_dtype = "bf16" if dtype == "fp8" else dtype
    weight_dtype, kv = read_quantization(cfg.get("quantization_config"), entry, layers,
                                         dtype, act_dtype, where)
    kv_dtype = kv or act_dtype
    entry.setdefault("weight_dtype", weight_dtype)
    note = ""
    if top.get("vision_config") is not None or nested:
        entry["vision_parameters"], words = vision_tower(top, hidden, str(path))
        note = f"; parameters are the language model's{f' ({nested})' if nested else ''}: {words}"
    entry.update(kv_dtype=kv_dtype, act_dtype=act_dtype,
                 source=f"HuggingFace config.json at {path}{note}")
    return _model_from_entry(name, entry, where)
