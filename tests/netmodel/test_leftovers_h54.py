"""Leftovers: ``infer --json`` carries the interval a pipelined prefill's rate rests on;
serve's prefill interval is the grid's; a saved fabric's GPUs are range-checked; a sweep
over a fabric too large to build is refused before it is built."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from netmodel.cli.main import cli

# By hand (as tests/compute/test_pipeline_steady_state.py): Llama-3-70B on an H100-SXM
# (989.4 TFLOP/s dense BF16, 3.35 TB/s HBM), one 1500-token prompt per micro-batch; a pass
# through the 80 layers is compute-bound, the embedding and LM head HBM-bound.
N, H = 1500, 8192
LAYER_FLOP = 2 * N * H * (H + 2 * 1024 + H + 3 * 28672) + 4 * H * N * (N + 1) / 2
HEAD_S = 128256 * H * 2 / 3.35e12                             # the LM head, 0.627 ms
PASS_S = 80 * LAYER_FLOP / 989.4e12 + 2 * N * H * 2 / 3.35e12 + HEAD_S  # 0.21118 s
PP = 4
# the slowest stage: the last, 20 layers and the LM head, 53.261 ms (balanced stages said
# PASS_S / 4 = 52.794 ms); the send hides behind it
PERIOD_S = 20 * LAYER_FLOP / 989.4e12 + HEAD_S


def _infer(*extra: str) -> dict:
    out = CliRunner().invoke(cli, ["infer", "--model", "Llama-3-70B", "--gpu", "H100-SXM",
                                   "--phase", "prefill", "--tp", "1", *extra, "--json"])
    assert out.exit_code == 0, out.output
    return json.loads(out.output)


def test_infer_json_of_a_pp4_prefill_carries_its_interval():
    """TP 1 x PP 4, batch 4: a batch every 4 periods (0.2130 s), not the TTFT (3 periods
    and a pass, 0.371 s); tokens/s = 6000 / interval_s."""
    d = _infer("--pp", str(PP), "--batch", "4")
    assert d["interval_s"] == pytest.approx(4 * PERIOD_S, rel=1e-5)
    assert d["interval_s"] == pytest.approx(0.213045, rel=1e-5)
    assert d["latency_s"] == pytest.approx(3 * PERIOD_S + PASS_S, rel=1e-3)
    assert d["tokens_per_s"] == pytest.approx(4 * N / d["interval_s"], rel=1e-12)


def test_infer_json_interval_is_the_latency_without_a_pipeline():
    d = _infer("--batch", "2")
    assert d["interval_s"] == d["latency_s"]
    assert d["tokens_per_s"] == pytest.approx(2 * N / d["latency_s"], rel=1e-12)


def test_infer_table_says_the_interval_of_a_pipelined_prefill():
    out = CliRunner().invoke(cli, ["infer", "--model", "Llama-3-70B", "--gpu", "H100-SXM",
                                   "--phase", "prefill", "--tp", "1", "--pp", "4",
                                   "--batch", "4"])
    assert out.exit_code == 0, out.output
    assert f"a batch every {4 * PERIOD_S * 1e3:.4g} ms, steady state" in out.output


def test_search_json_best_carries_its_interval():
    out = CliRunner().invoke(cli, ["search", "--model", "Llama-3-70B", "--gpu", "H100-SXM",
                                   "--phase", "prefill", "--tp", "1", "--pp", "4", "--json"])
    assert out.exit_code == 0, out.output
    best = json.loads(out.output)["best"]
    assert best["tokens_per_s"] == pytest.approx(
        best["tokens_per_step"] / best["interval_s"], rel=1e-12)
    assert best["interval_s"] == pytest.approx(best["batch"] * PERIOD_S, rel=1e-5)


@pytest.mark.parametrize("mode", ["overlap", "serial"])
def test_serve_prefill_interval_is_the_grids_steady_interval(mode):
    """serve's steady-state seconds per batch are the grid's own interval, b x the slowest
    stage's period; on PP 1 rows, the latency itself."""
    from compute.parallel import Parallelism
    from compute.roofline import evaluate_grid, make_workload
    from compute.roofline_options import RooflineOptions
    from netmodel.study.serving import _prefill_interval

    configs = [Parallelism(tp, pp) for tp in (1, 2) for pp in (1, 2, 4)]
    grid = evaluate_grid("Llama-3-70B", "H100-SXM", configs, [1, 3, 8],
                         make_workload("prefill"), options=RooflineOptions(mode=mode))
    got = _prefill_interval(grid)
    pp = np.array([c.pp for c in grid.configs])
    assert (pp > 1).any() and (pp == 1).any()
    assert np.array_equal(got, grid.interval)
    assert np.array_equal(got[pp == 1], grid.latency[pp == 1])
    four = np.flatnonzero((pp == 4) & (np.array([c.tp for c in grid.configs]) == 1))[0]
    if mode == "overlap":   # by hand: a batch every b periods of the last stage
        np.testing.assert_allclose(got[four], [1 * PERIOD_S, 3 * PERIOD_S, 8 * PERIOD_S],
                                   rtol=1e-5)


# ---------------------------------------------------------------- a saved fabric's GPUs

def _fabric_doc(**lite_fields) -> dict:
    from compute.hardware import get_gpu

    spec = dict(get_gpu("Lite").to_dict(), name="MyLite", **lite_fields)
    return {"directed": False, "multigraph": False,
            "graph": {"name": "t", "gpus": 2, "gpu_types": {"MyLite": spec}},
            "nodes": [{"id": "a", "kind": "gpu", "gpu": "MyLite"},
                      {"id": "b", "kind": "gpu", "gpu": "MyLite"}],
            "edges": [{"source": "a", "target": "b", "bandwidth": 1e11, "latency": 0.0,
                       "medium": "copper", "lanes": 1}]}


# the ranges of compute/data/limits.toml's [gpu] (a GPU file's units) in SI
@pytest.mark.parametrize("field, value, allowed", [
    ("hbm_bandwidth", 1e30, "from 1,000,000,000 to 100,000,000,000,000,000 bytes/s"),
    ("hbm_bandwidth", 1e8, "from 1,000,000,000 to 100,000,000,000,000,000 bytes/s"),
    ("flops_bf16", 2e18, "from 1,000,000,000 to 1,000,000,000,000,000,000 FLOP/s"),
    ("hbm_capacity", 1e15, "from 1,000,000 to 100,000,000,000,000 bytes"),
    ("scaleout_bandwidth", 2e15, "from 125,000 to 1,250,000,000,000,000 bytes/s"),
    ("tdp", 1e7, "from 0.1 to 1,000,000 W"),
    ("sms", 200_000, "a whole number from 1 to 100,000"),
    ("max_instance", 10**6, "a whole number from 1 to 100,000"),
])
def test_a_saved_fabrics_gpu_is_range_checked_as_a_gpu_file(tmp_path, field, value, allowed):
    from compute.errors import UserError
    from topologies.io import read_graph

    file = tmp_path / "hostile.json"
    file.write_text(json.dumps(_fabric_doc(**{field: value})))
    with pytest.raises(UserError) as info:
        read_graph(file)
    text = str(info.value)
    assert "\n" not in text and "MyLite" in text and field in text and allowed in text


@pytest.mark.parametrize("text", ["1e30", "NaN", "-3.35e12", "Infinity"])
def test_a_hostile_fabric_gpu_exits_2_on_the_command_line(tmp_path, text):
    file = tmp_path / "hostile.json"
    doc = json.dumps(_fabric_doc(hbm_bandwidth=123.0)).replace("123.0", text)
    file.write_text(doc)
    for args in (["topology", "show", str(file)],
                 ["collective", "all-reduce", "--fabric", str(file), "--group", "2"]):
        out = CliRunner().invoke(cli, args)
        assert out.exit_code == 2, (args, out.output)
        assert "hbm_bandwidth" in out.output and "Traceback" not in out.output
        assert len(out.output.strip().splitlines()) == 1


def test_a_saved_fabric_with_an_in_range_gpu_reads():
    """The shipped GPUs are within the limits (so a fabric saved with them reads back)."""
    from compute.hardware import catalog
    from topologies.schema_gpu import gpu_spec_from_dict

    for name, spec in catalog().items():
        assert gpu_spec_from_dict(name, spec.to_dict()) == spec


# ---------------------------------------------------------------- a sweep's fabric size

def test_a_sweep_point_over_the_link_limit_is_refused_before_its_searches(monkeypatch):
    """lite-flat has 128 GPUs, one link to each of ``planes`` switches: 8 planes are 1,024
    links, 16 are 2,048. Under a limit of 1,500 the second point is refused (no search, no
    bill), the first is costed."""
    from netmodel.study import sweep as sw

    searched = []
    real = sw._collectives
    monkeypatch.setattr(sw, "_collectives", lambda p, c: searched.append(p) or real(p, c))
    monkeypatch.setenv("NETMODEL_MAX_SWEEP_LINKS", "1500")
    r = sw.run_sweep(["lite-flat"], ["fabric.planes=8,16"], ["Llama-3-8B"], ["decode"])
    ok, refused = r.rows
    assert (ok.x, ok.feasible, refused.x, refused.feasible) == (8, True, 16, False)
    assert "about 2,048 links, over the limit of 1,500" in refused.reason
    assert "NETMODEL_MAX_SWEEP_LINKS" in refused.reason
    assert len(searched) == 1


def test_a_sweep_of_only_too_large_fabrics_exits_2_in_one_line(monkeypatch):
    monkeypatch.setenv("NETMODEL_MAX_SWEEP_LINKS", "1000")
    out = CliRunner().invoke(cli, ["sweep", "--scenario", "lite-flat", "--param",
                                   "fabric.planes=16", "--models", "Llama-3-8B", "-q"])
    assert out.exit_code == 2, out.output
    assert out.output.strip().count("\n") == 0
    assert ("sweep point lite-flat@Lite at fabric.planes=16: about 2,048 links, over the "
            "limit of 1,000") in out.output


def test_the_default_link_limit_leaves_the_shipped_fabrics_far_below_it():
    from netmodel.study.scenario_catalog import scenario_names
    from netmodel.study.scenario_fabric import build_fabric
    from netmodel.study.sweep import MAX_LINKS

    assert MAX_LINKS == 200_000
    assert max(build_fabric(s).number_of_edges() for s in scenario_names()) * 100 < MAX_LINKS
