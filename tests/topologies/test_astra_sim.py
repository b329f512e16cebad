"""ASTRA-sim analytical network export: the layout of ASTRA-sim's own samples, values
derived by hand, and a clear refusal for fabrics its dimension model cannot express.

The samples are the data lines of two files in the ASTRA-sim repository
(github.com/astra-sim/astra-sim): ``examples/network/analytical/HGX-H100-validated.yml``
(commit 3aaa79b) and ``inputs/network/analytical/Ring_FullyConnected_Switch.yml``
(commit 916a120). The 2^30-byte GB is that of astra-network-analytical's
``common/NetworkFunction.cc`` (``bw_GBps_to_Bpns``)."""

from __future__ import annotations

import re

import networkx as nx
import pytest

from compute.errors import UserError
from topologies import build
from topologies.astra_sim import GB, astra_sim_network, write_astra_sim

HGX_H100_VALIDATED = """topology: [ Switch ]
npus_count: [ 8 ]
bandwidth: [ 400.0 ]  # GB/s
latency: [ 936.25 ]  # ns
"""
RING_FC_SWITCH = """# 3D topology
topology: [ Ring, FullyConnected, Switch ]  # Ring, Switch, FullyConnected

# 2 x 8 x 4 = 64 NPUs
npus_count: [ 2, 8, 4 ]  # number of NPUs

bandwidth: [ 200.0, 100.0, 50.0 ]  # GB/s

latency: [ 50.0, 500.0, 2000.0 ]  # ns
"""


def read_network_yml(text: str) -> dict:
    """The four keys of an ASTRA-sim analytical network file, as yaml-cpp reads them: one
    flow list per key, comments after '#'."""
    out = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        key, _, value = line.partition(":")
        m = re.fullmatch(r"\[(.*)\]", value.strip())
        assert m, line
        items = [v.strip() for v in m.group(1).split(",")]
        convert = {"topology": str, "npus_count": int}.get(key.strip(), float)
        out[key.strip()] = [convert(v) for v in items]
    return out


def test_our_file_has_the_layout_of_astra_sims_samples(tmp_path):
    # 400 ASTRA-sim GB/s = 400 * 2^30 bytes/s; 936.25 ns per link: a 187.25 m cable at 5 ns/m
    # and a switch of no latency (two links make the path)
    g = build("single-switch", {"n": 8, "bandwidth": 400 * GB, "latency": 0.0,
                                "length": 187.25})
    path = write_astra_sim(g, tmp_path / "hgx.yml")
    ours = read_network_yml(open(path).read())
    assert ours == read_network_yml(HGX_H100_VALIDATED)
    sample = read_network_yml(RING_FC_SWITCH)
    three_d = read_network_yml(astra_sim_network(build("lite-groups:base=[superpod],lites=4"))
                               .to_yaml())
    assert list(three_d) == list(sample) == ["topology", "npus_count", "bandwidth", "latency"]
    for key in sample:
        assert len(three_d[key]) == 3 and {type(v) for v in three_d[key]} == \
            {type(v) for v in sample[key]}
    try:
        import yaml
    except ImportError:
        return
    assert yaml.safe_load(open(path).read()) == yaml.safe_load(HGX_H100_VALIDATED)


def test_values_derived_by_hand():
    sp = astra_sim_network(build("superpod"))
    assert sp.topology == ("Switch", "Switch") and sp.npus_count == (8, 31)
    # NVLink: 450 GB/s (SI); 2 m copper (10 ns) + half the 150 ns NVSwitch
    assert sp.bandwidth[0] == round(450e9 / GB, 9) and sp.latency[0] == 85.0
    # one SU: same-rank GPUs share their rail leaf: 20 m optics (100 ns) twice + 330 ns
    assert sp.bandwidth[1] == round(50e9 / GB, 9) and sp.latency[1] == (200 + 330) / 2
    # two SUs: up to the spine and back: + 2 x 50 m (250 ns) + 2 more switch traversals
    assert astra_sim_network(build("superpod:sus=2")).latency[1] == (200 + 500 + 3 * 330) / 2
    ft = astra_sim_network(build("fat-tree:k=4"))
    assert ft.topology == ("Switch",) and ft.npus_count == (16,)
    assert ft.latency == ((200 + 500 + 1000 + 5 * 330) / 2,)  # leaf, spine, core and back
    t = astra_sim_network(build("torus:dims=4x2x3"))
    # the last side varies fastest in netmodel's numbering, the first dimension in ASTRA-sim's
    assert t.topology == ("Ring",) * 3 and t.npus_count == (3, 2, 4)
    assert t.bandwidth == (round(450e9 / 6 / GB, 9),) * 3  # six ports share 450 GB/s
    r = astra_sim_network(build("ring:n=2"))
    assert r.bandwidth == (round(225e9 / GB, 9),)  # per cable, not the doubled edge
    fm = astra_sim_network(build("full-mesh:n=4,gpu=Lite"))
    assert fm.topology == ("FullyConnected",) and fm.bandwidth == (round(37.5e9 / GB, 9),)
    lg = astra_sim_network(build("lite-groups:base=[superpod],lites=4"))
    assert lg.topology == ("FullyConnected", "Switch", "Switch")
    assert lg.npus_count == (4, 8, 31)
    assert lg.bandwidth[1:] == (round(450e9 / 4 / GB, 9), round(50e9 / 4 / GB, 9))
    assert any("1/4" in n for n in lg.notes)
    assert astra_sim_network(build("nvl72")).npus_count == (72,)  # one rack: one dimension


def test_an_adjusted_graph_is_exported_as_adjusted():
    g = build("ring:n=4")
    for *_, d in g.edges(data=True):
        d["bandwidth"] *= 2
    assert astra_sim_network(g).bandwidth == (round(450e9 / GB, 9),)


@pytest.mark.parametrize("spec, reason", [
    ("ocs:gpus=8,ports=2", "circuits are set per job"),
    ("ocs:gpus=8,ports=2,logical=ring", "circuits are set per job"),
    ("lite-groups:split=gateway", "only Lite 0 of a group reaches the base fabric"),
    ("fat-tree:k=8,oversubscription=2", "oversubscription 2 cannot be expressed"),
    ("leaf-spine:oversubscription=2", "its Switch dimension is non-blocking"),
    ("single-switch:n=1", "a fabric of one GPU"),
])
def test_inexpressible_fabrics_are_refused_with_the_reason(spec, reason):
    with pytest.raises(UserError, match=reason):
        astra_sim_network(build(spec))


def test_hand_made_or_edited_graphs_are_refused(tmp_path):
    g = build("ring:n=4")
    g.remove_edge("gpu0", "gpu1")
    with pytest.raises(UserError, match="not made by a netmodel builder, or was edited"):
        astra_sim_network(g)
    h = nx.Graph(name="mine", gpus=2)
    h.add_nodes_from(["a", "b"], kind="gpu", gpu="H100-SXM")
    h.add_edge("a", "b", bandwidth=1e9, latency=0.0, medium="copper", lanes=1)
    with pytest.raises(UserError, match="not made by a netmodel builder"):
        astra_sim_network(h)
    with pytest.raises(UserError, match="must end in one of: .yml, .yaml"):
        write_astra_sim(build("ring"), tmp_path / "x.json")
    assert list(tmp_path.iterdir()) == []


def test_lite_groups_on_the_default_base_is_exported():
    # the default base (and any base equal to it) is bound as the spec string
    # 'single-switch:n=8', not as {builder: ...}: it was refused as "a hand-made base fabric"
    for spec in ("lite-groups", "lite-groups:base=[single-switch:n=8],lites=4"):
        net = astra_sim_network(build(spec))
        assert net.topology == ("FullyConnected", "Switch") and net.npus_count == (4, 8)
        # a Lite's share of the H100's 450 GB/s NVLink, per direction
        assert net.bandwidth[1] == round(450e9 / 4 / GB, 9)
        assert net == astra_sim_network(build("lite-groups:base=[single-switch],lites=4"))


def test_the_documented_keys_and_units_are_what_is_written():
    # docs/output-formats.md documents the file: its table names the four keys, and its
    # example of the 2^30-byte GB (450 GB/s written 419.095158577) is what the export writes
    from pathlib import Path

    page = Path(__file__).resolve().parents[2] / "docs" / "output-formats.md"
    section = page.read_text().split("### ASTRA-sim network files", 1)[1]
    keys = re.findall(r"^\| `(\w+)` \|", section, flags=re.M)
    written = read_network_yml(astra_sim_network(build("single-switch")).to_yaml())
    assert keys == list(written) == ["topology", "npus_count", "bandwidth", "latency"]
    stated = re.search(r"450 GB/s \(1e9\) is written ([\d.]+)", section).group(1)
    assert written["bandwidth"] == [float(stated)] == [round(450e9 / 2**30, 9)]
