"""Searched routes on a uniform torus do not depend on where they start: a route and its
translate (every node shifted by the same vector, mod the torus's dimensions) take the same
links' shares. The maximum flows of searched routes (route_flows._max_flow) are kept per
canonical pattern of route, so the order in which nodes list their neighbours, which has no
physical meaning, does not change them (it did: 16x16 torus, translates' shares up to 4.8%
apart)."""

import itertools

import pytest

from netmodel.collectives.route_sharing import router_for
from topologies import build


@pytest.mark.parametrize("dims", [(16, 16)])
def test_translates_share_one_route(dims):
    g = build("torus:dims=" + "x".join(map(str, dims)))
    r = router_for(g)
    coords = list(itertools.product(*[range(d) for d in dims]))
    idx = {c: i for i, c in enumerate(coords)}
    names = {v: k for k, v in r._nid.items()}

    def shift(i, t):
        return idx[tuple((a + b) % d for a, b, d in zip(coords[i], t, dims, strict=True))]

    def shares(s, d):
        got = r.route(f"gpu{s}", f"gpu{d}")
        return {(names[int(r._src[lk])], names[int(r._dst[lk])]): float(w)
                for lk, w in zip(got.links.tolist(), got.weights.tolist(), strict=True)}

    worst = 0.0
    n = len(coords)
    # destinations whose translates' shares were apart (gpu41 4.8%, gpu42 1.7%), and more
    for d in (1, 17, 41, 42, 110, 158, 174, 255):
        base = shares(0, d)
        assert abs(sum(w for (a, _), w in base.items() if a == "gpu0") - 1.0) < 1e-12
        for s in range(0, n, 7):
            t = coords[s]
            got = shares(s, shift(d, t))
            want = {(f"gpu{shift(int(a[3:]), t)}", f"gpu{shift(int(b[3:]), t)}"): w
                    for (a, b), w in base.items()}
            assert set(got) == set(want), (d, s)
            worst = max(worst, max(abs(got[k] - want[k]) / want[k] for k in got))
    assert worst < 1e-12
