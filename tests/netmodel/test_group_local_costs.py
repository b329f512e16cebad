"""What a collective reads of the fabric around its group, looked up for the group's nodes
and links only, is what the same reading of the whole fabric gives, bit for bit: the joint
split's first bound (each end's traffic over all its links), the path rates NCCL gives a
step's links, the switches with a way on to another switch, a router's link count under
its limit. The fabric-wide forms here are the ones the model used before (a 64-GPU
all-reduce of a 16,384-GPU fat tree read every one of its 98,304 links several times)."""

from __future__ import annotations

import numpy as np
import pytest

from netmodel.collectives import route_joint
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.route_types import KIND_SWITCH
from netmodel.collectives.routing import Router
from netmodel.collectives.step_cost import link_path_rates, path_rates_of
from topologies import build

SPECS = ["fat-tree:k=8", "fat-tree:k=8,oversubscription=2", "torus:dims=3x4", "ring:n=8",
         "rail-optimized:domains=4", "nvl72", "flat:n=8,planes=4,radix=8,gpu=Lite",
         "leaf-spine:leaves=4,radix=8,oversubscription=2", "lite-groups"]


def _whole_fabric_ends(router, src, dst, frac, most, top) -> float:
    """The bound as it was worked out: a bincount over every link and every node."""
    bw = route_joint._scaled(router, most, top)
    out = np.bincount(router._src, bw, minlength=router._n)
    into = np.bincount(router._dst, bw, minlength=router._n)
    need_out = np.bincount(src, frac, minlength=router._n)
    need_in = np.bincount(dst, frac, minlength=router._n)
    with np.errstate(divide="ignore", invalid="ignore"):
        return max(float(np.nanmax(need_out / out)), float(np.nanmax(need_in / into)))


@pytest.mark.parametrize("spec", SPECS)
def test_the_ends_bound_is_the_whole_fabrics(spec, monkeypatch):
    """Every step of every algorithm of three ops on groups of 4 and 8 (contiguous and
    spread): the group's ends' bound equals the fabric-wide one, the bits, and the steps
    that pass it (the joint split solved) are among those checked."""
    seen = []
    local = route_joint._ends_bound

    def both(router, src, dst, frac, most, top):
        got = local(router, src, dst, frac, most, top)
        want = _whole_fabric_ends(router, src, dst, frac, most, top)
        seen.append(got)
        assert np.float64(got).tobytes() == np.float64(want).tobytes(), (got, want)
        return got

    monkeypatch.setattr(route_joint, "_ends_bound", both)
    g = build(spec)
    for placement in ("contiguous", "spread"):
        m = FabricCostModel(g, placement, validated=True)
        for op in ("all-reduce", "all-gather", "all-to-all"):
            for p in (4, 8):
                m.curves(op, [2.0 ** 20], p)
    assert seen
    if spec.startswith(("torus", "ring")):   # direct-connect: some steps go on to a solve
        assert min(seen) < 1.0


@pytest.mark.parametrize("spec", SPECS)
def test_path_rates_of_some_links_are_the_whole_fabrics(spec):
    """Links asked a few at a time in a random order, then all: each the rate the
    fabric-wide table gives it (a GPU's links to every switch of a tier summed)."""
    r = Router(build(spec))
    whole = link_path_rates(r)
    rng = np.random.default_rng(0)
    order = rng.permutation(r.n_links)
    for part in np.array_split(order, 7):
        assert path_rates_of(r, part).tobytes() == whole[part].tobytes()
    assert path_rates_of(r, np.arange(r.n_links)).tobytes() == whole.tobytes()


def test_a_gpus_planes_are_one_path():
    """lite-flat's 4 planes: each of a Lite's plane links a path of its 4 links together,
    up and down, asked before the rest of the fabric's."""
    r = Router(build("flat:n=8,planes=4,radix=8,gpu=Lite"))
    up = r.link_id("gpu0", "plane0")
    rates = path_rates_of(r, np.array([up, up ^ 1]))
    assert rates.tolist() == [4 * r.bandwidth[up]] * 2


@pytest.mark.parametrize("spec", SPECS)
def test_live_switches_are_those_with_a_switch_link(spec):
    """The switches a signature keeps (a link to another switch), looked up per switch,
    against every switch-to-switch link of the fabric at once."""
    r = Router(build(spec))
    both = (r._code[r._src] == KIND_SWITCH) & (r._code[r._dst] == KIND_SWITCH)
    alive = np.bincount(r._src[both], minlength=r._n) > 0
    switches = [x for x, k in r.kind.items() if k == "switch"]
    sig = tuple((x, 1.0, 0.0) for x in switches[::-1])
    want = tuple(t for t in sig if alive[r._nid[t[0]]])
    ud = r._updown
    assert ud._live(sig) == want
    assert ud._live(sig[:3]) == tuple(t for t in sig[:3] if t in want)   # looked up before


def test_the_link_limit_counts_self_loops():
    """A router's directed links under NETMODEL_MAX_ROUTER_LINKS: twice the cables, a
    self-loop's two as well (counted from the adjacency, where it appears once)."""
    from compute.errors import UserError

    g = build("fat-tree:k=4")
    g.add_edge("gpu0", "gpu0", bandwidth=1e9, latency=0.0)
    links = 2 * g.number_of_edges()
    assert links == 98
    import os

    old = os.environ.get("NETMODEL_MAX_ROUTER_LINKS")
    try:
        os.environ["NETMODEL_MAX_ROUTER_LINKS"] = str(links)
        assert Router(g).n_links == links
        os.environ["NETMODEL_MAX_ROUTER_LINKS"] = str(links - 1)
        with pytest.raises(UserError, match="about 98 directed links .* over the limit of 97"):
            Router(g)
    finally:
        if old is None:
            del os.environ["NETMODEL_MAX_ROUTER_LINKS"]
        else:
            os.environ["NETMODEL_MAX_ROUTER_LINKS"] = old
