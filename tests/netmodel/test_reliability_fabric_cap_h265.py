"""Hostile input, helper 265: a fabric far past the reliability models' 131,072 GPUs
(:data:`netmodel.study.reliability_fabric.MAX_GPUS`) is refused from its builder's
estimate, before it is built.

Before, ``blast-radius``/``availability`` built the whole fabric and only then counted its
GPUs: ``--fabric ring:n=1000000,gpu=H100-SXM`` took 15 s and 0.96 GB, ``--fabric
torus:dims=128x128x64`` 39 s and 1.8 GB, ``--fabric fat-tree:k=160`` 27 s and 1.7 GB, and a
``--scenario`` TOML whose ``[fabric]`` is that torus 19 s and 1.8 GB, each to print 'fabric
has 1,048,576 GPUs, more than the largest cluster'. Now every fabric build of these commands
(a spec, a saved file, a scenario's ``[fabric]``) runs under
:func:`~netmodel.study.reliability_fabric.fabric_cap`: past
:data:`~netmodel.study.reliability_fabric.MAX_FABRIC_NODES` nodes (2 x 131,072: more
switches than GPUs is no cluster) the builder's own estimate refuses it in one line, in about
a second, naming the estimate and the GPUs allowed; a fabric between the GPU limit and the
node cap keeps the GPU-count refusal (tests/netmodel/test_hostile_h223.py).
"""

from __future__ import annotations

import json

import pytest

from compute.errors import UserError
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.reliability_fabric import MAX_FABRIC_NODES, MAX_GPUS
from tests.netmodel.cli_helpers import one_line_error, run_cli
from topologies.limits import capped, check_size

MODEL = ["--model", "Llama-3-70B", "--no-plot"]
#: What the refusal says after the estimate: the reliability models' own limit.
WHY = "the reliability models take a fabric of up to 131,072 GPUs (262,144 nodes"


def test_the_node_cap_is_twice_the_gpu_limit():
    assert MAX_GPUS == 131_072 and MAX_FABRIC_NODES == 262_144


@pytest.mark.parametrize("command", ["blast-radius", "availability"])
@pytest.mark.parametrize("spec, nodes", [
    ("ring:n=1000000,gpu=H100-SXM", "1,000,000 nodes and 1,000,000 edges"),
    # 128 x 128 x 64 GPUs, 3 links each
    ("torus:dims=128x128x64", "1,048,576 nodes and 3,145,728 edges"),
])
def test_a_million_gpu_spec_is_refused_from_its_estimate(tmp_path, command, spec, nodes):
    out = tmp_path / "out"
    extra = ["-q", "--trials", "3"] if command == "availability" else []
    line = one_line_error(run_cli([command, *MODEL, *extra, "--fabric", spec, "--out", out]),
                          f"would have about {nodes}", "over the limit of 262,144 nodes",
                          WHY)
    assert "NETMODEL_MAX_FABRIC_NODES" not in line   # raising the memory limit cannot help
    assert not out.exists()


def test_a_scenario_toml_of_a_million_gpus_is_refused_from_its_estimate(tmp_path):
    path = tmp_path / "bigt.toml"
    path.write_text('name = "bigt"\ndescription = "a torus of 2^20 GPUs"\ngpu = "H100-SXM"\n'
                    '[fabric]\nbuilder = "torus"\ndims = "128x128x64"\ngpu = "$gpu"\n'
                    '[collective]\nplacement = "contiguous"\nalgorithm = "auto"\n'
                    'links = "as-built"\ncalibration = "default"\n'
                    '[sources]\nbandwidth = "test"\nlatency = "test"\nnotes = "test"\n')
    one_line_error(run_cli(["blast-radius", *MODEL, "--scenario", path]),
                   "bigt.toml: [fabric]: torus: the fabric would have about 1,048,576 nodes",
                   WHY)
    with pytest.raises(UserError, match="would have about 1,048,576 nodes"):
        build_cluster(str(path), "Llama-3-70B")


def test_a_fabric_file_over_the_node_cap_is_refused_before_its_graph(tmp_path):
    """270,000 GPU nodes, no links: counted before a graph is made (topologies.io)."""
    n = MAX_FABRIC_NODES + 7_856
    doc = {"directed": False, "multigraph": False, "graph": {"gpus": n},
           "nodes": [{"id": i, "kind": "gpu", "gpu": "H100-SXM"} for i in range(n)],
           "edges": []}
    path = tmp_path / "wide.json"
    path.write_text(json.dumps(doc, separators=(",", ":")))
    one_line_error(run_cli(["blast-radius", *MODEL, "--fabric", path]),
                   "would have about 270,000 nodes and 0 edges", WHY)


def test_a_cap_names_its_reason_only_when_it_binds(monkeypatch):
    why = "the caller takes 10 nodes"
    with capped(10, 10, why=why), pytest.raises(UserError, match=f"10 edges; {why}$"):
        check_size("ring", nodes=11, edges=11)
    # the memory limit binds below the cap: its own advice, not the cap's reason
    monkeypatch.setenv("NETMODEL_MAX_FABRIC_NODES", "5")
    with capped(10, 10, why=why), pytest.raises(UserError) as e:
        check_size("ring", nodes=8, edges=8)
    assert "NETMODEL_MAX_FABRIC_NODES" in str(e.value) and why not in str(e.value)


def test_a_cap_inside_a_cap_keeps_the_tighter():
    """A file's claim is rebuilt under a cap of 16 x its nodes (topologies.registry): inside
    the reliability cap, the reliability cap still holds."""
    with capped(10, 10, why="outer"), capped(1_000, 1_000):
        with pytest.raises(UserError, match="over the limit of 10 nodes and 10 edges; outer"):
            check_size("ring", nodes=11, edges=11)
    with capped(1_000, 1_000, why="outer"), capped(10, 10):   # the inner binds: its advice
        with pytest.raises(UserError, match="limit of 10 nodes and 10 edges; build a smaller"):
            check_size("ring", nodes=11, edges=11)
