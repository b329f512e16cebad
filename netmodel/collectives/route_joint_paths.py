"""A large joint split solved over paths, a few at a time: the least busy split of
:mod:`netmodel.collectives.route_joint`'s programme found by column generation, with the
programme's dual prices proving that no path left out would make it lighter.

The joint split's linear programme (:func:`~netmodel.collectives.route_joint._solve`) has a
flow per commodity and link; the same optimum is a flow per transfer and path (each path
of a commodity's links from the transfer's source to its destination: every link of a
commodity lies on a shortest path towards its destination, so every such path is a
shortest path of the transfer). That programme is solved over a few paths of each
transfer (:data:`JOINT_PATH_DRAWS` drawn at random), in the form of a concurrent flow:
``theta`` most, each transfer's paths carrying ``theta`` times its fraction, no link above
its bandwidth; its least busiest link is ``1 / theta``. The link prices ``w >= 0`` of its
optimum bound every split from below (each byte of a transfer crosses links costing at
least its cheapest path's price, so the loads cost at least ``sum frac x dist``, and at
most ``z`` times ``sum w x bandwidth``): where that bound meets the paths' optimum (within
:data:`PATH_GAP`, relative) it is the whole programme's; elsewhere each transfer's
cheapest path is added where it is cheaper than its price and the programme solved again.

Pairwise all-to-all on an 8x4x4 torus with a cable failed, in the greedy ring order: a
shift's programme of 17,540 flow variables, 2.3 s by the primal simplex whole, solved over
about 2,000 paths in one or two rounds, 0.3-0.5 s; the least busiest link the same to
1e-12, relative. The flows found are an optimum of the programme, not always the vertex
the whole solve reaches (the links tied at the busiest load the same).
"""

from __future__ import annotations

import numpy as np

__all__ = ["JOINT_PATHS_FROM", "path_flows"]

#: The fewest flow variables of a programme solved over paths (:func:`path_flows`); a
#: smaller one is solved whole, as fast there (the 8x4x4 torus's shifts of 1,000-2,000
#: variables: 0.85 s whole, 0.84 s over paths; 2,000-3,000: 1.39 -> 1.02 s; 3,000-5,000:
#: 3.7 -> 1.7 s; above: 30 -> 6.7 s).
JOINT_PATHS_FROM = 2_000
#: The paths drawn at random for each transfer before the first solve (each the cheapest
#: under link prices drawn uniformly from 1 to 2): on the 8x4x4 torus's shifts, 16 leave
#: one or two rounds of paths to add (8: 2-4, 24: about as fast as 16).
JOINT_PATH_DRAWS = 16
#: The relative gap between the paths' optimum and the bound from its prices that proves
#: it the whole programme's (HiGHS solves to about 1e-10).
PATH_GAP = 1e-11
#: The most rounds of paths added before the programme is left to a whole solve.
PATH_ROUNDS = 60


class _Dag:
    """A programme's commodities as levels of a graph: each variable's tail and head node
    (numbered among the commodity x node pairs used), its level (the hops from its tail to
    its commodity's destination), and each level's variables sorted by tail, for finding
    the cheapest paths level by level (:meth:`cheapest`)."""

    def __init__(self, tail: np.ndarray, head: np.ndarray, goal: np.ndarray, m: int):
        self.tail, self.head = tail, head
        lev = np.full(m, -1, dtype=np.int64)
        lev[goal] = 0
        vl = np.full(len(tail), -1, dtype=np.int64)
        h = 0
        while (vl < 0).any():
            at = (vl < 0) & (lev[head] == h)
            if not at.any():
                raise ValueError("not levelled")
            vl[at] = h + 1
            lev[tail[at]] = np.where(lev[tail[at]] < 0, h + 1, lev[tail[at]])
            h += 1
        if not (lev[tail] == vl).all():
            raise ValueError("not levelled")   # a node's links at two distances
        self.nodes, self.depth, self.goal = m, h, goal
        self.levels = []
        for k in range(1, h + 1):
            idx = np.flatnonzero(vl == k)
            idx = idx[np.argsort(tail[idx], kind="stable")]
            t = tail[idx]
            starts = np.r_[0, np.flatnonzero(np.diff(t)) + 1]
            self.levels.append((idx, t[starts], starts, np.repeat(
                np.arange(len(starts)), np.diff(np.r_[starts, len(idx)]))))

    def cheapest(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Under variable prices ``w`` (rows: several pricings at once), each node's
        cheapest cost to its destination and the first variable of a cheapest path on:
        ``(dist, next)``, both ``(rows, nodes)``."""
        r = w.shape[0]
        dist = np.full((r, self.nodes), np.inf)
        dist[:, self.goal] = 0.0
        nxt = np.full((r, self.nodes), -1, dtype=np.int64)
        for idx, tails, starts, seg in self.levels:
            cand = w[:, idx] + dist[:, self.head[idx]]
            best = np.minimum.reduceat(cand, starts, axis=1)
            dist[:, tails] = best
            # the first variable at each node's least (ties: the lowest in sorted order)
            pos = np.where(cand == best[:, seg], np.arange(len(idx)), len(idx))
            nxt[:, tails] = idx[np.minimum.reduceat(pos, starts, axis=1)]
        return dist, nxt

    def walk(self, nxt: np.ndarray, start: np.ndarray) -> np.ndarray:
        """The cheapest paths from each of ``start`` (nodes) by ``nxt`` (one row of
        :meth:`cheapest`'s): variables, ``(len(start), depth)``, -1 past the path's end."""
        out = np.full((len(start), self.depth), -1, dtype=np.int64)
        cur = nxt[start]
        for k in range(self.depth):
            on = cur >= 0
            if not on.any():
                break
            out[on, k] = cur[on]
            cur = np.where(on, nxt[self.head[np.maximum(cur, 0)]], -1)
        return out


def path_flows(src: np.ndarray, dst: np.ndarray, frac: np.ndarray, com: np.ndarray,
               c_of: np.ndarray, lk: np.ndarray, rs: np.ndarray, rd: np.ndarray,
               lix: np.ndarray, bw: np.ndarray) -> tuple[float, np.ndarray] | None:
    """The joint split's programme (:func:`~netmodel.collectives.route_joint._programme`:
    transfers ``src -> dst`` of ``frac``, commodity ``com`` each, variables ``(c_of, lk)``
    over links from ``rs`` to ``rd``, each variable's capacity row ``lix`` of bandwidth
    ``bw``) solved over paths: ``(least z, each variable's flow)``, or None where it is not
    solved so (a commodity's links not levelled towards its destination, a solve that
    fails, or no proof within :data:`PATH_ROUNDS` rounds): the caller solves it whole.

    >>> # a ring of 4 (links 0-1-2-3-0 both ways), 0 -> 2 and 1 -> 3, half each
    >>> rs = np.array([0, 1, 1, 2, 2, 3, 3, 0]); rd = np.array([1, 0, 2, 1, 3, 2, 0, 3])
    >>> c_of = np.array([0, 0, 0, 0, 1, 1, 1, 1]); lk = np.array([0, 2, 7, 5, 2, 4, 1, 7])
    >>> z, x = path_flows(np.array([0, 1]), np.array([2, 3]), np.array([0.5, 0.5]),
    ...                   np.array([0, 1]), c_of, lk, rs, rd, lk, np.ones(8))
    >>> round(z, 12)   # links 1 -> 2 and 0 -> 3 lie on a way of each: half on each
    0.5
    >>> float(x[:4].sum() / 2), float(x[4:].sum() / 2)   # each transfer's half, 2 links each
    (0.5, 0.5)
    """
    from scipy.sparse import csr_matrix

    n = int(max(rs.max(), rd.max())) + 1
    C = int(com.max()) + 1
    dest = np.zeros(C, dtype=np.int64)
    dest[com] = dst
    keys, inv = np.unique(np.concatenate([c_of * n + rs[lk], c_of * n + rd[lk], com * n + src,
                                          np.arange(C) * n + dest]), return_inverse=True)
    V, T = len(lk), len(src)
    tail, head = inv[:V], inv[V:2 * V]
    start, goal = inv[2 * V:2 * V + T], inv[2 * V + T:]
    try:
        dag = _Dag(tail, head, goal, len(keys))
    except ValueError:
        return None
    L = len(bw)
    rng = np.random.default_rng(0)
    prices = rng.uniform(1.0, 2.0, (JOINT_PATH_DRAWS, L))[:, lix]
    dist, nxt = dag.cheapest(prices)
    if not np.isfinite(dist[:, start]).all():
        return None   # a transfer's source off its commodity's links
    # the paths: each a row of its transfer and its variables (-1 past its end), sorted
    everyone = np.arange(T)
    table = np.unique(np.column_stack([np.tile(everyone, JOINT_PATH_DRAWS), np.concatenate(
        [dag.walk(nxt[r], start) for r in range(JOINT_PATH_DRAWS)])]), axis=0)
    scale = float(np.abs(frac).max())
    for _ in range(PATH_ROUNDS):
        P = len(table)
        on = table[:, 1:] >= 0
        col, var = np.nonzero(on)[0], table[:, 1:][on]
        # max theta: each transfer's paths carry theta x its fraction, links within bandwidth
        a_eq = csr_matrix((np.r_[np.ones(P), -frac / scale],
                           (np.r_[table[:, 0], everyone], np.r_[np.arange(P), np.full(T, P)])),
                          shape=(T, P + 1))
        a_ub = csr_matrix((np.ones(len(var)), (lix[var], col)), shape=(L, P + 1))
        res = _concurrent(a_eq, a_ub, bw)
        if res is None:
            return None
        theta = float(res.x[-1]) / scale
        if not theta > 0:
            return None
        z = 1.0 / theta
        lam = np.maximum(-res.ineqlin.marginals, 0.0)
        nu = np.asarray(res.eqlin.marginals)
        dist, nxt = dag.cheapest(lam[lix][None, :])
        cost = dist[0, start]
        spent = float(lam @ bw)
        if spent > 0 and float(frac @ cost) / spent >= z * (1 - PATH_GAP):
            x = np.bincount(var, res.x[:-1][col] / theta, minlength=V)
            return z, x
        # the paths cheaper than their transfer's price
        cheaper = np.flatnonzero(cost < nu - 1e-12 * max(float(np.abs(nu).max()), 1e-300))
        more = np.unique(np.concatenate([table, np.column_stack(
            [cheaper, dag.walk(nxt[0], start[cheaper])])]), axis=0)
        if len(more) == P:
            return None   # no path cheaper than its price is new: left to a whole solve
        table = more
    return None


def _concurrent(a_eq, a_ub, bw):
    """``max theta`` (the last variable) subject to ``a_eq x = 0``, ``a_ub x <= bw``,
    ``x >= 0``, by HiGHS's primal simplex; None where it fails."""
    import warnings

    from scipy.optimize import OptimizeWarning, linprog

    cost = np.zeros(a_eq.shape[1])
    cost[-1] = -1.0
    options = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10,
               "simplex_strategy": 4}
    with warnings.catch_warnings():   # SciPy names the option unknown, and passes it on
        warnings.simplefilter("ignore", OptimizeWarning)
        res = linprog(cost, A_ub=a_ub, b_ub=bw, A_eq=a_eq, b_eq=np.zeros(a_eq.shape[0]),
                      bounds=(0, None), method="highs", options=options)
    return res if res.status == 0 else None
