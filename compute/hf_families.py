"""What each HuggingFace model family's ``config.json`` means, as data: where each figure is
found (:data:`HF_ALIASES`), what each ``model_type`` builds where its config is silent
(:data:`HF_FAMILIES` over :data:`BASE_FAMILY`: gated MLP, norms a layer, Q/K norms,
multi-query rules, family defaults such as Gemma-3's), the types and keys of layouts not
modelled (:data:`HF_UNMODELLED`, :data:`UNMODELLED_KEYS`), what an experts key of 0 means
(:data:`ZERO_EXPERTS`), and where wrappers keep their language model. No reading happens
here: :mod:`compute.hf_config` reads a config.json with these tables.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ARCHITECTURE_FAMILIES", "BASE_FAMILY", "DBRX_DEFAULTS", "EXPERT_FIELDS",
           "EXPERT_LIMITS", "FAMILY_ALIASES", "GATED_ACTIVATIONS", "GATED_TYPES", "GEMMA3",
           "HF_ALIASES", "HF_FAMILIES", "HF_UNMODELLED", "KEYED_TYPES", "LAYER_TYPES", "LLAMA4_LAYER_TYPES",
           "NESTED_DEFAULTS", "PER_LAYER_KEYS", "TABLELESS_POSITIONS", "TABLE_POSITIONS",
           "TEXT_MODEL_KEYS", "UNMODELLED_KEYS", "UNMODELLED_LAYERS", "WINDOWLESS_TYPES",
           "WINDOW_OPT_IN", "WRAPPED_TEXT_TYPES", "ZERO_EXPERTS", "family_layout", "softmax_only"]

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
    # use_qkv_bias; InternLM3: qkv_bias
    "attention_bias": ("attention_bias", "add_qkv_bias", "use_qkv_bias", "qkv_bias"),
    # Llama family (HF LlamaMLP): biases on gate, up and down
    "mlp_bias": ("mlp_bias",),
    # Phi-3.5-MoE (HF PhimoeForCausalLM): a bias on the LM head
    "lm_head_bias": ("lm_head_bias",),
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
GEMMA3 = {"vocab_size": 262_208, "max_position_embeddings": 131_072, "hidden_size": 2304,
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
    # norms a layer: compute.hf_layouts.falcon_norms
    "falcon": dict(gated_mlp=False, norm="layernorm", tied_embeddings=True, multi_query=True),
    # GPT-NeoX / Pythia: rotary (no position table), biases on every linear layer,
    # layernorms, an untied LM head (HF GPTNeoXConfig); GPT-J: rotary too (its n_positions
    # is the context, not a table), untied, one LayerNorm a layer (HF GPTJBlock's ln_1:
    # attention and MLP in parallel); HF GPTJAttention's Q, K, V and O have no bias, its
    # MLP's fc_in and fc_out have, and so has the LM head
    "gpt_neox": dict(gated_mlp=False, norm="layernorm", bias=True),
    "gptj": dict(gated_mlp=False, norm="layernorm", mlp_bias=True, lm_head_bias=True,
                 layer_norms=1),
    "llama": {}, "mistral": {}, "mixtral": {},
    # Ministral (HF models/ministral: Ministral-8B): Qwen2's layers with Mistral's unbiased Q,
    # K and V (MinistralAttention), so Llama's weights; MinistralConfig windows every layer
    # when sliding_window is set and layer_types is absent (the base's "all")
    "ministral": {},
    # Ministral 3 (HF models/ministral3: Ministral-3-3B/8B/14B's text_config under the
    # mistral3 wrapper, Devstral-2's Ministral3ForCausalLM): MistralDecoderLayer's weights;
    # Ministral3Attention only scales the queries by position (rope_parameters'
    # llama_4_scaling_beta), no weights; Ministral3Config's tie_word_embeddings default
    # false (the 3B's config says true)
    "ministral3": {},
    # Baichuan / Baichuan2 (baichuan-inc's remote modeling_baichuan.py, 7B and 13B): Llama's
    # layer with Q, K and V fused in one unbiased W_pack (3 x hidden^2, the same count), an
    # unbiased o_proj, SwiGLU, two RMSNorms; the LM head (Baichuan2's NormHead, normalised at
    # run time) a vocab x hidden matrix of its own; rotary positions in 7B, ALiBi in 13B:
    # no weights either way
    "baichuan": {},
    # Seed-OSS (HF models/seed_oss): Llama's layers, attention_bias biasing Q, K and V only;
    # O's bias has its own key, attention_out_bias (false in Seed-OSS-36B)
    "seed_oss": dict(attention_bias_o=False, o_bias_key="attention_out_bias"),
    # InternLM3 (internlm/internlm3-8b-instruct's remote modeling_internlm3.py): Llama's
    # layers; its qkv_bias biases Q, K and V, its bias key O and the MLP's gate, up and down
    # (not Q, K and V): both false in the published 8B
    "internlm3": dict(bias_o_mlp=True),
    # dots.llm1 (HF models/dots1): Qwen3's attention (q_norm and k_norm over head_dim) and
    # DeepSeek-V3's MoE (n_routed_experts of moe_intermediate_size, n_shared_experts as
    # wide, the first first_k_dense_replace layers dense, a router of hidden x experts; its
    # e_score_correction_bias, experts elements a MoE layer, left out as DeepSeek-V3's);
    # Dots1Config windows the layers from max_window_layers on when sliding_window is set
    # (use_sliding_window false: none)
    "dots1": dict(qk_norm="head", window="after_max_window_layers"),
    # SmolLM3 (HF models/smollm3): Llama's layers, every no_rope_layer_interval-th without
    # rotary positions (no weights either way); SmolLM3Config ties the embeddings by default
    "smollm3": dict(tied_embeddings=True),
    # OLMo v1 (HF models/olmo: OLMo-1B-hf, OLMo-7B-hf and -0724-hf): OlmoLayerNorm is a
    # LayerNorm without scale or shift, no weights; SwiGLU, no biases
    "olmo": dict(norm="weightless"),
    # EXAONE-3.0/3.5 (exaone; LG AI Research's modeling_exaone.py, remote code): Llama's
    # layers under GPT-2-style names (num_layers, activation_function; c_fc_0/c_fc_1/c_proj
    # SwiGLU, ln_1/ln_2 RMSNorms), no biases
    "exaone": {},
    # EXAONE-4 (HF models/exaone4): Exaone4Attention's q_norm and k_norm, RMSNorms over
    # head_dim; two norms a layer (after attention and after the MLP)
    "exaone4": dict(qk_norm="head"),
    # GLM-4 (HF models/glm) and GLM-4.5 (glm4_moe): attention_bias puts biases on Q, K and V
    # only (their o_proj has none), where Llama's and most families' bias O too
    "glm": dict(attention_bias_o=False), "glm4_moe": dict(attention_bias_o=False),
    # GLM-4-0414 (glm4, HF models/glm4: GLM-4-9B/32B-0414): GLM-4's attention (biases on Q, K
    # and V only) and four RMSNorms a layer (Glm4DecoderLayer's input, post_self_attn,
    # post_attention and post_mlp layernorms)
    "glm4": dict(attention_bias_o=False, layer_norms=4),
    # GLM-4.1V's language model (glm4v_text in the wrapper's text_config, HF models/glm4v):
    # GLM-4-0414's layers, with Glm4vTextAttention's Q, K and V biased whatever the config
    # says (O not)
    "glm4v_text": dict(qkv_bias=True, attention_bias_o=False, layer_norms=4),
    "qwen2": dict(qkv_bias=True),
    # Qwen2-VL / Qwen2.5-VL (HF models/qwen2_vl, qwen2_5_vl): Qwen2's language model (biases
    # on Q, K and V) in a flat config beside its vision_config (the tower: compute.hf_vision)
    "qwen2_vl": dict(qkv_bias=True), "qwen2_5_vl": dict(qkv_bias=True),
    # ... or, as newer transformers save them, nested in text_config typed qwen2_vl_text /
    # qwen2_5_vl_text (Qwen2VLTextConfig, Qwen2_5_VLTextConfig)
    "qwen2_vl_text": dict(qkv_bias=True), "qwen2_5_vl_text": dict(qkv_bias=True),
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
    "gemma3_text": dict(tied_embeddings=True, window="pattern", config_defaults=GEMMA3,
                        layer_norms=4, qk_norm="head"),
    "gemma3": dict(tied_embeddings=True, window="pattern", config_defaults=GEMMA3,
                   layer_norms=4, qk_norm="head"),
    # Qwen3 / Qwen3-MoE (HF models/qwen3, qwen3_moe): Qwen3Attention's q_norm and k_norm, an
    # RMSNorm over head_dim each (no Q/K/V biases)
    "qwen3": dict(qk_norm="head"), "qwen3_moe": dict(qk_norm="head"),
    # Qwen3-VL (HF models/qwen3_vl, qwen3_vl_moe): Qwen3's / Qwen3-MoE's language model (its
    # Q/K norms over head_dim) in the wrapper's text_config, typed qwen3_vl_text /
    # qwen3_vl_moe_text; its DeepStack adds the tower's features to early layers' hidden
    # states, no weights in the language model
    "qwen3_vl_text": dict(qk_norm="head"), "qwen3_vl_moe_text": dict(qk_norm="head"),
    # OLMo-2 and OLMoE (HF models/olmo2, olmoe): SwiGLU; q_norm and k_norm RMSNorms over the
    # whole query and key widths, heads x head_dim and kv_heads x head_dim
    "olmo2": dict(qk_norm="heads"), "olmoe": dict(qk_norm="heads"),
    # OLMo-3 (HF models/olmo3, built from Olmo2Attention and Olmo2DecoderLayer; vLLM runs it
    # as Olmo2ForCausalLM): OLMo-2's weights, its windowed layers named by layer_types
    "olmo3": dict(qk_norm="heads"),
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
    # GELU MLP, LayerNorms (one per layer, attention and MLP in parallel) and a bias on the
    # LM head (PhiForCausalLM's lm_head, vocab elements)
    "phi": dict(gated_mlp=False, norm="layernorm", bias=True, layer_norms=1,
                lm_head_bias=True),
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
    # a KV cache per image, not per token. Its weights could be counted from config.json
    # alone (the 11B's to the parameter: tests/compute/data/hf_families/README.md); the
    # cache and attention of those layers are what ModelSpec does not describe
    **dict.fromkeys(("mllama", "mllama_text_model"),
                    "a vision-language model whose text layers include cross-attention layers "
                    "(cross_attention_layers) attending to the image's tokens through a KV "
                    "cache per image, not per token, which netmodel does not model"),
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
    # Phi-4-multimodal (microsoft/Phi-4-multimodal-instruct, remote code): a Phi-3 language
    # model with an image encoder, an audio conformer and vision and speech LoRA adapters
    # applied at run time (vision_lora, speech_lora), none of which the reader counts; its
    # image encoder's width and depth are set by the remote code (embd_layer's
    # image_embd_layer names neither), so no count from config.json alone can match the
    # published total (tests/compute/test_hf_published_totals_h355.py)
    "phi4mm": "Phi-4-multimodal, whose image encoder (sized by its remote code, not by "
              "config.json), audio encoder and vision/speech LoRA adapters (vision_lora, "
              "speech_lora) are not counted",
    # Gemma-3n: per-layer embeddings, AltUp streams, LAuReL blocks, KV shared across layers,
    # per-layer MLP widths
    **dict.fromkeys(("gemma3n", "gemma3n_text"),
                    "Gemma-3n, with per-layer embeddings, AltUp, LAuReL and a KV cache shared "
                    "between layers"),
    # Gemma 4 (HF Gemma4TextConfig): its global layers have KV heads and a head width of
    # their own (num_global_key_value_heads, global_head_dim; 4 x 512 beside the local
    # layers' 8 x 256 in a 36-layer config) and may keep one tensor for K and V
    # (attention_k_eq_v): two KV shapes, where netmodel's layers have one
    **dict.fromkeys(("gemma4", "gemma4_text"),
                    "Gemma 4, whose global layers have KV heads and a head width of their own "
                    "(num_global_key_value_heads, global_head_dim) and may share K with V "
                    "(attention_k_eq_v)"),
}
#: Config keys (exact, or prefixes ending in "_") of structures the reader does not model:
#: state-space, linear-attention and hybrid-layout settings; MiniCPM4's sparse_config (InfLLM
#: v2 sparse attention: past dense_len tokens each query attends to topk blocks of block_size
#: keys chosen by a block score, plus init_blocks and a window_size window; the card's
#: config.json enables it by adding the key); KV shapes that differ between the global and
#: the windowed layers (Gemma 4's num_global_key_value_heads, global_head_dim and
#: attention_k_eq_v; Xiaomi MiMo-V2's swa_num_key_value_heads, swa_head_dim, ... and its
#: hybrid_layer_pattern), which a config of another or no model_type would otherwise lose.
UNMODELLED_KEYS = ("ssm_", "mamba_", "linear_", "attn_type_list", "hybrid_override_pattern",
                   "layers_block_type", "attn_layer_period", "block_types", "ffn_config",
                   "attn_config", "index_topk", "num_kv_shared_layers", "altup_num_inputs",
                   "use_cla", "blocksparse_", "dense_attention_every_n_layers",
                   "cross_attention_layers", "sliding_window_layers", "conv_window",
                   "share_q_dim", "moe_layers_enum", "block_configs", "zero_expert_num",
                   "sparse_config", "num_global_key_value_heads", "global_head_dim",
                   "attention_k_eq_v", "swa_", "hybrid_layer_pattern")
FAMILY_ALIASES = {"refinedweb": "falcon", "refinedwebmodel": "falcon", "rw": "falcon"}
#: The family of a config whose model_type is not one, by its first ``architectures`` entry:
#: Grok-2 (xai-org/grok-2) says model_type "git" and Grok1ForCausalLM (SGLang's grok.py,
#: Grok-1's layers with residual_moe).
#: Kimi-K2 (model_type kimi_k2) names DeepseekV3ForCausalLM.
ARCHITECTURE_FAMILIES = {"Grok1ForCausalLM": "grok-1", "Grok1ModelForCausalLM": "grok-1",
                         "DeepseekV3ForCausalLM": "deepseek_v3",
                         "DeepseekV2ForCausalLM": "deepseek_v2",
                         "LlamaForCausalLM": "llama", "MistralForCausalLM": "mistral",
                         "MixtralForCausalLM": "mixtral", "Qwen2ForCausalLM": "qwen2",
                         "Qwen3ForCausalLM": "qwen3", "Qwen3MoeForCausalLM": "qwen3_moe"}
# Other model types whose MLP is gated (SwiGLU / GeGLU), read Llama-style.
# GraniteMoeShared (HF models/granitemoeshared): GraniteMoe's layers with a SwiGLU
# shared_mlp shared_intermediate_size wide beside the experts (HF_ALIASES["shared_ffn"]).
GATED_TYPES = {"phi3", "granite", "granitemoe", "granitemoeshared", "internlm2", "yi",
               "deepseek"}
#: Model types without a family entry whose code builds the layout their keys describe,
#: read from the keys alone (Llama-style; GPT-2-style with ``n_embd``): the gated ones
#: above; Ling (bailing_moe: Llama layers, shared experts), MiniCPM (Llama layers with
#: scaling multipliers, no weights of their own), Jais (GPT-2 keys, SwiGLU, ALiBi). Any
#: other model_type is refused, naming the ones read.
KEYED_TYPES = GATED_TYPES | {"bailing_moe", "minicpm", "jais"}


def softmax_only(key: str, value: Any) -> bool:
    """MiniMax's ``attn_type_list`` of 1s only: softmax attention on every layer (MiniMax-M2),
    the layout read; a 0 (lightning attention, MiniMax-Text-01) is refused."""
    return key == "attn_type_list" and isinstance(value, list) and bool(value) and all(
        v == 1 and not isinstance(v, bool) for v in value)

#: Architecture defaults of a Llama-like model, the base every family entry changes.
BASE_FAMILY = dict(gated_mlp=True, norm="rmsnorm", bias=False, qkv_bias=False,
                   mlp_bias=False, lm_head_bias=False, attention_bias_o=True,
                   tied_embeddings=False, learned_positions=False, embedding_norm=False,
                   shared_expert_gate=False, window="all", window_every=6, llama4=False,
                   chatglm=False, multi_query=False, residual_mlp=False, ffn_halved=False,
                   position_offset=0, config_defaults={}, layer_norms=2, qk_norm="",
                   qk_norm_key="", o_bias_key="", bias_o_mlp=False)
#: Entries of a config.json's ``layer_types`` the reader models (HF transformers' names;
#: GraniteMoeHybrid calls a full-attention layer "attention").
LAYER_TYPES = ("full_attention", "sliding_attention", "attention")
#: ``layer_types`` entries of layers that are not attention, refused by name (GraniteMoeHybrid:
#: "mamba"), with the key prefix of their settings, inert where layer_types lists no such
#: layer (granite-4.0-micro's config carries mamba_* keys and no Mamba layer). Other entries
#: (Qwen3-Next's "linear_attention") are refused by :func:`compute.hf_windows.layer_types`.
UNMODELLED_LAYERS = {"mamba": ("Mamba-2 state-space", "mamba_")}
#: ... and of Llama-4's, whose local layers are chunked.
LLAMA4_LAYER_TYPES = ("full_attention", "chunked_attention")
#: Model types whose ``sliding_window`` applies only when ``use_sliding_window`` is true
#: (HF Qwen2Config and its kin default it to false; their configs name a window anyway).
WINDOW_OPT_IN = {"qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "qwen2_vl", "qwen2_5_vl"}
#: Model types whose attention spans the whole context whatever a ``sliding_window`` key
#: says: HF transformers' attention of these families (LlamaAttention, DeepseekV3Attention,
#: CohereAttention, ...) is built with no window, and vLLM's Llama windows only the layers a
#: ``layer_types`` calls sliding. Such a key, not null and not 0, without a ``layer_types``
#: is refused, rather than read as a window on every layer (Mistral's rule, the default of
#: a family not listed) or dropped.
WINDOWLESS_TYPES = frozenset({
    "llama", "gemma", "cohere", "olmo", "olmo2", "olmoe", "falcon", "gpt2", "bloom", "opt",
    "gptj", "gpt_bigcode", "gpt_neox", "deepseek", "deepseek_v2", "deepseek_v3", "glm",
    "glm4", "glm4_moe", "chatglm", "nemotron", "stablelm", "phi", "granite", "granitemoe",
    "granitemoeshared", "granitemoehybrid", "internlm2", "internlm3", "dbrx", "grok-1",
    "hunyuan", "hunyuan_v1_dense", "hunyuan_v1_moe", "ernie4_5", "ernie4_5_moe",
    "baichuan", "qwen", "jais", "yi", "bailing_moe", "minicpm", "exaone"})

#: Activations that name a gated MLP (two input projections, one through the activation,
#: multiplied): Jais's activation_function "swiglu" on a GPT-2-style config (its c_fc, c_fc2
#: and c_proj).
GATED_ACTIVATIONS = ("swiglu", "geglu")
#: ``position_embedding_type`` values without a learned position table: Jais "alibi",
#: GraniteMoeHybrid "rope" / "nope".
TABLELESS_POSITIONS = ("alibi", "rope", "rotary", "rope_gptj", "nope")
#: ``position_embedding_type`` values of a learned position table (GPT-2 style).
TABLE_POSITIONS = ("absolute", "learned")

#: Where a multimodal wrapper keeps its language model: Gemma-3, LLaVA, Llama-4, Mistral-3
#: (text_config), InternVL (llm_config), DeepSeek-VL2 (language_config).
TEXT_MODEL_KEYS = ("text_config", "llm_config", "language_config")
#: HF transformers' config defaults for keys a wrapper's nested config leaves out (HF writes
#: a sub-config as its differences from its class's defaults: llava-1.5-7b-hf's text_config
#: names no layers): LlamaConfig's (models/llama/configuration_llama.py); MistralConfig's
#: (models/mistral/configuration_mistral.py; llava-v1.6-mistral-7b-hf's text_config names
#: no width, layers or heads).
NESTED_DEFAULTS = {"llama": {"vocab_size": 32000, "hidden_size": 4096,
                             "intermediate_size": 11008, "num_hidden_layers": 32,
                             "num_attention_heads": 32, "max_position_embeddings": 2048},
                   "mistral": {"vocab_size": 32000, "hidden_size": 4096,
                               "intermediate_size": 14336, "num_hidden_layers": 32,
                               "num_attention_heads": 32, "num_key_value_heads": 8,
                               "max_position_embeddings": 131072, "sliding_window": 4096}}


#: The language model's ``model_type`` of a wrapper whose nested config names none:
#: DeepSeek-VL2's DeepseekVLV2Config builds its ``language_config`` as a DeepseekV2Config
#: (deepseek_vl2/models/modeling_deepseek_vl_v2.py; DeepSeek-OCR's published
#: language_config gives no model_type).
WRAPPED_TEXT_TYPES = {"deepseek_vl_v2": "deepseek_v2"}

#: HF transformers' DbrxAttentionConfig / DbrxFFNConfig defaults for keys a DBRX config.json
#: leaves out (models/dbrx/configuration_dbrx.py): one KV head, 4 experts, top-1, 3,584 wide.
DBRX_DEFAULTS = {"kv_n_heads": 1, "moe_num_experts": 4, "moe_top_k": 1,
                 "ffn_hidden_size": 3584}


#: Keys Hunyuan's config.json spells per layer (a list of one value per layer); read when
#: every layer has the same value.
PER_LAYER_KEYS = ("moe_topk", "moe_intermediate_size", "num_shared_expert", "num_experts")

#: What each family's HF code builds when its experts key is 0, by ``model_type`` (the one
#: place this is said): the key whose 0 means the dense MLP, GraniteMoeHybrid (``if
#: config.num_local_experts > 0``: granite-4.0-micro's 0) and Qwen-MoE
#: (Qwen2MoeDecoderLayer / Qwen3MoeDecoderLayer: ``config.num_experts > 0 and ...``); or
#: None, a family that builds a routed MoE block on its MoE layers whatever the count
#: (MixtralSparseMoeBlock, PhimoeSparseMoeBlock, OlmoeSparseMoeBlock, DeepseekV2/V3MoE,
#: MiniMaxM2SparseMoeBlock, GptOssMLP, GraniteMoeMoE, DbrxFFN, Llama4TextMoe on its
#: ``moe_layers``: a router onto 0 experts, no dense MLP to fall back on), refused. Any
#: other family reads 0 as dense only where no other key speaks of experts
#: (:data:`EXPERT_FIELDS`).
ZERO_EXPERTS: dict[str, str | None] = {
    "granitemoehybrid": "num_local_experts", "qwen2_moe": "num_experts",
    "qwen3_moe": "num_experts",
    **dict.fromkeys(("mixtral", "phimoe", "olmoe", "deepseek_v2", "deepseek_v3", "minimax_m2",
                     "gpt_oss", "granitemoe", "granitemoeshared", "dbrx", "llama4", "llama4_text",
                     "dots1"), None)}
#: :data:`HF_ALIASES` fields that speak of experts: a config giving one a value other than
#: 0 beside an experts key of 0 (tokens routed, experts sized, shared experts, a list of
#: MoE layers) is malformed, in any family.
EXPERT_FIELDS = ("experts_per_token", "expert_ffn", "shared_experts", "moe_list")

#: The limits.toml row bounding each count of :data:`EXPERT_FIELDS` (``moe_list`` is a list).
EXPERT_LIMITS = {"experts_per_token": "experts_per_token", "expert_ffn": "ffn",
                 "shared_experts": "experts"}


def family_layout(family: str) -> dict:
    """The layout a known family (a key of :data:`HF_FAMILIES`) builds: its entry over
    :data:`BASE_FAMILY`, with ``window`` ``"none"`` for :data:`WINDOWLESS_TYPES`."""
    layout = {**BASE_FAMILY, **HF_FAMILIES[family]}
    return {**layout, "window": "none"} if family in WINDOWLESS_TYPES else layout
