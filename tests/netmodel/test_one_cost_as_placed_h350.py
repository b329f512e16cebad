"""One cost for one configuration as placed, on every path (h350).

The search costs a group smaller than its instance (a pipeline stage's TP group, an
attention group) on every slice of the instance as placed, the slowest slice's time
(:meth:`~netmodel.study.scenario_collectives.ScenarioCollectives.for_instance`). sweep and the
crossovers re-score the same fabric through :class:`~netmodel.study.adjusted_comm.
AdjustedComm`, which now costs those slices too (:meth:`AdjustedComm.for_instance`: each
slice's candidate parts and per-hop slopes): at bandwidth scale 1 and no added latency it
gives the search's figures to the bit, and the blast radius's healthy re-costing of the
first instance gives them too. Slices placed as an earlier one are costed once
(:func:`~netmodel.study.placed_alike.placed_alike`): costing every slice gives the
same times.
"""

import numpy as np
import pytest

from compute.search import search
from netmodel.study.adjusted_comm import AdjustedComm, hop_latency_slopes
from netmodel.study.fabric_search import fabric_search
from netmodel.study.placed_alike import placed_alike
from netmodel.study.placed_cost import GroupComm
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.scenario_collectives import ScenarioCollectives

#: scenario, model, phase under parallelism "all": the three e37e0a8 found the first GPUs
#: charge less than the instance as placed, and an MoE prefill (all-to-all once a server)
CASES = [("lite-direct", "BLOOM-176B", "decode"), ("lite-hier", "GPT-3-175B", "prefill"),
         ("lite-hier", "BLOOM-176B", "decode"), ("h100-dgx", "Mixtral-8x7B", "prefill")]


def _key(r):
    return (r.tp, r.pp, r.ep, r.attention_dp, r.batch, r.latency)


@pytest.mark.parametrize(("scenario", "model", "phase"), CASES)
def test_every_path_gives_one_cost(scenario, model, phase):
    coll = ScenarioCollectives(scenario)
    searched = fabric_search(model, scenario, phase, collectives=coll,
                             parallelism="all").best
    rescored = fabric_search(model, scenario, phase, collectives=coll, comm=AdjustedComm(coll),
                             parallelism="all").best
    assert _key(rescored) == _key(searched)          # sweep's and the crossovers' path
    c = build_cluster(scenario, model, phase=phase, parallelism="all")
    assert _key(c.best) == _key(searched)             # blast radius and availability
    inst = c.instances[0]
    placed = c.rebalanced(c.recost_graph((), inst), inst)
    assert (placed.batch, placed.latency) == (searched.batch, searched.latency)


def test_example_rescored_as_placed():
    """lite-direct BLOOM-176B decode TP 28 x PP 4: stages 2-4 straddle servers, so the
    search and the re-scoring both serve batch 128 (2,573 tokens/s), not the first
    GPUs' 287; twice the bandwidth re-scored serves more than once."""
    coll = ScenarioCollectives("lite-direct")
    gpu = coll.scenario.gpu_spec
    one = search("BLOOM-176B", gpu, "decode", comm=coll, tp=28, pp=4).best
    same = search("BLOOM-176B", gpu, "decode", comm=AdjustedComm(coll), tp=28, pp=4).best
    assert (same.batch, same.latency) == (one.batch, one.latency)   # 128 when written
    # fewer than a first-GPUs costing would promise (287 when written)
    first = search("BLOOM-176B", gpu, "decode", comm=type("FirstGpus", (), {
        "collective_time": staticmethod(coll.collective_time)})(), tp=28, pp=4).best
    assert one.batch < first.batch
    nbytes = np.array([2064384.0])
    placed = coll.for_instance(112, 28).collective_time("all-reduce", nbytes, 28)
    for scale in (0.5, 2.0):   # the link-bound parts scale as 1 / scale on every slice
        got = AdjustedComm(coll, scale).for_instance(112, 28).collective_time(
            "all-reduce", nbytes, 28)
        at = ScenarioCollectives(coll.scenario.with_param("adjust.bandwidth_scale", scale))
        assert got == pytest.approx(at.for_instance(112, 28).collective_time(
            "all-reduce", nbytes, 28), rel=1e-9)
        assert (got > placed) == (scale < 1)


def test_per_hop_latency_rescored_per_slice():
    """An added per-hop latency re-scored on every slice (its slope measured there) is
    what a compilation at that latency charges the instance as placed."""
    coll = ScenarioCollectives("lite-direct")
    slopes = hop_latency_slopes(coll.scenario, coll, {})
    nbytes = np.array([1e3, 2064384.0, 1e8])
    for hop in (1e-7, 2e-6):
        got = AdjustedComm(coll, 1.0, hop, slopes).for_instance(112, 28).collective_time(
            "all-reduce", nbytes, 28)
        at = ScenarioCollectives(coll.scenario.with_param("adjust.hop_latency", hop))
        want = at.for_instance(112, 28).collective_time("all-reduce", nbytes, 28)
        assert got == pytest.approx(want, rel=1e-9)
        first = AdjustedComm(coll, 1.0, hop, slopes).collective_time("all-reduce", nbytes, 28)
        assert np.all(got > first)   # the stages across servers pay more hops


@pytest.mark.parametrize("scenario", ["h100-dgx", "lite-flat", "lite-hier", "lite-ocs"])
def test_slices_placed_alike_cost_alike(scenario):
    """Costing one slice of each placement gives every slice's slowest time: the costs
    with the signature's sharing equal those of every slice costed."""
    coll = ScenarioCollectives(scenario)
    for gpus in (8, 16, 32):
        placed = coll.for_instance(gpus, gpus // 2)
        shared = placed._placed()
        every = GroupComm(shared.model, shared.members, shared.slice_model)   # no sharing
        for k in (2, 4, gpus // 2):
            for op in ("all-reduce", "all-gather"):
                n = np.array([1e3, 1e6, 1e8])
                assert np.array_equal(shared.collective_time(op, n, k),
                                      every.collective_time(op, n, k))


def test_placed_alike_tells_placements_apart():
    """GPUs on another leaf alike are placed alike (both ways); a pair split across two
    leaves is not, nor one whose leaf has a thinner uplink; GPUs wired to GPUs are alike
    where the whole graph maps (a group of four all wired together), and a label shared
    with a GPU that does not move keeps a pair from matching one that does not share it."""
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from((f"g{i}" for i in range(6)), kind="gpu")
    for leaf, bw in (("leaf0", 4.0), ("leaf1", 4.0), ("leaf2", 2.0)):
        g.add_edge(leaf, "spine", bandwidth=bw)
    for i in range(6):
        g.add_edge(f"g{i}", f"leaf{i // 2}", bandwidth=1.0)
    assert placed_alike(g, ("g2", "g3"), ("g0", "g1"))
    assert placed_alike(g, ("g0", "g1"), ("g2", "g3"))
    assert not placed_alike(g, ("g1", "g2"), ("g0", "g1"))
    assert not placed_alike(g, ("g4", "g5"), ("g0", "g1"))
    k4 = nx.complete_graph([f"d{i}" for i in range(4)])
    nx.set_node_attributes(k4, "gpu", "kind")
    assert placed_alike(k4, ("d2", "d3"), ("d0", "d1"))
    nx.set_node_attributes(k4, {"d0": 0, "d1": 0, "d2": 0, "d3": 1}, "server")
    assert not placed_alike(k4, ("d2", "d3"), ("d0", "d1"))   # server 0,1 vs 0,0
    nx.set_node_attributes(k4, {"d0": 0, "d1": 1, "d2": 2, "d3": 3}, "server")
    assert placed_alike(k4, ("d2", "d3"), ("d0", "d1"))       # servers renamed


class _PairLines:
    """A cost model whose pairs within ``{a, b}`` or within ``{c, d}`` (one "server")
    take 1 ns a byte and pairs across the two 10 ns a byte, 1 us fixed."""

    def candidates(self, op, members):
        across = len({m in ("a", "b") for m in members}) > 1
        return [("direct", "Simple", 1e-6, 1e-8 if across else 1e-9)]

    def tuned(self):
        return False


def test_stage_send_runs_on_the_boundary_pairs():
    """A send-recv between pipeline stages runs from member i of a stage to member i of
    the next, not on consecutive pairs of members (pairs inside a stage): TP 2 x PP 2 on
    a, b | c, d sends a->c and b->d, both across; PP 4 sends a->b, b->c, c->d, the middle
    one across. Each costs 1 us + 10 ns x 1e6 bytes = 10.001 ms; the consecutive pairs
    (a, b), (c, d) cost 1.001 ms, what was charged."""
    n = np.array([0.0, 1e6])
    across, inside = [0.0, 1e-6 + 1e-2], [0.0, 1e-6 + 1e-3]
    for stage in (2, 1):
        comm = GroupComm(_PairLines(), ["a", "b", "c", "d"], stage=stage)
        assert comm.collective_time("send-recv", n, 2).tolist() == pytest.approx(across)
        assert [m for _, m in comm.pairs(stage)] == (
            [("a", "c"), ("b", "d")] if stage == 2 else [("a", "b"), ("b", "c"), ("c", "d")])
        # a group of 2 of any other collective still runs on the consecutive slices
        assert comm.collective_time("all-reduce", n, 2).tolist() == pytest.approx(inside)
    plain = GroupComm(_PairLines(), ["a", "b", "c", "d"])   # no stage layout known
    assert plain.collective_time("send-recv", n, 2).tolist() == pytest.approx(inside)


def test_stage_send_across_servers_on_every_path():
    """h100-dgx (DGX H100 servers of 8 GPUs, a 400 Gb/s NIC per GPU on its rail's leaf),
    TP 8 x PP 2 on GPUs 0-15: stage 1 is server 0, stage 2 server 1, so GPU k of server 0
    sends to GPU k of server 1 over the network. The search's send-recv is netmodel's
    send-recv between gpu0 and gpu8, never faster than one NIC's 50 GB/s (the old charge,
    a pair inside the NVSwitch, ran past 200 GB/s: 100 MB on a peer's 16 channels of the
    24 ring channels' rate, 247 GB/s); the re-scoring (sweep, crossovers) and
    the blast radius's re-cost give the same figure."""
    coll = ScenarioCollectives("h100-dgx")
    model, members = coll.model(16), coll.group(16)
    servers = [coll.graph.nodes[g]["server"] for g in members]
    assert servers[:8] == [servers[0]] * 8 and servers[8:] == [servers[8]] * 8
    assert servers[0] != servers[8]
    n = np.array([1e3, 1e6, 1e8])
    got = coll.for_instance(16, 8).collective_time("send-recv", n, 2)
    for k in range(8):   # every boundary pair costs the same on the rails
        pair = model.collective_time("send-recv", n, (members[k], members[8 + k]))
        assert np.array_equal(got, pair)
    assert (got[2] - got[1]) / 99e6 >= 1 / 50e9                  # at most one NIC's rate
    first = coll.collective_time("send-recv", n, 2)              # gpu0 -> gpu1 (NVLink)
    assert 99e6 / (first[2] - first[1]) > 200e9 and np.all(got > first)
    assert np.array_equal(AdjustedComm(coll).for_instance(16, 8).collective_time(
        "send-recv", n, 2), got)
    # TP 4 x PP 4: stage 2 -> 3 sends GPU 4-7 of server 0 to GPU 0-3 of server 1, rail k
    # to rail k - 4, through a spine: its pairs are the slowest, slower than same-rail
    four = coll.for_instance(16, 4).collective_time("send-recv", n, 2)
    cross = model.collective_time("send-recv", n, (members[4], members[8]))
    assert np.array_equal(four, cross) and np.all(four > got)
    gpu = coll.scenario.gpu_spec
    r = search("Llama-3-70B", gpu, "decode", comm=coll, tp=8, pp=2)
    same = search("Llama-3-70B", gpu, "decode", comm=AdjustedComm(coll), tp=8, pp=2)
    assert (same.best.batch, same.best.latency) == (r.best.batch, r.best.latency)
    from netmodel.study.fabric_search import FabricSearch

    fs = FabricSearch(scenario=coll.scenario, search=r, group=members, reconfiguration_s=0.0)
    c = build_cluster("h100-dgx", "Llama-3-70B", phase="decode", search=fs)
    inst = c.instances[0]
    placed = c.rebalanced(c.recost_graph((), inst), inst)
    assert (placed.batch, placed.latency) == (r.best.batch, r.best.latency)
    # the search's pipeline send is the cross-server pair's, not gpu0 -> gpu1's
    (st,) = [s for s in r.best.stages if s.name == "pp_send"]
    assert st.collective == "send-recv" and st.count == 1
    pair = model.collective_time("send-recv", np.array([st.collective_bytes]),
                                 (members[0], members[8]))
    assert st.network_time == float(pair[0])
