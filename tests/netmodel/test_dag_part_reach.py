"""SearchedRoutes._dag with ``reach``: the search stops where the last asked node is found,
each entry as the whole search gives it, and the part is not kept. (The joint routing's
links, route_joint._dag_links, read the router's arrays instead: test_joint_dag_arrays_h739
checks them against the Python search.)"""

from __future__ import annotations

import pytest

from netmodel.collectives.routing import Router
from topologies import build


def _router(spec: str) -> Router:
    return Router(build(spec))


def whole_depth(r: Router, dst, u) -> int:
    return r._dag(dst)[u][0]


@pytest.mark.parametrize("spec", ["torus:dims=6x6x4", "torus:dims=5x7"])
def test_a_part_is_the_wholes_nearest_entries(spec):
    r = _router(spec)
    gpus = [n for n in r._nodes if r.kind.get(n) == "gpu"]
    dst, near = gpus[0], gpus[1]
    far = max(gpus, key=lambda u: whole_depth(r, dst, u))
    whole = dict(r._dag(dst))
    r._dags.clear()
    part = r._dag(dst, [near])
    assert dst not in r._dags                      # a part is not kept
    depth = whole[near][0]
    assert depth == 1
    # every node up to the asked one's depth, and none beyond: as the whole search has them
    assert set(part) == {u for u, (du, _) in whole.items() if du <= depth}
    for u, entry in part.items():
        assert entry == whole[u]
    assert len(part) < len(whole)
    # asking the farthest node finds everything; the whole search's answer is kept
    r._dags.clear()
    assert r._dag(dst, [far, near]) == whole
    assert r._dag(dst) == whole and dst in r._dags
