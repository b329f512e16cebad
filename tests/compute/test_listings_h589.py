"""compute.listings: what ``netmodel hardware`` and ``netmodel models`` print, made by one
library call each, checked against the catalogs' published figures and hand-derived sizes;
the commands print exactly the result objects' ``to_dict()`` and ``table()``."""

from __future__ import annotations

import dataclasses
import json

from compute.hardware import catalog, get_gpu
from compute.listings import (
    attention_kind,
    gpu_card,
    gpu_listing,
    model_card,
    model_listing,
    weights_words,
)
from compute.models import get_model, model_catalog
from tests.netmodel.cli_helpers import run_cli


def test_gpu_card_says_the_h100s_published_figures():
    rows = dict(gpu_card(get_gpu("H100-SXM")).rows())
    # H100 SXM5 datasheet: 989.4 TFLOP/s dense bf16, 1978.9 fp8, 3.35 TB/s HBM3,
    # 18 NVLink 4 links at 450 GB/s per direction, 700 W
    assert rows["SMs"] == 132
    assert rows["bf16 dense"] == "989.4 TFLOP/s"
    assert rows["fp8 dense"] == "1978.9 TFLOP/s"
    assert rows["fp4 dense"] == "none"   # Hopper has no fp4 tensor cores
    assert rows["scale-up"] == "450 GB/s per direction over 18 links"
    assert rows["scale-out"] == "400 Gb/s per direction"   # 50 GB/s = 400 Gb/s
    assert rows["TDP"] == "700 W" and rows["largest instance"] == "8 GPUs"
    # 85.52 GB is 85.52e9 / 2**30 = 79.6 GiB
    assert rows["HBM"] == "85.52 GB (79.6 GiB) at 3.35 TB/s"


def test_gpu_card_table_is_the_name_then_a_line_a_figure():
    card = gpu_card(get_gpu("Lite"))
    lines = card.table().splitlines()
    assert lines[0] == "Lite" and len(lines) == 1 + len(card.rows())
    assert card.to_dict() == get_gpu("Lite").to_dict()


def test_gpu_listing_has_a_row_per_catalog_gpu_and_the_files(tmp_path):
    listing = gpu_listing()
    lines = listing.table().splitlines()
    assert len(lines) == 1 + len(catalog())
    assert [ln.split()[0] for ln in lines[1:]] == list(catalog())
    h100 = next(ln for ln in lines if ln.startswith("H100-SXM "))
    # SMs, bf16 and fp8 TF/s, HBM GB and TB/s, up GB/s, out Gb/s, TDP, max TP
    assert h100.split()[1:] == ["132", "989.4", "1978.9", "85.5", "3.350", "450.0", "400",
                                "700", "8"]
    f = tmp_path / "g.toml"
    f.write_text('[gpu."Quarter"]\nderive_from = "H100-SXM"\nfraction = 0.25\n'
                 'source = "a quarter of an H100"\n')
    with_file = gpu_listing(str(f))
    assert list(with_file.gpus) == [*catalog(), "Quarter"]
    quarter = with_file.table().splitlines()[-1].split()
    assert quarter[:3] == ["Quarter", "33", "247.3"]   # 132 / 4 SMs, 989.4 / 4 TFLOP/s
    assert [g["name"] for g in with_file.to_dict()["gpus"]][-1] == "Quarter"


def test_attention_kinds():
    llama = get_model("Llama-3-70B")   # 64 query heads, 8 KV heads
    assert attention_kind(llama) == "GQA"
    assert attention_kind(get_model("DeepSeek-V3")) == "MLA"
    assert attention_kind(dataclasses.replace(llama, kv_heads=64)) == "MHA"
    assert attention_kind(dataclasses.replace(llama, kv_heads=1)) == "MQA"


def test_model_card_sizes_by_hand():
    m = get_model("Llama-3-70B")
    first = model_card(m).table().splitlines()[0]
    # 80 layers x (K + V) x 8 KV heads x 128 dims x 2 bytes = 327,680 B a token
    assert "KV cache 327.7 kB per token" in first
    assert first.startswith(f"Llama-3-70B: {m.parameters / 1e9:.2f}B parameters; GQA")
    # bf16: 2 bytes a parameter, 70.55e9 x 2 = 141 GB
    assert weights_words(m) == f"{m.weight_storage_bytes / 1e9:.0f} GB bf16"
    assert round(m.weight_storage_bytes / 1e9) == 141
    assert model_card(m).to_dict() == m.to_dict()


def test_model_card_of_a_mixture_of_experts():
    first = model_card(get_model("DeepSeek-V3")).table().splitlines()[0]
    assert "(37.55B active, mixture of 256 experts, 8 per token); MLA attention" in first
    assert first.endswith("weights 673 GB fp8")


def test_model_listing_row_per_model():
    listing = model_listing()
    lines = listing.table().splitlines()
    assert len(lines) == 1 + len(model_catalog())
    mixtral = next(ln for ln in lines if ln.startswith("Mixtral-8x7B "))
    assert "2/8" in mixtral.split()   # 2 of 8 experts a token
    assert len(listing.to_dict()["models"]) == len(model_catalog())


def test_the_commands_print_exactly_the_objects():
    assert run_cli(["hardware"]).output == gpu_listing().table() + "\n"
    assert run_cli(["hardware", "H100-SXM"]).output == \
        gpu_card(get_gpu("H100-SXM")).table() + "\n"
    assert json.loads(run_cli(["hardware", "--json"]).output) == gpu_listing().to_dict()
    assert run_cli(["models"]).output == model_listing().table() + "\n"
    out = run_cli(["models", "Mixtral-8x7B", "--json"])
    assert json.loads(out.output) == model_card(get_model("Mixtral-8x7B")).to_dict()
