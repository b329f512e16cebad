"""Structured specs between packages: build(name, params) with typed values, what a graph
records (builder, args, spec, gpu_types), a user's own GPU on every builder, closed forms
from builder/args, and the registry importing no builder module."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

from compute.errors import UserError
from compute.hardware import derive_gpu, get_gpu
from topologies import build, builders, gpu_spec, gpu_types, lite_groups, ring, validate
from topologies.closed_forms import closed_form
from topologies.io import read_graph, write_graph
from topologies.registry import bound_arguments, fabric_table

ROOT = Path(__file__).resolve().parents[2]
MINE = derive_gpu(get_gpu("Lite"), "MyLite", network_bandwidth_multiplier=2,
                  source="a user's file")
SPECS = ["single-switch:n=4", "flat:n=8,planes=2,radix=8", "leaf-spine:leaves=2,radix=4",
         "fat-tree:k=4,oversubscription=2", "rail-optimized:domains=2,servers_per_leaf=1",
         "superpod", "nvl72:racks=2", "ring:n=5", "full-mesh:n=4", "torus:dims=3x2",
         "lite-groups:base=[fat-tree:k=4],lites=2", "ocs:gpus=6,ports=2,logical=ring",
         "ocs:gpus=4,ports=2"]


def test_every_form_of_spec_builds_the_same_graph():
    by_string = build("fat-tree:k=6,bandwidth=100Gb/s,gpu=Lite")
    for other in (build("fat-tree", {"k": 6, "bandwidth": 12.5e9, "gpu": get_gpu("Lite")}),
                  build("fat-tree", {"k": "6", "bandwidth": "100Gb/s", "gpu": "Lite"}),
                  build(("fat-tree", {"k": 6, "bandwidth": 12.5e9, "gpu": "Lite"})),
                  build({"builder": "fat-tree", "k": 6, "bandwidth": 12.5e9, "gpu": "Lite"})):
        assert nx.utils.graphs_equal(by_string, other)
    assert by_string.graph["builder"] == "fat-tree"
    assert by_string.graph["args"] == {"k": 6, "gpu": "Lite", "bandwidth": 12.5e9}
    assert by_string.graph["spec"] == "fat-tree:k=6,gpu=Lite,bandwidth=12.5GB/s"  # canonical
    # defaults are not recorded, and a nested base is spelled canonically
    assert build("fat-tree:k=4,oversubscription=1").graph["args"] == {}
    assert build("lite-groups:base=[fat-tree:k=4]").graph["spec"] == "lite-groups:base=fat-tree"


@pytest.mark.parametrize("spec", SPECS)
def test_builder_and_args_rebuild_the_graph(spec):
    g = build(spec)
    json.dumps(g.graph["args"])  # JSON-safe
    again = build(g.graph["builder"], g.graph["args"])
    assert nx.utils.graphs_equal(g, again)
    assert nx.utils.graphs_equal(g, build(fabric_table(g)))
    assert g.graph["spec"] and nx.utils.graphs_equal(g, build(g.graph["spec"]))


def test_nested_base_in_every_form_is_recorded_as_a_table():
    table = {"builder": "single-switch", "n": 2, "bandwidth": 100e9}
    forms = ["single-switch:n=2,bandwidth=100GB/s", ("single-switch", {"n": 2,
             "bandwidth": 100e9}), table, build(table)]
    for base in forms:
        g = build("lite-groups", {"base": base, "lites": 3})
        assert g.graph["args"] == {"base": table, "lites": 3}
        assert g.graph["spec"] == "lite-groups:base=[single-switch:n=2,bandwidth=100GB/s],lites=3"
        # a third of a big GPU's 100 GB/s link per Lite (even split)
        assert g.edges["gpu4", "nvs0"]["bandwidth"] == pytest.approx(100e9 / 3)


def test_a_users_gpu_goes_on_every_builder():
    """A GpuSpec that is not in the catalog: nodes name it, gpu_types holds it, the spec
    shows its name and gpu_spec finds it; the catalog's own GPUs are not recorded."""
    for info in builders():
        param = "lite" if info.name == "lite-groups" else "gpu"
        params = {param: MINE}
        if info.name == "ocs":
            params["gpus"] = 4
        g = build(info.name, params)
        assert set(gpu_types(g)) == {"MyLite"}, info.name
        assert g.graph["gpu_types"] == {"MyLite": MINE}
        assert g.graph["args"][param] == "MyLite" and f"{param}=MyLite" in g.graph["spec"]
        assert gpu_spec(g, g.nodes["gpu0"]["gpu"]) is MINE
    # bandwidth follows the user's GPU: twice a Lite's 112.5 GB/s over a ring's two ports
    assert ring(4, gpu=MINE).edges["gpu0", "gpu1"]["bandwidth"] == 112.5e9
    plain = build("fat-tree", {"gpu": get_gpu("Lite")})
    assert "gpu_types" not in plain.graph and plain.graph["args"] == {"gpu": "Lite"}
    assert build("fat-tree", {"gpu": get_gpu("H100-SXM")}).graph["spec"] == "fat-tree"


def test_a_catalog_name_shadowed_by_the_graph_wins():
    fake = derive_gpu(get_gpu("H100-SXM"), "Lite", fraction=0.5)  # named like the catalog's
    g = build("ring", {"n": 2, "gpu": fake})
    assert g.graph["gpu_types"] == {"Lite": fake}
    assert gpu_spec(g, "Lite").sms == 66 != get_gpu("Lite").sms


def test_gpu_spec_and_validate_refuse_unknown_types():
    g = ring(3)
    with pytest.raises(UserError, match="GPU type 'Nope' is neither one of the fabric's "
                                        "gpu_types nor in the catalog; known: .*'H100-SXM'"):
        gpu_spec(g, "Nope")
    g.nodes["gpu1"]["gpu"] = "MyLite"
    with pytest.raises(UserError, match="gpu node 'gpu1' names GPU type 'MyLite', which is "
                                        "neither one of the graph's gpu_types nor in"):
        validate(g)
    g.graph["gpu_types"] = {"MyLite": MINE}
    assert validate(g) is g and list(gpu_types(g)) == ["H100-SXM", "MyLite"]
    g.graph["gpu_types"] = {"MyLite": get_gpu("Lite")}  # the key must be the spec's name
    with pytest.raises(UserError, match=r"gpu_types\['MyLite'\] must be the GpuSpec named"):
        validate(g)


@pytest.mark.parametrize("suffix", [".json", ".graphml"])
def test_a_saved_fabric_with_a_users_gpu_reloads_whole(tmp_path, suffix):
    g = lite_groups("single-switch:n=2", lites=2, lite=MINE)
    back = read_graph(write_graph(g, tmp_path / f"f{suffix}"))
    assert nx.utils.graphs_equal(g, back)
    assert back.graph["gpu_types"]["MyLite"] == MINE and gpu_spec(back, "MyLite") == MINE


def test_closed_forms_read_builder_and_args_not_the_spec():
    g = build("fat-tree:k=8,oversubscription=2")
    expected = closed_form(g)
    g.graph["spec"] = "fat-tree:k=4"  # a display string that no longer matches: not read
    assert closed_form(g) == expected and expected.bisection == 4 * 2 * 4 * 50e9
    g.graph["args"] = {"k": 8, "colour": "red"}  # arguments the builder does not take
    assert closed_form(g) is None
    g.graph["args"] = {"k": 8, "oversubscription": 2}
    g.graph["spec"] = ""  # clearing the spec still opts out, as before
    assert closed_form(g) is None
    assert bound_arguments("fat-tree", {"k": 8})["oversubscription"] == 1


def test_bad_structured_specs():
    with pytest.raises(UserError, match="unknown key 'q' for fabric 'ring'; known: 'bandwidth', "
                                        "'gpu', 'length', 'medium', 'n'"):
        build("ring", {"q": 1})
    with pytest.raises(UserError, match="ring: gpu must be a GPU name or a GpuSpec, got 5"):
        build("ring", {"gpu": 5})
    with pytest.raises(UserError, match="fat-tree: in_network_reduction must be true or "
                                        "false, got 1"):
        build("fat-tree", {"in_network_reduction": 1})
    with pytest.raises(UserError, match="lite-groups: base must be a fabric: a spec string, "
                                        "a .builder, params. pair, .* got 7"):
        build("lite-groups", {"base": 7})
    with pytest.raises(UserError, match="a fabric table needs 'builder'"):
        build({"k": 4})
    with pytest.raises(UserError, match="structured fabric spec is a .builder name, params. "
                                        "pair"):
        build(("fat-tree", 4))
    with pytest.raises(UserError, match="with params, the fabric spec must be a builder name"):
        build(ring(3), {"n": 3})
    with pytest.raises(UserError, match="ring: length must be a finite number >= 0, got -1"):
        build("ring", {"length": -1})
    with pytest.raises(UserError, match="torus: dims must be sides joined by 'x'"):
        build("torus", {"dims": 4})
    with pytest.raises(UserError, match="ring: n must be an integer >= 2, got a negative integer of 5001 digits"):
        build("ring", {"n": -(10**5000)})


def test_deeply_nested_specs_are_refused_without_recursion_error():
    deep = "lite-groups:base=[" * 200 + "ring" + "]" * 200
    with pytest.raises(UserError, match="nests brackets 200 deep; at most 32"):
        build(deep)
    table = {"builder": "ring"}
    for _ in range(200):
        table = {"builder": "lite-groups", "lites": 1, "base": table}
    with pytest.raises(UserError, match="fabrics nested more than 32 deep"):
        build(table)


def test_the_registry_imports_no_builder_module():
    """Builders register themselves; the registry must not import them back (no cycle)."""
    tree = ast.parse((ROOT / "topologies" / "registry.py").read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    builder_modules = {"topologies.direct", "topologies.switched", "topologies.hierarchical",
                       "topologies.optical", "topologies.specs", "topologies"}
    assert not imported & builder_modules
    tool = ROOT.parent / "shared" / "tools" / "import_layers.py"
    if not tool.exists():
        pytest.skip(f"{tool} is absent")
    out = subprocess.run([sys.executable, str(tool)], cwd=ROOT, capture_output=True,
                         text=True, check=False).stdout
    assert not [line for line in out.splitlines()
                if line.startswith("cycle") and "topologies." in line], out
