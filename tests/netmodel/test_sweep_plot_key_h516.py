"""sweep.png keys only what tells its lines apart (h516).

A sweep of one scenario drew a key of one entry under its one line ('lite-flat@Lite'), and
a second parameter of one value added it to every entry ('lite-flat@Lite,
adjust.bandwidth_scale=2'), a style for nothing to tell apart. What is one for every line
is now said once, in the title: one line a panel has no key (unless the figure marks
something else: an infeasible value's x), a second parameter of one value no suffix.
"""

import pytest

from netmodel.study import compare_plots, figure_kit
from netmodel.study.sweep import parse_param, run_sweep

HOP = "adjust.hop_latency=0.1us,1us"


def _drawn(result, monkeypatch, tmp_path) -> dict:
    kept = {}
    save = figure_kit.save_figure

    def keep(fig, path):
        kept["title"] = fig._suptitle.get_text()
        kept["keys"] = [[t.get_text() for t in legend.get_texts()] for legend in fig.legends]
        save(fig, path)

    monkeypatch.setattr(figure_kit, "save_figure", keep)
    compare_plots.plot_sweep(result, tmp_path / "sweep.png")
    assert (tmp_path / "sweep.png").stat().st_size > 0
    return kept


@pytest.fixture(scope="module")
def one_line():
    return run_sweep(["lite-flat"], [parse_param(HOP, ["lite-flat"])], ["Llama-3-8B"],
                     ["decode"], max_batch=16)


@pytest.fixture(scope="module")
def one_y():
    s = ["lite-flat", "h100-dgx"]
    return run_sweep(s, [parse_param(HOP, s), parse_param("adjust.bandwidth_scale=2", s)],
                     ["Llama-3-8B"], ["decode"], max_batch=16)


def test_one_line_has_no_key_and_its_name_in_the_title(one_line, monkeypatch, tmp_path):
    assert one_line.labels == ("lite-flat@Lite",) and all(r.feasible for r in one_line.rows)
    drawn = _drawn(one_line, monkeypatch, tmp_path)
    assert drawn["keys"] == []
    assert drawn["title"] == ("Sweep: best tokens/s per SM as the fabric changes\n"
                              "(lite-flat@Lite)")


def test_a_second_parameter_of_one_value_is_said_once(one_y, monkeypatch, tmp_path):
    drawn = _drawn(one_y, monkeypatch, tmp_path)
    assert drawn["keys"] == [["lite-flat@Lite", "h100-dgx@H100-SXM"]]
    assert drawn["title"].endswith("(adjust.bandwidth_scale=2)")


def test_an_infeasible_mark_keeps_its_key_on_one_line(monkeypatch, tmp_path):
    # lite-flat cannot be built at radix 64 (128 GPUs need switches of radix >= 128)
    result = run_sweep(["lite-flat"], [parse_param("fabric.radix=64,144", ["lite-flat"])],
                       ["Llama-3-8B"], ["decode"], max_batch=16)
    assert [r.feasible for r in result.rows] == [False, True]
    drawn = _drawn(result, monkeypatch, tmp_path)
    assert drawn["keys"] == [["x on the axis: no feasible point at that value"]]
