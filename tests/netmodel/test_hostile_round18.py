"""Hostile input, round 18 (netmodel).

(a) Message sizes: the command line refused sizes above 1 EiB, the library took any finite
size (``collective_time(fabric, "all-reduce", 1e308)`` was 3.6e296 s). One bound now,
:data:`compute.units.MAX_MESSAGE_BYTES` = 1 PiB (2**50): a message lies in one GPU's memory
and a GPU file may declare at most 100,000 GB of HBM (compute/data/limits.toml), so a
larger size is no message. It holds where a user gives sizes (``parse_bytes``, the
library's ``cost``/``sweep``/``curves``/``cost_table``/``api.collective_time``), not on the
collective-cost protocol compute calls with a grid's sizes (batches that fit no memory are
costed, then left out).

(b) ``collective --all-groups --fail X`` exited 2 ("a group is cut apart") when the
failure cut another group, but printed CUT (exit 0) when it cut the group costed. Now a
group cut apart is a result wherever it is: ``--all-groups`` runs the groups left joined
together and lists the others (``all_groups.cut``), exit 0 both ways.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import netmodel
from compute.errors import UserError
from compute.units import MAX_MESSAGE_BYTES, parse_bytes
from compute.validate import limits
from netmodel.api import build_fabric
from netmodel.collectives.concurrent import concurrent_cost
from netmodel.collectives.cost_table import cost_rows
from netmodel.collectives.degraded import degrade
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.placement import partition
from tests.netmodel.cli_helpers import measured_csv, one_line_error, run_cli

PIB = 2**50
ROOT_DATA = Path(__file__).resolve().parents[2] / "compute" / "data"


# ------------------------------------------------------------------ (a) message sizes
def test_the_bound_is_above_any_memory_a_gpu_file_may_declare():
    # a per-rank message lies in one GPU's HBM: the bound must take every size a GPU the
    # catalog accepts could hold, and is 1 PiB, the largest unit parse_bytes takes
    hbm = limits("gpu")["hbm_capacity_GB"]
    assert hbm.unit == "GB"
    assert MAX_MESSAGE_BYTES == PIB == parse_bytes("1PiB")
    assert MAX_MESSAGE_BYTES >= 10 * hbm.maximum * 1e9


@pytest.mark.parametrize("size", [1e308, 1e20, 2.0 * PIB, PIB + 8.0])
def test_the_library_refuses_a_size_no_gpu_holds(size):
    graph = build_fabric("single-switch:n=8")
    m = FabricCostModel(graph)
    calls = [lambda: netmodel.collective_time("single-switch:n=8", "all-reduce", size),
             lambda: netmodel.collective_time("single-switch:n=8", "all-reduce", [1.0, size]),
             lambda: netmodel.collective_time("h100-dgx", "all-reduce", size),
             lambda: m.cost("all-reduce", size, 8),
             lambda: m.sweep("all-reduce", [size], 8),
             lambda: m.curves("all-reduce", [size], 8),
             lambda: cost_rows(m, ["all-reduce"], [size], [8])]
    for call in calls:
        with pytest.raises(UserError, match=r"message size .* B is above 1 PiB "
                                            r"\(1,125,899,906,842,624 B\)"):
            call()


def test_one_pib_is_taken_and_costs_its_line():
    # the bound is inclusive; 1 PiB costs a + b n on the same line as 1 GiB (one algorithm)
    m = FabricCostModel(build_fabric("single-switch:n=8"), algorithm="ring")
    t = m.sweep("all-reduce", [2.0**30, 2.0**40, float(PIB)], 8).time
    assert np.isfinite(t).all()
    slope = (t[1] - t[0]) / (2.0**40 - 2.0**30)
    assert t[2] == pytest.approx(t[1] + slope * (PIB - 2.0**40), rel=1e-9)


def test_the_protocol_compute_calls_is_not_bounded():
    # a search's grid costs batches that fit no GPU (left out afterwards): the 4.3e18-byte
    # all-reduces of a batch of 1e9 prompts of 131,072 tokens must cost, not refuse
    m = FabricCostModel(build_fabric("single-switch:n=8"), algorithm="ring")
    t = m.collective_time("all-reduce", np.array([2.0**40, 2e18]), 8)
    assert np.isfinite(t).all() and t[1] > t[0]
    r = run_cli(["infer", "--model", "Llama-3.1-405B", "--gpu", "H100-SXM", "--tp", "8",
                 "--batch", "1000000000", "--prompt", "131072", "--phase", "prefill",
                 "--fabric", "single-switch:n=8"])
    assert r.exit_code == 0, r.output
    assert "does NOT fit" in r.output


@pytest.mark.parametrize("args, needle", [
    (["collective", "all-reduce", "--fabric", "single-switch:n=8", "--size", "2PiB"],
     "size '2PiB' is 2.2518e+15 B: a message is a whole number of bytes from 1 B to 1 PiB "
     "(1,125,899,906,842,624 B"),
    (["collective", "all-reduce", "--fabric", "single-switch:n=8", "--size", "1e18"],
     "a message is a whole number of bytes from 1 B to 1 PiB"),
    (["costs", "--fabric", "single-switch:n=8", "--sizes", "1KiB,1125899906842625"],
     "--sizes '1125899906842625' is 1.1259e+15 B: a message is a whole number of bytes from 1 "
     "B to 1 PiB"),
    (["costs", "--fabric", "single-switch:n=8", "--sizes", "1TiB:2PiB"],
     "a message is a whole number of bytes from 1 B to 1 PiB"),
])
def test_the_command_line_refuses_a_size_above_one_pib(args, needle):
    one_line_error(run_cli(args), needle)


def test_the_command_line_takes_one_pib():
    r = run_cli(["collective", "all-reduce", "--fabric", "single-switch:n=8", "--size", "1PiB"])
    assert r.exit_code == 0, r.output
    assert r.output.startswith("all-reduce of 1 PiB on 8 GPUs")


# ------------------------------------------------------------------ (b) --all-groups --fail
def _all_groups(fail: str, *extra: str) -> dict:
    r = run_cli(["collective", "all-reduce", "--fabric", "leaf-spine", "--group", "4",
                 "--size", "1MiB", "--fail", fail, "--all-groups", "--json", *extra])
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def _degraded_model(nodes):
    return FabricCostModel(degrade(build_fabric("leaf-spine"), nodes=nodes))


@pytest.mark.parametrize("fail, cut_index", [("leaf1", 1), ("leaf0", 0)])
def test_a_cut_group_is_left_out_wherever_it_is(fail, cut_index):
    # leaf-spine: 4 leaves of 4 GPUs; a failed leaf cuts its 4 GPUs apart. Cut there
    # (leaf1) or in the group costed (leaf0), the other three groups run together and the
    # cut one is listed, exit 0 both ways (leaf1 was 'error: a group is cut apart', exit 2)
    doc = _all_groups(fail)
    leaves = [[f"gpu{4 * j + i}" for i in range(4)] for j in range(4)]
    assert doc["connected"] is (cut_index != 0)
    conc = doc["all_groups"]
    assert conc["cut"] == [leaves[cut_index]]
    assert conc["groups"] == 3
    whole = [tuple(g) for j, g in enumerate(leaves) if j != cut_index]
    m = _degraded_model([fail])
    ref = concurrent_cost(m, whole, "all-reduce", 2.0**20)
    assert conc["makespan"] == float(ref.makespan[0])
    # three groups, each alone under its own leaf and sharing nothing: each takes its
    # time alone, which is the healthy group's (the failed leaf carries none of them)
    alone = FabricCostModel(build_fabric("leaf-spine")).cost("all-reduce", 2.0**20, 4).time
    assert conc["makespan"] == pytest.approx(alone, rel=1e-12)
    assert conc["slowdown_max"] == 1.0


def test_the_text_says_which_groups_are_left_out():
    r = run_cli(["collective", "all-reduce", "--fabric", "leaf-spine", "--group", "4",
                 "--size", "1MiB", "--fail", "leaf0", "--all-groups"])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert "CUT: the group is cut apart, no path joins gpu0 and gpu1" in lines
    assert any(ln.startswith("all 3 groups of 4 at once: ") for ln in lines), r.output
    assert "(1 group of 4 cut apart, left out: gpu0, gpu1, gpu2, gpu3)" in lines


def test_every_group_cut_runs_none():
    doc = _all_groups("leaf0,leaf1,leaf2,leaf3")
    conc = doc["all_groups"]
    assert conc["groups"] == 0 and len(conc["cut"]) == 4
    assert conc["makespan"] is None and conc["algorithm"] is None
    r = run_cli(["collective", "all-reduce", "--fabric", "leaf-spine", "--group", "4",
                 "--size", "1MiB", "--fail", "leaf0,leaf1,leaf2,leaf3", "--all-groups"])
    assert r.exit_code == 0 and "all groups of 4 at once: none runs, 4 groups of 4 cut " \
        "apart" in r.output, r.output


def test_no_failure_no_group_left_out():
    doc = _all_groups("spine0")
    assert doc["all_groups"]["cut"] == [] and doc["all_groups"]["groups"] == 4


@pytest.mark.parametrize("spec, nodes, links, size", [
    ("leaf-spine", ["leaf1"], [], 4),
    ("leaf-spine", ["leaf2", "gpu0"], [], 2),
    ("leaf-spine", [], [("gpu5", "leaf1"), ("gpu6", "leaf1")], 4),
    ("fat-tree:k=4", ["spine0", "spine1"], [], 4),
    ("fat-tree:k=4", ["leaf0"], [], 8),
    ("ring:n=8", [], [("gpu0", "gpu1"), ("gpu4", "gpu5")], 4),
    ("torus:dims=4x4", ["gpu1", "gpu4", "gpu6", "gpu9"], [], 2),
    ("rail-optimized:domains=2", ["nvs0", "leaf0"], [], 4),
    ("rail-optimized:domains=2", ["nvs0"], [], 8),
])
def test_the_groups_left_out_are_those_the_costing_finds_cut(spec, nodes, links, size):
    # all_groups_cost's test (every member routed from the first) against the costing's
    # own: a group is listed cut exactly where cost() says it is not connected
    broken = degrade(build_fabric(spec), links=links, nodes=nodes)
    m = FabricCostModel(broken)
    from netmodel.collectives.concurrent import all_groups_cost

    doc = all_groups_cost(m, size, "all-reduce", 2.0**20)
    groups = partition(m.graph, size, m.placement, gpus=m.router.gpu_list)
    costed = [[str(x) for x in g] for g in groups
              if not m.cost("all-reduce", 2.0**20, g).connected]
    assert doc["cut"] == costed
    assert doc["groups"] == len(groups) - len(costed)


# ------------------------------------------------------------------ Dask options by flag
@pytest.mark.parametrize("extra, line", [
    (["--workers", "-1"], "error: --workers -1 is not allowed; a local cluster takes 1 to "),
    (["--workers", "2", "--scheduler", "h:1"],
     "error: give --workers N (a local cluster) or --scheduler ADDRESS (a running one), not "
     "both"),
    (["--scheduler", "a b"], "error: --scheduler 'a b' is not an address; give HOST:PORT"),
])
@pytest.mark.parametrize("command", [
    ["compare", "--models", "Llama-3-8B", "--scenarios", "h100-dgx", "--no-plot"],
    ["sweep", "--scenario", "h100-dgx", "--param", "adjust.hop_latency=1us,2us", "--models",
     "Llama-3-8B", "--no-plot"]])
def test_dask_options_are_named_by_their_flags(command, extra, line):
    # Executor's refusals name its parameters (workers=-1, 'give scheduler for a larger
    # cluster'); the command line printed them so, where every other refusal names flags
    assert one_line_error(run_cli(command + extra)).startswith(line)


# ------------------------------------------------------------------ a failure given twice
@pytest.mark.parametrize("fail, line", [
    # the same link both ways round: it is one link, not 'not a link of the fabric'
    ("leaf0/spine0,spine0/leaf0",
     "error: --fail 'leaf0/spine0,spine0/leaf0': failed link 'spine0' - 'leaf0' is given "
     "more than once (a link joins its two nodes either way round); give each once"),
    ("leaf0/spine9",
     "error: --fail 'leaf0/spine9': failed link 'leaf0' - 'spine9' is not a link of the "
     "fabric"),
])
def test_a_link_failed_twice_is_said_so(fail, line):
    r = run_cli(["collective", "all-reduce", "--fabric", "leaf-spine", "--group", "4",
                 "--fail", fail])
    assert one_line_error(r) == line


def test_the_library_says_a_part_is_given_twice():
    g = build_fabric("leaf-spine")
    with pytest.raises(UserError, match=r"^failed node 'gpu0' is given more than once; give "
                                        r"each once$"):
        degrade(g, nodes=["gpu0", "gpu0"])
    with pytest.raises(UserError, match=r"^failed link 'leaf0' - 'spine0' is given more than "
                                        r"once"):
        degrade(g, links=[("leaf0", "spine0"), ("leaf0", "spine0")])
    with pytest.raises(UserError, match=r"^failed node 'x' is not a node of the fabric$"):
        degrade(g, nodes=["x"])
    # once each: the link and the node it leads to are two parts
    broken = degrade(g, links=[("leaf0", "gpu0")], nodes=["gpu0"])
    assert "gpu0" not in broken and broken.graph["gpus"] == 15


def test_study_moe_model_not_moe_is_refused_with_the_flag(tmp_path):
    # the library's 'or None to skip the part' is Python; the command line takes 'none'
    r = run_cli(["study", "lite-gpu", "--moe-model", "Llama-3-8B", "--no-fabric", "--out",
                 tmp_path / "s"])
    assert one_line_error(r) == (
        "error: --moe-model 'Llama-3-8B' is not a mixture of experts (one MLP per layer); "
        "give one with experts, e.g. 'Mixtral-8x7B', or 'none' to skip the part")
    assert not (tmp_path / "s").exists()
    with pytest.raises(UserError, match=r"or moe=None to skip the part$"):
        from netmodel.study.lite_gpu import run_full_study

        run_full_study(["Llama-3-8B"], ["Lite"], ["decode"], fabric=False, moe="Llama-3-8B")


# ------------------------------------------------------------------ texts are one line
FORGED = "datasheet\nerror: a line of the file's choosing"


@pytest.mark.parametrize("text", [FORGED, "a\x1b[2Jb", "a\tb", "a\x00b", "ab\u202ecd",
                                  "a\u2028b"])
def test_a_gpu_files_source_is_one_line(tmp_path, text):
    # hardware printed a GPU file's source as it was: a newline forged a line of output,
    # ESC drove the terminal, U+202E reversed the rest of the line
    (tmp_path / "g.toml").write_text(
        f'[gpu."Y"]\nderive_from = "H100-SXM"\nfraction = 0.25\nsource = {json.dumps(text)}\n')
    line = one_line_error(run_cli(["hardware", "Y", "--gpu-file", tmp_path / "g.toml"]),
                          "source ", "holds a control character (a newline, tab, ESC...) or "
                          "a bidirectional control")
    assert "\n" not in line.strip() and "\x1b" not in line and "\u202e" not in line


def test_texts_of_other_files_and_options_are_one_line(tmp_path):
    from compute.profiles import read_profile
    from netmodel.study.serving import load_workload

    prof = (tmp_path / "p.toml")
    text = (ROOT_DATA / "profiles" / "vllm-dgx-h100.toml").read_text()
    prof.write_text(text.replace('fitted_on = "', 'fitted_on = "\\u001b[31m', 1))
    with pytest.raises(UserError, match=r"fitted_on '\\x1b\[31m.*holds a control character"):
        read_profile(prof)
    (tmp_path / "w.toml").write_text('prompt = 1000\noutput = 100\nsource = "a\\nb"\n')
    with pytest.raises(UserError, match="source 'a\\\\nb' holds a control character"):
        load_workload(tmp_path / "w.toml")
    r = run_cli(["calibrate", "--measurements", measured_csv(tmp_path), "-o",
                 tmp_path / "out.toml", "--engine", "vLLM\nerror: forged"])
    one_line_error(r, "--engine 'vLLM\\nerror: forged' holds a control character")
    assert not (tmp_path / "out.toml").exists()
    # one line of ordinary text is taken: the shipped profile reads
    assert read_profile(ROOT_DATA / "profiles" / "vllm-dgx-h100.toml").engine


def test_one_survivor_has_no_slowdown():
    # three of a group of four failed: the one left communicates nothing (0 s); 0 s over
    # the healthy 68.5 us printed 'slowdown 0x'
    args = ["collective", "all-reduce", "--fabric", "leaf-spine", "--group", "4", "--size",
            "1MiB", "--fail", "gpu0,gpu1,gpu2"]
    r = run_cli(args)
    assert r.exit_code == 0, r.output
    assert "slowdown" not in r.output
    assert "a group of one GPU communicates nothing: 0 s" in r.output
    doc = json.loads(run_cli([*args, "--json"]).output)
    assert doc["failures"]["slowdown"] is None and doc["failures"]["lost"] == [
        "gpu0", "gpu1", "gpu2"]
    assert doc["time"] == 0.0
    # two left: a slowdown, their time over the healthy group's
    doc = json.loads(run_cli([*args[:-1], "gpu0,gpu1", "--json"]).output)
    assert doc["failures"]["slowdown"] == doc["time"] / doc["failures"]["healthy_time"]
