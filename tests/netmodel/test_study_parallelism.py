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


def test_time_split_figure_names_pipeline_stages(tmp_path, monkeypatch):
    # Mixtral-8x7B prefill on h100-dgx under --parallelism all is TP 1 x PP 2 (291.3
    # tokens/s/SM): the bar read 'tp1 b1' and the title 'its TP degree and batch'
    import matplotlib.text

    from netmodel.study import figure_kit
    from netmodel.study.compare import run_compare
    from netmodel.study.compare_plots import plot_compare_split

    texts = []

    def spy(fig, path):   # a title wrapped to a narrow figure reads as one line
        texts.extend(" ".join(t.get_text().split()) for t in fig.findobj(matplotlib.text.Text))

    monkeypatch.setattr(figure_kit, "save_figure", spy)
    r = run_compare(["Mixtral-8x7B"], ["h100-dgx"], ["prefill"], parallelism="all")
    best = r.rows[0]
    assert (best.tp, best.pp, best.ep, best.attention_dp) == (1, 2, 1, 1)
    plot_compare_split(r, tmp_path / "split.png")
    assert f"tp1 pp2 b{best.batch}" in texts
    assert any("its configuration, tp pp ep dp for TP, pipeline stages" in t for t in texts)
    texts.clear()
    plot_compare_split(run_compare(["Llama-3-8B"], ["h100-dgx"], ["decode"]),
                       tmp_path / "plain.png")
    assert any(t.endswith("(above each bar: its TP degree and batch)") for t in texts)
