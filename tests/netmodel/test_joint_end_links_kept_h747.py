"""route_joint._ends_bound reads each end's links from route_joint._end_links, kept per
router by the ends (a collective's steps start and end on the same GPUs, step after
step): the bound is what every source must send over all the links out of it and every
destination take in over all the links into it, each node's links summed in ascending
order, as a bincount over every link of the fabric sums them, to the last bit.
"""

import numpy as np
import pytest

import netmodel.collectives.route_joint as rj
from netmodel.collectives.routing import Router
from topologies import build


def _fabric_wide(router, src, dst, frac, most, top):
    """The bound as the fabric-wide bincounts give it (every link, every node)."""
    bw = rj._scaled(router, most, top)
    best = 0.0
    for end, at in ((src, router._src), (dst, router._dst)):
        need = np.bincount(end, frac, minlength=router._n)
        cap = np.bincount(at, bw, minlength=router._n)
        used = need > 0
        best = max(best, float((need[used] / cap[used]).max()))
    return best


@pytest.mark.parametrize("spec", ["torus:dims=4x4", "fat-tree:k=4",
                                  "leaf-spine:leaves=4,radix=8,oversubscription=2"])
def test_kept_ends_give_the_fabric_wide_sums_h747(spec):
    r = Router(build(spec))
    rng = np.random.default_rng(7)
    gpus = r.node_numbers(r.gpu_list)
    most = float(r._route_bw.max())
    for _ in range(20):
        src = rng.choice(gpus, size=12)
        dst = rng.choice(gpus, size=12)
        keep = src != dst
        src, dst = src[keep], dst[keep]
        frac = rng.choice([0.25, 0.5, 1.0], size=len(src))
        top = rng.uniform(0.5, 2.0, size=2)
        want = _fabric_wide(r, src, dst, frac, most, top)
        assert rj._ends_bound(r, src, dst, frac, most, top) == want
        # again, from the kept ends: the same bits
        assert rj._ends_bound(r, src, dst, frac, most, top) == want
    kept = r.__dict__["_end_links"]
    assert kept and r.__dict__["_end_links_size"] == sum(v[2] for v in kept.values())
    for (flip, _, _), (links, at, _) in kept.items():
        ends = (r._dst if flip else r._src)[links]
        assert np.all(np.diff(links) > 0) and not links.flags.writeable
        assert np.all(np.diff(ends[np.argsort(at, kind="stable")]) >= 0)


def test_kept_ends_bounded_h747(monkeypatch):
    monkeypatch.setattr(rj, "JOINT_ENDS_KEPT", 6)
    r = Router(build("torus:dims=4x4"))
    gpus = r.node_numbers(r.gpu_list)
    for k in range(1, 6):   # five sets of four sources: at most 6 nodes kept
        rj._end_links(r, np.sort(gpus[k:k + 4]), 0)
    kept = r.__dict__["_end_links"]
    assert len(kept) == 1 and r.__dict__["_end_links_size"] == 4
