"""The study's --parallelism reaches every part that searches configurations."""

from __future__ import annotations


def test_serving_part_spreads_pools_as_the_comparison_did(monkeypatch):
    # --parallelism all searched pipeline stages everywhere but part 6, whose dense pools
    # stayed at TP alone
    import netmodel.study.serving as serving
    from netmodel.study.compare import run_compare
    from netmodel.study.lite_gpu_parts import serving_part

    asked = []
    monkeypatch.setattr(serving, "serve", lambda *a, dimensions, **k: asked.append(dimensions))
    for how, dims in (("all", "all"), ("auto", "tp"), ("tp", "tp")):
        fab = run_compare(["Llama-3-8B"], ["h100-dgx"], ["decode"], parallelism=how,
                          max_batch=8)
        asked.clear()
        serving_part(fab, "Llama-3-8B", workloads=["coding"])
        assert asked == [dims], how
