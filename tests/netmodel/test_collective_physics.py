"""Physical invariants of collective costs, over random fabrics, groups, placements,
operations, algorithms and sizes (hypothesis).

* Time never decreases with the message size, except where NCCL's send/recv switches from
  LL to Simple at its size threshold (``p2p_ll_threshold`` x channels a peer: the
  protocol is picked by size, not by speed, and the measured sweeps show busbw dip at
  the last LL size and jump at the first Simple one, docs/collectives.md): so for
  all-to-all and send-recv time is non-decreasing between thresholds, and every other
  operation has no threshold at all.
* A smaller latency (a cable's, a switch's, or the protocols' per-step alphas) never
  makes a collective slower.
* ``auto`` is never slower than any algorithm it chooses among, and restricting its
  candidates (``algorithms="nccl"``, or a subset) never makes it faster.
* No collective beats the bytes a GPU must move over its injection bandwidth (each GPU
  of a reduce-scatter, all-reduce, all-to-all must send (p-1)/p n, of an all-gather
  receive it; a broadcast's non-root receives n, a reduce's non-root sends n; send-recv
  n), in-network reduction included.
* Groups run at once are never faster than each alone.

Settings: ``NETMODEL_INVARIANT_EXAMPLES`` (default 20 a test) sets hypothesis'
``max_examples`` for a heavy run (the audit ran 2,000 a test over several seeds).
"""

from __future__ import annotations

import os
from dataclasses import replace

import networkx as nx
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compute.comm import OPERATIONS
from compute.errors import UserError
from netmodel.collectives.algorithms import ALGORITHMS
from netmodel.collectives.calibration_files import default_calibration
from netmodel.collectives.concurrent import concurrent_cost
from netmodel.collectives.model import FabricCostModel
from topologies import build

EXAMPLES = int(os.environ.get("NETMODEL_INVARIANT_EXAMPLES", "20"))
RUN = settings(max_examples=EXAMPLES, deadline=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

FABRICS = [
    "single-switch:n=8",
    "single-switch:n=8,in_network_reduction=true",
    "flat:n=8,gpu=Lite,bandwidth=112.5GB/s",
    "leaf-spine:leaves=4,radix=8",
    "leaf-spine:leaves=4,radix=8,oversubscription=2",
    "lite-groups:base=[single-switch:n=2],lites=4",
    "ring:n=6",
    "torus:dims=4x4",
    "fat-tree:k=4",
    "rail-optimized:domains=2,domain_size=8,gpus_per_server=8",
    "rail-optimized:domains=2,domain_size=4,gpus_per_server=4,gpu=B200-HGX",
    "full-mesh:n=8",
]
PLACEMENTS = ["contiguous", "spread", "random"]
_GRAPHS: dict[str, nx.Graph] = {}


def _graph(spec: str) -> nx.Graph:
    if spec not in _GRAPHS:
        _GRAPHS[spec] = build(spec)
    return _GRAPHS[spec]


@st.composite
def cases(draw):
    """(graph, placement, group size, op, algorithm or 'auto')."""
    spec = draw(st.sampled_from(FABRICS))
    g = _graph(spec)
    p = draw(st.integers(2, min(16, g.graph["gpus"])))
    op = draw(st.sampled_from(OPERATIONS))
    if op == "send-recv":
        p = 2
    algorithm = draw(st.sampled_from(["auto", *(a for a in ALGORITHMS if op in ALGORITHMS[a])]))
    return spec, g, draw(st.sampled_from(PLACEMENTS)), p, op, algorithm


sizes_st = st.lists(st.floats(1.0, 2.0**34), min_size=2, max_size=40).map(
    lambda xs: np.unique(np.round(np.array(xs))))


def _model(g, placement, algorithm, **kw):
    return FabricCostModel(g, placement=placement, algorithm=algorithm, validated=True, **kw)


def _times(model, op, n, p):
    try:
        return model.collective_time(op, n, p)
    except UserError:   # the algorithm does not run on this group
        return None


@RUN
@given(case=cases(), n=sizes_st)
def test_time_never_decreases_with_size_between_protocol_thresholds(case, n):
    spec, g, placement, p, op, algorithm = case
    m = _model(g, placement, algorithm)
    t = _times(m, op, n, p)
    if t is None:
        return
    assert np.all(np.isfinite(t)) and np.all(t > 0), (spec, op, algorithm)
    group = m.group(p)
    lo, hi = m.candidate_ranges(m.choices(op, group, n))
    cuts = np.unique(np.concatenate([lo[lo > 0], hi[np.isfinite(hi)]]))
    if op not in ("all-to-all", "send-recv"):
        assert cuts.size == 0, (op, cuts)    # only NCCL's send/recv picks by size
    for i in range(len(n) - 1):
        if np.any((cuts >= n[i]) & (cuts < n[i + 1])):
            continue                         # LL below, Simple from here: may drop
        assert t[i + 1] >= t[i] * (1 - 1e-12), (spec, placement, p, op, algorithm, n[i],
                                                 n[i + 1], t[i + 1] / t[i])


def test_all_to_all_drops_only_where_ll_gives_way_to_simple():
    # 8 H100 on one NVSwitch: 18 NVLinks a GPU, 2 channels each, at most 32 p2p channels
    # a peer: LL while a peer's bytes are <= 32 x 16 KiB = 512 KiB, so while the all-to-all
    # buffer is <= 8 x 512 KiB = 4 MiB; the step at the threshold is NCCL's own
    # (docs/collectives.md), the curve rises on either side. That is NCCL 2.28's rule (from
    # 2.29 LL holds to one channel's 16 KiB a peer, test_b200_2node_ag_rs_h522.py)
    m = _model(_graph("single-switch:n=8"), "contiguous", "direct",
               calibration=default_calibration().with_(nccl_release="2.28"))
    n = np.array([2.0**22 - 4096, 2.0**22, 2.0**22 + 1, 2.0**22 + 4096])
    s = m.sweep("all-to-all", n, 8)
    assert s.protocol == ("LL", "LL", "Simple", "Simple")
    assert s.time[0] < s.time[1] and s.time[2] < s.time[3]
    assert s.time[2] < s.time[1]


@st.composite
def slower_latency(draw, g):
    """A copy of ``g`` with one cable's or switch's latency raised (the original is the
    faster one)."""
    slow = g.copy()
    f = draw(st.sampled_from([1.5, 2.0, 10.0]))
    edges = sorted(slow.edges(), key=str)
    switches = sorted((x for x, d in slow.nodes(data=True) if "latency" in d), key=str)
    if switches and draw(st.booleans()):
        x = switches[draw(st.integers(0, len(switches) - 1))]
        slow.nodes[x]["latency"] = slow.nodes[x]["latency"] * f + 1e-7
    else:
        u, v = edges[draw(st.integers(0, len(edges) - 1))]
        slow.edges[u, v]["latency"] = slow.edges[u, v]["latency"] * f + 1e-7
    return slow


@RUN
@given(case=cases(), data=st.data(), size=st.floats(1.0, 2.0**33))
def test_smaller_link_or_switch_latency_is_never_slower(case, data, size):
    spec, g, placement, p, op, algorithm = case
    fast = _times(_model(g, placement, algorithm), op, [size], p)
    if fast is None:
        return
    slow = _times(_model(data.draw(slower_latency(g)), placement, algorithm), op, [size], p)
    assert fast[0] <= slow[0] * (1 + 1e-12), (spec, placement, p, op, algorithm, size)


@RUN
@given(case=cases(), f=st.floats(0.0, 1.0), size=st.floats(1.0, 2.0**33))
def test_smaller_protocol_alphas_are_never_slower(case, f, size):
    spec, g, placement, p, op, algorithm = case
    base = _model(g, placement, algorithm)
    t = _times(base, op, [size], p)
    if t is None:
        return
    cal = base.calibration

    def scaled(pr):
        return replace(pr, base_latency=pr.base_latency * f,
                       step_latency_scaleup=pr.step_latency_scaleup * f,
                       step_latency_scaleout=pr.step_latency_scaleout * f)

    quick = replace(cal, protocols=tuple(scaled(pr) for pr in cal.protocols),
                    in_network=scaled(cal.in_network))
    t2 = _times(_model(g, placement, algorithm, calibration=quick), op, [size], p)
    assert t2[0] <= t[0] * (1 + 1e-12), (spec, placement, p, op, algorithm, size, f)


@RUN
@given(case=cases(), n=sizes_st, data=st.data())
def test_auto_is_never_slower_than_a_candidate_and_fewer_candidates_never_faster(case, n,
                                                                                  data):
    spec, g, placement, p, op, _ = case
    m = _model(g, placement, "auto")
    t = _times(m, op, n, p)
    if t is None:
        return
    for name, curve in m.curves(op, n, p).items():
        assert np.all(t <= curve * (1 + 1e-12)), (spec, op, name)
    names = [a for a in ALGORITHMS if op in ALGORITHMS[a]]
    subset = data.draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
    for restricted in ("nccl", subset):
        r = _times(_model(g, placement, "auto", algorithms=restricted), op, n, p)
        if r is not None:
            assert np.all(r >= t * (1 - 1e-12)), (spec, op, restricted)


def _must_move(op: str, p: int) -> float:
    """Bytes (per byte of the buffer) some GPU of the group must send or receive."""
    return {"all-reduce": (p - 1) / p, "reduce-scatter": (p - 1) / p,
            "all-gather": (p - 1) / p, "all-to-all": (p - 1) / p, "broadcast": 1.0,
            "reduce": 1.0, "send-recv": 1.0}[op]


@RUN
@given(case=cases(), n=sizes_st)
def test_never_below_the_injection_bound(case, n):
    spec, g, placement, p, op, algorithm = case
    m = _model(g, placement, algorithm)
    t = _times(m, op, n, p)
    if t is None:
        return
    # each GPU's bandwidth one way: the sum of its links (a GPU's links are its ports)
    inject = max(sum(d["bandwidth"] for _, _, d in g.edges(x, data=True)) for x in m.group(p))
    assert np.all(t >= _must_move(op, p) * n / inject * (1 - 1e-12)), (spec, op, algorithm)


@RUN
@given(spec=st.sampled_from(FABRICS), placement=st.sampled_from(PLACEMENTS),
       p=st.integers(2, 8), op=st.sampled_from([o for o in OPERATIONS if o != "send-recv"]),
       n=sizes_st)
def test_together_never_faster_than_alone(spec, placement, p, op, n):
    g = _graph(spec)
    if 2 * p > g.graph["gpus"]:
        return
    m = _model(g, placement, "auto")
    try:
        r = concurrent_cost(m, p, op, n)
    except UserError:
        return
    own = _model(g, "contiguous", "auto")
    for i, grp in enumerate(r.groups):
        alone = own.sweep(op, n, list(grp)).time
        assert np.all(r.time[i] >= alone * (1 - 1e-12)), (spec, op, grp)
        assert np.all(r.alone[i] >= alone * (1 - 1e-12)), (spec, op, grp)
    assert np.all(r.makespan >= r.alone.max(axis=0) * (1 - 1e-12))
