"""Parts failed by hand (``netmodel collective --fail``,
:func:`netmodel.collectives.degraded.degrade`) follow the reliability model's rule for a
NIC that GPUs share (:func:`topologies.degrade.hand_on`): a failed GPU holding it
hands its link to the first of its server's other GPUs left; the NIC's own link failing
takes it down.

Hand derivation (``rail-optimized:domains=2,nics_per_server=1``: 2 servers of 8 H100, one
NIC each, held by gpu0 and gpu8, on ``leaf0``; ideal calibration, a 2-GPU all-reduce of
``N`` bytes is one exchange of the whole buffer: ``N / 50 GB/s`` plus the path's latency):
healthy gpu1 -> nvs0 -> gpu0 -> leaf0 -> gpu8 -> nvs1 -> gpu9 is 10 + 150 + 10 + 100 + 330
+ 100 + 10 + 150 + 10 = 870 ns. gpu0 failed: gpu1 holds the NIC, its link 100 ns plus the
way to it it replaces (10 + 150 + 10), so 870 ns again (slowdown 1); gpu2 reaches it
through gpu1, 170 ns further: 1,040 ns. Before, gpu0's failure took the NIC's cable with
it and the pair was cut apart (the CLI: 'CUT: ... no path joins gpu1 and gpu9').
"""

from __future__ import annotations

import json

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from netmodel.collectives.calibration import Calibration
from netmodel.collectives.degraded import degrade, degraded_cost
from tests.netmodel.cli_helpers import run_cli
from topologies import degrade as fd_degrade
from topologies import failure_domains as fd
from topologies.graph_ops import edge_key
from topologies.specs import build

ONE_NIC = "rail-optimized:domains=2,nics_per_server=1"
N = 2 ** 26
NIC = 50e9


@pytest.fixture(scope="module")
def one_nic():
    return build(ONE_NIC)


@pytest.mark.parametrize(("pair", "latency"), [(["gpu1", "gpu9"], 870e-9),
                                               (["gpu2", "gpu9"], 1040e-9)])
def test_failed_holder_hands_its_nic_on(one_nic, pair, latency):
    r = degraded_cost(one_nic, "all-reduce", N, pair, nodes=["gpu0"],
                      calibration=Calibration.ideal())
    assert not r.cut
    assert r.healthy.time == pytest.approx(N / NIC + 870e-9, rel=1e-12)
    assert r.degraded.time == pytest.approx(N / NIC + latency, rel=1e-12)
    assert r.slowdown >= 1.0


def test_the_nic_link_failing_too_cuts_the_server(one_nic):
    for links in ([("gpu0", "leaf0")], [("leaf0", "gpu0")]):
        out = degrade(one_nic, nodes=["gpu0"], links=links)
        assert not nx.has_path(out, "gpu1", "leaf0")
        assert nx.has_path(out, "gpu9", "leaf0")
    out = degrade(one_nic, nodes=["gpu1", "gpu0"])   # the next heir left, any order
    assert out.has_edge("gpu2", "leaf0") and not out.has_edge("gpu1", "leaf0")


@settings(max_examples=60, deadline=None)
@given(nics=st.sampled_from([1, 2, 4]), data=st.data())
def test_one_rule_with_the_reliability_model(nics, data):
    """Any GPUs and NIC links failed by hand leave the fabric the reliability model's
    :func:`topologies.degrade.degrade` leaves for those components."""
    g = build(f"rail-optimized:domains=2,nics_per_server={nics}")
    comps = fd.components(g)
    gpus = sorted((c for c in comps["gpu-die"]), key=lambda c: int(c.name[3:]))
    failed = data.draw(st.lists(st.sampled_from(gpus), unique=True, max_size=15))
    nic = data.draw(st.lists(st.sampled_from(comps["nic"]), unique=True, max_size=3))
    mine = degrade(g, nodes=[c.nodes[0] for c in failed],
                   links=[c.edges[0] for c in nic])
    theirs = fd_degrade.degrade(g, [*nic, *failed])
    assert set(mine.nodes) == set(theirs.nodes)
    assert {edge_key(u, v): d for u, v, d in mine.edges(data=True)} == {
        edge_key(u, v): d for u, v, d in theirs.edges(data=True)}


def test_cli_gpu0_failed_is_costed_not_cut():
    """``netmodel collective all-reduce --group 16 --fail gpu0`` on 2 x 8 H100 with one NIC a
    server: 'CUT' before; now the 15 GPUs left are costed, no faster than healthy."""
    args = ["collective", "all-reduce", "--fabric", ONE_NIC, "--group", "16", "--size",
            "1GiB", "--json"]
    healthy = json.loads(run_cli(args).output)
    r = run_cli([*args, "--fail", "gpu0"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["connected"] and out["group_size"] == 15 and not out["cut"]
    assert healthy["time"] <= out["time"] < 2 * healthy["time"]
