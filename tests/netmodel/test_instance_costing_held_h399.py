"""The re-costing of an instance is an object the cluster holds (``Cluster.costing``), with
a stated interface: it is given the cluster's public fields, whether GPUs forward traffic,
the switches' part and the cell's validity, and told of each graph the cluster makes; it
reads no private attribute of the cluster and keeps no memo in the cluster's ``__dict__``."""

import ast
from pathlib import Path

import pytest

import netmodel.study.instance_cost as ic
from netmodel.study.instance_cost import InstanceCosting
from netmodel.study.reliability_cluster import Cluster, build_cluster


def test_costing_is_held_not_inherited():
    assert not issubclass(Cluster, InstanceCosting)
    c = build_cluster("lite-flat", "Llama-3-70B", "decode")
    assert isinstance(c.costing, InstanceCosting) and c.costing is c.costing
    assert c.healthy
    # the memos are the costing's: none on the cluster
    assert not {"_costed", "_rebalanced", "_models", "_last_problem", "_last_recost",
                "_slice_models", "_canonical_switch_part"} & set(c.__dict__)
    assert c.costing._costed


def test_instance_cost_reads_only_its_own_private_names():
    # every private attribute it names is its own (self._x) or networkx's documented
    # internals of a graph (_adj, _node), and no object's __dict__
    tree = ast.parse(Path(ic.__file__).read_text())
    seen = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") \
                and not (node.attr.endswith("__") and node.attr != "__dict__"):
            seen += 1
            own = isinstance(node.value, ast.Name) and node.value.id == "self"
            assert node.attr != "__dict__" and (own or node.attr in ("_adj", "_node")), \
                (node.lineno, node.attr)
    assert seen


def _figures(r):
    return None if r is None else (r.batch, r.tokens_per_s, r.latency)


@pytest.mark.parametrize("name", ["lite-flat", "lite-direct"])
def test_a_costing_given_the_same_parts_costs_the_same(name):
    # an InstanceCosting made from the cluster's fields, not told of the graph the
    # cluster made (so it costs it the long way, by every node and link), costs an
    # instance hit by a failure as the cluster's own costing does
    c = build_cluster(name, "Llama-3-70B", "decode")
    inst = c.instances[0]
    # a GPU of another instance lost, and the first link lost of the instance's own
    comps = [x for x in c.components["gpu-die"] if not set(inst) & set(x.nodes)][:1] \
        + [x for cls in c.components.values() for x in cls
           if x.edges and not x.nodes and inst[0] in x.edges[0]][:1]
    assert len(comps) == 2
    own = InstanceCosting(scenario=c.scenario, model=c.model, gpu=c.gpu,
                          workload=c.workload, slo=c.slo, options=c.options,
                          calibration=c.calibration, best=c.best, direct=c._direct,
                          switches=lambda: c._switches, cell_valid=lambda: c._cell_valid)
    for comp in comps:
        g = c.recost_graph([comp], inst)
        want = c.rebalanced(g, inst)
        assert _figures(own.rebalanced(g, inst)) == _figures(want)
