"""A degraded fabric is refused by the cost model, not priced as if its failed parts had
never been bought (h438).

A graph from :func:`netmodel.collectives.degraded.degrade` or
:func:`topologies.degrade.degrade`, given to ``cost_summary`` (a scenario on the
graph) or to ``network_bill``, was priced from what was left: on 2 x 8 H100
(rail-optimized, one 400 Gb/s ConnectX-7 a GPU) one cut GPU-leaf link took a NIC off the
hosts (``nic_price``, $1,599) and that link's optics ends and cable off the network, as if
the fabric had been built without them. Both degrade functions now mark the copy (graph
attribute ``degraded``, True; kept by a copy and by a saved .json/.graphml file) and the
cost model refuses it in one line naming the parameter; what a fabric costs is its healthy
graph's bill. Degrading with nothing failed marks nothing and prices as the healthy graph:
16 hosts at ``host_cost_per_h100`` ($4,001, economics.toml; an H100 is the reference
GPU, its TDP share 1) = $64,016, every GPU with its NIC.
"""

from __future__ import annotations

import json
from importlib import resources

import pytest

from compute.errors import UserError
from compute.yield_model import parameter
from netmodel.collectives.degraded import degrade as degrade_links
from netmodel.study import cost
from netmodel.study.cost import cost_summary
from netmodel.study.network_bill import network_bill
from netmodel.study.scenarios import fabric_scenario
from tests.netmodel.cli_helpers import one_line_error, run_cli
from topologies import build
from topologies.degrade import degrade, is_degraded
from topologies.failure_domains import components
from topologies.io import read_graph, write_graph

SPEC = "rail-optimized:domains=2"


@pytest.fixture(scope="module")
def healthy():
    return build(SPEC)


def _nic_link(graph):
    """gpu0's link to its rail leaf (the only tier-1 switch it is wired to)."""
    leaf = next(v for v in graph.neighbors("gpu0") if graph.nodes[v].get("tier") == 1)
    return "gpu0", leaf


def _no_search(*args, **kwargs):
    raise AssertionError("the search ran before the degraded graph was refused")


def test_one_cut_nic_link_is_refused_by_cost_summary_before_the_search(healthy, monkeypatch):
    degraded = degrade_links(healthy, links=[_nic_link(healthy)])
    assert is_degraded(degraded) and degraded.graph["degraded"] is True
    assert not is_degraded(healthy)   # the built graph is left as it was
    monkeypatch.setattr(cost, "_best", _no_search)
    with pytest.raises(UserError) as exc:
        cost_summary(fabric_scenario(degraded, "cut"), "Llama-3-8B", "decode")
    msg = str(exc.value)
    assert "\n" not in msg
    assert msg.startswith("the graph of scenario 'cut' is a degraded fabric")
    assert "'degraded'" in msg and "healthy fabric" in msg and "--" not in msg


def test_failure_domains_degrade_is_refused_by_the_network_bill(healthy):
    link = next(c for c in components(healthy)["transceiver"]
                if c.edges == (_nic_link(healthy),))
    degraded = degrade(healthy, iter([link]))   # a generator of components marks too
    assert is_degraded(degraded) and is_degraded(degraded.copy())
    with pytest.raises(UserError, match=r"^graph is a degraded fabric \(graph attribute "
                                        r"'degraded'"):
        network_bill(degraded)
    # a failed leaf, a failed GPU: refused alike
    for cls in ("leaf", "gpu-package"):
        with pytest.raises(UserError, match="degraded fabric"):
            network_bill(degrade(healthy, [components(healthy)[cls][0]]))
    with pytest.raises(UserError, match="degraded fabric"):
        network_bill(degrade_links(healthy, nodes=["gpu3"]))


def test_nothing_failed_is_not_marked_and_prices_as_built(healthy):
    """Hand-derived: 16 H100 hosts at $4,001 each, all 16 NICs in the graph."""
    assert parameter("host_cost_per_h100") == 4001
    whole = cost_summary(fabric_scenario(healthy, "whole"), "Llama-3-8B", "decode")
    assert whole.capex_host == 16 * 4001 == 64016 and whole.nics == 16
    for same in (degrade(healthy, []), degrade_links(healthy)):
        assert not is_degraded(same)
        s = cost_summary(fabric_scenario(same, "same"), "Llama-3-8B", "decode")
        assert (s.capex_host, s.capex_network, s.power_host, s.power_network) == (
            whole.capex_host, whole.capex_network, whole.power_host, whole.power_network)


@pytest.mark.parametrize("suffix", ["json", "graphml"])
def test_a_saved_degraded_fabric_keeps_its_mark(healthy, tmp_path, suffix):
    path = tmp_path / f"cut.{suffix}"
    write_graph(degrade_links(healthy, links=[_nic_link(healthy)]), path)
    again = read_graph(path)
    assert is_degraded(again)
    with pytest.raises(UserError, match="degraded fabric"):
        network_bill(again)


def test_cli_cost_of_a_scenario_on_a_saved_degraded_fabric_is_one_line(healthy, tmp_path):
    """The one CLI way in: a scenario file naming a degraded fabric saved through the API
    (``fabric = "FILE"``): one error line, exit status 2, nothing priced."""
    write_graph(degrade_links(healthy, links=[_nic_link(healthy)]), tmp_path / "cut.json")
    shipped = resources.files("netmodel").joinpath("data/scenarios/h100-dgx.toml").read_text()
    head, rest = shipped.split("[fabric]\n", 1)
    line = 'gpu = "H100-SXM"\n'
    assert line in head
    text = head.replace(line, line + f"fabric = {json.dumps('cut.json')}\n") \
        + "[collective]" + rest.split("[collective]", 1)[1]
    (tmp_path / "cut.toml").write_text(text)
    r = run_cli(["cost", "--scenario", tmp_path / "cut.toml", "--model", "Llama-3-8B",
                 "--phase", "decode"])
    assert r.exit_code == 2, r.output
    err = one_line_error(r)
    assert "is a degraded fabric" in err and "healthy fabric" in err
