"""A switch with no links is refused, naming it, wherever a fabric is read or priced: a
saved fabric holding 1,000 such switches of 1,000,000 ports each was counted by ``topology
show`` (switches 1,000; ports 0 of 1,000,000,000 used) while ``cost`` priced its network at
$0 (0%), even ``--share as-built``: the cost model prices a switch by radix x port rate
(docs/economics.md) and a switch's port rate is its links', so one with none had no price.
An OCS of a realized fabric (its circuits GPU-GPU edges) and a degraded fabric's switch
whose links failed are not refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compute.errors import UserError
from netmodel.study.network_bill import network_bill
from tests.netmodel.cli_helpers import ROOT, one_line_error, run_cli
from topologies import build
from topologies.degrade import mark_degraded
from topologies.io import read_graph, write_graph
from topologies.schema import check_switches_linked

SWITCH = {"kind": "switch", "tier": 1, "radix": 1_000_000, "latency": 3e-7,
          "in_network_reduction": False}
WHY = "a switch is priced by its radix x port rate and its port rate is its links'"


def _with_lone_switches(n: int):
    g = build("ring:n=4")
    for i in range(n):
        g.add_node(f"sw{i}", **SWITCH)
    return g


def _file(tmp_path: Path, n: int) -> Path:
    path = tmp_path / "f.json"
    write_graph(build("ring:n=4"), path)
    doc = json.loads(path.read_text())
    doc["nodes"] += [{"id": f"sw{i}", **SWITCH} for i in range(n)]
    path.write_text(json.dumps(doc))
    return path


def test_show_refuses_and_names_the_switch(tmp_path):
    path = _file(tmp_path, 1000)
    r = run_cli(["topology", "show", str(path)])
    assert r.exit_code == 2
    assert one_line_error(r) == (
        f"error: {path}: invalid fabric graph: switch 'sw0' has no links (nor have 999 more); "
        f"{WHY} (a spare switch is no part of a fabric): link them or take them out")


def test_cost_refuses_as_show_does(tmp_path):
    path = _file(tmp_path, 1)
    scen = (ROOT / "netmodel/data/scenarios/lite-flat.toml").read_text()
    body = scen.split("[fabric]")[0] + f'fabric = "{path.name}"\n\n[collective]' + \
        scen.split("[collective]")[1]
    (tmp_path / "s.toml").write_text(body.replace('gpu = "Lite"', 'gpu = "H100-SXM"'))
    for share in ("ports-used", "as-built"):
        r = run_cli(["cost", "--scenario", str(tmp_path / "s.toml"), "--model", "Llama-3-8B",
                     "--max-batch", "8", "--share", share])
        assert r.exit_code == 2, r.output
        line = one_line_error(r)
        assert "switch 'sw0' has no links; " + WHY in line and "link it or take it out" in line


@pytest.mark.parametrize("share", ["ports-used", "as-built"])
def test_network_bill_refuses_an_unpriceable_switch(share):
    with pytest.raises(UserError, match="switch 'sw1' has no links"):
        network_bill(_with_lone_switches(2).subgraph(["gpu0", "gpu1", "gpu2", "gpu3", "sw1"])
                     .copy(), share=share)


def test_linked_fabrics_and_lone_ocs_pass(tmp_path):
    check_switches_linked(build("leaf-spine:leaves=2,radix=4"))
    realized = build("ocs:logical=ring")   # its OCSes hold no edge: circuits are GPU-GPU
    assert any(d["kind"] == "ocs" and not realized.degree(n)
               for n, d in realized.nodes(data=True))
    path = tmp_path / "ocs.json"
    write_graph(realized, path)
    assert read_graph(path).number_of_nodes() == realized.number_of_nodes()
    check_switches_linked(mark_degraded(_with_lone_switches(1)))   # its links failed
