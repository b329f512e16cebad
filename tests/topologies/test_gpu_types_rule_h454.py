"""A fabric's own GPU types (``gpu_types``) meet the rules a GPU file's GPUs meet.

* One rule for a catalog GPU's name: a fabric file's ``gpu_types`` could hold 'H100-SXM'
  with half an H100's figures; ``topology show`` ran its GPUs with those figures (exit 0)
  while every look-up by name (the catalog's price, die, collective generation, a
  scenario's gpu) got the catalog's, and a GPU file taking a catalog name was refused.
  Now a GPU type taking a catalog GPU's name (in any case) with other figures is refused,
  naming the figures that differ, read from a file or written to one (write_graph wrote
  what read_graph then refused); with the catalog's own figures (its source aside) it is
  the catalog's GPU and reads. A graph in memory keeps it: there a GPU type is its object
  (the API runs a GpuSpec named like the catalog's with its own figures).
* A GPU type named with ',', '=' or ':' (which GPU files now refuse: they split names
  where GPUs are named in text) is refused in a fabric file too; '@' stays allowed there
  (a GPU at another clock, ``H100-SXM@0.5x``, as netmodel saves it).
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from compute.errors import UserError
from compute.hardware import derive_gpu, get_gpu
from tests.netmodel.cli_helpers import one_line_error, run_cli
from topologies.io import read_graph, write_graph
from topologies.registry import build


def _with_gpu_types(tmp_path, name: str, spec: dict):
    """A 4-GPU ring saved as JSON, its GPUs of type ``name`` given by ``spec`` in its
    ``gpu_types``."""
    path = tmp_path / "f.json"
    write_graph(build("ring:n=4"), path)
    doc = json.loads(path.read_text())
    doc["graph"]["gpu_types"] = {name: {**spec, "name": name}}
    for node in doc["nodes"]:
        if node.get("kind") == "gpu":
            node["gpu"] = name
    path.write_text(json.dumps(doc))
    return path


def _half_h100() -> dict:
    d = get_gpu("H100-SXM").to_dict()
    return {**d, "sms": 66, "flops_bf16": d["flops_bf16"] / 2}


@pytest.mark.parametrize("name", ["H100-SXM", "h100-sxm"])
def test_a_catalog_name_with_other_figures_is_refused(tmp_path, name):
    path = _with_gpu_types(tmp_path, name, _half_h100())
    with pytest.raises(UserError) as e:
        read_graph(path)
    assert str(e.value) == (f"{path}: gpu_types: GPU type {name!r} takes the name of the "
                            f"catalog's 'H100-SXM' with other figures (sms, flops_bf16); "
                            f"give yours another name")


def test_the_cli_refuses_it_in_one_line(tmp_path):
    path = _with_gpu_types(tmp_path, "H100-SXM", _half_h100())
    one_line_error(run_cli(["topology", "show", path]),
                   "GPU type 'H100-SXM' takes the name of the catalog's 'H100-SXM' with other "
                   "figures (sms, flops_bf16)")


def test_the_catalogs_own_figures_read(tmp_path):
    """The guard: an entry with the catalog's figures (another source) is the catalog's
    GPU; the same figures under another name are the user's own GPU."""
    own = {**get_gpu("H100-SXM").to_dict(), "source": "copied from the catalog"}
    g = read_graph(_with_gpu_types(tmp_path, "H100-SXM", own))
    assert g.nodes["gpu0"]["gpu"] == "H100-SXM"
    g = read_graph(_with_gpu_types(tmp_path, "Half", _half_h100()))
    assert g.graph["gpu_types"]["Half"].sms == 66


@pytest.mark.parametrize("suffix", [".json", ".graphml"])
def test_no_file_is_written_that_could_not_be_read_back(tmp_path, suffix):
    """In memory a GPU type is its object (the API's GpuSpec named like the catalog's with
    other figures runs with them); a file names it, so writing one is refused, nothing
    written. Before, write_graph wrote it and read_graph refused it."""
    fake = derive_gpu(get_gpu("H100-SXM"), "Lite", fraction=0.5)
    g = build("ring", {"n": 4, "gpu": fake})
    assert g.graph["gpu_types"] == {"Lite": fake}
    path = tmp_path / f"f{suffix}"
    with pytest.raises(UserError) as e:
        write_graph(g, path)
    assert str(e.value) == (f"{path}: gpu_types: GPU type 'Lite' takes the name of the "
                            f"catalog's 'Lite' with other figures (sms, flops_bf16, flops_fp8, "
                            f"flops_int8, hbm_capacity, hbm_bandwidth, scaleup_bandwidth, "
                            f"scaleout_bandwidth, tdp, max_instance); give yours another name")
    assert list(tmp_path.iterdir()) == []
    odd = derive_gpu(get_gpu("H100-SXM"), "Half=1", fraction=0.5)
    with pytest.raises(UserError, match="GPU name 'Half=1' must not contain '='"):
        write_graph(build("ring", {"n": 4, "gpu": odd}), path)
    assert list(tmp_path.iterdir()) == []
    same = replace(get_gpu("Lite"), source="mine")   # the catalog's figures: its GPU
    write_graph(build("ring", {"n": 4, "gpu": same}), path)
    assert read_graph(path).nodes["gpu0"]["gpu"] == "Lite"


@pytest.mark.parametrize("mark", [",", "=", ":"])
def test_a_gpu_type_named_with_a_mark_is_refused(tmp_path, mark):
    name = f"Half{mark}1"
    path = _with_gpu_types(tmp_path, name, _half_h100())
    with pytest.raises(UserError, match=f"gpu_types: GPU name '{name}' must not contain "
                                        f"'{mark}'"):
        read_graph(path)


def test_a_gpu_at_another_clock_keeps_its_mark(tmp_path):
    g = read_graph(_with_gpu_types(tmp_path, "Half@0.5x", _half_h100()))
    assert list(g.graph["gpu_types"]) == ["Half@0.5x"]
