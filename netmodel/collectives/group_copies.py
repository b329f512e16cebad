"""Groups that are copies of one another: a relabelling of the fabric's nodes, checked link
by link, that takes one group onto another.

Group ``b`` is a *copy* of group ``a`` when some permutation ``phi`` of the fabric's nodes
takes ``a``'s members, in order, onto ``b``'s, every node onto one of the same attributes
(kind, tier, radix, latency, GPU, ...), and every link onto a link of the same attributes
(bandwidth, latency, medium, ...) and scale-out flag: an automorphism of the whole fabric.
Routing and costing read only those attributes, so ``b``'s routes are ``phi``'s images of
``a``'s, link for link, and each of ``b``'s collectives costs what ``a``'s does
(:mod:`netmodel.collectives.concurrent_policies` costs such groups once).

``phi`` is looked for by colour refinement (Weisfeiler-Leman) on two pictures of the
fabric, one with ``a``'s members marked in order and one with ``b``'s, pairing the nodes of
each colour in node order once the colours settle (and marking one pair more where that
pairing fails, a few times); whatever it finds is then checked node by node and link by
link (:func:`_check`), so a wrong guess only means "not shown a copy" (None): the group is
then costed on its own. A fabric's generated groups (contiguous GPUs of a regular fabric)
are found copies in one round.

>>> from netmodel.api import build_fabric
>>> from netmodel.collectives.routing import Router
>>> r = Router(build_fabric("lite-direct"))
>>> a, b = ("gpu0", "gpu1", "gpu2", "gpu3"), ("gpu4", "gpu5", "gpu6", "gpu7")
>>> link_map(r, a, b) is not None, link_map(r, a, ("gpu0", "gpu1", "gpu2", "gpu4"))
(True, None)
"""

from __future__ import annotations

import weakref
from collections.abc import Hashable

import numpy as np

__all__ = ["link_map", "link_map_nodes", "worth_looking"]

#: The most pairs of nodes marked beyond the groups' members before giving up (each round
#: refines the colours again), on fabrics of at most :data:`MARKED_LINKS` links (and
#: labels' links); on larger ones, none.
ROUNDS = 4
MARKED_LINKS = 1 << 13

#: Copies are looked for (:func:`worth_looking`) only on fabrics of at most this many
#: links per group member: a relabelling reads every link some 5-10 times, about what
#: routing a small group again costs on a large fabric (2,048 Lites in Lite groups on a
#: rail-optimized base, 14,592 links: groups of 4, 3,648 links a member, 4.6 s routed
#: one by one vs 4.1 s as copies for 512 groups; groups of 8, 1,824 a member, 4.8 vs
#: 2.1 s; 512 Lites in groups of 4, 912 a member, 1.0 vs 0.4 s).
LINKS_PER_MEMBER = 2_500

#: The most nodes of the refined pictures kept per fabric (:func:`_picture`).
PICTURES = 1 << 20

_MARK = np.uint64(0x9E3779B97F4A7C15)

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser of ``x`` (uint64, wrapping): distinct inputs, distinct
    outputs all but surely (a collision only merges two colours: the check refuses)."""
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * _M1
        x = (x ^ (x >> np.uint64(27))) * _M2
        return x ^ (x >> np.uint64(31))


#: Node attributes that name a domain (the GPU's group, server, rack, pod, rail): read for
#: being equal or not, so a relabelling may take one value onto another (each value onto one
#: only, checked), where every other attribute must stay as it is.
LABELS = ("group", "server", "rack", "pod", "rail")


#: :func:`_colours` of each fabric, by its graph (not with its router: routers of fabrics of
#: one shape share their ``__dict__``, and the shape leaves out the labels and the GPUs).
_KEPT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_PICTURES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _attrs(d: dict) -> tuple:
    return tuple(sorted((str(k), repr(v)) for k, v in d.items()))


def _colours(router) -> tuple:
    """The fabric as refinement reads it (kept with its graph): ``(n, node colours, src,
    dst, link colours, links by source, each node's first there, sorted link keys)`` over
    its nodes and one node more for each value of each label (:data:`LABELS`), each node
    linked both ways to its labels' nodes; node colours are ids of their attributes but
    the labels' values, link colours of their attributes with the router's bandwidth,
    latency and scale-out flag (a label's link: its label's)."""
    graph, nodes = router.graph, router._nodes
    hit = _KEPT.get(graph)
    if hit is not None:
        return hit
    n = len(nodes)
    seen: dict = {}
    datas = [graph._node[x] for x in nodes]
    node_c = np.fromiter((seen.setdefault(_attrs({k: v for k, v in d.items()
                                                  if k not in LABELS}) + tuple(
        k for k in LABELS if k in d), len(seen)) for d in datas), np.int64, count=n)
    src, dst = router._src, router._dst
    adj = graph._adj
    seen = {}
    attr_c = np.fromiter((seen.setdefault(_attrs(adj[nodes[u]][nodes[v]]), len(seen))
                          for u, v in zip(src.tolist(), dst.tolist(), strict=True)),
                         np.int64, count=len(src))
    cols = np.stack([attr_c.astype(float), router.bandwidth, router.latency,
                     router.scaleout.astype(float)], axis=1)
    link_c = np.unique(cols, axis=0, return_inverse=True)[1].ravel().astype(np.int64)
    # a node for each label's value, linked both ways to the nodes it labels
    top_n, top_l = int(node_c.max()) + 1 if n else 0, int(link_c.max()) + 1 if len(src) else 0
    extra_c, us, vs, lcs = [], [], [], []
    count = n
    for j, key in enumerate(LABELS):
        values: dict = {}
        for i, d in enumerate(datas):
            if key in d:
                at = values.setdefault(repr(d[key]), count + len(values))
                us.append(i)
                vs.append(at)
                lcs.append(top_l + j)
        extra_c.extend([top_n + j] * len(values))
        count += len(values)
    us_a, vs_a = np.array(us, dtype=np.int64), np.array(vs, dtype=np.int64)
    lab_c = np.array(lcs, dtype=np.int64)
    node_c = np.concatenate([node_c, np.array(extra_c, dtype=np.int64)])
    src_a = np.concatenate([src, us_a, vs_a])
    dst_a = np.concatenate([dst, vs_a, us_a])
    link_a = np.concatenate([link_c, lab_c, lab_c])
    order = np.argsort(src_a, kind="stable")
    starts = np.searchsorted(src_a[order], np.arange(count))
    keys = np.sort(src_a * count + dst_a)
    hit = _KEPT[graph] = (n, node_c, src_a, dst_a, link_a, order, starts, keys)
    return hit


def _round(c: np.ndarray, lc: np.ndarray, dst: np.ndarray, order: np.ndarray,
           starts: np.ndarray, has: np.ndarray) -> np.ndarray:
    """One round of colour refinement on hashed colours: a node's next colour is its
    colour with the multiset of (link colour ``lc``, neighbour colour) over its out-links
    (``order``/``starts``: the links by source; ``has``: the nodes with one at least)."""
    with np.errstate(over="ignore"):
        tok = _mix(lc + _mix(c[dst]))
        total = np.zeros(len(c), dtype=np.uint64)
        if len(order):
            total[has] = np.add.reduceat(tok[order], starts[has])
        return _mix(_mix(c) + total)


def _refine(c: np.ndarray, src: np.ndarray, dst: np.ndarray, lc: np.ndarray,
            order: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Colour refinement of node colours ``c`` (0, 1, ...) until no class splits
    (:func:`_round`), the colours numbered 0, 1, ... again each round."""
    n_cls = int(c.max()) + 1 if len(c) else 0
    has = np.diff(np.append(starts, len(order))) > 0
    lc = _mix(lc.astype(np.uint64) + _MARK)
    for _ in range(len(c) + 1):   # a class splits each round, or the colours settle
        new = np.unique(_round(c.astype(np.uint64), lc, dst, order, starts, has),
                        return_inverse=True)[1].ravel()
        k = int(new.max()) + 1 if len(new) else 0
        if k == n_cls:
            return new
        c, n_cls = new, k
    return c


def _picture(router, fabric: tuple, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The fabric with nodes ``ids`` marked in order, refined (:func:`_refine`'s rule on
    hashed colours, not renumbered, so that two pictures' colours compare): its colours
    sorted and the nodes in that order (ties in node order); kept per graph, the last
    few (:data:`PICTURES` nodes in all)."""
    graph = router.graph
    kept = _PICTURES.setdefault(graph, {})
    key = ids.tobytes()
    hit = kept.pop(key, None)
    if hit is None:
        _, node_c, src, dst, link_c, order, starts, _ = fabric
        c = _mix(node_c.astype(np.uint64) + np.uint64(1))
        c[ids] = _mix(np.arange(len(ids), dtype=np.uint64) + _MARK)
        has = np.diff(np.append(starts, len(order))) > 0
        lc = _mix(link_c.astype(np.uint64) + _MARK)
        count = len(np.unique(c))
        for _ in range(len(c) + 1):   # a class splits each round, or the colours settle
            nxt = _round(c, lc, dst, order, starts, has)
            k = len(np.unique(nxt))
            if k == count:
                break
            c, count = nxt, k
        at = np.lexsort((np.arange(len(c)), c))
        hit = (c[at], at)
    kept[key] = hit
    while len(kept) > max(2, PICTURES // max(len(hit[1]), 1)):
        kept.pop(next(iter(kept)))
    return hit


def _check(router, phi: np.ndarray, fabric: tuple) -> np.ndarray | None:
    """Each of the router's links' image under node permutation ``phi`` (of :func:`_colours`'
    nodes; link ids), where ``phi`` keeps every node's and link's colour and takes links
    onto links one to one (labels' links too: a label's value onto one value); else None."""
    n, node_c, src, dst, link_c, _, _, keys = fabric
    N = len(node_c)
    if len(np.unique(phi)) != N or not (node_c[phi] == node_c).all():
        return None
    want = phi[src] * N + phi[dst]
    at = np.minimum(np.searchsorted(keys, want), len(keys) - 1)
    if len(keys) and not (keys[at] == want).all():
        return None
    m = len(router._src)
    image = router._lids(phi[router._src], phi[router._dst])
    if (image < 0).any() or len(np.unique(image)) != m:
        return None
    if not (link_c[image] == link_c[:m]).all():
        return None
    # the labels' links: each onto one of the same label (their colour)
    lab = np.arange(m, len(src))
    back = np.argsort(src[lab] * N + dst[lab], kind="stable")
    lkeys = (src[lab] * N + dst[lab])[back]
    pos = np.minimum(np.searchsorted(lkeys, want[lab]), max(len(lkeys) - 1, 0))
    if len(lab) and not (link_c[lab][back][pos] == link_c[lab]).all():
        return None
    return image


def worth_looking(router, members: int) -> bool:
    """Whether copies of groups of ``members`` GPUs are worth looking for on ``router``'s
    fabric (:data:`LINKS_PER_MEMBER`).

    >>> from netmodel.api import build_fabric
    >>> from netmodel.collectives.routing import Router
    >>> r = Router(build_fabric("lite-direct"))
    >>> r.n_links, worth_looking(r, 4)        # 240 links a member
    (960, True)
    """
    return router.n_links <= LINKS_PER_MEMBER * members


def link_map(router, a: tuple[Hashable, ...], b: tuple[Hashable, ...]) -> np.ndarray | None:
    """The link ids of ``b``'s picture of each of ``router``'s links, under a relabelling of
    the fabric that takes ``a``'s members in order onto ``b``'s and keeps every node's and
    link's attributes (checked); None where none was found (``b`` then is not taken for a
    copy of ``a``, though it may be one)."""
    if len(a) != len(b) or len(set(a)) != len(a) or len(set(b)) != len(b):
        return None
    ia = np.fromiter((router._nid[x] for x in a), np.int64, count=len(a))
    ib = np.fromiter((router._nid[x] for x in b), np.int64, count=len(b))
    return link_map_nodes(router, ia, ib)


def link_map_nodes(router, ia: np.ndarray, ib: np.ndarray) -> np.ndarray | None:
    """:func:`link_map` of two groups given as node numbers (each without repeats).

    >>> from netmodel.api import build_fabric
    >>> from netmodel.collectives.routing import Router
    >>> r = Router(build_fabric("lite-direct"))
    >>> ids = np.array([r._nid[f"gpu{i}"] for i in range(8)])
    >>> image = link_map_nodes(r, ids[:4], ids[4:])      # gpu0-3 onto gpu4-7
    >>> r.link_name(0), r.link_name(image[0])
    (('gpu0', 'gpu1'), ('gpu4', 'gpu5'))
    """
    fabric = _colours(router)
    n, node_c, src, dst, link_c, order, starts, _ = fabric
    N = len(node_c)
    if len(ia) != len(ib) or not (node_c[ia] == node_c[ib]).all():
        return None
    # each marked picture refined on its own (kept for the next pair): the nodes of each
    # colour paired in node order
    ca, at_a = _picture(router, fabric, ia)
    cb, at_b = _picture(router, fabric, ib)
    if not np.array_equal(ca, cb):
        return None   # no relabelling keeps these colours
    phi = np.empty(N, dtype=np.int64)
    phi[at_a] = at_b
    image = _check(router, phi, fabric)
    if image is not None or len(src) > MARKED_LINKS:
        return image
    # two pictures side by side: nodes 0..N-1 (a marked), N..2N-1 (b marked), one pair
    # more marked each round
    src2, dst2 = np.concatenate([src, src + N]), np.concatenate([dst, dst + N])
    lc2 = np.concatenate([link_c, link_c])
    order2 = np.concatenate([order, order + len(src)])
    starts2 = np.concatenate([starts, starts + len(src)])
    c = np.concatenate([node_c, node_c])
    top = int(node_c.max()) + 1
    c[ia] = top + np.arange(len(ia))
    c[N + ib] = top + np.arange(len(ib))
    for _ in range(ROUNDS + 1):
        c = _refine(c, src2, dst2, lc2, order2, starts2)
        left, right = c[:N], c[N:]
        k = int(c.max()) + 1
        counts = np.bincount(left, minlength=k)
        if not np.array_equal(counts, np.bincount(right, minlength=k)):
            return None   # no relabelling keeps these colours
        # each colour's nodes paired in node order
        lo, ro = np.argsort(left, kind="stable"), np.argsort(right, kind="stable")
        phi = np.empty(N, dtype=np.int64)
        phi[lo] = ro
        image = _check(router, phi, fabric)
        if image is not None:
            return image
        # mark one pair more: the first of the first colour of more than one node
        many = np.flatnonzero(counts > 1)
        if not len(many):
            return None
        x = int(np.flatnonzero(left == many[0])[0])
        y = int(np.flatnonzero(right == many[0])[0])
        c = c.copy()
        c[x] = c[N + y] = k
    return None
