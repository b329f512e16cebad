"""Review of a step's transfers spread together (netmodel/collectives/route_joint.py): hand
cases whose optimum is derived on paper, the optimum against an independent linear
programme over explicit shortest paths on random small fabrics (so a bound that skips the
solve wrongly shows), bit-identical answers across processes, and concurrent collectives
spreading each group's transfers as the lone collective does."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import textwrap

import networkx as nx
import numpy as np
import pytest

from netmodel.collectives.concurrent import concurrent_cost
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.routing import Router
from topologies import build

B = 1e9


def _fabric(edges, n, name="f"):
    """A switchless fabric of ``n`` GPUs, ``edges``: ``(a, b, bandwidth in B)``."""
    g = nx.Graph(name=name, spec="", gpus=n)
    for i in range(n):
        g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
    for a, b, bw in edges:
        g.add_edge(f"gpu{a}", f"gpu{b}", bandwidth=bw * B, latency=0.0, medium="copper",
                   lanes=1)
    return g


def _util(r: Router, transfers) -> dict:
    """Each loaded link's load over bandwidth, in n / B."""
    links, load, *_ = r.link_loads(transfers)
    return {r.link_name(k): float(x) * B / float(r.bandwidth[k])
            for k, x in zip(links.tolist(), load, strict=True)}


def test_square_with_one_slow_cable_hand_optimum():
    # 2x2 torus (a square 0-1-3-2-0), the cable 0-1 at B/2. gpu0 sends 1 to gpu2 (its
    # neighbour) and 1 to gpu3 (two shortest paths: via gpu1, bottleneck B/2, and via gpu2).
    # Own route of 0->3: 1/3 via gpu1, 2/3 via gpu2 (by bottleneck), so 0->2 carries 5/3.
    # Together, x via gpu1: 0->1 at 2x, 0->2 at 2 - x; equal at x = 2/3: z = 4/3, which is
    # gpu0's 2 over its 1.5 B out (the ends bound, tight).
    r = Router(_fabric([(0, 1, 0.5), (1, 3, 1), (3, 2, 1), (2, 0, 1)], 4))
    step = (("gpu0", "gpu2", 1.0), ("gpu0", "gpu3", 1.0))
    links, w = r.loads(step, split=True)[:2]
    own = np.bincount(links, w, minlength=r.n_links)
    assert own[r.link_id("gpu0", "gpu2")] == pytest.approx(5 / 3, rel=1e-12)
    got = _util(r, step)
    want = {("gpu0", "gpu1"): 4 / 3, ("gpu0", "gpu2"): 4 / 3, ("gpu1", "gpu3"): 2 / 3,
            ("gpu2", "gpu3"): 1 / 3}
    assert got.keys() == want.keys()
    for k, v in want.items():
        assert got[k] == pytest.approx(v, rel=1e-8), k


def test_square_already_optimal_keeps_own_routes():
    # the same square, the two diagonals 0->3 and 1->2 (1 each): any split has
    # 1->3 at 1 + x - y and 0->2 at 1 - x + y (x, y: the shares via the slow cable's
    # ends), so z >= 1, and the own routes (1/3, 1/3) reach it: kept, bit for bit
    r = Router(_fabric([(0, 1, 0.5), (1, 3, 1), (3, 2, 1), (2, 0, 1)], 4))
    step = (("gpu0", "gpu3", 1.0), ("gpu1", "gpu2", 1.0))
    links, w = r.loads(step, split=True)[:2]
    own = np.bincount(links, w, minlength=r.n_links)
    got, load = r.link_loads(step)[:2]
    assert np.array_equal(got, np.flatnonzero(own))
    assert load.tobytes() == own[got].tobytes()
    assert max(_util(r, step).values()) == pytest.approx(1.0, rel=1e-12)


def test_ring_of_six_with_a_cut_cable():
    # gpu0->gpu3 and gpu1->gpu4, 1 each. Whole ring: x + y clockwise on 1->2, 2->3 and
    # 2 - x - y on 0->5, 5->4: z = 1 at x + y = 1. The cable 5-0 cut (a line): one path
    # each, 1->2 and 2->3 carry 2.
    whole = [(i, (i + 1) % 6, 1) for i in range(6)]
    step = (("gpu0", "gpu3", 1.0), ("gpu1", "gpu4", 1.0))
    assert max(_util(Router(_fabric(whole, 6)), step).values()) == pytest.approx(1.0)
    cut = _util(Router(_fabric(whole[:5], 6)), step)
    assert cut == pytest.approx({("gpu0", "gpu1"): 1.0, ("gpu1", "gpu2"): 2.0,
                                 ("gpu2", "gpu3"): 2.0, ("gpu3", "gpu4"): 1.0})


def _leaf_spine(fast, slow):
    g = nx.Graph(name="ls", spec="", gpus=4)
    for s, tier in (("leaf0", 0), ("leaf1", 0), ("spineA", 1), ("spineB", 1)):
        g.add_node(s, kind="switch", tier=tier, radix=4, latency=0.0,
                   in_network_reduction=False)
    for i in range(4):
        g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM")
        g.add_edge(f"gpu{i}", f"leaf{i // 2}", bandwidth=4 * B, latency=0.0,
                   medium="copper", lanes=1)
    for lf in ("leaf0", "leaf1"):
        g.add_edge(lf, "spineA", bandwidth=fast * B, latency=0.0, medium="copper", lanes=1)
        g.add_edge(lf, "spineB", bandwidth=slow * B, latency=0.0, medium="copper", lanes=1)
    return g


def test_leaf_spine_with_an_uneven_spine():
    # two leaves of two GPUs, spine A's cables at 2B, spine B's at B, GPU cables at 4B:
    # gpu0->gpu2 and gpu1->gpu3 (1 each) cross leaf0 -> spines -> leaf1, 3B each way:
    # z = 2/3 (4/3 via A, 2/3 via B), the GPU cables at 1/4
    got = _util(Router(_leaf_spine(2, 1)), (("gpu0", "gpu2", 1.0), ("gpu1", "gpu3", 1.0)))
    assert max(got.values()) == pytest.approx(2 / 3, rel=1e-9)
    for end in (("gpu0", "leaf0"), ("gpu1", "leaf0"), ("leaf1", "gpu2"), ("leaf1", "gpu3")):
        assert got[end] == pytest.approx(0.25, rel=1e-12)
    for up in (("leaf0", "spineA"), ("leaf0", "spineB"), ("spineA", "leaf1"),
               ("spineB", "leaf1")):
        assert got[up] == pytest.approx(2 / 3, rel=1e-9)


def _optimum(g: nx.Graph, step) -> float:
    """The least busiest link (n / B) of any split of ``step`` over each pair's shortest
    paths: a linear programme over explicit paths (networkx's), written apart from
    route_joint's flow formulation."""
    from scipy.optimize import linprog

    arcs = {}
    cols = []   # (transfer, path arcs)
    for t, (s, d, _) in enumerate(step):
        for p in nx.all_shortest_paths(g, s, d):
            cols.append((t, [arcs.setdefault((u, v), len(arcs))
                             for u, v in itertools.pairwise(p)]))
    P, A, T = len(cols), len(arcs), len(step)
    bw = np.zeros(A)
    for (u, v), k in arcs.items():
        bw[k] = g.edges[u, v]["bandwidth"] / B
    a_ub = np.zeros((A, P + 1))
    for j, (t, ks) in enumerate(cols):
        for k in ks:
            a_ub[k, j] += step[t][2]
    a_ub[:, P] = -bw
    a_eq = np.zeros((T, P + 1))
    for j, (t, _) in enumerate(cols):
        a_eq[t, j] = 1.0
    c = np.zeros(P + 1)
    c[P] = 1.0
    res = linprog(c, A_ub=a_ub, b_ub=np.zeros(A), A_eq=a_eq, b_eq=np.ones(T),
                  bounds=(0, None), method="highs")
    assert res.status == 0
    return float(res.fun)


def _random_case(rng):
    if rng.random() < 0.5:
        n = int(rng.integers(4, 8))
        edges = [(i, (i + 1) % n, int(rng.integers(1, 4))) for i in range(n)]
    else:
        a, b = (3, 3) if rng.random() < 0.5 else (2, 4)
        n = a * b
        edges = []
        for x, y in itertools.product(range(a), range(b)):
            i = x * b + y
            for j in (((x + 1) % a) * b + y, x * b + (y + 1) % b):
                if i != j and not any({i, j} == {e[0], e[1]} for e in edges):
                    edges.append((i, j, int(rng.integers(1, 4))))
    g = _fabric(edges, n)
    k = int(rng.integers(2, 7))
    step = []
    for _ in range(k):
        s, d = rng.choice(n, 2, replace=False)
        step.append((f"gpu{s}", f"gpu{d}", float(rng.choice([0.5, 1.0, 2.0]))))
    return g, tuple(step)


@pytest.mark.parametrize("seed", range(40))
def test_random_switchless_steps_reach_the_shortest_path_optimum(seed):
    # rings and 3x3 / 2x4 tori with cables at B..3B, random steps: the routes' busiest link
    # is the optimum over shortest paths (the bounds skip a solve only where the own routes
    # already reach it), and never busier than the own routes'
    rng = np.random.default_rng(seed)
    g, step = _random_case(rng)
    r = Router(g)
    links, w = r.loads(step, split=True)[:2]
    own = float((np.bincount(links, w, minlength=r.n_links) / r.bandwidth).max()) * B
    got = max(_util(r, step).values())
    assert got <= own * (1 + 1e-12)
    own_dag = all(
        set(map(tuple, [r.link_name(k) for k in np.flatnonzero(np.bincount(
            *r.loads((t,), split=True)[:2], minlength=r.n_links))]))
        <= {(u, v) for p in nx.all_shortest_paths(g, t[0], t[1])
            for u, v in itertools.pairwise(p)}
        for t in step)
    if own_dag:   # joint_loads' own premise: the routes lie on shortest paths
        assert got == pytest.approx(_optimum(g, step), rel=1e-7, abs=1e-12)


_SCRIPT = textwrap.dedent("""
    import networkx as nx
    from netmodel.collectives.model import FabricCostModel
    from topologies import build
    m = FabricCostModel(build("torus:dims=3x4"))
    print(m.cost("all-reduce", 65536.0, 12, algorithm="tree").time.hex())
    print(m.cost("all-to-all", 2.0 ** 30, [f"gpu{i}" for i in (0, 1, 2, 5, 6, 9)]).time.hex())
    r = m.router
    links, load, *_ = r.link_loads(tuple((f"gpu{i}", f"gpu{(i * 5 + 3) % 12}", 1.0)
                                         for i in range(12)))
    print(links.tolist(), [x.hex() for x in load.tolist()])
""")


def test_bit_identical_across_processes():
    # HiGHS, the dict/set orders of the candidate links: same answer to the bit, whatever
    # the string hash seed
    outs = set()
    for seed in ("0", "1", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        outs.add(subprocess.run([sys.executable, "-c", _SCRIPT], env=env, check=True,
                                capture_output=True, text=True).stdout)
    assert len(outs) == 1


def _gpus(a, b):
    return tuple(f"gpu{i}" for i in range(a, b))


def test_concurrent_group_alone_is_its_lone_collective():
    # ring of 8, all-to-all of gpu2..gpu7 at 1 GiB: alone it is spread together (5.871 ms,
    # own routes 6.848 ms); inside a concurrent costing its time alone is that, to the bit,
    # and with no other group its time together too
    m = FabricCostModel(build("ring:n=8"))
    lone = m.cost("all-to-all", 2.0 ** 30, list(_gpus(2, 8))).time
    r = concurrent_cost(m, [_gpus(0, 2), _gpus(2, 8)], "all-to-all", 2.0 ** 30)
    assert r.alone[1, 0] == lone
    assert (r.time >= r.alone).all()
    one = concurrent_cost(m, [_gpus(2, 8)], "all-to-all", 2.0 ** 30)
    assert one.alone[0, 0] == one.time[0, 0] == lone


def test_concurrent_groups_sharing_no_link_take_their_lone_time():
    # an 8x2 torus: its rows are rings of 8 (gpu 2x + y), and a row's GPUs' shortest paths
    # stay in the row. All-to-alls of positions 2..7 of each row: each is spread together
    # (the ring of 8's case above), and shares no link with the other: alone and together,
    # to the bit, its lone collective's time
    m = FabricCostModel(build("torus:dims=8x2"))
    groups = [tuple(f"gpu{2 * x + y}" for x in range(2, 8)) for y in (0, 1)]
    lone = [m.cost("all-to-all", 2.0 ** 30, list(g)).time for g in groups]
    r = concurrent_cost(m, groups, "all-to-all", 2.0 ** 30)
    assert r.alone[:, 0].tolist() == r.time[:, 0].tolist() == lone


def test_concurrent_groups_never_busier_together_than_on_own_routes(monkeypatch):
    # a 4x4 torus cut at random into groups of 4: each group's lone split is blind to the
    # others, and summed they loaded groups' busiest links more than the transfers' own
    # routes (bidirectional ring, LL: b 4.08e-11 -> 6.39e-11 s a byte): a step then keeps
    # its own routes together, so no algorithm and protocol's line together is steeper
    # than on the own routes, and each group's time alone stays its lone collective's
    from netmodel.collectives import concurrent_loads
    from netmodel.collectives.concurrent import concurrent_linear
    from netmodel.collectives.placement import partition

    g = build("torus:dims=4x4")
    groups = partition(g, 4, "random", seed=1)

    def lines():
        m = FabricCostModel(g, placement="random", seed=1)
        return m, concurrent_linear(m, groups, "all-reduce")

    m, (choices, _, b) = lines()
    with monkeypatch.context() as mp:
        mp.setattr(concurrent_loads, "_joint_groups", lambda *a: a[-2])
        _, (own_choices, _, own_b) = lines()
    assert choices == own_choices
    assert (b <= own_b * (1 + 1e-12)).all()
    r = concurrent_cost(m, groups, "all-reduce", 2.0 ** 20, algorithm="bidirectional-ring")
    lone = [m.cost("all-reduce", 2.0 ** 20, list(x), algorithm="bidirectional-ring").time
            for x in groups]
    assert r.alone[:, 0].tolist() == lone
