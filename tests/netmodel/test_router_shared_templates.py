"""The two-hop routes of signature pairs that share switches, worked out with numpy over all
pairs at once (route_templates.TemplatedRoutes._shared_templates; one GPU on 4,000 NVSwitches
made a 256-GPU all-to-all's 65,153 pairs take 1.1 s pair by pair, h246), and the first- and
last-hop patterns kept once each (TemplatedRoutes._add_spec; h251)."""

import networkx as nx
import numpy as np
import pytest

import netmodel.collectives.route_types as rt
from netmodel.collectives.calibration import Calibration
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.routing import Router


def _random_fabric(seed: int) -> nx.Graph:
    """24 GPUs, each wired to a random 0-6 of 8 switches (tiers 0 and 1, each its own
    latency) by cables of random bandwidth (1, 2 or 3 x 10 GB/s) and latency."""
    rng = np.random.default_rng(seed)
    g = nx.Graph(name="random", spec="", gpus=24)
    for s in range(8):
        g.add_node(f"sw{s}", kind="switch", tier=int(s >= 5), radix=24,
                   latency=float(rng.integers(1, 4)) * 1e-7, in_network_reduction=False)
    for i in range(24):
        g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
        for s in rng.choice(8, size=int(rng.integers(0, 7)), replace=False).tolist():
            g.add_edge(f"gpu{i}", f"sw{s}", bandwidth=float(rng.integers(1, 4)) * 1e10,
                       latency=float(rng.integers(1, 9)) * 1e-8, medium="copper", lanes=1)
    return g


def _by_dicts(r: Router, sa: int, sb: int):
    """The route through the switches both signatures share, one switch after another in
    Python (as _full_template did before h251): tier-0 switches only where there are some,
    each weighted by min(cable up, cable down) over their sum, the latency the most of
    cable + switch + cable, in the source's port order."""
    ta = {s: (j, bw, la) for j, (s, bw, la) in enumerate(r._sigs[sa])}
    tb = {s: (j, bw, la) for j, (s, bw, la) in enumerate(r._sigs[sb])}
    common = [s for s in ta if s in tb]
    if any(r.tier[s] < 1 for s in common):
        common = [s for s in common if r.tier[s] < 1]
    if not common:
        return None
    mine = sorted((ta[s][0], s, ta[s][1], ta[s][2]) for s in common)
    tot = sum(min(bw, tb[s][1]) for _, s, bw, _ in mine)
    lat = 0.0
    for _, s, _, la in mine:
        lat = max(lat, la + r._switch_latency.get(s, 0.0) + tb[s][2])
    return ([j for j, *_ in mine], [min(bw, tb[s][1]) / tot for _, s, bw, _ in mine],
            [tb[s][0] for _, s, _, _ in mine], lat, any(r.tier[s] >= 1 for s in common))


def test_shared_templates_match_a_loop_over_dicts(monkeypatch):
    """Every ordered pair of signatures (themselves too) of three random fabrics: the numpy
    routes equal the Python loop's to the bit (floats compared by hex), with the look-ups in
    one chunk and in chunks of 5 (pairs split across chunks); some pairs share no switch, some
    several of unequal cables, some tier-0 and tier-1 switches at once."""
    seen = {"none": 0, "several": 0, "mixed": 0}
    for seed in (1, 2, 3):
        r = Router(_random_fabric(seed))
        r._ensure_sigs(np.arange(24))
        n = len(r._sigs)
        a, b = (x.ravel() for x in np.meshgrid(np.arange(n), np.arange(n), indexing="ij"))
        want = [_by_dicts(r, x, y) for x, y in zip(a.tolist(), b.tolist(), strict=True)]
        for x, y, w in zip(a.tolist(), b.tolist(), want, strict=True):
            tiers = {r.tier[s] >= 1 for s, _, _ in r._sigs[x]} & \
                {r.tier[s] >= 1 for s, _, _ in r._sigs[y]}
            seen["none"] += w is None
            seen["several"] += w is not None and len(w[0]) > 1 and len(set(w[1])) > 1
            seen["mixed"] += w is not None and len(tiers) == 2
        hexed = [None if w is None else (w[0], [v.hex() for v in w[1]], w[2], w[3].hex(),
                                         w[4]) for w in want]
        for chunk in (rt.MEET_CHUNK, 5):
            monkeypatch.setattr(rt, "MEET_CHUNK", chunk)
            count, fa, fw, fb, lat, so = r._shared_templates(a, b)
            first = (np.cumsum(count) - count).tolist()
            got = [None if not c else (fa[f:f + c].tolist(), [v.hex() for v in
                                                               fw[f:f + c].tolist()],
                                       fb[f:f + c].tolist(), float(x).hex(), bool(o))
                   for c, f, x, o in zip(count.tolist(), first, lat, so, strict=True)]
            assert got == hexed
    assert min(seen.values()) > 0, seen


def test_each_pattern_is_kept_once():
    """Direct all-to-all of gpu0-gpu63, 1 MiB, on the 600-GPU hub of test_rows_meet (every
    GPU its own signature, 64 x 64 pairs of them learned): no first- or last-hop pattern is
    kept twice (8,002 kept before h251, one a pair's head and tail; 65 distinct), none kept
    for a pair that shares switches (its route worked out again adds no pattern), and the
    time is the one before to the bit."""
    from .test_rows_meet import _hub, _hub_all_to_all_time

    model = FabricCostModel(_hub(600), calibration=Calibration.ideal())
    t = model.cost("all-to-all", 2 ** 20, [f"gpu{i}" for i in range(64)], "direct").time
    # 2.0916160000000002e-05 s when written (h363: was a pin of it): 62/64 MiB over a
    # 50 GB/s cable plus a 0.6 us route, by hand
    assert t == pytest.approx(_hub_all_to_all_time(_hub(600), 64), rel=1e-12)
    r = model.router
    keys = [(tuple(p), tuple(w)) for p, w in r._spec_py]
    assert len(set(keys)) == len(keys)
    assert len(keys) == r._specs_pos.n == r._specs_w.n == len(r._spec_ids)
    assert len(keys) < 200
    assert not r._full   # every pair shares leaf0
