"""The fit's many-row paths (compute.profile_fit._Batch, _all_components) give the per-row
numbers to the last bit: the residuals the optimiser sees (so the fitted profile), the
report's roofline and calibrated figures (those of roofline() and predict())."""

import itertools

import numpy as np
import pytest

from compute.errors import UserError
from compute.measurements import Measurement
from compute.profile_fit import (
    _all_components,
    _Batch,
    _Components,
    fit_profile,
    predict,
    roofline,
)
from compute.profiles import EngineProfile, neutral

PROFILES = (
    neutral("n"),
    EngineProfile("all", gemm_efficiency=0.6, attention_efficiency=0.3, hbm_fraction=0.85,
                  layer_overhead_s=5e-5, step_overhead_s=2e-3,
                  decode_sequence_overhead_s=4e-5, token_overhead_s=3e-11),
    EngineProfile("curve", gemm_curve=((1.0, 0.2), (1e3, 0.7)), layer_overhead_s=1e-4,
                  decode_sequence_overhead_s=1e-5),
    EngineProfile("eff", gemm_efficiency=0.37, attention_efficiency=0.71, hbm_fraction=0.93),
)


def _runnable(m: Measurement) -> bool:
    try:
        _Components(m)
    except UserError:   # does not fit the GPU, or a TP degree the model refuses
        return False
    return True


def varied() -> list[Measurement]:
    """Steps of dense, MoE and windowed models on three GPUs at TP 1-8, decode and prefill,
    several batches of each configuration (rows that share a grid), with expert and
    pipeline parallelism for some; those that can run."""
    ms = []
    models = ("Llama-3-8B", "Llama-3-70B", "Mixtral-8x7B", "gpt-oss-20b", "gpt-oss-120b",
              "Qwen1.5-MoE-A2.7B", "Llama-2-70B")
    gpus = ("A100-SXM-80GB", "H100-SXM", "H200-SXM", "B200-HGX")
    for model, gpu, tp in itertools.product(models, gpus, (1, 2, 4, 8)):
        for b in (1, 3, 17, 64, 250):
            ms.append(Measurement(model, gpu, tp, "decode", b, 1.0, context=1000 + 37 * b))
            ms.append(Measurement(model, gpu, tp, "decode", b, 1.0, context=2048))
        for prompt, b in ((256, 1), (256, 4), (3000, 2), (1000, 8)):
            ms.append(Measurement(model, gpu, tp, "prefill", b, 1.0, prompt=prompt))
    for b in (1, 16):
        ms.append(Measurement("Mixtral-8x7B", "H100-SXM", 4, "decode", b, 1.0, context=900,
                              ep=4))
        ms.append(Measurement("Llama-3-70B", "H100-SXM", 4, "decode", b, 1.0, context=900,
                              pp=2))
        ms.append(Measurement("Llama-3-70B", "H100-SXM", 4, "prefill", b, 1.0, prompt=512,
                              pp=2))
    return [m for m in ms if _runnable(m)]


@pytest.fixture(scope="module")
def rows():
    ms = varied()
    assert len(ms) > 1200
    assert sum(m.pp > 1 for m in ms) == 4 and sum(m.ep > 1 for m in ms) == 2
    return ms, [_Components(m) for m in ms]


def _bits(x) -> bytes:
    return np.asarray(x, dtype=float).tobytes()


def test_rowwise_sum_is_each_rows_pairwise_sum():
    """The premise of _Batch: numpy's sum over the last axis of a C-contiguous (rows,
    stages) array adds each row as the 1-D sum of that row does (pairwise), for every
    stage count a step has, and that differs from adding stage after stage."""
    rng = np.random.default_rng(7)
    differs = 0
    for s in range(1, 40):
        a = rng.lognormal(-8, 3, size=(257, s))
        want = np.array([a[i].sum() for i in range(len(a))])
        assert _bits(a.sum(axis=1)) == _bits(want), s
        in_order = a[:, 0].copy()
        for k in range(1, s):
            in_order = in_order + a[:, k]
        differs += int((in_order != want).sum())
    assert differs > 0   # the two orders are told apart by this data


def test_grouped_components_equal_one_cell_components(rows, monkeypatch):
    ms, parts = rows
    from compute import profile_fit

    grids = []
    real = profile_fit._grid_of
    monkeypatch.setattr(profile_fit, "_grid_of",
                        lambda m, *a: grids.append(m) or real(m, *a))
    grouped = _all_components(ms, [None] * len(ms), {})
    # the grouped path was taken (no row-by-row fallback): one grid per configuration
    keys = {(m.model, m.gpu, m.parallelism, m.phase, m.prompt, m.context, m.expert_skew)
            for m in ms}
    assert len(grids) == len(keys) < len(ms)
    shared = len(ms) - len({(m.model, m.gpu, m.parallelism, m.phase, m.prompt, m.context)
                            for m in ms})
    assert shared > 400   # many rows come from another row's grid
    for m, a, b in zip(ms, grouped, parts, strict=True):
        for f in ("count", "compute", "memory", "network", "intensity", "gemm", "attention"):
            assert getattr(a, f).tobytes() == getattr(b, f).tobytes(), (f, m)
        assert (a.layers, a.batch, a.phase, a.tokens, a.hidden, a.whole) == \
            (b.layers, b.batch, b.phase, b.tokens, b.hidden, b.whole)


def test_vectorized_residual_latencies_equal_the_per_row_ones(rows):
    ms, parts = rows
    batch = _Batch(parts)
    for p in PROFILES:
        assert _bits(batch.latencies(p)) == _bits([c.latency(p) for c in parts]), p.name


def test_in_order_latencies_equal_predict_and_roofline(rows):
    ms, parts = rows
    batch = _Batch(parts)
    pick = list(range(0, len(ms), 7)) + [i for i, m in enumerate(ms) if m.pp > 1 or m.ep > 1]
    for p in PROFILES:
        got = batch.latencies(p, in_order=True)
        assert _bits(got[pick]) == _bits([predict(p, ms[i]) for i in pick]), p.name
    roof = batch.latencies(neutral("r"), in_order=True, whole=False)
    plain = [i for i in pick if ms[i].pp == 1]
    assert _bits(roof[plain]) == _bits([roofline(ms[i]) for i in plain])
    assert np.isnan(roof[[i for i, m in enumerate(ms) if m.pp > 1]]).all()


def test_fit_report_is_what_roofline_and_predict_give(rows):
    ms, _ = rows
    truth = PROFILES[1]
    some = [m for i, m in enumerate(ms) if i % 40 == 0 or m.pp > 1]
    some = [Measurement(**{**m.__dict__, "latency_s": predict(truth, m) * (1.01 + 0.01 * (i % 5))})
            for i, m in enumerate(some)]
    r = fit_profile(some, fit=["gemm_efficiency", "layer_overhead_s", "hbm_fraction"])
    for pt in r.points:
        assert pt.roofline_s == roofline(pt.measurement)
        assert pt.predicted_s == predict(r.profile, pt.measurement)


def test_first_bad_row_is_named_when_a_later_rows_group_fails_first():
    """Row 1's configuration (built first, one grid with row 3's batch) cannot hold row 3's
    step (5,000 sequences of 1,000 tokens: 82 kB of KV cache a token a GPU, 410 GB),
    and row 2 names a TP degree the model refuses: the error names row 2, the first bad
    row, as the row-by-row path does, not row 3 (nor an empty message)."""
    ms = [Measurement("Llama-3-70B", "H100-SXM", 4, "decode", 1, 0.02, context=1000),
          Measurement("Llama-3-8B", "H100-SXM", 3, "decode", 1, 0.02, context=1000),
          Measurement("Llama-3-70B", "H100-SXM", 4, "decode", 5000, 0.02, context=1000)]
    with pytest.raises(UserError, match=r"^measurement 2 \(Llama-3-8B TP 3 .*TP degree 3 "
                                        r"does not divide the 32 attention heads"):
        fit_profile(ms)
    with pytest.raises(UserError, match=r"^measurement 2 \(Llama-3-70B TP 4 decode batch 5000 "
                                        r"context 1000 on H100-SXM\) cannot have run: needs "):
        fit_profile([ms[0], ms[2]])
