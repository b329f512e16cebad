"""Failure domains read from fabric graphs: hand-counted parts per class, what a failure
removes or thins, where spares fit, and invariants over random builder parameters."""

import networkx as nx
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from compute.errors import UserError
from topologies.degrade import degrade
from topologies.enclosures import hosts
from topologies.failure_domains import CLASSES, Component, class_counts, components
from topologies.inventory import bill_of_materials
from topologies.spares import add_spares, free_ports
from topologies.specs import build

# the shipped scenarios' fabrics, spelled out (netmodel/data/scenarios/*.toml)
H100_DGX = ("rail-optimized:domains=4,domain_size=8,gpus_per_server=8,gpu=H100-SXM,"
            "nvlinks=18,in_network_reduction=true,medium=pluggable-optics")
LITE_DIRECT = f"lite-groups:base=[{H100_DGX},scaleup_bandwidth=1800GB/s,nic_bandwidth=200GB/s]," \
              "lites=4,lite=Lite,split=even,medium=co-packaged-optics"
# the same GPUs on domains of 2 servers: NVLinks that leave the server are copper cables
H100_CABLED = H100_DGX.replace("domains=4,domain_size=8", "domains=2,domain_size=16")
LITE_CABLED = LITE_DIRECT.replace("domains=4,domain_size=8", "domains=2,domain_size=16")
LITE_FLAT = "flat:n=128,planes=4,radix=144,gpu=Lite,medium=co-packaged-optics"
LITE_HIER = "leaf-spine:leaves=8,radix=32,gpu=Lite,medium=co-packaged-optics"
LITE_OCS = "ocs:gpus=128,ports=4,ocs_ports=136,gpu=Lite"


def test_h100_dgx_parts_by_hand():
    g = build(H100_DGX)
    c = class_counts(components(g))
    # 32 NIC cables (2 transceivers each) + 8 leaves x 4 spines x 8 parallel cables (2 each)
    assert c["transceiver"] == 2 * 32 + 2 * 8 * 4 * 8 == 576
    # 18 NVLinks per GPU, traces of its HGX baseboard (GPUs and NVSwitch chips on one
    # board): no cable, no connector; they fail with the board (host, nvswitch). The old
    # count was a connector at each end, 2 x 18 x 32 = 1,152
    assert c["copper-end"] == 0
    assert c["nic"] == 32 and c["gpu-die"] == 32 and c["gpu-package"] == 32
    assert (c["nvswitch"], c["leaf"], c["spine"]) == (4, 8, 4)
    assert c["host"] == 4 and c["cpo-engine"] == 0 and c["ocs"] == 0


def test_lite_direct_breakout_bundles():
    g = build(LITE_DIRECT)
    comps = components(g)
    c = class_counts(comps)
    # each group's NIC cable is a 4-way breakout: 1 transceiver at the leaf port and one at
    # each Lite (4), so 32 x 5, plus 8 leaves x 4 spines x 8 cables x 2 ends
    assert c["transceiver"] == 32 * (1 + 4) + 2 * 8 * 4 * 8 == 672
    # the 4 Lites share their H100's NIC (as the bill charges a quarter of one each): 32
    # NICs, one per group of 4, each taking every share of its cable
    assert c["nic"] == 32
    nic = comps["nic"][0]
    assert len(nic.edges) == 4 and nic.parts == 1 and not nic.scaled
    bundle = [x for x in comps["transceiver"] if "bundle" in x.name]
    far = [x for x in comps["transceiver"]
           if "bundle" not in x.name and any(g.nodes[n]["kind"] == "gpu" for n in x.name.split("-"))]
    assert len(bundle) == 32 and {x.parts for x in bundle} == {1.0}
    assert all(len(x.edges) == 4 and not x.scaled for x in bundle)  # the leaf end: all 4 cut
    assert len(far) == 128 and {x.parts for x in far} == {1.0}
    assert all(len(x.edges) == 1 for x in far)                       # a Lite end: its own
    # the group's 18 NVLinks are the H100's baseboard traces, shared by its 4 Lites on the
    # same board: no copper ends (were 32 x (18 + 4 x 5) = 1,216)
    assert c["copper-end"] == 0
    assert bill_of_materials(g).traces == {"board": 32 * 18}
    # the mesh: 6 CPO links per group of 4, an engine at each end
    assert c["cpo-engine"] == 2 * 6 * 32


def test_lite_groups_on_a_cabled_domain_share_copper_bundles():
    # the same 32 groups on domains of 16 GPUs (2 servers each): the NVLinks leave the
    # server, so they are copper cables. 18 per group shared by 4 Lites (4.5 each): the
    # switch ends (18) thin all four by 17/18; each Lite's 5 ends (4 whole cables and half
    # of one) thin its share by 3.5/4.5
    g = build(LITE_CABLED)
    comps = components(g)
    assert class_counts(comps)["copper-end"] == 32 * (18 + 4 * 5) == 1216
    assert bill_of_materials(g).cables["copper"] == 32 * 18
    nvl = next(x for x in comps["copper-end"] if "bundle" in x.name)
    assert nvl.parts == 18
    assert [f for _, f in nvl.scaled] == pytest.approx([17 / 18] * 4)
    own = next(x for x in comps["copper-end"] if "bundle" not in x.name)
    assert own.parts == 5 and [f for _, f in own.scaled] == pytest.approx([3.5 / 4.5])


def test_nvl72_spine_keeps_its_copper_ends():
    # GB200 NVL72: 18 compute trays of 4 GPUs cabled to 9 NVLink switch trays (copper cable
    # cartridges): 72 x 18 = 1,296 cables in the model, a connector at each end
    g = build("nvl72")
    assert bill_of_materials(g).cables == {"copper": 1296}
    assert bill_of_materials(g).traces == {}
    assert class_counts(components(g))["copper-end"] == 2 * 72 * 18 == 2592


@pytest.mark.parametrize("spec", [H100_DGX, LITE_DIRECT, LITE_FLAT, LITE_HIER, LITE_OCS])
def test_parts_agree_with_the_bill_of_materials(spec):
    g = build(spec)
    c = class_counts(components(g))
    bom = bill_of_materials(g)
    assert c["transceiver"] == bom.pluggable_transceivers
    assert c["cpo-engine"] == bom.cpo_ports


def test_ocs_ends_are_passive_and_flat_planes_are_leaves():
    c = class_counts(components(build(LITE_OCS)))
    assert c["cpo-engine"] == 128 * 4         # the GPU end only
    assert c["ocs"] == 4 and c["leaf"] == 0
    f = class_counts(components(build(LITE_FLAT), gpus_per_host=32))
    assert f["cpo-engine"] == 2 * 128 * 4 and f["leaf"] == 4 and f["host"] == 4


def test_thinning_and_removal():
    g = build(H100_CABLED)
    comps = components(g)
    nvl = comps["copper-end"][0]
    (u, v), factor = nvl.scaled[0]
    d = degrade(g, [nvl])
    assert d.edges[u, v]["bandwidth"] == pytest.approx(g.edges[u, v]["bandwidth"] * 17 / 18)
    host = comps["host"][0]
    d = degrade(g, [host])
    assert d.graph["gpus"] == 24 and all(n not in d for n in host.nodes)
    assert g.graph["gpus"] == 32          # the input is untouched


def test_hosts_by_label_or_block():
    assert [len(h) for h in hosts(build(H100_DGX))] == [8] * 4
    assert [len(h) for h in hosts(build(LITE_FLAT), 32)] == [32] * 4
    assert hosts(build(LITE_FLAT)) == []
    with pytest.raises(UserError, match="gpus_per_host"):
        hosts(build(LITE_FLAT), 0)


def test_spares_fit_free_ports_only():
    assert add_spares(build(LITE_FLAT), 100)[1].__len__() == 144 - 128
    assert len(add_spares(build(LITE_OCS), 100)[1]) == 136 - 128
    assert add_spares(build(LITE_HIER), 5)[1] == ()        # every leaf port in use
    assert add_spares(build(H100_DGX), 5)[1] == ()         # NVSwitch ports all in use
    assert add_spares(build(LITE_DIRECT), 5)[1] == ()      # a meshed group has no free port
    g, names = add_spares(build("leaf-spine:leaves=2,radix=8,oversubscription=2"), 3)
    # 2 free ports per leaf, spread over the leaves in turn
    assert [sorted(x for x in g.neighbors(s)) for s in names] == [["leaf0"], ["leaf1"],
                                                                  ["leaf0"]]
    assert all(g.nodes[s]["spare"] for s in names)
    assert free_ports(g)["leaf0"] == 0 and free_ports(g)["leaf1"] == 1


def test_bad_input():
    with pytest.raises(UserError, match="unknown component class 'laser'"):
        components(build(LITE_FLAT), classes=["laser"])
    with pytest.raises(UserError, match="spare count"):
        add_spares(build(LITE_FLAT), -1)
    with pytest.raises(UserError, match="not a GPU"):
        add_spares(build(LITE_FLAT), 1, like=["plane0"])


@settings(max_examples=25, deadline=None)
@given(leaves=st.integers(1, 6), half=st.sampled_from([2, 4, 8]),
       over=st.sampled_from([1, 2]), medium=st.sampled_from(["pluggable-optics",
                                                             "co-packaged-optics", "copper"]))
def test_every_cable_is_one_component_and_removing_all_isolates_gpus(leaves, half, over,
                                                                     medium):
    assume(half % over == 0 and leaves <= 2 * half)  # whole uplinks; spines have room
    g = build(f"leaf-spine:leaves={leaves},radix={2 * half},oversubscription={over},"
              f"medium={medium}")
    comps = components(g)
    cls = {"pluggable-optics": "transceiver", "co-packaged-optics": "cpo-engine",
           "copper": "copper-end"}[medium]
    cables = sum(d.get("links", 1) for _, _, d in g.edges(data=True))
    assert class_counts(comps)[cls] == 2 * cables
    assert set(comps) == set(CLASSES)
    # every GPU-leaf cable failed: no GPU keeps a link
    gpu_links = [c for c in comps[cls] if any(n.startswith("gpu") for e in c.edges for n in e)]
    d = degrade(g, gpu_links)
    assert all(d.degree(n) == 0 for n in d if n.startswith("gpu"))
    # a switch failure removes exactly that node
    leaf = comps["leaf"][0]
    assert set(g) - set(degrade(g, [leaf])) == {leaf.nodes[0]}
    assert nx.is_connected(g)


def test_nvl72_logical_switch_counts_its_nine_switch_trays():
    # an NVL72 rack's NVLink domain is one tier-0 node standing for 9 switch trays: each a
    # part at a switch's rate (every caller of components() sees them, topology compare
    # included)
    g = build("nvl72:racks=2")
    c = class_counts(components(g))
    assert c["nvswitch"] == 2 * 9
    assert c["host"] == 2 * 18       # compute trays of 4 GPUs, from the server labels


def test_a_failed_gpu_leaves_the_others_their_device_index():
    """NCCL's PXN relays by the peer's device index (CUDA device number), which a failed GPU
    does not shift: degrade labels each GPU with its position in its healthy server
    (``device``) before a GPU goes. 2 x 8 B200: gpu0 failed, gpu1 keeps 1 (not 0, its
    place among those left), gpu9 of the other server 1; a failure that takes no GPU labels
    nothing, and the graph degraded is left as it was."""
    g = build("rail-optimized:domains=2,gpu=B200-HGX")
    out = degrade(g, [Component("gpu", "gpu0", nodes=("gpu0",))])
    assert [out.nodes[f"gpu{i}"]["device"] for i in (1, 7, 8, 9, 15)] == [1, 7, 0, 1, 7]
    assert all("device" not in d for _, d in g.nodes(data=True))
    leaf = degrade(g, [Component("leaf", "leaf0", nodes=("leaf0",))])
    assert all("device" not in d for _, d in leaf.nodes(data=True))
