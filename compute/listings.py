"""What ``netmodel hardware`` and ``netmodel models`` print: the catalog's GPUs or models
(with a user's file's) as a table, or one of them in full, each a result object with
``to_dict()`` (the ``--json`` document) and ``table()`` (the text).

>>> from compute.hardware import get_gpu
>>> print(gpu_card(get_gpu("H100-SXM")).table().splitlines()[2])
  bf16 dense        989.4 TFLOP/s
>>> gpu_listing().table().splitlines()[0].split()[:4]
['name', 'SMs', 'bf16', 'TF/s']
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from compute.hardware import GpuSpec
    from compute.models import ModelSpec

__all__ = ["GpuCard", "GpuListing", "ModelCard", "ModelListing", "attention_kind", "gpu_card",
           "gpu_listing", "model_card", "model_listing", "weights_words"]


# ---- GPUs --------------------------------------------------------------------------------

@dataclass(frozen=True)
class GpuCard:
    """One GPU in full: its figures in words, per line (``table()``), or its catalog
    entry in SI units (``to_dict()``)."""

    gpu: GpuSpec

    def to_dict(self) -> dict:
        return self.gpu.to_dict()

    def rows(self) -> list[tuple[str, str]]:
        """(what, figure in words) of each line under the name."""
        g = self.gpu
        return [
            ("SMs", g.sms), ("bf16 dense", f"{g.flops_bf16 / 1e12:g} TFLOP/s"),
            ("fp8 dense", f"{g.flops_fp8 / 1e12:g} TFLOP/s" if g.flops_fp8 else "none"),
            ("int8 dense", f"{g.flops_int8 / 1e12:g} TOP/s" if g.flops_int8 else "none"),
            ("fp4 dense", f"{g.flops_fp4 / 1e12:g} TFLOP/s" if g.flops_fp4 else "none"),
            ("HBM", f"{g.hbm_capacity / 1e9:.4g} GB ({g.hbm_capacity / 2**30:.1f} GiB) at "
                    f"{g.hbm_bandwidth / 1e12:g} TB/s"),
            # its links by count, not brand: a GPU file's nvlinks = 7 may be an MI300X's
            # Infinity Fabric links
            ("scale-up", f"{g.scaleup_bandwidth / 1e9:g} GB/s per direction"
                         + (f" over {g.nvlinks} links" if g.nvlinks else "")),
            ("scale-out", f"{g.scaleout_bandwidth * 8 / 1e9:g} Gb/s per direction"),
            ("TDP", f"{g.tdp:g} W"), ("largest instance", f"{g.max_instance} GPUs"),
            ("source", g.source)]

    def table(self) -> str:
        """The name, then a line per figure (no trailing newline)."""
        return "\n".join([self.gpu.name]
                         + [f"  {k:<17} {v}".rstrip() for k, v in self.rows()])


@dataclass(frozen=True)
class GpuListing:
    """GPUs by name, a row each."""

    gpus: Mapping[str, GpuSpec]

    def to_dict(self) -> dict:
        return {"gpus": [g.to_dict() for g in self.gpus.values()]}

    def table(self) -> str:
        """A header and a row per GPU: SMs, dense bf16 and fp8 TFLOP/s, HBM GB and TB/s,
        scale-up GB/s and scale-out Gb/s per direction, TDP and the largest instance."""
        lines = [f"{'name':<15}{'SMs':>5}{'bf16 TF/s':>11}{'fp8 TF/s':>10}{'HBM GB':>8}"
                 f"{'HBM TB/s':>10}{'up GB/s':>9}{'out Gb/s':>10}{'TDP W':>7}{'max TP':>8}"]
        for g in self.gpus.values():
            lines.append(f"{g.name:<15}{g.sms:>5}{g.flops_bf16 / 1e12:>11.1f}"
                         f"{g.flops_fp8 / 1e12:>10.1f}{g.hbm_capacity / 1e9:>8.1f}"
                         f"{g.hbm_bandwidth / 1e12:>10.3f}{g.scaleup_bandwidth / 1e9:>9.1f}"
                         f"{g.scaleout_bandwidth * 8 / 1e9:>10.0f}{g.tdp:>7.0f}"
                         f"{g.max_instance:>8}")
        return "\n".join(lines)


def gpu_card(gpu: GpuSpec) -> GpuCard:
    """One GPU in full."""
    return GpuCard(gpu)


def gpu_listing(gpu_file: str | None = None) -> GpuListing:
    """The catalog's GPUs, then those of ``gpu_file`` (a TOML/JSON file of ``[gpu.NAME]``
    tables; one of the catalog's name replaces it in its place)."""
    from compute.hardware import catalog, load_gpu_file

    return GpuListing({**catalog(), **(load_gpu_file(gpu_file) if gpu_file else {})})


# ---- models ------------------------------------------------------------------------------

#: How the one-line model summary names each kind of windowed layer
#: (compute.model_spec.WINDOW_KINDS).
_WINDOW_WORDS = {"sliding": "sliding window", "chunked": "chunked attention, chunks"}


def attention_kind(m: ModelSpec) -> str:
    """MLA (latent), MHA (a KV head per query head), MQA (one KV head) or GQA.

    >>> from compute.models import get_model
    >>> attention_kind(get_model("Llama-3-70B")), attention_kind(get_model("DeepSeek-V3"))
    ('GQA', 'MLA')
    """
    if m.is_mla:
        return "MLA"
    return "MHA" if m.kv_heads == m.heads else "MQA" if m.kv_heads == 1 else "GQA"


def weights_words(m: ModelSpec) -> str:
    """``141 GB bf16``, or with the MLPs stored apart ``487 GB bf16, MLP fp8 (124 layers)``."""
    from compute.units import counted

    kind = m.weight_dtype
    if m.mlp_weight_dtype:
        n = m.mlp_dtype_layers
        kind += f", MLP {m.mlp_weight_dtype}" + (f" ({counted(n, 'layer')})" if n else "")
    gb = m.weight_storage_bytes / 1e9
    return f"{gb:.0f} GB {kind}" if gb >= 9.5 else f"{gb:.3g} GB {kind}"  # small: not '0 GB'


@dataclass(frozen=True)
class ModelCard:
    """One model in full: a summary line (parameters, attention, KV cache per token,
    weights), the vision tower's where it has one, then each catalog key."""

    model: ModelSpec

    def to_dict(self) -> dict:
        return self.model.to_dict()

    def table(self) -> str:
        m = self.model
        lines = [f"{m.name}: {m.parameters / 1e9:.2f}B parameters"
                 + (f" ({m.active_parameters / 1e9:.2f}B active, mixture of {m.experts} "
                    f"experts, {m.experts_per_token} per token)" if m.is_moe else "")
                 + f"; {attention_kind(m)} attention, KV cache "
                 f"{m.layers * m.kv_elements_per_token * m.kv_bytes / 1e3:.4g} kB per token"
                 + (f" ({_WINDOW_WORDS[m.window_kind]} of {m.sliding_window:,} tokens on "
                    f"{m.windowed_layers} of {m.layers} layers)" if m.windowed_layers else "")
                 + f"; weights {weights_words(m)}"]
        if m.vision_parameters:
            lines.append(f"vision tower: {m.vision_parameters / 1e9:.3g}B parameters, "
                         f"{m.vision_bytes / 1e9:.3g} GB "
                         f"{m.embedding_dtype or m.weight_dtype}, counted in the weights' "
                         f"memory above, not in the parameters or per-token FLOPs (the "
                         f"encoder's compute of image tokens is not modelled)")
        lines += [f"  {k:<18} {v}".rstrip()   # "" (unset): no padding after
                  for k, v in m.to_dict().items()
                  if k not in ("name", "parameters", "active_parameters")]
        return "\n".join(lines)


@dataclass(frozen=True)
class ModelListing:
    """Models by name, a row each."""

    models: Mapping[str, ModelSpec]

    def to_dict(self) -> dict:
        return {"models": [m.to_dict() for m in self.models.values()]}

    def table(self) -> str:
        """A header and a row per model: parameters (all, active), layers, hidden, heads,
        KV heads, attention kind, FFN, experts (per token / all), vocabulary, MLP, weights."""
        width = max(16, *(len(m.name) + 1 for m in self.models.values()))
        lines = [f"{'name':<{width}}{'params':>9}{'active':>9}{'layers':>7}{'hidden':>7}"
                 f"{'heads':>6}{'kv':>4}{'attn':>5}{'ffn':>7}{'experts':>9}{'vocab':>8}  "
                 f"{'mlp':<6}weights"]
        for m in self.models.values():
            experts = f"{m.experts_per_token}/{m.experts}" if m.is_moe else "-"
            lines.append(f"{m.name:<{width}}{m.parameters / 1e9:>8.2f}B"
                         f"{m.active_parameters / 1e9:>8.2f}B{m.layers:>7}{m.hidden:>7}"
                         f"{m.heads:>6}{m.kv_heads:>4}{attention_kind(m):>5}{m.ffn:>7}"
                         f"{experts:>9}{m.vocab:>8}  {'gated' if m.gated_mlp else 'plain':<6}"
                         f"{weights_words(m)}")
        return "\n".join(lines)


def model_card(model: ModelSpec) -> ModelCard:
    """One model in full."""
    return ModelCard(model)


def model_listing(model_file: str | None = None) -> ModelListing:
    """The catalog's models, then those of ``model_file`` (a TOML/JSON file of
    ``[model.NAME]`` tables)."""
    from compute.models import load_model_file, model_catalog

    return ModelListing({**model_catalog(),
                         **(load_model_file(model_file) if model_file else {})})
