"""Hostile round 12: a fabric file's claim to be what its builder made (``builder``,
``args``, ``nodes_built``, ``edges_built``) is checked by rebuilding, not trusted.

Before, a file passed as built whenever its node and edge counts matched the recorded
ones, so closed forms and the ASTRA-sim mapping read the recorded ``args`` and ignored
the file's own links: an edited link kept the builder's bisection, ``args`` that lie gave
another fabric's, and ``args`` of the wrong type crashed the closed form.
"""

import json

import pytest

from compute.errors import UserError
from compute.hardware import derive_gpu, get_gpu
from topologies.analysis import summary
from topologies.astra_sim import write_astra_sim
from topologies.io import write_graph
from topologies.registry import REGISTRY, build, check_as_built

NVLINK4 = 450e9   # single-switch's default H100-SXM link, bytes/s per direction


def _saved(tmp_path, edit, spec="single-switch:n=4"):
    path = tmp_path / "f.json"
    write_graph(build(spec), path)
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))
    return path


def test_args_that_lie_give_the_files_own_bisection(tmp_path):
    # a 4-GPU switch whose args say n=1000: the old closed form took (1000 // 2) x 450 GB/s
    path = _saved(tmp_path, lambda d: d["graph"].__setitem__("args", {"n": 1000}))
    g = build(path)
    assert "builder" not in g.graph and g.graph["spec"] == ""
    s = summary(g)
    # two GPUs on each side, each 450 GB/s to the switch: 2 x 450 GB/s
    assert s.bisection_bandwidth == pytest.approx(2 * NVLINK4)
    assert s.bisection_method == "max-flow"


def test_an_edited_link_is_not_the_builders_fabric(tmp_path):
    # gpu3's link thinned to 1 GB/s in the file: the cut {gpu0, gpu1} | {gpu2, gpu3} is
    # 450 + 1 GB/s, where the closed form said 2 x 450
    def thin(d):
        d["edges"][3]["bandwidth"] = 1e9
    g = build(_saved(tmp_path, thin))
    assert g.edges["nvs0", "gpu3"]["bandwidth"] == 1e9
    s = summary(g)
    assert s.bisection_bandwidth == pytest.approx(NVLINK4 + 1e9)
    with pytest.raises(UserError, match="not made by a netmodel builder, or was edited"):
        write_astra_sim(g, tmp_path / "n.yml")
    assert not (tmp_path / "n.yml").exists()


@pytest.mark.parametrize("args", [{"n": "1e400"}, {"n": 4.5}, {"n": None}, {"n": [4]},
                                  {"nope": 1}, {"n": 10**30}, {"gpu": "NoSuchGPU"}])
def test_args_the_builder_refuses_are_no_claim(tmp_path, args):
    # '1e400' raised TypeError ('>' between str and int) in the closed form: a traceback
    g = build(_saved(tmp_path, lambda d: d["graph"].__setitem__("args", args)))
    assert "builder" not in g.graph and "args" not in g.graph
    assert summary(g).bisection_bandwidth == pytest.approx(2 * NVLINK4)


def test_args_of_a_huge_fabric_are_refused_before_building(tmp_path):
    # a 4-GPU file claiming ring:n=1,000,000: the rebuild is refused by its estimate, not made
    def lie(d):
        d["graph"].update(builder="ring", args={"n": 1_000_000})
    g = build(_saved(tmp_path, lie))
    assert "builder" not in g.graph


@pytest.mark.parametrize("spec", sorted(REGISTRY) + [
    "fat-tree:k=8,gpu=Lite", "lite-groups:base=fat-tree:k=4", "torus:dims=4x4x2",
    "ocs:gpus=16,logical=torus:4x4", "rail-optimized:domains=4"])
@pytest.mark.parametrize("suffix", [".json", ".graphml"])
def test_every_builders_file_keeps_its_claim(tmp_path, spec, suffix):
    g = build(spec)
    path = tmp_path / f"f{suffix}"
    write_graph(g, path)
    back = build(path)
    assert back.graph["builder"] == g.graph["builder"] and back.graph["spec"] == g.graph["spec"]
    assert summary(back).bisection_method == summary(g).bisection_method


def test_a_gpu_the_file_defines_is_rebuilt_from_the_file(tmp_path):
    mine = derive_gpu(get_gpu("Lite"), "MyLite", network_bandwidth_multiplier=2)
    path = tmp_path / "m.graphml"
    write_graph(build("ring", {"n": 4, "gpu": mine}), path)
    assert build(path).graph["args"] == {"n": 4, "gpu": "MyLite"}


def test_check_as_built_in_memory():
    g = build("fat-tree:k=4")
    assert check_as_built(g.copy()).graph["builder"] == "fat-tree"
    g.remove_edge("gpu0", "leaf0")
    g.add_edge("gpu0", "leaf1", **g.edges["gpu1", "leaf0"])   # counts unchanged
    assert "builder" not in check_as_built(g).graph
