"""The vision tower of a vision-language HuggingFace ``config.json`` (its ``vision_config``)
counted exactly where its architecture is known (Qwen2-VL, Qwen2.5-VL, LLaVA's and
LLaVA-NeXT's CLIP ViT and projector, Gemma-3's SigLIP and projector, Idefics3's SigLIP and
connector, DeepSeek-VL2's SigLIP-SO400M and MLP projector, InternVL's InternViT and MLP projector, Mistral-3's Pixtral encoder and
patch-merging projector, Llama-4's ViT, adapter and projector), else left uncounted with
words saying why; :mod:`compute.hf_config` calls :func:`vision_tower`. Every count is
written in :func:`_linear` (one linear layer, with or without its bias).
"""

from __future__ import annotations

from compute import validate
from compute.errors import UserError

__all__ = ["VISION_TOWERS", "vision_tower"]


def _linear(n_in: int, n_out: int, bias: bool = True) -> int:
    """One linear layer ``n_in -> n_out`` (a convolution unrolled: its kernel's inputs),
    with its bias when ``bias``: the one count every tower below is written in."""
    return n_in * n_out + (n_out if bias else 0)


def _vit_layer(c: int, f: int) -> int:
    """A ViT encoder layer as CLIP, SigLIP and Llama-4's vision encoder build it: Q, K, V
    and O with biases, two LayerNorms (scale and shift), a two-matrix MLP ``f`` wide with
    biases."""
    return 4 * _linear(c, c) + 2 * 2 * c + _linear(c, f) + _linear(f, c)


def _projector(n_in: int, hidden: int, bias: bool) -> int:
    """LLaVA's two-layer projector: ``n_in -> hidden -> hidden`` (biases where ``bias``)."""
    return _linear(n_in, hidden, bias) + _linear(hidden, hidden, bias)


def _feature_width(v, c: int) -> int:
    """The width the projector takes: the tower's, times the feature layers when
    ``vision_feature_layer`` lists several."""
    feature = v("vision_feature_layer", top=True)
    return c * (len(feature) if isinstance(feature, list) else 1)


def _qwen2_vl_tower(v, hidden: int) -> int:
    """Qwen2-VL's vision tower (HF ``Qwen2VisionTransformerPretrainedModel``): a Conv3d patch
    embedding without bias (``in_chans x temporal_patch_size x patch_size^2`` inputs to
    ``embed_dim``); ``depth`` blocks of two LayerNorms, fused QKV and output projections
    with biases and a two-matrix MLP ``int(embed_dim x mlp_ratio)`` wide with biases; the
    merger: a LayerNorm, then ``embed_dim x spatial_merge_size^2`` -> itself -> the
    language model's width (``hidden_size``), with biases."""
    c, t, p = v("embed_dim"), v("temporal_patch_size"), v("patch_size")
    m = int(c * v("mlp_ratio", integer=False))
    block = 2 * 2 * c + _linear(c, 3 * c) + _linear(c, c) + _linear(c, m) + _linear(m, c)
    w = c * v("spatial_merge_size") ** 2
    merger = 2 * c + _linear(w, w) + _linear(w, hidden)
    return (_linear(v("in_chans") * t * p * p, c, bias=False)
            + v("depth", limit="layers") * block + merger)


def _qwen2_5_vl_tower(v, hidden: int) -> int:
    """Qwen2.5-VL's vision tower (HF ``Qwen2_5_VisionTransformerPretrainedModel``): Qwen2-VL's
    patch embedding; ``depth`` blocks of two RMSNorms, fused QKV and output projections with
    biases and a SwiGLU MLP ``intermediate_size`` wide with biases (gate, up, down); the
    merger: an RMSNorm, then ``hidden_size x spatial_merge_size^2`` -> itself ->
    ``out_hidden_size``, with biases."""
    c, f, t, p = v("hidden_size"), v("intermediate_size", limit="ffn"), \
        v("temporal_patch_size"), v("patch_size")
    block = 2 * c + _linear(c, 3 * c) + _linear(c, c) + 2 * _linear(c, f) + _linear(f, c)
    w, out = c * v("spatial_merge_size") ** 2, v("out_hidden_size")
    merger = c + _linear(w, w) + _linear(w, out)
    return (_linear(v("in_chans") * t * p * p, c, bias=False)
            + v("depth", limit="layers") * block + merger)


def _clip_tower(v) -> tuple[int, int]:
    """``(parameters, width)`` of a CLIP vision tower (HF ``CLIPVisionModel``): class
    embedding, a Conv2d patch embedding without bias, ``(image_size / patch_size)^2 + 1``
    learned positions, a LayerNorm before and one after ``num_hidden_layers``
    :func:`_vit_layer` layers ``intermediate_size`` wide."""
    c, f, p = v("hidden_size"), v("intermediate_size", limit="ffn"), v("patch_size")
    positions = (v("image_size") // p) ** 2 + 1
    return (c + _linear(v("num_channels") * p * p, c, bias=False) + positions * c
            + 2 * 2 * c + v("num_hidden_layers", limit="layers") * _vit_layer(c, f)), c


def _llava_tower(v, hidden: int) -> int:
    """LLaVA's CLIP vision tower (:func:`_clip_tower`) and its projector
    (``LlavaMultiModalProjector``, :func:`_projector`): the tower's width (times the feature
    layers when ``vision_feature_layer`` lists several) -> the language model's width ->
    itself, with biases unless ``multimodal_projector_bias`` is false."""
    tower, c = _clip_tower(v)
    return tower + _projector(_feature_width(v, c), hidden,
                              v("multimodal_projector_bias", top=True))


def _llava_next_tower(v, hidden: int) -> int:
    """LLaVA-NeXT (HF ``LlavaNextForConditionalGeneration``): LLaVA's CLIP tower and
    projector (:func:`_llava_tower`) and ``image_newline``, one learned vector of the
    language model's width marking the end of each row of image features."""
    return _llava_tower(v, hidden) + hidden


def _siglip_tower(v, *, head: bool) -> tuple[int, int]:
    """``(parameters, width)`` of a SigLIP vision tower (HF ``SiglipVisionModel``; Idefics3's
    ``Idefics3VisionTransformer``): a Conv2d patch embedding with bias, ``(image_size /
    patch_size)^2`` learned positions, ``num_hidden_layers`` :func:`_vit_layer` layers
    ``intermediate_size`` wide, a final LayerNorm, and where ``head`` the attention-pooling
    head (a probe, a multi-head attention with biases, a LayerNorm, an MLP)."""
    c, f, p = v("hidden_size"), v("intermediate_size", limit="ffn"), v("patch_size")
    return _siglip(c, f, p, v("image_size"), v("num_hidden_layers", limit="layers"),
                   v("num_channels"), head), c


def _siglip(c: int, f: int, p: int, image: int, layers: int, channels: int,
            head: bool) -> int:
    """A SigLIP ViT ``c`` wide (:func:`_siglip_tower`'s count, whoever's keys give it)."""
    tower = (_linear(channels * p * p, c) + (image // p) ** 2 * c
             + layers * _vit_layer(c, f) + 2 * c)
    if head:   # the probe, Q, K, V (or fused Q and KV) and O, a LayerNorm, the MLP
        tower += c + 4 * _linear(c, c) + 2 * c + _linear(c, f) + _linear(f, c)
    return tower


def _siglip_gemma3_tower(v, hidden: int) -> int:
    """Gemma-3's SigLIP tower (:func:`_siglip_tower`, its head unless ``vision_use_head`` is
    false) and ``Gemma3MultiModalProjector``: an RMSNorm over the tower's width and a
    ``width x hidden_size`` projection without bias (its average pooling has no weights)."""
    tower, c = _siglip_tower(v, head=v("vision_use_head", default=True))
    return tower + c + _linear(c, hidden, bias=False)


def _idefics3_tower(v, hidden: int) -> int:
    """Idefics3's SigLIP tower without a head (:func:`_siglip_tower`) and its connector
    (HF ``Idefics3Connector``): a pixel shuffle folding ``scale_factor^2`` neighbouring
    patches into one (no weights), then ``width x scale_factor^2 -> hidden_size`` without
    bias (``scale_factor``, Idefics3Config's default 2)."""
    tower, c = _siglip_tower(v, head=False)
    return tower + _linear(c * v("scale_factor", top=True, default=2) ** 2, hidden,
                           bias=False)


def _deepseek_vl2_tower(v, hidden: int) -> int:
    """DeepSeek-VL2's SigLIP-SO400M (its remote code's timm-style ``VisionTransformer``:
    ``width`` wide, ``layers`` blocks, an MLP ``int(width x mlp_ratio)`` wide, no class
    token, and the attention-pooling head ``global_pool="map"`` builds, its weights in the
    checkpoint though its output is unused), counted as :func:`_siglip`; its
    ``MlpProjector`` of ``projector_type`` ``downsample_mlp_gelu`` (``input_dim x
    downsample_ratio^2 -> n_embed x mlp_ratio``, ``depth - 2`` more layers that wide, then
    ``-> n_embed``, with biases); and, with ``tile_tag`` "2D" (DeepseekVLV2Config's
    default), ``image_newline`` and ``view_seperator``, one vector of ``n_embed`` each."""
    c, p = v("width"), v("patch_size")
    f = int(c * v("mlp_ratio", integer=False))
    tower = _siglip(c, f, p, v("image_size"), v("layers", limit="layers"), 3, True)
    kind = v("projector_type", table="projector_config")
    tag = v("tile_tag", top=True, default="2D")
    if kind != "downsample_mlp_gelu" or tag != "2D":
        raise _Uncounted(f"projector_type {kind!r} with tile_tag {tag!r} (counted: "
                         f"'downsample_mlp_gelu' with '2D')")
    n = v("n_embed", table="projector_config")
    m = n * v("mlp_ratio", table="projector_config", default=1)
    r = v("downsample_ratio", table="projector_config")
    depth = v("depth", table="projector_config", limit="layers")
    projector = (_linear(v("input_dim", table="projector_config") * r * r, m)
                 + max(depth - 2, 0) * _linear(m, m) + _linear(m, n))
    return tower + projector + 2 * n


def _internvit_tower(v, hidden: int) -> int:
    """InternVL's InternViT (remote code ``InternVisionModel``): a class embedding, a Conv2d
    patch embedding with bias, ``(image_size / patch_size)^2 + 1`` learned positions;
    ``num_hidden_layers`` layers of fused QKV (biases where ``qkv_bias``) and an output
    projection with bias, RMSNorms over the width on Q and K where ``qk_normalization``,
    two norms (``norm_type`` ``layer_norm``: scale and shift; ``rms_norm``: scale), a
    two-matrix MLP with biases and two layer scales; and the projector ``mlp1``: a
    LayerNorm and ``width x (1 / downsample_ratio)^2 -> hidden_size -> hidden_size`` with
    biases."""
    c, f, p = v("hidden_size"), v("intermediate_size", limit="ffn"), v("patch_size")
    norm = {"layer_norm": 2, "rms_norm": 1}[v("norm_type", choices=("layer_norm",
                                                                     "rms_norm"))]
    layer = (_linear(c, 3 * c, v("qkv_bias", flag=True)) + _linear(c, c)
             + (2 * c if v("qk_normalization", flag=True) else 0)
             + 2 * norm * c + _linear(c, f) + _linear(f, c) + 2 * c)
    positions = (v("image_size") // p) ** 2 + 1
    tower = (c + _linear(v("num_channels") * p * p, c) + positions * c
             + v("num_hidden_layers", limit="layers") * layer)
    w = c * v("downsample_ratio", top=True, reciprocal=True) ** 2
    return tower + 2 * w + _projector(w, hidden, True)


def _pixtral_tower(v, hidden: int) -> int:
    """Mistral-3's Pixtral encoder (HF ``PixtralVisionModel``): a Conv2d patch embedding
    without bias, an RMSNorm, ``num_hidden_layers`` layers of two RMSNorms, Q, K, V, O of
    ``num_attention_heads x head_dim`` without biases and a SwiGLU MLP ``intermediate_size``
    wide without biases (2D rotary positions: no weights); and
    ``Mistral3MultiModalProjector``: an RMSNorm, the patch merger (``width x
    spatial_merge_size^2 -> width``, no bias), then ``width`` (times the feature layers when
    ``vision_feature_layer`` lists several) ``-> hidden_size -> hidden_size``, biases where
    ``multimodal_projector_bias`` (Mistral3Config's default false)."""
    c, f, p = v("hidden_size"), v("intermediate_size", limit="ffn"), v("patch_size")
    q = v("num_attention_heads", limit="heads") * v("head_dim", limit="head_dim")
    layer = (2 * c + 3 * _linear(c, q, bias=False) + _linear(q, c, bias=False)
             + 2 * _linear(c, f, bias=False) + _linear(f, c, bias=False))
    tower = (_linear(v("num_channels") * p * p, c, bias=False) + c
             + v("num_hidden_layers", limit="layers") * layer)
    bias = v("multimodal_projector_bias", top=True, default=False)
    merger = _linear(c * v("spatial_merge_size", top=True) ** 2, c, bias=False)
    return tower + c + merger + _projector(_feature_width(v, c), hidden, bias)


def _llama4_tower(v, hidden: int) -> int:
    """Llama-4's vision encoder (HF ``Llama4VisionModel``): the unfolded patch embedding
    (a linear layer without bias), a class embedding, ``(image_size / patch_size)^2 + 1``
    learned positions, a LayerNorm before and one after ``num_hidden_layers``
    :func:`_vit_layer` layers ``intermediate_size`` wide; the pixel-shuffle adapter
    (``Llama4VisionMLP2``: ``intermediate_size -> projector_input_dim`` and
    ``projector_output_dim -> projector_output_dim``, no biases); and
    ``Llama4MultiModalProjector``, ``vision_output_dim x hidden_size`` without bias."""
    c, f, p = v("hidden_size"), v("intermediate_size", limit="ffn"), v("patch_size")
    positions = (v("image_size") // p) ** 2 + 1
    tower = (_linear(v("num_channels") * p * p, c, bias=False) + c + positions * c
             + 2 * 2 * c + v("num_hidden_layers", limit="layers") * _vit_layer(c, f))
    out = v("projector_output_dim")
    adapter = (_linear(f, v("projector_input_dim"), bias=False)
               + _linear(out, out, bias=False))
    return tower + adapter + _linear(v("vision_output_dim"), hidden, bias=False)


#: Vision towers counted exactly, by the wrapper's ``model_type``: (the vision_config's own
#: ``model_type`` required, or None; what the note calls it; the count of
#: :func:`vision_tower`'s reader and the language model's width).
VISION_TOWERS = {
    "qwen2_vl": (None, "Qwen2-VL ViT and merger", _qwen2_vl_tower),
    "qwen2_5_vl": (None, "Qwen2.5-VL ViT and merger", _qwen2_5_vl_tower),
    "llava": ("clip_vision_model", "CLIP ViT and projector", _llava_tower),
    "llava_next": ("clip_vision_model", "CLIP ViT, projector and image_newline",
                   _llava_next_tower),
    "idefics3": (None, "SigLIP ViT and pixel-shuffle connector",
                 _idefics3_tower),
    "deepseek_vl_v2": ("siglip_so400m_patch14_384", "SigLIP-SO400M ViT and MLP projector",
                       _deepseek_vl2_tower),
    "gemma3": ("siglip_vision_model", "SigLIP ViT and projector", _siglip_gemma3_tower),
    "internvl_chat": ("intern_vit_6b", "InternViT and MLP projector", _internvit_tower),
    "mistral3": ("pixtral", "Pixtral ViT and patch-merging projector", _pixtral_tower),
    "llama4": ("llama4_vision_model", "Llama-4 ViT, pixel-shuffle adapter and projector",
               _llama4_tower),
}
#: Other names of the towers above, by wrapper (vLLM's DeepSeek-VL2 config names the same
#: encoder by its timm name).
_TOWER_ALIASES = {"deepseek_vl_v2": ("vit_so400m_patch14_siglip_384.webli",)}
#: The vision_config key naming the tower where a wrapper's is not ``model_type``
#: (DeepSeek-VL2's code picks its encoder by ``model_name``; DeepSeek-OCR's
#: "deeplip_b_l", SAM and CLIP, stays uncounted).
_TOWER_KEYS = {"deepseek_vl_v2": "model_name"}
#: HF's config defaults for tower keys a published config leaves out: CLIPVisionConfig's
#: ``num_channels`` 3 (models/clip/configuration_clip.py; llava-1.5-7b-hf's vision_config
#: omits it), LlavaConfig's ``vision_feature_layer`` -2 and ``multimodal_projector_bias``
#: true (models/llava/configuration_llava.py).
_VISION_DEFAULTS = {"num_channels": 3, "vision_feature_layer": -2,
                    "multimodal_projector_bias": True}


class _Uncounted(Exception):
    """A tower whose config names a layout its count does not cover (it then stays
    uncounted, with these words)."""


class _MissingKey(Exception):
    """A key a vision tower's count needs that its config leaves out (the tower then stays
    uncounted)."""


def vision_tower(cfg: dict, hidden: int, where: str) -> tuple[int, str]:
    """``(parameters, words)``: the vision tower of a config.json with a ``vision_config``
    (and a language model ``hidden`` wide), counted where its architecture is one of
    :data:`VISION_TOWERS` and the config gives every key its count needs; otherwise 0, and
    the words say why it is not counted (no guess is made). Bad values are refused in one
    line naming the key."""
    vc = cfg.get("vision_config")
    if vc is None:
        return 0, "its vision tower is not counted"
    here = f"{where}: vision_config"
    vc = validate.table(here, vc)
    wrapper = str(cfg.get("model_type", "")).lower()
    known_tower = VISION_TOWERS.get(wrapper)
    tower_key = _TOWER_KEYS.get(wrapper, "model_type")
    raw = vc.get(tower_key)
    # absent or null: the tower the wrapper's HF config builds (Gemma3Config, Llama4Config
    # and InternVLChatConfig build theirs from the dict whatever it says; LlavaConfig and
    # Mistral3Config default it to clip_vision_model and pixtral), else the wrapper's type;
    # a 0, false or [] is refused, not read as absent
    kind = ((known_tower and known_tower[0]) or wrapper) if raw is None else \
        validate.string(here, tower_key, raw, max_length=100)
    if known_tower is not None and kind in _TOWER_ALIASES.get(wrapper, ()):
        kind = known_tower[0]
    if known_tower is None or known_tower[0] not in (None, kind):
        return 0, (f"its vision tower (vision_config, {kind!r}: an architecture the reader "
                   f"does not count) is not counted, in memory or FLOPs")
    _, label, count = known_tower

    def v(key: str, *, limit: str = "hidden", integer: bool = True, top: bool = False,
          default=None, flag: bool = False, choices: tuple[str, ...] = (),
          reciprocal: bool = False, table: str = ""):
        at, source = (where, cfg) if top else (here, vc)
        if table:   # a table of the wrapper's (DeepSeek-VL2's projector_config)
            at = f"{where}: {table}"
            given = cfg.get(table)   # null: none; 0, false or "" are not a table
            source = validate.table(at, {} if given is None else given)
        value = source.get(key)
        if value is None and key == "in_chans":   # the newer spelling
            value = vc.get("in_channels")
        if value is None:
            if default is not None:
                value = default
            elif key in _VISION_DEFAULTS:
                value = _VISION_DEFAULTS[key]
            else:
                raise _MissingKey(f"{table or ('config.json' if top else 'vision_config')} "
                                  f"lacks {key!r}")
        widest = validate.limits("model")[limit].maximum
        if choices:
            return validate.choice(at, key, value, choices)
        if isinstance(default, str) or key == "projector_type":
            return validate.string(at, key, value, max_length=100)
        if flag or isinstance(default, bool) or key == "multimodal_projector_bias":
            return validate.flag(at, key, value)
        if key == "vision_feature_layer":   # a layer index (negative: from the last), or a list
            # of the tower's hidden states: its embeddings and each layer's output (HF
            # indexes hidden_states, num_hidden_layers + 1 entries; an index past them fails
            # there, and a list's entries each widen the projector)
            # The same hidden state twice (7 and -(layers + 1) + 7 alike) is not a layout a
            # model ships: a list names each at most once, so at most layers + 1 entries.
            layers = v("num_hidden_layers", limit="layers")
            if isinstance(value, list) and len(value) > layers + 1:
                raise UserError(f"{at}: {key} lists {len(value):,} hidden states; the tower "
                                f"has {layers + 1} (its embeddings and {layers} layers), each "
                                f"named at most once")
            seen = set()
            for x in (value if isinstance(value, list) and value else [value]):
                i = validate.number(at, key, x, minimum=-(layers + 1), maximum=layers,
                                    integer=True) % (layers + 1)
                if i in seen:
                    raise UserError(f"{at}: {key} names hidden state {x} twice (entries "
                                    f"are indices into {layers + 1} hidden states, negative "
                                    f"from the last); name each at most once")
                seen.add(i)
            return value
        if reciprocal:   # a fraction 1 / n (InternVL's pixel shuffle): n
            r = validate.number(at, key, value, minimum=1e-3, maximum=1, integer=False)
            if abs(1 / r - round(1 / r)) > 1e-9:
                raise UserError(f"{at}: {key} {r} is not 1 / a whole number; allowed: 1, "
                                f"0.5, 0.25, ...")
            return round(1 / r)
        return validate.number(at, key, value, minimum=1, maximum=widest, integer=integer)

    try:
        n = count(v, hidden)
    except _MissingKey as exc:
        return 0, f"its vision tower (vision_config, {label}) is not counted: {exc.args[0]}"
    except _Uncounted as exc:
        return 0, f"its vision tower (vision_config, {label}) is not counted: {exc.args[0]}"
    most = validate.limits("model")["vision_parameters"].maximum
    if n > most:   # named here, not as the language model's vision_parameters
        raise UserError(f"{here}: its {label} would hold {n:,} parameters, over the "
                        f"{most:,} a vision tower may hold (limits.toml "
                        f"model.vision_parameters); check its widths, layers and sizes")
    return n, (f"its vision tower (vision_config, {label}: {n:,} parameters) is counted in "
               f"weight memory (vision_parameters), not in parameters or per-token FLOPs; "
               f"the encoder's compute of image tokens is not modelled")
