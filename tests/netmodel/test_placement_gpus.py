"""partition/place refuse a ``gpus`` list naming a node the fabric lacks, a switch, or one
GPU twice (it made groups of GPUs that are not there, and a GPU in two groups)."""

from __future__ import annotations

import networkx as nx
import pytest

from compute.errors import UserError
from netmodel.collectives.placement import partition, place


def _fabric():
    g = nx.Graph(gpus=4)
    g.add_nodes_from((f"gpu{i}", {"kind": "gpu", "rail": i % 2}) for i in range(4))
    g.add_node("sw0", kind="switch")
    return g


@pytest.mark.parametrize(("gpus", "named"), [
    (["gpu0", "gpu9"], r"'gpu9' is not a node of the fabric"),
    (["gpu0", "gpu1", "gpu0", "gpu2"], r"'gpu0' appears more than once"),
    (("gpu0", "sw0"), r"'sw0' is a switch, not a GPU"),
    (["gpu0", None], r"None is not a node of the fabric"),
    (["gpu0", ["gpu1"]], r"\['gpu1'\] is not a node of the fabric"),
    (["gpu0", float("nan")], r"nan is not a node of the fabric"),
    (["gpu7", "gpu0", "gpu0"], r"'gpu7' is not a node of the fabric"),   # the first bad value
])
@pytest.mark.parametrize("policy", ["contiguous", "rail-aligned", "spread", "random"])
def test_gpus_must_be_the_fabrics_gpus_each_once(gpus, named, policy):
    pattern = (r"^gpus must be the fabric's GPU nodes, each once: " + named
               + r" \(its 4 GPUs: 'gpu0', 'gpu1', 'gpu2', 'gpu3'\)$")
    with pytest.raises(UserError, match=pattern):
        partition(_fabric(), 1, policy, gpus=gpus)
    with pytest.raises(UserError, match=pattern):
        place(_fabric(), 1, policy, gpus=gpus)


def test_graph_must_be_a_graph_when_gpus_are_given():
    with pytest.raises(UserError, match=r"^graph must be a networkx Graph"):
        partition(None, 1, gpus=["gpu0"])


def test_valid_lists_by_hand():
    g = _fabric()
    # a subset, in the caller's order: contiguous pairs of it; spread: every 2nd
    assert partition(g, 2, gpus=["gpu3", "gpu1", "gpu0", "gpu2"]) == [("gpu3", "gpu1"),
                                                                      ("gpu0", "gpu2")]
    assert partition(g, 2, "spread", gpus=("gpu0", "gpu1", "gpu2", "gpu3")) == [
        ("gpu0", "gpu2"), ("gpu1", "gpu3")]
    assert place(g, 1, gpus=["gpu2"]) == ("gpu2",)


def test_a_set_is_no_group():
    """A set of GPUs has no order of its own (a string set's iteration order follows
    PYTHONHASHSEED), and a group's order is its ring order: collective_time on a set gave
    a ring order that changed from run to run (hostile pass 223). Refused, as
    concurrent_cost refuses one; the same GPUs as a list are taken."""
    from netmodel.collectives.model import FabricCostModel
    from topologies.registry import build

    m = FabricCostModel(build("single-switch:n=4"))
    for bad in ({"gpu0", "gpu1"}, frozenset({"gpu0", "gpu1"})):
        with pytest.raises(UserError, match="group must be an ordered list of GPUs .* got a "
                                            f"{type(bad).__name__}"):
            m.collective_time("all-reduce", 2 ** 20, bad)
    assert m.group(["gpu1", "gpu0"]) == ("gpu1", "gpu0")
