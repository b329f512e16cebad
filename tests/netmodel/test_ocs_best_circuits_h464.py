"""``circuits = "best"``: an OCS scenario's instance circuits set, per instance size, as the
faster of the layouts the cell can realize (a ring at its copies, a torus at its copies),
each costed through the scenario's own recipe (netmodel/study/scenario_fabric.py,
``layout_model``).

Hand check (ideal calibration, alpha a step, latencies 0): ``lite-ocs``'s 16 Lites, 4
optical ports each, one circuit ``B = 112.5 GB/s / 4 = 28.125 GB/s``. A 4x4 torus of one
copy a dimension (all 4 ports) runs its all-reduce as 2 reduce-scatter phases and 2
all-gather phases of 3 steps: ``12 alpha + (15/32) n / B`` (tests/netmodel/
test_ocs_torus_collective.py). A ring of 2 copies (all 4 ports, 2 circuits to each
neighbour) runs it as two counter-rotating rings of ``2 B`` each way: ``2(p-1) alpha +
2(p-1)/p n / (2 x 2 B) = 30 alpha + (15/32) n / B``; one ring (NCCL's) sends one way only:
``30 alpha + (15/16) n / B``. The same bytes a port either way: the torus saves 18 steps.
At a decode all-reduce of Llama-3-70B (165 tokens x 8,192 x 2 bytes = 2,703,360 bytes;
``(15/32) n / B`` = 45.056 us) and alpha = 1 us: torus 57.056 us, ring 75.056 us (torus
24% less); at a prefill one of 5 x 1,500 tokens (122,880,000 bytes; 2.048 ms): torus
2.060 ms, ring 2.078 ms (0.9% less).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from compute.errors import UserError
from netmodel.collectives.calibration import Calibration
from netmodel.collectives.model import FabricCostModel
from netmodel.study.placed_graph import instance_circuits
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_fabric import (
    BEST_SIZES,
    LAYOUTS,
    build_fabric,
    faster_layout,
    instance_graph,
    layout_model,
    scenario_calibration,
    scenario_model,
)
from netmodel.study.scenario_files import load_scenario_text
from netmodel.study.scenarios import CIRCUITS
from tests.netmodel.cli_helpers import run_cli
from tests.netmodel.fabric_helpers import zero_latency

ALPHA = 1e-6
B = 112.5e9 / 4
DECODE = 165 * 8192 * 2
PREFILL = 5 * 1500 * 8192 * 2


def _best():
    return replace(get_scenario("lite-ocs"), circuits="best")


def _lite_ocs_text(circuits: str) -> str:
    """The shipped lite-ocs file with its circuits set to ``circuits``."""
    import netmodel

    text = (Path(netmodel.__file__).parent / "data/scenarios/lite-ocs.toml").read_text()
    lines = [ln for ln in text.splitlines() if not ln.startswith("circuits =")]
    lines.insert(lines.index("[collective]") + 1, f'circuits = "{circuits}"')
    return "\n".join(lines) + "\n"


def test_best_is_a_choice_said_once():
    """"best" is read from a scenario file; a word not allowed is refused in one line that
    names every allowed value (the registry's)."""
    assert CIRCUITS == (*LAYOUTS, "best")
    assert load_scenario_text(_lite_ocs_text("best")).circuits == "best"
    with pytest.raises(UserError) as err:
        load_scenario_text(_lite_ocs_text("fastest"))
    assert "fastest" in str(err.value)
    for word in CIRCUITS:
        assert word in str(err.value)


def _ideal_cell(scenario, size):
    """The cost model of ``scenario``'s instance of ``size`` on lite-ocs, its circuits
    set as instance_graph sets them, latencies 0, ideal calibration at ALPHA a step."""
    graph = zero_latency(instance_graph(scenario, build_fabric(scenario), size).copy())
    return FabricCostModel(graph, calibration=Calibration.ideal(ALPHA))


@pytest.mark.parametrize("n", [DECODE, PREFILL])
def test_hand_check_16_lites(n):
    """16 Lites: the torus of 1 copy against the ring of 2 copies, by the closed forms."""
    s = get_scenario("lite-ocs")
    torus = _ideal_cell(replace(s, circuits="torus"), 16)
    ring = _ideal_cell(replace(s, circuits="ring"), 16)
    t_torus = torus.cost("all-reduce", n, 16, "torus").time
    t_bidir = ring.cost("all-reduce", n, 16, "bidirectional-ring").time
    assert t_torus == pytest.approx(12 * ALPHA + 15 / 32 * n / B, rel=1e-9)
    assert t_bidir == pytest.approx(30 * ALPHA + 15 / 32 * n / B, rel=1e-9)
    assert t_bidir - t_torus == pytest.approx(18 * ALPHA, rel=1e-6)
    assert ring.cost("all-reduce", n, 16, "ring").time >= 30 * ALPHA + 15 / 16 * n / B * \
        (1 - 1e-9)
    # the figures of the module docstring
    hand = {DECODE: (57.056e-6, 75.056e-6), PREFILL: (2.060e-3, 2.078e-3)}[n]
    assert (t_torus, t_bidir) == pytest.approx(hand, rel=5e-4)
    # every ring algorithm on the ring's circuits: none beats the torus
    assert ring.cost("all-reduce", n, 16).time > t_torus
    assert faster_layout({"ring": np.array([t_bidir]), "torus": np.array([t_torus])}) == "torus"


def test_lite_ocs_16_shipped_calibration():
    """With the shipped calibration the torus is also the faster layout of 16 Lites at the
    decode and prefill sizes, and best chooses it."""
    s = get_scenario("lite-ocs")
    g, cal = build_fabric(s), scenario_calibration(s)
    t = {lay: scenario_model(replace(s, circuits=lay), g, 16, cal).collective_time(
        "all-reduce", np.array([DECODE, PREFILL], float), 16) for lay in LAYOUTS}
    assert (t["torus"] < t["ring"]).all()
    assert layout_model(_best(), g, 16, cal)[0] == "torus"


@pytest.mark.parametrize("size", [4, 8, 9, 12, 16, 24, 32])
def test_best_is_the_faster_layout_by_the_same_model(size):
    """The layout best sets is the one whose all-reduce over BEST_SIZES has the least sum
    of logs, each costed by scenario_model with that fixed layout; the model best returns
    costs every op as that layout's does (no second cost path). 9 Lites (3x3) take no
    torus on 4 ports: ring."""
    s, best = get_scenario("lite-ocs"), _best()
    g, cal = build_fabric(s), scenario_calibration(s)
    fixed = {lay: layout_model(replace(s, circuits=lay), g, size, cal) for lay in LAYOUTS}
    can = {lay: m for lay, (set_as, m) in fixed.items() if set_as == lay}
    sizes = np.array(BEST_SIZES)
    logs = {lay: np.log(m.collective_time("all-reduce", sizes, size)).sum()
            for lay, m in can.items()}
    want = min(logs, key=lambda lay: (logs[lay], LAYOUTS.index(lay)))
    chosen, model = layout_model(best, g, size, cal)
    assert chosen == want
    if size == 9:
        assert chosen == "ring" and "torus" not in can
    for op in ("all-reduce", "all-gather", "reduce-scatter", "all-to-all"):
        assert np.array_equal(model.collective_time(op, sizes, size),
                              can[chosen].collective_time(op, sizes, size))
    # never slower than either layout in the criterion
    assert all(logs[chosen] <= v + 1e-9 for v in logs.values())


def test_degraded_cell_re_sets_the_best_layout():
    """On the healthy cell, 16 members take best's layout (the torus's circuits); with one
    of the 4 OCS planes gone (3 ports a Lite) no torus fits and best sets the ring, as a
    fixed ring does."""
    s = get_scenario("lite-ocs")
    g = build_fabric(s)
    members = [f"gpu{i}" for i in range(16)]
    best = instance_circuits(_best(), g, members)
    torus = instance_circuits(replace(s, circuits="torus"), g, members)
    assert sorted(map(sorted, best.edges())) == sorted(map(sorted, torus.edges()))
    broken = g.copy()
    ocs = sorted(n for n, k in broken.nodes(data="kind") if k == "ocs")
    broken.remove_node(ocs[0])
    best = instance_circuits(_best(), broken, members)
    ring = instance_circuits(replace(s, circuits="ring"), broken, members)
    assert best is not None and ring is not None
    assert sorted(map(sorted, best.edges())) == sorted(map(sorted, ring.edges()))
    assert instance_circuits(replace(s, circuits="torus"), broken, members) is not None


def test_compare_reports_the_layouts(tmp_path):
    """compare says the layout of each best instance: its JSON (circuits_set, by instance
    GPUs) and the reconfiguration line; each is layout_model's choice for the size. A
    scenario of one layout says nothing more (its circuits say it): lite-ocs (shipped with
    circuits = "best") beside its copy with the circuits fixed as rings."""
    from netmodel.study.compare import run_compare
    from tests.netmodel.lite_ocs_ring_h479 import ring_file

    res = run_compare(["Llama-3-70B"], ["lite-ocs", ring_file(tmp_path)],
                      ["prefill", "decode"])
    s = _best()
    g, cal = build_fabric(s), scenario_calibration(s)
    set_as = res.circuits_set()["lite-ocs@Lite"]
    assert set(set_as) == {r.instance_gpus for r in res.rows if r.scenario == "lite-ocs"}
    for size, lay in set_as.items():
        assert lay == layout_model(s, g, size, cal)[0]
    assert "lite-ocs-ring@Lite" not in res.circuits_set()
    scen = json.loads(res.to_json())["scenarios"]
    assert scen[0]["circuits"] == "best" and "circuits_set" not in scen[1]
    assert scen[1]["circuits"] == "ring"
    assert scen[0]["circuits_set"] == {str(k): v for k, v in set_as.items()}
    line = next(ln for ln in res.table().splitlines() if ln.startswith("circuit reconf"))
    assert line.endswith("; lite-ocs-ring@Lite 10 ms")   # groups joined by "; "
    for size, lay in set_as.items():
        assert lay in line and str(size) in line


def _best_file(tmp_path):
    path = tmp_path / "lite-ocs-best.toml"
    path.write_text(_lite_ocs_text("best").replace('name = "lite-ocs"',
                                                   'name = "lite-ocs-best"'))
    return str(path)


@pytest.mark.parametrize("command", [
    ["blast-radius", "--model", "Llama-3-70B"],
    ["availability", "--model", "Llama-3-70B", "--trials", "50"],
])
def test_reliability_runs_on_best(command, tmp_path):
    """The blast radius and availability of lite-ocs with circuits = "best" run, with no
    traceback."""
    out = run_cli([*command, "--scenario", _best_file(tmp_path)])
    assert out.exit_code == 0, (out.output, out.exception)
    assert "Traceback" not in out.stderr
    assert "lite-ocs-best@Lite, Llama-3-70B decode" in out.stdout


@pytest.mark.parametrize("scale", [1.0, 2.0])
def test_rescoring_a_best_scenario_equals_compiling(scale):
    """The crossovers' and sweeps' re-scoring (AdjustedComm with hop_latency_slopes) of a
    best scenario equals the scenario compiled at that per-hop latency (and bandwidth
    scale), as tests/netmodel/test_review_adjusted_comm_h389.py asks of lite-ocs: the
    layout is chosen again at the adjusted links, as an operator re-setting circuits per
    job sets them. 8 Lites: the ring at 1.5 us a hop (2 x 7 = 14 steps against the 2x4
    torus's 2 x (1 + 3) = 8, the ring's 2 copies against the torus's 1 each way: the
    bandwidth wins), the torus at 3.5 us (the 6 steps saved win); re-scoring kept the
    ring (19% apart at 1 kB)."""
    from netmodel.study.adjusted_comm import AdjustedComm, hop_latency_slopes
    from netmodel.study.scenario_collectives import ScenarioCollectives

    own, d = 1.5e-6, 2e-6
    s = _best().with_param("adjust.hop_latency", own)
    coll = ScenarioCollectives(s)
    comm = AdjustedComm(coll, scale, d, hop_latency_slopes(s, coll, {}))
    at = _best().with_param("adjust.hop_latency", own + d) \
        .with_param("adjust.bandwidth_scale", scale)
    compiled = ScenarioCollectives(at)
    assert (coll.layout(8), compiled.layout(8)) == ("ring", "torus")
    n = np.array([1e3, 1e5, 1e7, 1e9])
    for op in ("all-reduce", "all-gather", "reduce-scatter"):
        np.testing.assert_allclose(comm.collective_time(op, n, 8),
                                   compiled.collective_time(op, n, 8), rtol=1e-9)
    # at the scenario's own links the re-scoring is the scenario's own costs
    same = AdjustedComm(coll, 1.0, 0.0)
    assert np.array_equal(same.collective_time("all-reduce", n, 8),
                          coll.collective_time("all-reduce", n, 8))


def test_crossovers_rescore_a_best_scenario_as_compiled():
    """The crossovers' tokens of a best scenario at an added per-hop latency (after a first
    search, which keeps its grid for re-scoring) are those of a search of the scenario
    compiled at that latency: Llama-3-70B prefill at TP 8 on lite-ocs set to best, 5 us a
    hop, where 8 Lites' circuits are a torus (a ring at the scenario's own links)."""
    from types import SimpleNamespace

    from compute.phases import check_slo
    from compute.roofline import check_options
    from netmodel.study.crossovers import _Tokens
    from netmodel.study.fabric_search import fabric_search
    from netmodel.study.scenario_collectives import ScenarioCollectives

    s = replace(_best(), name="lite-ocs-best")
    hop = 5e-6
    row = SimpleNamespace(model="Llama-3-70B", phase="prefill")
    tokens = _Tokens(row, s, ScenarioCollectives(s), 512, {}, check_options(None),
                     check_slo(None), "auto", {})
    tokens(1.0, 0.0)
    at = s.with_param("adjust.hop_latency", hop)
    fresh = fabric_search("Llama-3-70B", at, "prefill", max_batch=512).best
    assert fresh.tp == 8 and ScenarioCollectives(at).layout(8) == "torus"
    assert tokens(1.0, hop) == pytest.approx(fresh.tokens_per_s_per_sm, rel=1e-9)


@pytest.mark.parametrize("copy", [False, True])
def test_a_callers_calibration_sets_the_circuits_as_it_chooses(copy):
    """A caller's calibration (compare's or collective --scenario --nccl-release's) chooses
    the layout on the healthy cell (layout_model, instance_graph) and on a copy or a
    degraded cell (instance_circuits, the reliability models' re-costing) alike. 6 Lites:
    the shipped calibration sets the ring (3 x 2 torus: 2 x (1 + 2) = 6 steps against 2 x
    5 = 10, one copy each way against two); the ideal one at 100 us a step sets the torus
    (the 4 steps saved, 400 us, outweigh the bandwidth at every size to 1 GiB but the
    last few)."""
    s = _best()
    g = build_fabric(s)
    cell = g.copy() if copy else g
    members = [f"gpu{i}" for i in range(6)]
    cals = {"ring": scenario_calibration(s), "torus": Calibration.ideal(100e-6)}
    for want, cal in cals.items():
        assert layout_model(s, g, 6, cal)[0] == want
        fixed = instance_circuits(replace(s, circuits=want), g, members)
        got = instance_circuits(s, cell, members, cal)
        assert sorted(map(sorted, got.edges())) == sorted(map(sorted, fixed.edges()))
        healthy = instance_graph(s, cell, 6, cal)
        assert sorted(map(sorted, healthy.edges())) == sorted(
            map(sorted, instance_graph(replace(s, circuits=want), g, 6).edges()))
    # the scenario's own calibration where none is given
    assert sorted(map(sorted, instance_circuits(s, cell, members).edges())) == sorted(
        map(sorted, instance_circuits(replace(s, circuits="ring"), g, members).edges()))
