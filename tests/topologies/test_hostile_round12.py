"""Hostile round 12: a fabric file's claim to be what its builder made (``builder``,
``args``, ``nodes_built``, ``edges_built``) is checked by rebuilding, not trusted.

Before, a file passed as built whenever its node and edge counts matched the recorded
ones, so closed forms and the ASTRA-sim mapping read the recorded ``args`` and ignored
the file's own links: an edited link kept the builder's bisection, ``args`` that lie gave
another fabric's, and ``args`` of the wrong type crashed the closed form.
"""

import json
import re

import pytest
from click.testing import CliRunner

from compute.errors import UserError
from compute.hardware import derive_gpu, get_gpu
from netmodel.cli.main import cli
from topologies.analysis import summary
from topologies.astra_sim import write_astra_sim
from topologies.io import write_graph
from topologies.registry import REGISTRY, build, check_as_built
from topologies.schema import validate

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
def test_every_builders_file_keeps_its_claim_until_edited(tmp_path, spec, suffix):
    g = build(spec)
    path = tmp_path / f"f{suffix}"
    write_graph(g, path)
    back = build(path)
    assert back.graph["builder"] == g.graph["builder"] and back.graph["spec"] == g.graph["spec"]
    assert summary(back).bisection_method == summary(g).bisection_method
    u, v, bw = next(iter(g.edges(data="bandwidth")))   # one link thinned in the file
    edited = g.copy()
    edited.edges[u, v]["bandwidth"] = bw / 2
    write_graph(edited, path)
    assert "builder" not in build(path).graph


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


# ---------------------------------------------------------------- physical ranges in files
# validate took any finite bandwidth, latency, tier and radix from a file (the builders'
# PHYSICAL_MAX / MAX_RADIX bounds held only for built fabrics): a switch tier of 10**9 made
# routing allocate a 16 x 1,000,000,001 table (119 GiB: MemoryError, a traceback), an edge
# of 1e-308 bytes/s or 1e308 s overflowed every transfer time to inf (RuntimeWarning on
# stderr, 'inf' printed, exit 0).

def _edited(edit, spec="single-switch:n=4"):
    g = build(spec).copy()
    edit(g)
    return g


@pytest.mark.parametrize("edit, needle", [
    (lambda g: g.nodes["nvs0"].update(tier=10**9), "tier must be at most 64"),
    (lambda g: g.nodes["nvs0"].update(radix=10**20), "radix must be at most 1,000,000 ports"),
    (lambda g: g.nodes["nvs0"].update(latency=1e300), "latency must be at most 1e+07 s"),
    (lambda g: g.edges["nvs0", "gpu0"].update(bandwidth=1e-308), "bandwidth must be at least 1e-09"),
    (lambda g: g.edges["nvs0", "gpu0"].update(bandwidth=1e-10), "bandwidth must be at least 1e-09"),
    (lambda g: g.edges["nvs0", "gpu0"].update(bandwidth=1e308), "bandwidth must be at most 1e+30"),
    (lambda g: g.edges["nvs0", "gpu0"].update(latency=1e308), "latency must be at most 1e+07 s"),
    (lambda g: g.edges["nvs0", "gpu0"].update(latency=2e7), "latency must be at most 1e+07 s"),
])
def test_validate_refuses_what_no_builder_makes(edit, needle):
    with pytest.raises(UserError, match=re.escape(needle)):
        validate(_edited(edit))


def test_ocs_ranges():
    for key, value, needle in [("reconfiguration_time", 1e9, "at most 1e+07 s"),
                               ("latency", 5e7, "at most 1e+07 s"),
                               ("ports", 10**7, "ports must be at most 1,000,000")]:
        g = build("ocs:gpus=4").copy()
        g.nodes["ocs0"][key] = value
        with pytest.raises(UserError, match=re.escape(needle)):
            validate(g)


def test_the_bounds_themselves_pass():
    def edge(g):
        g.nodes["nvs0"].update(tier=64, radix=1_000_000, latency=1e7)
        g.edges["nvs0", "gpu0"].update(bandwidth=1e-9, latency=1e7)
        g.edges["nvs0", "gpu1"].update(bandwidth=1e30)   # an adjusted or ideal graph's reach
    assert validate(_edited(edge)) is not None
    with pytest.raises(UserError, match="tier must be at most 64"):
        validate(_edited(lambda g: g.nodes["nvs0"].update(tier=65)))


def test_a_builder_refuses_a_bandwidth_under_a_byte_a_second():
    # and under a link's plausible floor (limits.toml [quantity]: the GPU file's 1 Mb/s)
    with pytest.raises(UserError, match="bandwidth 1e-291 B/s, outside the 125 kB/s to 1 PB/s"):
        build("single-switch:n=4,bandwidth=1e-300GB/s")
    assert build("single-switch:n=4,bandwidth=8Gb/s").edges["nvs0", "gpu0"]["bandwidth"] == 1e9


@pytest.mark.parametrize("edit", ["tier", "bandwidth", "latency"])
def test_cli_one_line_for_a_file_out_of_range(tmp_path, edit):
    def change(d):
        if edit == "tier":
            d["nodes"][0]["tier"] = 10**9
        else:
            d["edges"][0][edit] = 1e-300 if edit == "bandwidth" else 1e308
    path = _saved(tmp_path, change)
    r = CliRunner().invoke(cli, ["collective", "all-reduce", "--fabric", str(path), "--group",
                                 "4", "--size", "1M"], prog_name="netmodel")
    assert r.exit_code == 2, (r.output, r.exception)
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}: invalid fabric graph: ")


# ---------------------------------------------------------------- GraphML elements
# networkx reads the first <graph> and ignores a second one or one nested in a node, and
# drops a node's <port> with 'GraphML port tag not supported.' on stderr: such files
# loaded as if those parts were not there (exit 0).

@pytest.mark.parametrize("edit, needle", [
    (lambda t: t.replace('<node id="gpu0">', '<node id="gpu0"><port name="p"/>', 1),
     "has no <port> elements"),
    (lambda t: t.replace('<node id="gpu0">', '<node id="gpu0"><graph id="sub" '
                         'edgedefault="undirected"><node id="q"/></graph>', 1),
     "holds one <graph>; this one holds another"),
    (lambda t: t.replace("</graphml>", '<graph edgedefault="undirected"><node id="z"/>'
                         '</graph></graphml>'), "holds one <graph>; this one holds another"),
    (lambda t: t.replace("</graph>", '<hyperedge><endpoint node="gpu0"/></hyperedge></graph>'),
     "has no <hyperedge> elements"),
])
def test_graphml_parts_no_fabric_has(tmp_path, edit, needle):
    path = tmp_path / "f.graphml"
    write_graph(build("single-switch:n=4"), path)
    path.write_text(edit(path.read_text()))
    with pytest.raises(UserError, match=re.escape(needle)):
        build(path)
