"""Review of ``circuits = "best"`` (netmodel/study/scenario_fabric.py ``layout_model``,
netmodel/study/placed_graph.py ``instance_circuits``): the circuits a cell sets for an
instance's members are the layout the scenario's cost path chooses for that size, on the
healthy cell as on a copy of it (the reliability models' re-costing), and a scenario
file's unknown circuits word is refused in one line naming every allowed one, exit 2.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from netmodel.study.placed_graph import instance_circuits
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_fabric import build_fabric, layout_model, scenario_calibration
from netmodel.study.scenarios import CIRCUITS
from tests.netmodel.cli_helpers import run_cli


def _edges(graph) -> list:
    return sorted(tuple(sorted(map(str, e))) for e in graph.edges())


@pytest.mark.parametrize("size", [4, 6, 8, 9, 12, 16, 20, 24])
def test_cell_sets_the_layout_the_size_chooses(size):
    """lite-ocs with best: the circuits instance_circuits sets for gpu0..gpu{size-1} on the
    built cell (and on a copy of it) are those of the layout layout_model chose for the
    size, the other layout's differing where both can be set (8 and 16: ring, torus)."""
    s = get_scenario("lite-ocs")
    best = replace(s, circuits="best")
    g = build_fabric(s)
    chosen = layout_model(best, g, size, scenario_calibration(best))[0]
    members = [f"gpu{i}" for i in range(size)]
    want = _edges(instance_circuits(replace(s, circuits=chosen), g, members))
    assert _edges(instance_circuits(best, g, members)) == want
    assert _edges(instance_circuits(best, g.copy(), members)) == want
    if size in (8, 16):
        other = {"ring": "torus", "torus": "ring"}[chosen]
        assert _edges(instance_circuits(replace(s, circuits=other), g, members)) != want
        assert chosen == {8: "ring", 16: "torus"}[size]


def test_unknown_circuits_word_refused(tmp_path):
    """A scenario file's circuits = "fastest": one line naming the value and every word of
    the registry (ring, torus, best), exit 2, no traceback."""
    import netmodel

    text = (Path(netmodel.__file__).parent / "data/scenarios/lite-ocs.toml").read_text()
    lines = [ln for ln in text.splitlines() if not ln.startswith("circuits =")]
    lines.insert(lines.index("[collective]") + 1, 'circuits = "fastest"')
    path = tmp_path / "bad.toml"
    path.write_text("\n".join(lines) + "\n")
    out = run_cli(["compare", "--scenarios", path, "--models", "Llama-3-70B"])
    assert out.exit_code == 2, (out.output, out.exception)
    assert "Traceback" not in out.stderr
    err = out.stderr.strip().splitlines()
    assert len(err) == 1 and "'fastest'" in err[0] and "circuits" in err[0]
    assert CIRCUITS == ("ring", "torus", "best")
    for word in CIRCUITS:
        assert f"'{word}'" in err[0]
    assert not out.stdout.strip()
