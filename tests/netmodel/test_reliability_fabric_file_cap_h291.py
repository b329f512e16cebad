"""The reliability models' size cap on a scenario's saved fabric file (h291).

``build_cluster`` built a scenario's fabric under :func:`~netmodel.study.reliability_fabric.
fabric_cap` (the most nodes the reliability models take), but a scenario file's
``fabric = "FILE"`` (h288) was read when the scenario was, under the global limits alone
(2,000,000 nodes): a 300,000-GPU ring file (64 MB) was parsed and built in full, 4.1 s and
710 MB, only to be refused for its GPUs. Now the scenario is read under the cap too, so the
file is refused from its node count once parsed, before any graph is built (1.2 s, 437 MB,
the JSON parse). Checked here with the cap lowered to 10 nodes (the real one is 262,144):
a 16-GPU ring file is refused with the cap's reason and no graph of it is kept.
"""

from __future__ import annotations

import pytest

from compute.memo import Lru
from tests.netmodel.cli_helpers import one_line_error, run_cli
from tests.netmodel.scenario_helpers import export_fabric, write_scenario


@pytest.fixture
def mine(tmp_path):
    export_fabric(tmp_path, "ring:n=16,gpu=Lite", "ring.json")
    return write_scenario(tmp_path, "mine", "Lite", "ring.json", sources="the file",
                          description="16 Lites in a ring read from a file")


def test_a_scenario_fabric_file_is_read_under_the_cap(mine, monkeypatch):
    from compute.errors import UserError
    from netmodel.study import reliability_fabric, scenario_files
    from netmodel.study.reliability_cluster import build_cluster

    monkeypatch.setattr(scenario_files, "_FABRIC_FILES",
                        Lru(scenario_files._FABRIC_FILES_MAX))
    monkeypatch.setattr(reliability_fabric, "MAX_FABRIC_NODES", 10)
    with pytest.raises(UserError) as err:
        build_cluster(str(mine), "Llama-3-8B")
    text = str(err.value)
    assert text.startswith(f"{mine}: fabric: ")
    assert "about 16 nodes and 16 edges, over the limit of 10 nodes" in text
    assert text.endswith("the reliability models take a fabric of up to 131,072 GPUs "
                         "(10 nodes with its switches); use a smaller fabric")
    assert scenario_files._FABRIC_FILES == {}   # refused before a graph was made and kept
    # the CLI: one line, exit 2
    one_line_error(run_cli(["blast-radius", "--scenario", mine, "--model", "Llama-3-8B"]),
                   "over the limit of 10 nodes")


def test_under_the_cap_it_runs(mine, monkeypatch):
    from netmodel.study import scenario_files
    from netmodel.study.reliability_cluster import build_cluster

    monkeypatch.setattr(scenario_files, "_FABRIC_FILES",
                        Lru(scenario_files._FABRIC_FILES_MAX))
    c = build_cluster(str(mine), "Llama-3-8B")
    assert c.graph.graph["gpus"] == 16 and c.cells == 1
    assert len(scenario_files._FABRIC_FILES) == 1
