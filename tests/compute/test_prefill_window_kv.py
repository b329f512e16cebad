"""A prefill step holds the whole prompt's KV cache in every layer, windowed ones too.

The step writes the keys and values of all its prompt tokens into every layer's cache
before attention reads them (the attention stage counts those writes); a windowed layer
frees the blocks that left its window only after the step. vLLM's hybrid KV-cache manager
allocates a sliding-window layer ``sliding_window - 1`` tokens plus the step's newly
scheduled ones, and a chunked layer ``attention_chunk_size`` plus them
(``SlidingWindowSpec`` / ``ChunkedLocalAttentionSpec.max_memory_usage_bytes`` in
vllm/v1/kv_cache_interface.py): for an unchunked prefill of P tokens, P in every layer. The
memory fit counted only ``min(P, window)`` there, as after the step. Decode is unchanged:
a windowed layer holds ``min(context, window)``.

Expected values by hand; configs from tests/compute/data (sources in their READMEs).
"""

from pathlib import Path

import numpy as np
import pytest

from compute.evaluate_one import evaluate
from compute.memory import kv_cache_bytes
from compute.models import get_model, load_hf_config
from compute.phases import Slo, Workload
from compute.roofline import evaluate_grid
from compute.search import search
from compute.sharding import shards

DATA = Path(__file__).parent / "data"
GEMMA3_27B = DATA / "hf_families" / "gemma-3-27b-it.json"
SCOUT = DATA / "hf_families" / "llama-4-scout-17b-16e-instruct.json"

# Gemma-3-27B: 62 layers, 16 KV heads of 128, bf16: 62 x 2 x 16 x 128 x 2 = 507,904 B a
# token over every layer; a 32,768-token prompt 16,642,998,272 B (before: 52 of the 62
# layers counted at the 1,024-token window, 3,117,416,448 B)
GEMMA_PREFILL_32K = 62 * 2 * 16 * 128 * 2 * 32768


def test_gemma3_prefill_holds_the_whole_prompt_in_every_layer():
    m = load_hf_config(GEMMA3_27B)
    assert GEMMA_PREFILL_32K == 16_642_998_272
    r = evaluate(m, "H100-SXM", 1, 1, phase="prefill", prompt=32768)
    assert r.memory.kv_cache == GEMMA_PREFILL_32K
    kv = kv_cache_bytes(m, shards(m, [1]), np.array([[1.0]]), Workload("prefill", 32768, 32768))
    assert float(kv[0, 0]) == GEMMA_PREFILL_32K
    g = evaluate_grid(m, "H100-SXM", [1], [1], Workload("prefill", 32768, 32768))
    assert float(g.kv_cache[0, 0]) == GEMMA_PREFILL_32K


def test_gemma3_decode_still_holds_the_window():
    # decode at 32,768: 10 full layers x 32,768 + 52 windowed x 1,024 tokens, 8,192 B each
    m = load_hf_config(GEMMA3_27B)
    r = evaluate(m, "H100-SXM", 1, 1, phase="decode", context=32768)
    assert r.memory.kv_cache == (10 * 32768 + 52 * 1024) * 2 * 16 * 128 * 2


def test_gpt_oss_120b_long_prompts_no_longer_fit_three_to_an_h100():
    # 36 layers x 2 x 8 KV heads x 64 x 2 B = 73,728 B a token; 3 prompts of 32,768:
    # 7.248 GB of KV + 65.19 GB of weights + 5.66 GB of activations > 76.97 GB usable
    # (before: 18 windowed layers at 128 tokens, 3.64 GB, and batch 3 fitted)
    m = get_model("gpt-oss-120b")
    r = evaluate(m, "H100-SXM", 1, 3, phase="prefill", prompt=32768)
    assert r.memory.kv_cache == 3 * 32768 * 73728
    assert not r.memory.fits
    best = search(m, "H100-SXM", "prefill", prompt=32768, tp=[1], slo=Slo(ttft=100.0)).best
    assert best.batch == 2


def test_llama4_scout_chunked_prefill_holds_the_whole_prompt():
    # 48 layers, 8 KV heads of 128; at TP 8 one head a GPU: 48 x 2 x 128 x 2 = 24,576 B a
    # token; 65,536 tokens 1,610,612,736 B (before: 36 chunked layers at 8,192 tokens,
    # 553,648,128 B)
    m = load_hf_config(SCOUT)
    r = evaluate(m, "H200-SXM", 8, 1, phase="prefill", prompt=65536)
    assert r.memory.kv_cache == 48 * 2 * 128 * 2 * 65536 == 1_610_612_736


@pytest.mark.parametrize("prompt", [100, 128, 129, 1500])
def test_unwindowed_and_short_prompts_unchanged(prompt):
    w = Workload("prefill", prompt, prompt)
    assert get_model("gpt-oss-20b").kv_tokens_in_step(w) == prompt
    assert get_model("Llama-3-70B").kv_tokens_in_step(w) == prompt
