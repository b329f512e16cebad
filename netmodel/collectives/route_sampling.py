"""A large batch of searched routes sampled before it is routed: the refusal of a batch whose
routes would hold too many links, worked out before the memory for it is taken.

Routes that templates do not make (a direct-connect fabric's, GPUs forwarding) are found by
search, and a batch of many of them can hold gigabytes of route links. From
:data:`_SAMPLE_FROM` distinct pairs (:data:`_SAMPLE_FROM_ONE_BY_ONE` past ``DAG_NODES``
nodes), a sample of :data:`_SAMPLE_PAIRS` is routed first and the links of all of them
estimated from it (:meth:`SampledRoutes._sample_first`,
:meth:`SampledRoutes._check_search_work`); past the limit the batch is refused in one line
(:class:`~netmodel.collectives.route_types.TooManyRouteLinks`). On a fabric of GPUs alone
that is done from the pairs' keys before the batch is described
(:meth:`SampledRoutes._sample_before_describing`), and for all of an algorithm's steps
together before any is routed (:meth:`SampledRoutes.check_steps`: steps each under the
limit may pass it in all). :class:`SampledRoutes` is a mixin of
:class:`~netmodel.collectives.route_plans.PlannedRoutes`.
"""

from __future__ import annotations

import numpy as np

from netmodel.collectives.route_types import DAG_NODES, KIND_GPU, TooManyRouteLinks

__all__ = ["SampledRoutes"]

#: From this many pairs to route by search at once (not from templates: a direct-connect
#: fabric's, GPUs forwarding), a sample of :data:`_SAMPLE_PAIRS` of them is routed first and
#: the links of all of them estimated from it, before the rest are routed
#: (:meth:`SampledRoutes._check_search_work`).
_SAMPLE_FROM = 1 << 16
_SAMPLE_PAIRS = 512
#: ... and past ``DAG_NODES`` nodes, where each pair is searched on its own (about a
#: millisecond each on a 131,072-GPU torus), from this many; also on a torus of one
#: bandwidth there, whose pairs are walked many at once (``_spread_rows_torus``) under the
#: limits set for the search, so that the same batches are refused.
_SAMPLE_FROM_ONE_BY_ONE = 4 * _SAMPLE_PAIRS
#: The most route links such a batch may hold (estimated): with the shortest paths towards
#: each destination kept as arrays (fabrics of up to ``DAG_NODES`` nodes), each link
#: costs about 110 bytes at the peak and 1.6 us (a 16x16x16 torus, direct all-reduce over
#: 1,024 GPUs: 1,047,552 pairs, 116 M links estimated, 13.1 GB peak RSS, 185 s; 512 GPUs:
#: 261,632 pairs, 2.4 GB, 38 s); beyond, searched pair by pair in Python, about 35 us each
#: (a 64x64x32 torus, 64 GPUs: 58,176 links in 2.1 s; 1,024 GPUs ran past 300 s).
_SEARCH_LINKS = 40_000_000
_SEARCH_LINKS_ONE_BY_ONE = 2_000_000


class SampledRoutes:
    """The sample of a large batch of searched routes, routed first, and the estimate of the
    batch's route links from it (a mixin of
    :class:`~netmodel.collectives.route_plans.PlannedRoutes`, whose
    :meth:`~netmodel.collectives.route_plans.PlannedRoutes._learn_routes` routes the sample
    into the router's table of routes, ``_rt_*``).

    Reads the router's index (``_n``, ``_code``, ``_keys``, ``_dag_sized``) and its table
    of routes not made from templates (``_rt_id``, ``_rt_ptr``).
    """

    #: Whether the batch being planned had its sample routed and its estimate checked
    #: before it was described (:meth:`_sample_before_describing`).
    _sampled = False

    def _sample_from(self) -> int:
        """From how many pairs to search :meth:`_learn_routes` routes a sample first."""
        return _SAMPLE_FROM if self._dag_sized else _SAMPLE_FROM_ONE_BY_ONE

    def _sample_first(self, key: np.ndarray, slow: np.ndarray) -> np.ndarray:
        """Route a sample of the pairs ``slow`` (indices into ``key``, ``src * n + dst``:
        distinct pairs to search, in order of first appearance) into the table, kept as
        the others, and estimate the rest from it (:meth:`_check_search_work`, which
        raises past the limit); returns the pairs left."""
        pick = np.unique(np.linspace(0, len(slow) - 1, _SAMPLE_PAIRS).astype(np.int64))
        sample = key[slow[pick]]
        self._learn_routes(sample // self._n, sample % self._n)
        self._check_search_work(sample, len(slow))
        return np.delete(slow, pick)

    def check_steps(self, steps) -> None:
        """The estimate of :meth:`_sample_before_describing` for the transfers of all of
        one algorithm's ``steps`` together (:class:`~netmodel.collectives.steps.Step`,
        before any is routed): each step's batch is checked alone when it is routed, and an
        algorithm of many steps each under the limit searched past it in all, in minutes and
        gigabytes (pairwise all-to-all over a ring of 1,024 GPUs: 1,023 steps of 1,024
        routes, some 268 million route links; a tree over a ring of 20,000 GPUs). A fabric
        of GPUs alone (routes searched, not from templates), past :meth:`_sample_from`
        transfers; raises :class:`TooManyRouteLinks`."""
        steps = [s for s in steps if len(s.transfers)]
        if sum(len(s.transfers) for s in steps) <= self._sample_from() \
                or not (self._code == KIND_GPU).all():
            return
        ids = [self._node_ids(s.transfers)[:2] for s in steps]
        src = np.concatenate([a for a, _ in ids])
        dst = np.concatenate([b for _, b in ids])
        del ids
        self._sample_before_describing(src, dst)

    def _sample_before_describing(self, src: np.ndarray, dst: np.ndarray) -> bool:
        """:meth:`_learn_routes`'s sample and estimate of the transfers ``src[i] ->
        dst[i]`` (node numbers), done before they are described (:meth:`_describe`) and
        their route ids looked up, where every transfer is routed on its own (a fabric of
        GPUs only: no switched templates) and they are many: the same pairs, sample and
        figures, from numpy arrays alone, so that a batch past the limit is refused first
        (a direct all-reduce over the 4,096 GPUs of a 16x16x16 torus, 16.8 million
        transfers, held 6.0 GB to be refused). True where the sample was routed (then
        :meth:`_learn_routes` routes the rest without another); raises
        :class:`TooManyRouteLinks` past the limit."""
        if len(src) <= self._sample_from() or not (self._code == KIND_GPU).all():
            return False
        n = self._n
        key = src * n + dst   # the pairs as keys alone: no other array as long
        # which keys are among some set: a mark per possible key where those are no more
        # than the bytes of the keys (an all-pairs step), else a search of the set sorted
        marks = np.zeros(n * n, dtype=bool) if n * n <= 8 * len(key) else None

        def among(keys: np.ndarray, of: np.ndarray) -> np.ndarray:
            if marks is not None:
                marks[:] = False
                marks[of] = True
                return marks[keys]
            of = np.sort(of)
            at = np.searchsorted(of, keys)
            np.minimum(at, len(of) - 1, out=at)
            return of[at] == keys

        if self._rt_id:   # the pairs routed before are not routed again
            hit = among(key, np.fromiter(self._rt_id, np.int64, count=len(self._rt_id)))
            if hit.any():
                key = key[~hit]
            del hit
        if marks is not None:
            marks[:] = False
            marks[key] = True
            twice = int(np.count_nonzero(marks)) < len(key)
        else:
            ordered = np.sort(key)
            twice = bool((ordered[1:] == ordered[:-1]).any())
            del ordered
        if twice:   # each pair once, where first seen
            _, first = np.unique(key, return_index=True)
            first.sort()
            key = key[first]
            del first
        # not a node to itself (s * n + s = s * (n + 1)), nor a link's ends
        slow = key % (n + 1) != 0
        if len(self._keys):
            slow &= ~among(key, self._keys)
        slow = np.flatnonzero(slow)
        if len(slow) <= self._sample_from():
            return False
        self._sample_first(key, slow)
        return True

    def _check_search_work(self, sample: np.ndarray, pairs: int) -> None:
        """:class:`TooManyRouteLinks` when ``pairs`` routes found by search, estimated from
        the routes already learnt of the ``sample`` keys (``src * n + dst``), would hold
        more links than :data:`_SEARCH_LINKS` (:data:`_SEARCH_LINKS_ONE_BY_ONE` past
        ``DAG_NODES`` nodes, where each pair is searched on its own)."""
        ids = np.fromiter(map(self._rt_id.__getitem__, sample.tolist()), np.int64,
                          count=len(sample))
        ids = ids[ids >= 0]
        if not len(ids):
            return
        ptr = self._rt_ptr.a
        links = pairs * float(np.mean(ptr[ids + 1] - ptr[ids]))
        batch = self._dag_sized
        limit = _SEARCH_LINKS if batch else _SEARCH_LINKS_ONE_BY_ONE
        if links > limit:
            how = "" if batch else f", searched one pair at a time past {DAG_NODES:,} linked nodes"
            raise TooManyRouteLinks(
                f"routing {pairs:,} transfers over this fabric's shortest paths would hold "
                f"about {links:,.0f} route links (from a sample of {len(sample)}{how}), more "
                f"than the router's limit of {limit:,}: use a smaller group or another "
                f"algorithm")
