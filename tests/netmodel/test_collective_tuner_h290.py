"""AWS's OFI NCCL tuner plugin on p5 (h290): the choices read from its published regions, and
the p5 all-reduce curves costed with them (the runs set NCCL_TUNER_PLUGIN=libnccl-ofi-tuner.so).

Each expected choice is read by hand from the vertices in
netmodel/data/collective_tuner_plugins.toml (aws/aws-ofi-nccl src/tuner/nccl_ofi_regions.cpp,
region_init_internal_p5_p5e), in log2 of bytes and ranks.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from compute.errors import UserError
from netmodel.collectives.tuner_plugin import TunerPlugin

MIB, GIB = 2 ** 20, 2 ** 30
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def p5():
    return TunerPlugin.load("aws-ofi-nccl", "p5.48xlarge")


@pytest.mark.parametrize(("nbytes", "ranks", "want"), [
    # 64 ranks: tree/LL128's right edge runs (36 MiB, 32) -> (112 MiB, 64): 64 MiB is left of it
    (64 * MIB, 64, ("tree", "LL128")),
    # ring/LL128 from that edge to its vertex (2 GiB, 64); on a vertex counts as inside
    (128 * MIB, 64, ("ring", "LL128")),
    (2 * GIB, 64, ("ring", "LL128")),
    # ring/Simple's left edge at 64 ranks is its vertex (2.5 GiB, 64)
    (4 * GIB, 64, ("ring", "Simple")),
    # 32 ranks: ring/LL128's right edge (1 GiB, 17) -> (2 GiB, 64) crosses y = 32 at
    # 2^(30 + (5 - log2 17) / (6 - log2 17)) = 1.39 GiB; ring/Simple's vertex (1.5 GiB, 32)
    (GIB, 32, ("ring", "LL128")),
    (2 * GIB, 32, ("ring", "Simple")),
    # 128 ranks: tree/LL128 up to its vertex (288 MiB, 128); ring/LL128 to (2 GiB, 128);
    # NVLSTree/Simple from (2 GiB, 128) to (6 GiB, 128); ring/Simple beyond (the extended line)
    (256 * MIB, 128, ("tree", "LL128")),
    (GIB, 128, ("ring", "LL128")),
    (4 * GIB, 128, ("in-network-tree", "Simple")),
    (8 * GIB, 128, ("ring", "Simple")),
    # 256 ranks: tree/LL128 to (288 MiB, 256); ring/LL128 only from (1025 MiB, 256), so 512
    # MiB falls in NVLSTree's region between them
    (512 * MIB, 256, ("in-network-tree", "Simple")),
    (2 * GIB, 256, ("ring", "LL128")),
])
def test_p5_all_reduce_regions(p5, nbytes, ranks, want):
    assert p5.choose("all-reduce", nbytes, ranks, ranks // 8) == want


def test_p5_leaves_two_nodes_and_other_layouts_to_nccl(p5):
    # 16 ranks lie on the NVLSTree segment (y = 16), but the plugin skips <= 2 nodes
    assert p5.choose("all-reduce", 64 * MIB, 16, 2) is None
    # 4 ranks a node: no region set in the data (the plugin's 2-per-node set is not carried)
    assert p5.choose("all-reduce", 64 * MIB, 32, 8) is None
    # an op without regions
    assert p5.choose("all-gather", 64 * MIB, 64, 8) is None
    # a pair NCCL cannot run is skipped: without NVLSTree, 4 GiB on 128 ranks is in no
    # other region
    assert p5.choose("all-reduce", 4 * GIB, 128, 16,
                     lambda a, p: a != "in-network-tree") is None


def test_unknown_plugin_or_platform_named():
    with pytest.raises(UserError, match="unknown tuner plugin 'nope'"):
        TunerPlugin.load("nope", "p5.48xlarge")
    with pytest.raises(UserError, match="no regions for platform 'p4d.24xlarge'"):
        TunerPlugin.load("aws-ofi-nccl", "p4d.24xlarge")


@pytest.mark.parametrize(("name", "platform", "match"), [
    (["aws-ofi-nccl"], "p5.48xlarge", r"unknown tuner plugin \['aws-ofi-nccl'\]"),
    ("aws-ofi-nccl", {"p5": 1}, r"no regions for platform \{'p5': 1\}"),
])
def test_unhashable_plugin_or_platform_named(name, platform, match):
    # (h301) a list or dict raised TypeError (unhashable type) at the dict lookup
    with pytest.raises(UserError, match=match):
        TunerPlugin.load(name, platform)


def _accuracy():
    spec = importlib.util.spec_from_file_location("acc_h290",
                                                  ROOT / "scripts" / "accuracy_collectives.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_p5_curves_run_under_the_plugin():
    acc = _accuracy()
    curves = {c.key: c for c in acc.cited_curves() if c.key.startswith("h100-p5-")}
    assert set(curves) == {f"h100-p5-{n}x8-efa" for n in (2, 4, 8, 16, 32)}
    for c in curves.values():
        assert c.tuner == ("aws-ofi-nccl", "p5.48xlarge"), c.key
        c.run()
    # 16 nodes, 32 MiB to 8 GiB: the plugin's sequence, where NCCL's auto had NVLSTree to 4 GiB
    c16 = curves["h100-p5-16x8-efa"]
    assert c16.choice == ["tree/LL128"] * 4 + ["ring/LL128"] * 3 + \
        ["in-network-tree/Simple", "ring/Simple"]
    # the measured steps are where the plugin changes protocol: on 4 nodes +24% from 1 to 2
    # GiB (280.30 -> 347.57 GB/s), on 8 nodes +26% from 2 to 4 GiB (278.15 -> 351.32)
    for key, at in (("h100-p5-4x8-efa", 2 * GIB), ("h100-p5-8x8-efa", 4 * GIB)):
        c = curves[key]
        i = c.sizes.index(at)
        assert c.choice[i - 1] == "ring/LL128" and c.choice[i] == "ring/Simple", key
        assert c.measured[i] / c.measured[i - 1] > 1.2
    # 2 nodes: NCCL's own choice, as before
    assert curves["h100-p5-2x8-efa"].choice[-1] == "in-network-tree/Simple"
    # worst error at >= 64 MiB with NCCL's auto (h254's table): 16 nodes 77%, 8 nodes 83%;
    # with the plugin's choice 27% and 56%
    worst = {k: c.worst(64 * MIB, float("inf"), "rel") for k, c in curves.items()}
    assert worst["h100-p5-16x8-efa"] < 0.30
    assert worst["h100-p5-8x8-efa"] < 0.60
