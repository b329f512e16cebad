"""`netmodel collective` and `netmodel costs`: output, files, and one-line errors."""

from __future__ import annotations

import csv
import io
import json
import re

import numpy as np
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


@pytest.mark.parametrize("fmt", ["csv", "json", "nccl", "nccl-short"])
def test_costs_formats(tmp_path, fmt):
    path = tmp_path / ("t." + (fmt if fmt in ("csv", "json") else "txt"))
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
    # the help is written from the registries when shown: it names every algorithm and
    # placement, and NCCL's own set, whatever they are
    from netmodel.collectives.algorithms import ALGORITHMS
    from netmodel.collectives.names import NCCL_ALGORITHMS, PLACEMENTS

    for command in ("collective", "costs"):
        text = " ".join(CliRunner().invoke(cli, [command, "--help"],
                                           terminal_width=400).output.split())
        assert all(name in text for name in (*ALGORITHMS, *PLACEMENTS))
        assert f"'nccl' ({', '.join(NCCL_ALGORITHMS)}" in text


# --------------------------------------------------------------------- nccl-tests format
# A real all_reduce_perf log (64 GB200 on NVL72 racks), posted in coreweave/nccl-tests pull
# request #43 (https://github.com/coreweave/nccl-tests/pull/43): its header lines, two rows
# and its footer, byte for byte (trailing blanks included). The layout is nccl-tests'
# printf formats (NVIDIA/nccl-tests src/common.cu).
NCCL_TESTS_SAMPLE = (
    "#                                                              out-of-place            "
    "           in-place          \n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong   "
    "  time   algbw   busbw #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)          "
    "  (us)  (GB/s)  (GB/s)       \n"
    "   536870912     134217728     float     sum      -1   1806.7  297.16  586.06      0   "
    "1835.9  292.43  576.74      0\n"
    "  8589934592    2147483648     float     sum      -1    20299  423.16  834.57      0    "
    "20006  429.37  846.82      0\n"
    "# Out of bounds values : 0 OK\n"
    "# Avg bus bandwidth    : 745.53 \n")


def parse_nccl_tests(text):
    """Read a log the way nccl-tests log parsers do: data lines are the lines that do not
    start with '#', split on blanks into 13 columns; the averages from the footer."""
    rows, avg, oob = [], [], []
    for line in text.splitlines():
        if line.startswith("# Avg bus bandwidth"):
            avg.append(float(line.split(":")[1]))
        elif line.startswith("# Out of bounds values"):
            oob.append(line.split(":")[1].split())
        elif line.strip() and not line.startswith("#"):
            f = line.split()
            assert len(f) == 13, line
            rows.append({"size": int(f[0]), "count": int(f[1]), "type": f[2], "redop": f[3],
                         "root": int(f[4]), "time": float(f[5]), "algbw": float(f[6]),
                         "busbw": float(f[7]), "wrong": int(f[8]), "time_ip": float(f[9]),
                         "algbw_ip": float(f[10]), "busbw_ip": float(f[11]),
                         "wrong_ip": int(f[12])})
    return rows, avg, oob


def _field_ends(line):
    return [m.end() for m in re.finditer(r"\S+", line)]


def test_nccl_tests_sample_parses():
    rows, avg, oob = parse_nccl_tests(NCCL_TESTS_SAMPLE)
    assert [r["size"] for r in rows] == [536870912, 8589934592] and avg == [745.53]
    assert oob == [["0", "OK"]]


def test_costs_nccl_tests_layout_matches_real_log():
    out = run("costs", "--fabric", "single-switch:n=8", "--ops", "all-reduce", "--sizes",
              "8KiB:64MiB:8", "--groups", "8", "--format", "nccl-tests")
    assert out.exit_code == 0, out.output
    text = out.output
    sample = NCCL_TESTS_SAMPLE.splitlines()
    lines = text.splitlines()
    i = lines.index(sample[0])  # the three header lines, exactly
    assert lines[i:i + 3] == sample[:3]
    data = [x for x in lines if x and not x.startswith("#")]
    # every column ends where nccl-tests ends it (fixed widths), for values of like width
    assert _field_ends(data[-1])[:5] == _field_ends(sample[3])[:5]
    assert _field_ends(data[-1])[5:] == _field_ends(sample[3])[5:]  # 3829.6-style times
    assert lines[-3:] == ["# Out of bounds values : 0 OK", lines[-2], "#"]
    assert re.fullmatch(r"# Avg bus bandwidth    : \S+ ", lines[-2])
    assert "# Collective test starting: all_reduce_perf" in lines
    rows, avg, oob = parse_nccl_tests(text)
    sizes = [8192 * 8 ** k for k in range(5)]
    assert [r["size"] for r in rows] == sizes
    m = FabricCostModel(build("single-switch:n=8"))
    t = m.collective_time("all-reduce", np.array(sizes, dtype=float), 8)
    for r, ti, n in zip(rows, t, sizes, strict=True):
        assert (r["count"], r["type"], r["redop"], r["root"]) == (n // 4, "float", "sum", -1)
        assert r["time"] == pytest.approx(ti * 1e6, abs=0.051)  # printed to 0.01..1 us
        assert r["algbw"] == pytest.approx(n / ti / 1e9, abs=0.005)
        assert r["busbw"] == pytest.approx(n / ti / 1e9 * 2 * 7 / 8, abs=0.005)
        assert (r["wrong"], r["wrong_ip"]) == (0, 0)
        assert (r["time_ip"], r["busbw_ip"]) == (r["time"], r["busbw"])
    assert oob == [["0", "OK"]]
    assert avg[0] == pytest.approx(np.mean(sizes / t / 1e9 * 1.75), rel=1e-5)


def test_costs_nccl_tests_per_op_columns():
    # nccl-tests counts the per-rank part for all-gather and all-to-all; broadcast has root 0
    out = run("costs", "--fabric", "single-switch:n=8", "--ops",
              "all-gather,broadcast,all-to-all", "--sizes", "1MiB", "--groups", "4",
              "--format", "nccl-tests")
    assert out.exit_code == 0, out.output
    rows, avg, _ = parse_nccl_tests(out.output)
    got = [(r["count"], r["redop"], r["root"]) for r in rows]
    assert got == [(2 ** 20 // 16, "none", -1), (2 ** 20 // 4, "none", 0),
                   (2 ** 20 // 16, "none", -1)]
    assert len(avg) == 3  # one footer per op, as three runs of the binaries would print
    assert [x.split(": ")[1] for x in out.output.splitlines() if "test starting" in x] == [
        "all_gather_perf", "broadcast_perf", "alltoall_perf"]


def test_costs_nccl_tests_one_block_per_algorithm():
    out = run("costs", "--fabric", "single-switch:n=8", "--sizes", "1KiB,1MiB", "--groups",
              "8", "--algorithm", "all", "--format", "nccl-tests")
    assert out.exit_code == 0, out.output
    rows, avg, _ = parse_nccl_tests(out.output)
    m = FabricCostModel(build("single-switch:n=8"))
    names = set(m.curves("all-reduce", [1024.0], 8))
    assert len(avg) == len(names) and len(rows) == 2 * len(names)


# --------------------------------------------------------------------- Vidur format
# The header of Vidur's network profiles: microsoft/vidur, data/profiling/network/h100_dgx/
# all_reduce.csv and send_recv.csv (commit e26eb8f79fa9a6a7c38eac0f5291302402b20364).
VIDUR_HEADER = (",time_stats.{c}.min,time_stats.{c}.max,time_stats.{c}.mean,"
                "time_stats.{c}.median,time_stats.{c}.std,rank,num_workers,size,collective,"
                "devices_per_node,max_devices_per_node")


def test_costs_vidur_files(tmp_path):
    out_dir = tmp_path / "profile"
    out = run("costs", "--fabric", "rail-optimized:domains=4,domain_size=8", "--ops",
              "all-reduce,send-recv", "--sizes", "2KiB:2MiB", "--groups", "2,4,8",
              "--format", "vidur", "-o", str(out_dir))
    assert out.exit_code == 0, out.output
    assert {p.name for p in out_dir.iterdir()} >= {"all_reduce.csv", "send_recv.csv"}
    model = FabricCostModel(build("rail-optimized:domains=4,domain_size=8"))
    for c in ("all_reduce", "send_recv"):
        text = (out_dir / f"{c}.csv").read_text()
        assert text.splitlines()[0] == VIDUR_HEADER.format(c=c)
        rows = list(csv.DictReader(io.StringIO(text)))
        assert [int(r[""]) for r in rows] == list(range(33))  # pandas' index column
        # Vidur's all-reduce filter: num_workers == devices_per_node == TP (one node)
        for r in rows:
            p, n = int(r["num_workers"]), float(r["size"])
            assert r["collective"] == c and r["rank"] == "0" and r["max_devices_per_node"] == "8"
            assert int(r["devices_per_node"]) == p  # contiguous groups inside a domain
            ms = float(r[f"time_stats.{c}.median"])
            op = c.replace("_", "-")
            assert ms == pytest.approx(float(model.collective_time(op, n, p)) * 1e3, rel=1e-12)
            assert r[f"time_stats.{c}.min"] == r[f"time_stats.{c}.max"] == r[
                f"time_stats.{c}.mean"] == r[f"time_stats.{c}.median"]
            assert float(r[f"time_stats.{c}.std"]) == 0.0


def test_costs_vidur_send_recv_across_nodes(tmp_path):
    # Vidur reads send-recv between nodes from rows with devices_per_node == 1
    out = run("costs", "--fabric", "rail-optimized:domains=4,domain_size=8", "--ops",
              "send-recv", "--sizes", "1MiB", "--groups", "2", "--placement", "spread",
              "--format", "vidur", "-o", str(tmp_path / "v"))
    assert out.exit_code == 0, out.output
    row = next(csv.DictReader(io.StringIO((tmp_path / "v" / "send_recv.csv").read_text())))
    assert (row["num_workers"], row["devices_per_node"]) == ("2", "1")


# --------------------------------------------------------------------- values (issue 13)
@pytest.mark.parametrize("args, message", [
    (["collective", "all-reduce", "--fabric", "single-switch", "--size", "0.5"],
     "whole number of bytes from 1 B to 1 PiB"),
    (["costs", "--fabric", "single-switch", "--sizes", "0.25:4"], "whole number of bytes from 1 B to 1 PiB"),
    (["collective", "all-reduce", "--fabric", "single-switch", "--seed", "-1"], "--seed"),
    (["costs", "--fabric", "single-switch", "--seed", "-3"], "--seed"),
    (["costs", "--fabric", "single-switch", "--ops", ""], "--ops '' is empty"),
    (["costs", "--fabric", "single-switch", "--ops", " , "], "is empty"),
    (["costs", "--fabric", "single-switch", "--groups", ""], "--groups '' is empty"),
    (["costs", "--fabric", "single-switch", "--groups", "2,,8"], "empty item"),
    (["costs", "--fabric", "single-switch", "--sizes", ""], "empty"),
    (["costs", "--fabric", "single-switch", "--algorithms", ""], "--algorithms '' is empty"),
    (["collective", "all-reduce", "--fabric", "single-switch", "--group", ""], "empty"),
    (["collective", "all-reduce", "--fabric", "single-switch", "--algorithms", ","], "empty"),
    (["collective", "all-reduce", "--fabric", "single-switch", "--fail", ""], "empty"),
    (["collective", "all-reduce", "--fabric", "single-switch", "--group", "-4"], "size >= 1"),
    (["costs", "--fabric", "single-switch", "--groups", "4,64"], "larger than the fabric"),
    (["costs", "--fabric", "single-switch", "--sizes", "1B:1TB:1.0000001"],
     "makes up to 828,930,675 rows, above the limit of 200,000"),
    (["costs", "--fabric", "single-switch", "--sizes", "1KiB:1MiB", "--max-rows", "10"],
     "above the limit of 10"),
    (["costs", "--fabric", "single-switch", "--max-rows", "0"], "--max-rows"),
    (["costs", "--fabric", "single-switch", "--format", "vidur"], "-o DIR"),
    (["collective", "all-reduce", "--fabric", "fat-tree:k=8", "--max-transfers", "0"],
     "--max-transfers must be >= 1"),
    # one-shot over 128 GPUs is 16,256 transfers; at 1 byte it may be the fastest, so it
    # would have to be built: refused before anything is routed
    (["collective", "all-reduce", "--fabric", "fat-tree:k=8", "--group", "128", "--size", "1",
      "--max-transfers", "10000"], "routes 16,256 point-to-point transfers"),
    (["costs", "--fabric", "fat-tree:k=8", "--groups", "128", "--sizes", "1", "--max-transfers",
      "10000"], "more than the limit of 10,000"),
])
def test_bad_values_are_one_line_exit_2(tmp_path, args, message):
    out = CliRunner().invoke(cli, args + ["--plot", str(tmp_path / "x.png")])
    assert out.exit_code == 2, out.output
    assert out.output.startswith("error: ") and out.output.count("\n") == 1, out.output
    assert message in out.output
    assert list(tmp_path.iterdir()) == []


def test_tiny_factor_is_refused_before_allocating():
    # 2.8e8 sizes: refused from the arithmetic, before any list or model is built
    import resource
    import time

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.process_time()
    out = run("costs", "--fabric", "fat-tree:k=64,pods=16", "--sizes", "1B:1TB:1.0000001")
    assert out.exit_code == 2 and time.process_time() - t0 < 1.0
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100_000  # KiB


def test_raised_row_limit_lets_a_big_table_through():
    out = run("costs", "--fabric", "single-switch:n=8", "--sizes", "1KiB:1MiB", "--groups",
              "8", "--max-rows", "11")
    assert out.exit_code == 0 and len(out.output.splitlines()) == 12


def test_a_low_transfer_limit_still_costs_large_messages():
    # at 1 GiB a lower bound rules one-shot out before it is built: no error, same answer
    args = ["collective", "all-reduce", "--fabric", "fat-tree:k=8", "--group", "128",
            "--size", "1GiB", "--json"]
    low, full = run(*args, "--max-transfers", "10000"), run(*args)
    assert low.exit_code == 0 and full.exit_code == 0, low.output
    a, b = json.loads(low.output), json.loads(full.output)
    assert a["time"] == b["time"] and a["algorithm"] == b["algorithm"] != "direct"
    assert "direct" not in a["alternatives"] and "direct" in b["alternatives"]


def test_named_group_refuses_placement_options_and_says_as_given():
    """--group naming GPU nodes places nothing: the header said 'placement spread' for an
    unused --placement, and --all-groups reported contiguous pairs (gpu0,gpu1 over NVLink,
    104.9 us) beside the named cross-server pair's 1.451 ms (helper 86)."""
    fabric = "rail-optimized:domains=16,gpu=B200-HGX"
    pair = ("collective", "all-reduce", "--fabric", fabric, "--group", "gpu0,gpu8",
            "--size", "1GiB")
    for extra in (["--placement", "spread"], ["--seed", "3"], ["--all-groups"]):
        out = run(*pair, *extra)
        assert out.exit_code == 2, (extra, out.output)
        assert "names" in out.output and "Traceback" not in out.output
    out = run(*pair)
    assert out.exit_code == 0, out.output
    assert "; placement as given" in out.output
    # gpu0 and gpu8 share rail 0's leaf: one exchange of the whole 1 GiB over the 400 Gb/s
    # NIC at the scale-out efficiency 0.94: 2^30 / (50e9 x 0.94) = 22.85 ms (+ latency)
    doc = json.loads(run(*pair, "--json").output)
    assert doc["placement"] == "as given"
    assert doc["time"] == pytest.approx(2 ** 30 / (50e9 * 0.94), rel=2e-3)
    # a size is still placed, and --all-groups still runs
    out = run("collective", "all-reduce", "--fabric", fabric, "--group", "2",
              "--placement", "spread", "--all-groups")
    assert out.exit_code == 0 and "placement spread" in out.output and "all 64 groups" in out.output


def test_busbw_plot_gives_every_algorithm_its_own_colour(tmp_path):
    """in-network-tree had no entry in COLOURS, so matplotlib gave it the cycle's first
    colour, tab:blue: ring's. On nvl72:racks=2 (144 GPUs, both drawn) the two lines were
    indistinguishable (helper 86)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.axes import Axes
    from matplotlib.colors import to_hex

    from netmodel.collectives.algorithms import ALGORITHMS
    from netmodel.collectives.plot import COLOURS, plot_busbw

    assert set(ALGORITHMS) <= set(COLOURS)
    assert len({to_hex(c) for c in COLOURS.values()}) == len(COLOURS)
    seen = {}
    real = Axes.plot

    def spy(self, *args, **kw):
        if "label" in kw:
            seen[kw["label"]] = kw.get("color")
        return real(self, *args, **kw)

    sizes = np.array([2.0 ** 20, 2.0 ** 30])
    curves = {"ring": sizes / 1e-3, "in-network-tree": sizes / 2e-3}
    Axes.plot = spy
    try:
        plot_busbw([("all-reduce", sizes, curves, [])], tmp_path / "c.png")
    finally:
        Axes.plot = real
    assert seen["ring"] == "tab:blue" and seen["in-network-tree"] == "tab:pink"


def test_algorithms_with_a_named_algorithm_is_refused_not_ignored():
    """--algorithms only lists auto's candidates (and --plot's lines): with --algorithm
    halving-doubling and --algorithms ring,tree the list was ignored without a word and
    halving-doubling, not among them, ran (helper 86)."""
    base = ("--fabric", "fat-tree:k=4", "--algorithm", "halving-doubling",
            "--algorithms", "ring,tree")
    for cmd in (("collective", "all-reduce", *base),
                ("costs", *base, "--sizes", "1MiB", "--groups", "4")):
        out = run(*cmd)
        assert out.exit_code == 2, out.output
        assert "--algorithms 'ring,tree'" in out.output and "Traceback" not in out.output
    # auto and costs' all still take the list
    out = run("costs", "--fabric", "fat-tree:k=4", "--algorithm", "all", "--algorithms",
              "ring,tree", "--sizes", "1MiB", "--groups", "4", "--format", "csv")
    assert out.exit_code == 0, out.output
    rows = list(csv.DictReader(io.StringIO(out.output)))
    assert [r["algorithm"] for r in rows] == ["ring", "tree"]
    # 4 H100 on two k=4 leaves, 1 MiB, LL128 ring: 6 steps of 256 KiB at 50 GB/s x 0.94 x
    # 0.92 (6.063 us), each paying 4 us + the slowest hop, leaf to leaf over a spine:
    # 2 x 20 m + 2 x 50 m of fibre at 5 ns/m and 3 switches of 330 ns = 1.69 us; plus 14 us
    # start-up: 6 x (6.063 + 5.69) + 14 = 84.52 us
    step = 2 ** 18 / (50e9 * 0.94 * 0.92)
    hop = 140 * 5e-9 + 3 * 330e-9
    assert float(rows[0]["seconds"]) == pytest.approx(6 * (step + 4e-6 + hop) + 14e-6,
                                                      rel=1e-4)
    plot = run("collective", "all-reduce", *base, "--plot", "/dev/null/x.png")
    assert "--algorithms" not in plot.output  # with --plot the list picks the lines
