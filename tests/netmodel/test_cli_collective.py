"""`netmodel collective` and `netmodel costs`: output, files, and one-line errors."""

from __future__ import annotations

import csv
import io
import json

import pytest
from click.testing import CliRunner

from netmodel.cli.main import cli
from netmodel.collectives.model import FabricCostModel
from topologies import build


def run(*args):
    return CliRunner().invoke(cli, list(args))


def test_collective_text_matches_api():
    out = run("collective", "all-reduce", "--fabric", "single-switch:n=8", "--group", "8",
              "--size", "64MiB", "--algorithm", "ring")
    assert out.exit_code == 0, out.output
    r = FabricCostModel(build("single-switch:n=8")).cost("all-reduce", 2.0 ** 26, 8, "ring")
    assert "algorithm: ring (Simple protocol)" in out.output
    assert f"busbw {r.busbw / 1e9:.2f} GB/s" in out.output
    assert "reduce-scatter" in out.output and "bottleneck:" in out.output


def test_collective_json_and_plot(tmp_path):
    png = tmp_path / "ar.png"
    out = run("collective", "all-reduce", "--fabric", "single-switch:n=8", "--size", "1GiB",
              "--json", "--plot", str(png))
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert doc["algorithm"] == "in-network" and doc["group_size"] == 8
    assert doc["busbw"] > 450e9  # NVLS: busbw above the link rate (documented)
    assert set(doc["alternatives"]) >= {"ring", "tree", "in-network", "direct"}
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_collective_explicit_group():
    out = run("collective", "send-recv", "--fabric", "fat-tree:k=4", "--group", "gpu0,gpu15",
              "--size", "1MiB")
    assert out.exit_code == 0, out.output
    assert "on 2 GPUs (gpu0, gpu15)" in out.output


@pytest.mark.parametrize("fmt", ["csv", "json", "nccl"])
def test_costs_formats(tmp_path, fmt):
    path = tmp_path / f"t.{fmt}"
    out = run("costs", "--fabric", "single-switch:n=8", "--ops", "all-reduce,all-gather",
              "--sizes", "1KiB:1MiB", "--groups", "2,8", "--format", fmt, "-o", str(path))
    assert out.exit_code == 0, out.output
    assert "wrote 44 rows" in out.output
    text = path.read_text()
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(text)))
        assert len(rows) == 44 and rows[0].keys() == {
            "op", "algorithm", "protocol", "group_size", "bytes", "seconds", "algbw_GBps",
            "busbw_GBps"}
        m = FabricCostModel(build("single-switch:n=8"))
        r = rows[-1]
        assert r["op"] == "all-gather" and r["group_size"] == "8" and r["bytes"] == "1048576"
        assert float(r["seconds"]) == pytest.approx(
            float(m.collective_time("all-gather", 2.0 ** 20, 8)), rel=1e-5)
    elif fmt == "json":
        doc = json.loads(text)
        assert doc["schema"][0] == "op" and len(doc["rows"]) == 44
        assert doc["units"]["seconds"] == "s"
    else:
        assert "# all-reduce, 8 GPUs" in text and "algbw" in text


def test_costs_all_algorithms_and_plot(tmp_path):
    png = tmp_path / "costs.png"
    out = run("costs", "--fabric", "fat-tree:k=4", "--ops", "all-reduce,all-to-all",
              "--sizes", "1KiB:1GiB", "--groups", "4,8", "--algorithm", "all", "--plot", str(png))
    assert out.exit_code == 0, out.output
    rows = list(csv.DictReader(io.StringIO(out.output)))
    assert {r["algorithm"] for r in rows if r["op"] == "all-to-all"} == {"direct", "pairwise"}
    assert png.exists()


@pytest.mark.parametrize("args, message", [
    (["collective", "allreduce", "--fabric", "single-switch"], "unknown collective operation"),
    (["collective", "all-reduce", "--fabric", "single-switch", "--size", "0"], "size"),
    (["collective", "all-reduce", "--fabric", "single-switch", "--size", "-1KiB"], "size"),
    (["collective", "all-reduce", "--fabric", "single-switch", "--size", "nan"], "size"),
    (["collective", "all-reduce", "--fabric", "single-switch", "--group", "9"],
     "larger than the fabric"),
    (["collective", "all-reduce", "--fabric", "single-switch", "--group", "gpu0,gpu0"],
     "more than once"),
    (["collective", "all-reduce", "--fabric", "single-switch", "--group", "gpu0,nvs0"],
     "not a GPU"),
    (["collective", "all-reduce", "--fabric", "fat-tree:k=4", "--algorithm", "in-network"],
     "in_network_reduction"),
    (["collective", "all-reduce", "--fabric", "single-switch", "--algorithm", "fast"],
     "unknown algorithm"),
    (["costs", "--fabric", "single-switch", "--groups", "2,x"], "--groups"),
    (["costs", "--fabric", "single-switch", "--ops", "all-reduce,scatter"],
     "unknown collective operation"),
    (["costs", "--fabric", "single-switch", "--sizes", "1MiB:1KiB"], "empty"),
])
def test_errors_are_one_line_exit_2(tmp_path, args, message):
    out = CliRunner().invoke(cli, args + ["--plot", str(tmp_path / "x.png")])
    assert out.exit_code == 2, out.output
    assert out.output.startswith("error: ") and out.output.count("\n") == 1
    assert message in out.output
    assert not (tmp_path / "x.png").exists()


def test_failed_costs_write_nothing(tmp_path):
    path = tmp_path / "t.csv"
    out = run("costs", "--fabric", "single-switch:n=8", "--groups", "2,16", "-o", str(path))
    assert out.exit_code == 2 and not path.exists()
    assert list(tmp_path.iterdir()) == []


def test_collective_with_failures():
    out = run("collective", "all-to-all", "--fabric", "fat-tree:k=4", "--group", "4",
              "--size", "1GiB", "--algorithm", "direct", "--fail", "spine0", "--json")
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    # one of the pod's two spines gone: a leaf's off-leaf traffic (n) on one uplink instead of
    # the 3/4 n on a GPU link (tests/netmodel/test_collective_concurrent_degraded.py)
    assert doc["failures"]["slowdown"] == pytest.approx(4 / 3, rel=2e-3)
    cut = run("collective", "all-reduce", "--fabric", "fat-tree:k=4", "--group", "4",
              "--fail", "leaf0/spine0,leaf0/spine1")
    assert cut.exit_code == 0 and "CUT: the group is cut apart" in cut.output
    bad = run("collective", "all-reduce", "--fabric", "fat-tree:k=4", "--fail", "leaf0/")
    assert bad.exit_code == 2 and "NODE/NODE" in bad.output


def test_collective_all_groups():
    out = run("collective", "all-reduce", "--fabric", "fat-tree:k=8,oversubscription=4",
              "--group", "4", "--size", "16GiB", "--placement", "spread", "--algorithm", "ring",
              "--all-groups", "--json")
    assert out.exit_code == 0, out.output
    conc = json.loads(out.output)["all_groups"]
    # one GPU of 4 groups on every leaf, one uplink per leaf: 4x at large sizes
    assert conc["groups"] == 32 and conc["slowdown_max"] == pytest.approx(4, rel=0.01)


def test_algorithm_help_names_every_algorithm():
    # the help text is written out (the CLI module must not import the model at start-up)
    from netmodel.cli.collective import _ALGO_HELP
    from netmodel.collectives.algorithms import ALGORITHMS

    assert all(name in _ALGO_HELP for name in ALGORITHMS)
