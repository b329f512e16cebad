"""The up/down fast path of many pairs of signatures worked in runs of whole destinations
(:data:`netmodel.collectives.route_templates.MEET_PAIRS` at once) gives what one pass gives:
the same costs, link by link, and the same patterns, lists, pieces and capacity sets, made
in the same order (the same ids)."""

from __future__ import annotations

import numpy as np
import pytest

from netmodel.collectives import route_templates
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.route_sharing import clear_shared_routes
from topologies import build


def _direct(spec: str, gpus: int):
    clear_shared_routes()   # a router of its own, from nothing
    m = FabricCostModel(build(spec), validated=True)
    r = m.cost("all-to-all", 2 ** 26, gpus, "direct")
    return m.router, r


def _kept(router) -> dict:
    """What the router keeps of the pairs it worked out, as plain values."""
    return {
        "known_keys": router._known_keys.tolist(),
        "known_fields": {k: v.tolist() for k, v in router._known_fields.items()},
        "specs": [(list(p), list(w)) for p, w in router._spec_py],
        "lists": [list(x) for x in router._list_py],
        "pieces": [(x.tolist(), y.tolist()) for x, y in
                   zip(router._piece_links, router._piece_weights, strict=True)],
        "halves": dict(router._halves),
        "caps": [(n, c.tolist()) for n, c in router._updown._cap_sets],
    }


@pytest.mark.parametrize("spec, gpus", [("fat-tree:k=8", 128),
                                        ("fat-tree:k=8,oversubscription=2", 128)])
def test_runs_of_destinations_are_one_pass(monkeypatch, spec, gpus):
    whole_router, whole = _direct(spec, gpus)
    runs = []
    part = route_templates.TemplatedRoutes._meet_part

    def spy(self, m, ua, ub, status, u):
        runs.append(ub[m])
        return part(self, m, ua, ub, status, u)

    monkeypatch.setattr(route_templates, "MEET_PAIRS", 100)
    monkeypatch.setattr(route_templates.TemplatedRoutes, "_meet_part", spy)
    split_router, split = _direct(spec, gpus)
    # 32 edge switches, 32 x 31 pairs of signatures: 992 through the fast path, in runs of
    # at most 100 (three whole destinations of 31 sources each), destinations ascending
    assert sum(map(len, runs)) == 32 * 31
    assert max(map(len, runs)) <= 100 and len(runs) == -(-32 // 3)
    assert all(np.unique(r).size * 31 == len(r) for r in runs)
    assert all(runs[i].max() < runs[i + 1].min() for i in range(len(runs) - 1))
    assert split.time == whole.time and split.bottleneck == whole.bottleneck
    assert split_router is not whole_router
    assert _kept(split_router) == _kept(whole_router)
