"""NCCL's NVLSTree size correction follows each GPU's host_arch (h713).

NCCL multiplies NVLSTree's predicted algbw by ``treeCorrectionFactor`` on Blackwell when the
host is x86 (NVIDIA/nccl src/tuning/nvls.cc; on Arm only with 4 ranks a node and NICs of
96 GB/s or more). The data file's ``[nccl]`` table says it as a rule about the architecture,
``nvls_tree_correction_host_archs = ["x86_64"]``; which GPUs are hosted by Grace is each GPU's
entry's ``host_arch`` (compute/data/gpus.toml, a GPU file), no longer a list of GPU names
there (``nvls_tree_correction_arm_gpus``, refused saying what replaced it). So a GPU file
deriving from the B200 but stating a Grace host is costed as the GB200 is.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from dataclasses import replace

import pytest
from click.testing import CliRunner

from compute.errors import UserError
from compute.hardware import load_gpu_file
from netmodel.cli.main import cli
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.tuner_plugin import (
    PLUGINS_PATH,
    get_tuner,
    host_arch,
    nvls_tree_corrected,
)
from topologies import build
from topologies.io import read_graph, write_graph

MIB = 2 ** 20


def _gpu_file(tmp_path, entries: dict, name: str = "gpus.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"gpu": entries}))
    load_gpu_file(path)
    return path


def _b200(host: str | None = None, name: str = "") -> dict:
    entry = {"derive_from": "B200-HGX", "source": f"test: a B200 {name}"}
    return entry if host is None else {**entry, "host_arch": host}


def _model(gpu, domains: int = 4) -> FabricCostModel:
    """NCCL's tuner choosing among NCCL's algorithms on ``domains`` nodes of 8 GPUs ``gpu``
    (a catalog name or a GPU file's path)."""
    return FabricCostModel(build(f"rail-optimized:gpu={gpu},domains={domains}"),
                           tuner="nccl", algorithms="nccl", validated=True)


def test_the_catalog_rule():
    assert [nvls_tree_corrected(g) for g in ("GB200-NVL72", "GB300-NVL72", "B200-HGX",
                                             "B300-HGX", "H100-SXM", "Lite")] == \
        [False, False, True, True, True, True]


def test_a_b200_stating_a_grace_host_gets_the_arm_rule(tmp_path):
    files = {name: _gpu_file(tmp_path, {name: entry}, f"{name}.json") for name, entry in (
        ("H713-Grace", _b200("aarch64")), ("H713-X86", _b200("x86_64")),
        ("H713-Plain", _b200()))}
    assert [host_arch(g) for g in ("H713-Grace", "H713-X86", "H713-Plain")] == \
        ["aarch64", "x86_64", "x86_64"]   # the plain one keeps the B200's

    graphs = {}
    for gpu in ("H713-Grace", "H713-Plain", "GB200-NVL72", "B200-HGX"):
        m = _model(files.get(gpu, gpu))
        graphs[gpu] = m.nccl_graph(m.group(32))
    grace, plain = graphs["H713-Grace"], graphs["H713-Plain"]
    # 4 nodes of 8: the NVLS graph is the B200's either way; only the correction differs
    assert (grace.nvls_channels, grace.nvls_tree_correction) == (8, False)
    assert plain.nvls_tree_correction is True
    assert replace(grace, nvls_tree_correction=True) == plain
    assert graphs["GB200-NVL72"] == grace and graphs["B200-HGX"] == plain

    # NCCL's predicted NVLSTree time at 4 MiB: log2(4 MiB / 64) = 16, and the data file's
    # nvls_tree_correction[16] = 0.7 divides the x86 host's algbw: the byte term is 1/0.7
    # of the Grace host's, the latency the same
    t = get_tuner("nccl")
    size = 4 * MIB
    lat = t.latency("in-network-tree", "Simple", 32, 4, False)
    arm = t.predicted_time("in-network-tree", "Simple", size, 32, 4, grace) - lat
    x86 = t.predicted_time("in-network-tree", "Simple", size, 32, 4, plain) - lat
    assert x86 == pytest.approx(arm / 0.7, rel=1e-12)
    # so NCCL takes the tree (LL128) on the x86 host and NVLSTree on the Grace host
    assert t.choose("all-reduce", size, 32, 4, graph=plain) == ("tree", "LL128")
    assert t.choose("all-reduce", size, 32, 4, graph=grace) == ("in-network-tree", "Simple")

    costs = {g: _model(files.get(g, g)).cost("all-reduce", size, 32) for g in graphs}
    assert (costs["H713-Grace"].algorithm, costs["H713-Plain"].algorithm) == \
        ("in-network-tree", "tree")
    # bit for bit the catalog GPU of the same host on this fabric
    assert costs["H713-Grace"].time == costs["GB200-NVL72"].time
    assert costs["H713-Plain"].time == costs["B200-HGX"].time
    assert costs["H713-Grace"].time < costs["H713-Plain"].time


def test_derived_gpus_inherit_and_override(tmp_path):
    _gpu_file(tmp_path, {
        "H713-GraceBase": _b200("aarch64"),
        "H713-Kept": {"derive_from": "H713-GraceBase", "fraction": 0.5, "source": "test"},
        "H713-Own": {"derive_from": "H713-GraceBase", "fraction": 0.5, "source": "test",
                     "host_arch": "x86_64"},
        "H713-HalfGB300": {"derive_from": "GB300-NVL72", "fraction": 0.5, "source": "test"}})
    assert [nvls_tree_corrected(g) for g in ("H713-GraceBase", "H713-Kept", "H713-Own",
                                             "H713-HalfGB300")] == [False, False, True, False]


def test_the_host_travels_with_a_saved_fabric(tmp_path):
    path = _gpu_file(tmp_path, {"H713-Saved": _b200("aarch64")})
    g = build(f"rail-optimized:gpu={path},domains=2")
    assert g.graph["gpu_file_facts"]["H713-Saved"]["host_arch"] == "aarch64"
    saved = tmp_path / "fabric.json"
    write_graph(g, saved)
    assert nvls_tree_corrected("H713-Saved", read_graph(saved)) is False
    # a process that never read the GPU file: the fabric's facts say the host
    code = ("from topologies.io import read_graph; "
            "from netmodel.collectives.tuner_plugin import host_arch; "
            f"print(host_arch('H713-Saved', read_graph({str(saved)!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "aarch64"


def test_a_bad_host_arch_exits_2_in_one_line(tmp_path):
    path = tmp_path / "cli.json"
    path.write_text(json.dumps({"gpu": {"H713-Cli": _b200("arm64")}}))
    r = CliRunner().invoke(cli, ["collective", "all-reduce", "--fabric",
                                 f"single-switch:gpu={path},n=8"])
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.output, r.output
    assert "GPU 'H713-Cli': host_arch must be the CPU architecture of the GPU's host as " \
           "Linux names it (Grace and Vera: 'aarch64'; Intel and AMD: 'x86_64'), got " \
           "'arm64'; known: 'aarch64', 'ppc64le', 'x86_64'" in lines[0]


def _plugins(tmp_path, edit) -> str:
    text = PLUGINS_PATH.read_text(encoding="utf-8")
    path = tmp_path / "plugins.toml"
    path.write_text(edit(text))
    tomllib.loads(path.read_text())   # still TOML
    return str(path)


def test_a_plugins_file_with_the_gpu_list_is_refused_saying_what_replaced_it(tmp_path):
    path = _plugins(tmp_path, lambda t: t.replace(
        "nvls_tree_correction_host_archs = ", 'nvls_tree_correction_arm_gpus = ["GB200-NVL72"]\n'
        "nvls_tree_correction_host_archs = "))
    with pytest.raises(UserError) as err:
        get_tuner("nccl", path)
    assert str(err.value) == (
        f"{path}: [nccl].nvls_tree_correction_arm_gpus is no longer read: a GPU names its "
        "host's CPU architecture in its own entry (host_arch = \"aarch64\" in "
        "compute/data/gpus.toml or a GPU file; a derived GPU keeps its base's), and the "
        "correction's rule reads it: nvls_tree_correction_host_archs = [\"x86_64\"]")


@pytest.mark.parametrize("old, new, key", [
    ('nvls_tree_correction_host_archs = ["x86_64"]', 'nvls_tree_correction_host_archs = ["x86"]',
     "nvls_tree_correction_host_archs"),
    ('default_host_arch = "x86_64"', 'default_host_arch = "amd64"', "default_host_arch")])
def test_a_plugins_files_host_archs_are_checked(tmp_path, old, new, key):
    path = _plugins(tmp_path, lambda t: t.replace(old, new))
    with pytest.raises(UserError, match=rf"^{tmp_path}.*: \[nccl\]: {key} must be the CPU "
                                        r"architecture .*; known: 'aarch64', 'ppc64le', "
                                        r"'x86_64'$"):
        get_tuner("nccl", path)
