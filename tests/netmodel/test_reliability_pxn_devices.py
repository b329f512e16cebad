"""The reliability models cost an instance on a graph of its members and the switches
(Cluster.recost_graph); PXN relays by the whole server's device index there too.

NCCL's PXN (since 2.12; NVIDIA/nccl src/graph/search.cc, ``ncclTopoGetNetDev``) sends a
transfer to a peer in another server through the NIC of the sender's server GPU at the
peer's device index (``peerInfo.nvmlDev``), where that GPU is a rank of the communicator,
else through the sender's own NIC (route_pxn.PxnRoutes.pxn_proxies). The instance's
graph held only its members, and a GPU's index was its position among the members of its
server in that graph: an instance holding devices 4-7 of one server (TP 12 on 8-GPU
servers: the second instance is gpu12-gpu15 of server 1 and gpu16-gpu23, all of server 2)
relayed as if they were devices 0-3. Now the cell carries each GPU's device index
(topologies.degrade.label_devices) before the instance's graph is taken from it.

Hand derivation (h100-dgx: 4 x 8 H100 rail-optimized, ideal calibration: time = bytes over
the bottleneck bandwidth + the slowest path's latency): NIC 50 GB/s (ConnectX-7), cable
GPU-leaf 20 m = 100 ns, NVLink 2 m = 10 ns, leaf-spine 50 m = 250 ns, NVSwitch 150 ns, leaf
and spine 330 ns each (topologies/common.py, the scenario's [sources]), as
tests/netmodel/test_pxn.py derives them for B200.
"""

import pytest

from netmodel.collectives.calibration import Calibration
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.placement import partition
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.scenario_fabric import build_fabric
from tests.netmodel.scenario_helpers import scenario_toml
from topologies.schema import gpu_nodes

N = 2 ** 26
NIC = 50e9
SIX = scenario_toml(
    "h100-six", "H100-SXM",
    {"builder": "rail-optimized", "domains": 4, "domain_size": 6, "gpus_per_server": 6,
     "gpu": "$gpu", "scaleup_bandwidth": "$scaleup", "nic_bandwidth": "$scaleout",
     "nvlinks": "$nvlinks", "in_network_reduction": "$reduction", "sharp": False,
     "medium": "pluggable-optics"},
    description="rail-optimized H100, 6 GPUs a server: a TP-4 instance straddles two",
    links="as-built")


@pytest.fixture(scope="module")
def cluster():
    return build_cluster("h100-dgx", "Llama-3-70B", "decode")


def _costed(c, members):
    """The graph and members the reliability model costs ``members`` on, healthy (its
    members renamed gpu0, gpu1, ... by place)."""
    g, m, _ = c.costing._problem(c.recost_graph((), members), members)
    return g, m


def test_a_shifted_instance_relays_by_the_servers_device_index(cluster):
    """Send-recv of gpu12 (server 1, device 4), gpu16 and gpu20 (server 2, devices 0 and
    4), each to the next and gpu20 back to gpu12:
    gpu12 -> gpu16: server 1's device 0 (gpu8) is no rank, so gpu12's own NIC: gpu12 ->
    leaf4 -> spine -> leaf0 -> gpu16, 100 + 330 + 250 + 330 + 250 + 330 + 100 = 1690 ns;
    gpu16 -> gpu20 over NVLink, 170 ns; gpu20 -> gpu12: server 2's device 4 is gpu20
    itself, its own NIC on rail 4, gpu20 -> leaf4 -> gpu12, 530 ns. Each NIC carries N:
    N / 50 GB/s + 1690 ns, as on the whole fabric.
    Before, on the instance's graph gpu20 was server 2's position 1 and gpu12 server 1's
    position 0, so gpu20 relayed to gpu16 (position 0) and out on rail 0 to the spines:
    10 + 150 + 10 + 1690 = 1860 ns."""
    c = cluster
    members = ("gpu12", "gpu16", "gpu20")
    g, m = _costed(c, members)
    ideal = Calibration.ideal()
    want = N / NIC + 1690e-9
    assert FabricCostModel(g, calibration=ideal).cost("send-recv", N, m).time == \
        pytest.approx(want, rel=1e-12)
    full = FabricCostModel(build_fabric(c.scenario), calibration=ideal)
    assert full.cost("send-recv", N, members).time == pytest.approx(want, rel=1e-12)
    assert [g.nodes[x].get("device") for x in m] == [4, 0, 4]


@pytest.mark.parametrize("op", ["all-to-all", "send-recv"])
def test_a_tp12_instance_costs_as_on_the_whole_fabric(cluster, op):
    """TP 12 placed contiguously on 8-GPU servers: gpu0-gpu11 and gpu12-gpu23. Both
    instances' PXN collectives cost on their own graphs (scenario calibration) what the
    same groups cost on the whole fabric, to the bit. Before, the second's all-to-all of
    64 MiB took 976.159 us for 975.989 us (its relays from server 2 to devices 4-7 of
    server 1 went to devices 0-3, off the peers' rails, over the spines)."""
    c = cluster
    graph = build_fabric(c.scenario)
    full = FabricCostModel(graph, placement=c.scenario.placement,
                           algorithm=c.scenario.algorithm, calibration=c.calibration)
    instances = partition(graph, 12, "contiguous", gpus=gpu_nodes(graph))
    assert [inst[0] for inst in instances] == ["gpu0", "gpu12"]
    for inst in instances:
        g, m = _costed(c, tuple(inst))
        model = FabricCostModel(g, placement=c.scenario.placement,
                                algorithm=c.scenario.algorithm, calibration=c.calibration)
        assert model.cost(op, N, m).time == full.cost(op, N, list(inst)).time


def test_a_moe_instance_across_two_servers_costs_as_on_the_whole_fabric():
    """Six H100 a server (rail-optimized, rails 0-5), Mixtral-8x7B decode at TP 4 x EP 4
    (attention DP 4) placed contiguously: gpu4-gpu7 are devices 4 and 5 of server 0 and
    devices 0 and 1 of server 1, and their expert all-to-all is NCCL's send/recv with
    PXN. Costed healthy where it sits (Cluster.healthy, on its members and the
    switches), its step equals the one the same group gets from the same costing on the
    whole fabric (every GPU there, positions the whole server's), to the bit. Before, it
    relayed as if devices 4 and 5 were 0 and 1: a step of 27.6816 ms for 27.6707 ms
    (tokens/s 36,992 for 37,007, the cell's 240,608 for 240,637)."""
    from compute.evaluate_one import evaluate
    from netmodel.study.placed_cost import GroupComm
    from netmodel.study.scenario_files import load_scenario_text

    s = load_scenario_text(SIX)
    c = build_cluster(s, "Mixtral-8x7B", "decode")
    p = c.parallelism
    assert (p.tp, p.ep, p.attention_dp) == (4, 4, 4)
    inst = ("gpu4", "gpu5", "gpu6", "gpu7")
    assert c.instances[1] == inst
    full = FabricCostModel(build_fabric(s), placement=s.placement, algorithm=s.algorithm,
                           calibration=c.calibration)
    want = evaluate(c.model, c.gpu, p.tp, c.batch, c.workload, pp=p.pp, ep=p.ep,
                    attention_dp=p.attention_dp, expert_skew=c.best.expert_skew,
                    comm=GroupComm(full, inst), options=c.options, slo=c.slo)
    got = c.healthy[1]
    assert want.feasible and got.batch == want.batch == c.batch
    assert got.latency == want.latency
    assert got.tokens_per_s == want.tokens_per_s
    assert [c.graph.nodes[g].get("device") for g in inst] == [4, 5, 0, 1]
