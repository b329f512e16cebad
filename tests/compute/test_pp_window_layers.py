"""Pipeline stages of models that interleave windowed and full-attention layers count their
own layers of each kind: the KV cache a stage holds (the memory fit is the fullest stage's)
and the attention time it runs (the period is the slowest stage's), where the stage used
to run ``n_s`` times the pass's average layer.

Which layers are full attention, as HF transformers builds them (the rule of every
family: layer ``i`` is full when ``i + 1`` is a multiple of ``k``, model key
``full_layer_step``):

* gpt-oss-120b / -20b: ``layer_types`` in openai/gpt-oss-120b and -20b config.json,
  ``"sliding_attention", "full_attention", ...`` (sliding first): ``k = 2``;
* Gemma-3: Gemma3TextConfig (transformers models/gemma3/configuration_gemma3.py),
  ``"sliding_attention" if bool((i + 1) % self._sliding_window_pattern) else
  "full_attention"``, ``sliding_window_pattern`` 6 by default (google/gemma-3-27b-it's
  config.json gives none): ``k = 6``, full layers 5, 11, ..., 59 of 62;
* Gemma-2: Gemma2Config, ``(i + 1) % 2``: ``k = 2``;
* Llama-4: Llama4TextConfig, ``no_rope_layers[i] = int((i + 1) % no_rope_layer_interval
  != 0)``, interval 4, full attention on the NoPE layers: ``k = 4``;
* Cohere2: Cohere2Config, ``sliding_window_pattern`` 4: ``k = 4``.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from compute.comm import RingAlphaBeta
from compute.errors import UserError
from compute.hf_config import load_hf_config
from compute.memory import stage_kv_layers
from compute.models import ModelSpec, get_model
from compute.parallel import Parallelism, layout, stage_mix
from compute.phases import Workload
from compute.roofline import evaluate_grid

HF = Path(__file__).parent / "data" / "hf_families"
BW = 3.35e12            # H100-SXM HBM bytes/s (compute/data/gpus.toml)
PEAK = 989.4e12         # H100-SXM dense bf16 FLOP/s


def gemma3():
    return load_hf_config(HF / "gemma-3-27b-it.json")


def _write(tmp_path, cfg) -> Path:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    return path


def test_layer_patterns_as_the_published_configs_place_them(tmp_path):
    g3 = gemma3()
    assert (g3.layers, g3.sliding_layers, g3.full_layer_step) == (62, 52, 6)
    scout = load_hf_config(HF / "llama-4-scout-17b-16e-instruct.json")
    assert (scout.layers, scout.sliding_layers, scout.full_layer_step,
            scout.window_kind) == (48, 36, 4, "chunked")
    cmd = load_hf_config(HF / "command-a-03-2025.json")
    assert (cmd.layers, cmd.sliding_layers, cmd.full_layer_step) == (64, 48, 4)
    for name, layers in (("gpt-oss-120b", 36), ("gpt-oss-20b", 24)):
        m = get_model(name)
        assert (m.layers, m.sliding_layers, m.full_layer_step) == (layers, layers // 2, 2)
    # Gemma-2 (no layer_types: every other layer, sliding first) and an explicit
    # layer_types list with the full layers elsewhere (the first two: no step, spread evenly)
    base = dict(model_type="gemma2", num_hidden_layers=42, hidden_size=3584,
                num_attention_heads=16, num_key_value_heads=8, head_dim=256,
                intermediate_size=14336, vocab_size=256000, sliding_window=4096)
    g2 = load_hf_config(_write(tmp_path, base))
    assert (g2.sliding_layers, g2.full_layer_step) == (21, 2)
    types = ["full_attention"] * 2 + ["sliding_attention"] * 40
    odd = load_hf_config(_write(tmp_path, {**base, "layer_types": types}))
    assert (odd.sliding_layers, odd.full_layer_step) == (40, 0)
    types = ["full_attention" if (i + 1) % 3 == 0 else "sliding_attention" for i in range(42)]
    three = load_hf_config(_write(tmp_path, {**base, "layer_types": types}))
    assert (three.sliding_layers, three.full_layer_step) == (28, 3)


def test_full_layer_step_is_checked():
    kw = dict(name="g", layers=36, hidden=64, heads=4, kv_heads=4, head_dim=16, ffn=128,
              vocab=100, sliding_window=128)
    with pytest.raises(UserError, match="full_layer_step 3 .* windows 24 of the 36 layers, "
                                        "but sliding_layers is 18"):
        ModelSpec(**kw, sliding_layers=18, full_layer_step=3)
    with pytest.raises(UserError, match="full_layer_step 1 would make every layer full"):
        ModelSpec(**kw, sliding_layers=18, full_layer_step=1)
    with pytest.raises(UserError, match="needs sliding_window and sliding_layers"):
        ModelSpec(**kw, full_layer_step=2)   # every layer windowed
    assert ModelSpec(**kw, sliding_layers=18, full_layer_step=2).layer_mix(0, 9) == (0, 5)


def test_stage_mix_counts_each_stages_own_full_layers():
    """Gemma-3-27B's 62 layers, full attention on layers 5, 11, ..., 59 (10 of them). PP 2
    (31 + 31): 5 + 5. PP 5 (vLLM: 12, 12, 13, 13, 12 layers, stages 0-11, 12-23, 24-36,
    37-49, 50-61): full layers {5, 11}, {17, 23}, {29, 35}, {41, 47}, {53, 59}, 2 each;
    spread evenly (the old count, floor(end x 10 / 62) - floor(start x 10 / 62)) they were
    1, 2, 2, 3, 2. PP 3 (21, 21, 20): 3, 4, 3 (evenly: 3, 3, 4)."""
    m = gemma3()
    full = lambda p: (stage_mix(m, p)[:, 0] - stage_mix(m, p)[:, 2]).astype(int).tolist()  # noqa: E731
    assert full(2) == [5, 5]
    assert full(5) == [2, 2, 2, 2, 2]
    assert full(3) == [3, 4, 3]
    assert stage_mix(m, 5)[:, 0].astype(int).tolist() == [12, 12, 13, 13, 12]


def test_kv_cache_of_each_stage_and_the_fullest_by_hand():
    """Gemma-3-27B on H100s, TP 1, decode at 32,768 tokens. A token adds 2 x 16 KV heads x
    128 x 2 B = 8,192 B to a layer; a full layer keeps 32,768 tokens, a windowed one 1,024.
    PP 5, a sequence's entries on each stage: (2 x 32,768 + 10 x 1,024), (2 + 10), (2 +
    11), (2 + 11), (2 + 10) = 75,776, 75,776, 76,800, 76,800, 75,776 (spread evenly they
    were 1 full + 11, 2 + 10, 2 + 11, 3 + 10, 2 + 10: stage 3's 108,544, 41% high). PP 3 at
    batch 16 (a stage keeps the cache of every sequence in flight): stage 0 (21 layers and
    the embedding, 3 full + 18 windowed), stage 1 (21 layers, 4 + 17), stage 2 (20 layers
    and the LM head, 3 + 17); the fullest, weights and cache together, is stage 1 once its
    extra full layer's (32,768 - 1,024) x 8,192 B a sequence outweighs the 2.82 GB
    embedding (above 10.8 sequences): (4 x 32,768 + 17 x 1,024) x 8,192 x 16 =
    19,461,570,560 B. Spread evenly, stage 2 held 4 full + 16 windowed and was the
    fullest (with the LM head): 19,327,352,832 B of cache. PP 2: both stages 5 full + 26
    windowed, (5 x 32,768 + 26 x 1,024) x 8,192 x 16 = 24,964,497,408 B."""
    m = gemma3()
    w = Workload("decode", 1500, 32768)
    sh = layout(m, [Parallelism(1, 5)])
    assert stage_kv_layers(m, sh, w)[0].tolist() == [75776, 75776, 76800, 76800, 75776]
    per = 8192
    for pp, full, win in ((3, 4, 17), (2, 5, 26)):
        g = evaluate_grid(m, "H100-SXM", [Parallelism(1, pp)], [16], w)
        assert float(np.ravel(g.kv_cache)[0]) == (full * 32768 + win * 1024) * per * 16


def _per_layer_rest(g) -> float:
    """The grid's per-layer stage times but attention's, summed (each runs once a layer
    here: TP only, no EP or attention DP)."""
    skip = ("embedding", "lm_head", "attention", "pp_send", "pipeline_wait")
    return sum(float(g.stage_time[k].ravel()[0]) for k, n in enumerate(g.stages)
               if n not in skip and g.counts[k][0] > 0)


def test_decode_period_is_the_stage_with_the_most_full_layers():
    """gpt-oss-120b on 32 H100s, TP 8 x PP 4 (9 layers a stage), decode at 32,768 tokens,
    batch 64 in 4 micro-batches of 16. Stage 0 (layers 0-8) holds 4 full layers and the
    embedding, stage 1 5 full, stage 2 4, stage 3 5 and the LM head. Per GPU (8 query heads
    of 64, one KV head, bf16), one full layer's attention reads 16 x 8 x 64 x 2 B of
    queries, writes as many outputs, reads 16 x 32,768 x 2 x 64 x 2 B of cached K and V and
    writes 16 x 2 x 64 x 2 B: 134,254,592 B, 40.08 us at 3.35 TB/s (its 1.07 GFLOP take
    1.09 us); a windowed layer reads 128 cached tokens: 561,152 B, 0.168 us. Both are
    memory-bound, so the pass's attention (their mean, 20.12 us) is exact at PP 1; a stage
    runs its own: stage 3 = 9 x (the other per-layer stages) + 5 x 40.08 + 4 x 0.168 us +
    the LM head, the slowest, 56.4 us over stage 0 (one more full layer, 39.91 us, and the
    LM head over the embedding). TBT = 4 micro-batches x that period; at the average
    every stage ran 9 x 20.12 us of attention, which put stage 3 19.95 us short: TBT 79.8
    us longer than that (1.9473 -> 2.0271 ms)."""
    m = get_model("gpt-oss-120b")
    w = Workload("decode", 1500, 32768)
    g = evaluate_grid(m, "H100-SXM", [Parallelism(8, 4)], [64], w)
    t_full = (16 * 8 * 64 * 2 * 2 + 16 * 32768 * 2 * 64 * 2 + 16 * 2 * 64 * 2) / BW
    t_win = (16 * 8 * 64 * 2 * 2 + 16 * 128 * 2 * 64 * 2 + 16 * 2 * 64 * 2) / BW
    assert 4 * 8 * 64 * 16 * 32768 / PEAK < t_full      # memory-bound
    att = float(g.stage_time[g.stages.index("attention")].ravel()[0])
    assert att == pytest.approx((t_full + t_win) / 2, rel=1e-12)
    rest = _per_layer_rest(g)
    emb = float(g.stage_time[g.stages.index("embedding")].ravel()[0])
    head = float(g.stage_time[g.stages.index("lm_head")].ravel()[0])
    stages = [9 * rest + 4 * t_full + 5 * t_win + emb, 9 * rest + 5 * t_full + 4 * t_win,
              9 * rest + 4 * t_full + 5 * t_win, 9 * rest + 5 * t_full + 4 * t_win + head]
    assert int(np.argmax(stages)) == 3
    assert stages[3] - stages[0] == pytest.approx(t_full - t_win + head - emb, rel=1e-9)
    tbt = float(g.latency.ravel()[0])
    assert tbt == pytest.approx(4 * stages[3], rel=1e-12)
    averaged = 9 * rest + 9 * att + head                 # what the stage was timed at
    assert tbt - 4 * averaged == pytest.approx(2 * (t_full - t_win), rel=1e-9)
    # the KV cache: the fullest stage, 5 full + 4 windowed, 64 sequences x 256 B a token
    assert float(np.ravel(g.kv_cache)[0]) == 64 * (5 * 32768 + 4 * 128) * 256


def test_prefill_stage_runs_each_kind_at_its_own_bound():
    """gpt-oss-120b, TP 8 x PP 4, prefill of one 32,768-token prompt: a full layer's
    attention is compute-bound, 4 x 8 x 64 x 32,768 x 32,769 / 2 FLOP = 1.0995 TFLOP, 1.111
    ms at 989.4 TFLOP/s; a 128-token windowed layer's (128 x 129 / 2 + 32,640 x 128 pairs,
    8.573 GFLOP, 8.67 us) is bound by its 32,768 x 2,560 B = 83.9 MB of Q, O and K, V
    traffic, 25.04 us. The pass's attention is the larger of the mean compute (560.0 us)
    and the mean memory time (25.04 us), 8.2 us a layer under the mean of the two layers'
    times; and a stage ran 9 of it. Now stage 0 runs its 4 full + 5 windowed layers
    (4,570 us, not 5,040) and the embedding (824 us, its all-reduce on the ring passed by
    name: RingAlphaBeta, 1.9 us a step at 0.92 x 450 GB/s), stage 3 its 5 + 4
    (5,657 us) and the LM head (43 us): stage 3 is the slowest, 305 us over stage 0, and
    the period (the interval of a one-prompt batch) is 29.935 ms, 164 us under the 30.099
    ms of stage 0 at the average."""
    m = get_model("gpt-oss-120b")
    p = 32768
    w = Workload("prefill", p, p)
    g = evaluate_grid(m, "H100-SXM", [Parallelism(8, 4)], [1], w,
                      comm=RingAlphaBeta(bandwidth=450e9))   # the ring, by name
    c_full = 4 * 8 * 64 * (p * (p + 1) / 2) / PEAK
    win_pairs = 128 * 129 / 2 + (p - 128) * 128
    c_win = 4 * 8 * 64 * win_pairs / PEAK
    mem = p * (8 * 64 * 2 * 2 + 2 * 64 * 2 * 2) / BW     # Q in, O out, K and V read and written
    assert c_win < mem < c_full
    att = float(g.stage_time[g.stages.index("attention")].ravel()[0])
    assert att == pytest.approx((c_full + c_win) / 2, rel=1e-12)   # the pass's average
    rest = _per_layer_rest(g)
    emb = float(g.stage_time[g.stages.index("embedding")].ravel()[0])
    head = float(g.stage_time[g.stages.index("lm_head")].ravel()[0])
    stage0 = 9 * rest + 4 * c_full + 5 * mem + emb
    stage3 = 9 * rest + 5 * c_full + 4 * mem + head
    stages = [stage0, 9 * rest + 5 * c_full + 4 * mem, 9 * rest + 4 * c_full + 5 * mem, stage3]
    assert int(np.argmax(stages)) == 3
    assert stage3 - stage0 == pytest.approx(305e-6, abs=1e-6)
    period = float(g.interval.ravel()[0])
    assert period == pytest.approx(stage3, rel=1e-12)
    averaged = 9 * rest + 9 * att + emb                  # stage 0 at the average
    assert averaged - period == pytest.approx(164e-6, abs=1e-6)


def test_pp1_is_the_pass_unchanged_and_the_pattern_moves_only_stages():
    """PP 1 (plain TP, or a Parallelism of PP 1 beside pipelined rows) does not depend on
    where the full layers sit: bit for bit the same with full_layer_step 0 (spread evenly),
    and the same as a plain TP grid; the pass's attention is the layers' average
    (gpt-oss-120b decode at 32,768 tokens, TP 8, 64 sequences: 18 full layers of 32,768
    tokens and 18 windowed of 128, mean 16,448 read a sequence)."""
    w = Workload("decode", 1500, 32768)
    for m in (get_model("gpt-oss-120b"), gemma3()):
        even = replace(m, full_layer_step=0)
        batches = np.arange(1, 200)
        plain = evaluate_grid(m, "H100-SXM", [1, 2, 8], batches, w)
        for model in (m, even):
            mixed = evaluate_grid(model, "H100-SXM", [Parallelism(t, p) for t in (1, 2, 8)
                                                      for p in (1, 2, 4)], batches, w)
            rows = [0, 3, 6]    # the PP 1 rows
            assert np.array_equal(mixed.latency[rows], plain.latency)
            assert np.array_equal(mixed.kv_cache[rows] if np.ndim(mixed.kv_cache) == 2
                                  else mixed.kv_cache, plain.kv_cache)
            k = mixed.stages.index("attention")
            assert np.array_equal(mixed.stage_time[k][rows],
                                  plain.stage_time[plain.stages.index("attention")])
    m = get_model("gpt-oss-120b")
    g = evaluate_grid(m, "H100-SXM", [8], [64], w)
    hbm = 64 * 8 * 64 * 2 * 2 + 64 * 16448 * 2 * 64 * 2 + 64 * 2 * 64 * 2
    assert float(g.stage_time[g.stages.index("attention")].ravel()[0]) == \
        pytest.approx(hbm / BW, rel=1e-12)
