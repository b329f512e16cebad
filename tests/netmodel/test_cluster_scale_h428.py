"""What keeps a cluster's failure effects fast at scale gives the same answers: routes of
many GPU pairs learnt at once (Router.learn_routes, CellRoutes.learn) equal the ones
learnt pair by pair; the cell's parts worked out as an array (Cluster._evaluate) cut off
the GPUs the partition dict and main_part name; a failure's local effect and partition
asked again for the same component are the first answers."""
import itertools

import pytest

from netmodel.collectives.routing import Router
from netmodel.study.cell_routes import CellRoutes
from netmodel.study.reliability_cluster import build_cluster
from topologies import build


def _links(router, a, b):
    r = router.route(a, b)
    return None if r is None else sorted(zip(map(router.link_name, r.links),
                                             r.weights.tolist(), strict=True))


@pytest.mark.parametrize("spec", ["rail-optimized:domains=4", "fat-tree:k=4",
                                  "rail-optimized:domains=4,nics_per_server=4",
                                  "leaf-spine:leaves=4,radix=8,oversubscription=2"])
def test_routes_learnt_at_once_are_the_routes_learnt_one_by_one(spec):
    g = build(spec)
    gpus = [n for n, k in g.nodes(data="kind") if k == "gpu"]
    pairs = list(itertools.permutations(gpus, 2))
    at_once, one_by_one = Router(g), Router(g)
    at_once.learn_routes([a for a, _ in pairs], [b for _, b in pairs])
    learnt = dict(at_once._pair_rows)
    for a, b in pairs:
        r1, r2 = at_once.route(a, b), one_by_one.route(a, b)
        assert _links(at_once, a, b) == _links(one_by_one, a, b)
        assert (r1.latency, r1.hops, r1.scaleout) == (r2.latency, r2.hops, r2.scaleout)
    assert at_once._pair_rows == learnt   # every route after was a lookup


def test_learn_routes_refuses_uneven_ends():
    from compute.errors import UserError

    with pytest.raises(UserError, match="src and dst"):
        Router(build("fat-tree:k=4")).learn_routes(["gpu0"], ["gpu1", "gpu2"])


def test_footprints_after_learning_are_the_same():
    g = build("rail-optimized:domains=4")
    gpus = [n for n, k in g.nodes(data="kind") if k == "gpu"]
    instances = [gpus[i:i + 4] for i in range(0, len(gpus), 4)] + [gpus[::8]]
    learnt, plain = CellRoutes(g), CellRoutes(g)
    learnt.learn(instances)
    for inst in instances:
        assert learnt.footprint(inst) == plain.footprint(inst)


@pytest.mark.parametrize("scenario,model", [("h100-dgx", "Llama-3-70B"),
                                            ("lite-hier", "Llama-3-70B"),
                                            ("lite-direct", "Llama-3-8B")])
def test_gpus_cut_are_those_off_the_main_part(scenario, model):
    c = build_cluster(scenario, model, "decode")
    kinds = c.kinds
    for e in c.effects():
        part = c.partition([e.component])
        main = c.main_part(part)
        off = sum(1 for n, k in part.items() if kinds[n] == "gpu" and k != main)
        assert e.gpus_cut == off, e.example
        members = [c.instances[i] for i in e.down]
        assert all(m in part or m in c.local(e.component)[1] for inst in members
                   for m in inst)


def test_local_and_partition_asked_again_are_the_first_answers():
    c = build_cluster("lite-hier", "Llama-3-70B", "decode")
    comp, other = (e.component for e in c.effects()[:2])
    first = c.local(comp)
    assert c.local(comp) is first and first == c._local(comp)
    part = c.partition([comp])
    assert c.partition([comp]) is part
    c.partition([other])
    assert c.partition([comp]) == part and c.local(other) == c._local(other)
