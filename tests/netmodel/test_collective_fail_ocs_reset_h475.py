"""collective --fail on a scenario's OCS cell re-sets the circuits as blast-radius does.

Before, the --fail path dropped the circuits through a failed OCS and costed what was left:
a scenario's torus (circuits = "torus", or "best" where it sets one) has one circuit a
neighbour pair, so with ocs0 failed 16 Lites were cut apart (no path gpu7-gpu8), while
blast-radius and availability re-set each instance's circuits on the planes left
(netmodel.study.placed_graph.instance_circuits) and ran it. A ring's two copies on ocs0
and ocs1 went alike. Now the --fail path re-sets them by that same function.

Hand values (16 Lites of lite-ocs, ideal calibration: a step's time is the circuit's
latency ``a`` plus bytes over bandwidth; ``B`` = 112.5 GB/s / 4 ports = 28.125 GB/s a
circuit; ``n`` = 64 MiB): healthy, the 4x4 torus at 1 copy: ``12a + (15/32) n/B``
(commit dc1f39d); with one OCS of 4 gone, 3 ports a Lite: no 4x4 torus (4 ports), the ring
at floor(3/2) = 1 copy, the bidirectional ring over it ``30a + (15/16) n/B``: 2 x 15
steps each moving n / 32 a direction on one circuit (commit 15e78bb's ring at 1 copy).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import networkx as nx
import pytest

import netmodel
from netmodel.study.collective_setup import collective_setup
from tests.netmodel.cli_helpers import run_cli

SHIPPED = Path(netmodel.__file__).parent / "data" / "scenarios" / "lite-ocs.toml"
N = 2.0 ** 26
B = 112.5e9 / 4


def _scenario(tmp_path: Path, circuits: str) -> Path:
    """lite-ocs with ``circuits`` and the ideal calibration."""
    text = re.sub(r'^circuits = "ring"$', f'circuits = "{circuits}"', SHIPPED.read_text(),
                  flags=re.M)
    text = re.sub(r'^calibration = "default"$', 'calibration = "ideal"', text, flags=re.M)
    path = tmp_path / f"ocs-{circuits}.toml"
    path.write_text(text)
    return path


def _alpha(path: Path) -> float:
    """A circuit's latency (its fibres and the OCS): the model's input, read off the
    healthy circuits."""
    graph = collective_setup(scenario=str(path)).model(16).graph
    return graph.edges["gpu0", "gpu1"]["latency"]


def _run(path: Path, *more: str) -> dict:
    r = run_cli(["collective", "all-reduce", "--scenario", path, "--group", 16,
                 "--size", "64MiB", "--json", *more])
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


@pytest.mark.parametrize("circuits", ["best", "torus"])
def test_a_torus_cell_with_an_ocs_down_runs_the_ring_re_set(tmp_path, circuits):
    path = _scenario(tmp_path, circuits)
    a = _alpha(path)
    doc = _run(path, "--fail", "ocs0")
    fails = doc["failures"]
    assert not fails["cut"]   # was: cut apart, no path joins gpu7 and gpu8
    assert fails["healthy_algorithm"] == "torus"
    assert fails["healthy_time"] == pytest.approx(12 * a + 15 / 32 * N / B, rel=1e-9)
    assert doc["algorithm"] == "bidirectional-ring"
    assert doc["time"] == pytest.approx(30 * a + 15 / 16 * N / B, rel=1e-9)


def test_a_ring_with_two_ocs_down_runs_one_copy(tmp_path):
    """2 planes left: the ring at 1 copy, as fast as with 3 (was: cut apart, both circuits
    of a pair rode ocs0 and ocs1)."""
    path = _scenario(tmp_path, "ring")
    a = _alpha(path)
    for failed in ("ocs0", "ocs0,ocs1"):
        doc = _run(path, "--fail", failed)
        assert not doc["failures"]["cut"]
        assert doc["time"] == pytest.approx(30 * a + 15 / 16 * N / B, rel=1e-9)


def test_every_group_runs_on_its_own_circuits_re_set(tmp_path):
    """--all-groups: the other 7 instances' circuits are re-set too, none cut, each as
    slow as the one costed alone (disjoint circuits)."""
    path = _scenario(tmp_path, "best")
    a = _alpha(path)
    groups = _run(path, "--fail", "ocs0", "--all-groups")["all_groups"]
    assert groups["groups"] == 8 and groups["cut"] == []
    assert groups["makespan"] == pytest.approx(30 * a + 15 / 16 * N / B, rel=1e-9)


def test_the_circuits_re_set_are_one_ring_copy_on_the_planes_left():
    setup = collective_setup(scenario="lite-ocs")
    members = tuple(f"gpu{i}" for i in range(16))
    graph = setup.circuits_after(16, nodes=["ocs0"])(members)
    ring = graph.subgraph(members)
    assert nx.is_isomorphic(ring, nx.cycle_graph(16))
    assert {d.get("links", 1) for _, _, d in ring.edges(data=True)} == {1}
    assert all("ocs0" not in d["via"] for _, _, d in ring.edges(data=True))
    assert graph.graph["circuits"] == 8 * 16   # every instance's ring, one copy each
