"""The vision tower's bytes said once (h269 review of c173b10): ModelSpec.vision_bytes, the
tower's parameters in the token embedding's dtype, is what weight_storage_bytes,
compute.memory's weights and 'netmodel models' all count (each multiplied
vision_parameters by embedding_bytes on its own)."""

from dataclasses import replace
from pathlib import Path

from compute.memory import weight_bytes
from compute.models import get_model, load_hf_config
from compute.sharding import shards

DATA = Path(__file__).parent / "data" / "hf_families"


def test_qwen2_vl_tower_bytes_by_hand():
    m = load_hf_config(DATA / "qwen2-vl-7b-instruct.json")
    assert m.vision_parameters == 675_759_104            # HF's module sum (test_vision_tower_h267)
    assert m.vision_bytes == 675_759_104 * 2              # bf16: 1,351,518,208 B
    # int4 weights: the tower stays in the embedding's 16-bit dtype, as the embedding does
    q = replace(m, weight_dtype="int4", embedding_dtype="bf16")
    assert q.vision_bytes == m.vision_bytes


def test_every_count_takes_it():
    base = get_model("Llama-3-8B")
    m = replace(base, vision_parameters=1_000_000)        # 2,000,000 B in bf16
    assert m.vision_bytes == 2_000_000
    assert m.weight_storage_bytes - base.weight_storage_bytes == 2_000_000
    for tp in (1, 2, 4):
        added = weight_bytes(m, shards(m, [tp])) - weight_bytes(base, shards(base, [tp]))
        assert float(added[0, 0]) == 2_000_000 / tp
