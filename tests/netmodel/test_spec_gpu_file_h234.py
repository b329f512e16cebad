"""A builder's spec whose last value is a GPU file (``gpu=my.toml``) is a spec, not a scenario
file (h234): its path ends in ``.toml`` as a scenario file's does, and ``collective --fabric``,
``topology show/export`` and ``netmodel.build_fabric`` read the whole spec as a scenario path
('scenario file 'leaf-spine:leaves=2,gpu=g.toml' does not exist'), while the same spec with
``gpu=`` anywhere but last was built."""

from __future__ import annotations

import netmodel
from netmodel.study.scenario_catalog import is_scenario_ref
from tests.netmodel.cli_helpers import run_cli
from tests.netmodel.scenario_helpers import gpu_file_text

GPU = gpu_file_text()


def test_a_spec_ending_in_a_gpu_file_is_not_a_scenario(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "g.toml").write_text(GPU)
    assert not is_scenario_ref("ring:n=4,gpu=g.toml")
    assert is_scenario_ref("mine.toml") and is_scenario_ref("lite-flat@g.toml")
    g = netmodel.build_fabric("ring:n=4,gpu=g.toml")
    assert g.graph["gpus"] == 4
    assert {d["gpu"] for _, d in g.nodes(data=True) if d["kind"] == "gpu"} == {"Test-GPU"}
    # ring: each GPU's 400 GB/s split over its two ports
    assert {d["bandwidth"] for *_, d in g.edges(data=True)} == {200e9}
    out = run_cli(["topology", "show", "leaf-spine:leaves=2,gpu=g.toml"], cwd=tmp_path)
    assert out.exit_code == 0, out.output
    assert "GPUs:        8 (8 x Test-GPU)" in out.output


def test_a_scenario_file_named_like_a_spec_stays_a_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ring:odd.toml").write_text("x")
    assert is_scenario_ref("ring:odd.toml")


def test_compare_table_says_why_a_cost_is_missing(tmp_path, monkeypatch):
    """A GPU file without a die table has no package cost: compare's table showed '-' under
    tok/s/W and $/Mtok with no word why (the reason was only in the JSON's not_computed)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "g.toml").write_text(GPU + "nvlinks = 16\n")
    r = netmodel.compare(["Llama-3-70B"], ["h100-dgx@g.toml"], ["decode"])
    note = r.settings["not_computed"]["cost of h100-dgx@Test-GPU"]
    assert note.startswith("$/Mtok and the network's share of capex not computed: no die "
                           "data for GPU 'Test-GPU'")
    assert f"note: cost of h100-dgx@Test-GPU: {note}" in r.table().splitlines()
    row = r.rows[0]   # its power needs no price (h242): tok/s/W stands, $/Mtok does not
    assert row.feasible and row.tokens_per_s_per_w > 0 and row.usd_per_mtoken is None
