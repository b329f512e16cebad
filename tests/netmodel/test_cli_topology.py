"""`netmodel topology list | show | plot | export`: output, JSON shape, one-line errors."""

from __future__ import annotations

import json
import os
import re

import pytest
from click.testing import CliRunner

from netmodel.cli.main import cli
from tests.netmodel.cli_helpers import one_line_error


def run(*args):
    return CliRunner().invoke(cli, ["topology", *args])


def test_list_names_every_builder_with_defaults():
    r = run("list")
    assert r.exit_code == 0
    for name in ("single-switch:", "fat-tree:", "superpod:", "nvl72:", "ocs:", "lite-groups:"):
        assert name in r.output
    assert "k=4, oversubscription=1, pods=auto" in r.output
    listing = json.loads(run("list", "--json").output)
    ft = next(b for b in listing if b["name"] == "fat-tree")
    assert {"name": "k", "type": "int", "default": 4, "unit": ""} in ft["params"]


def test_show_text_and_json():
    r = run("show", "fat-tree:k=4")
    assert r.exit_code == 0
    assert "diameter:    6 GPU-to-GPU hops (closed form)" in r.output
    assert "bisection:   400 GB/s per direction (closed form)" in r.output
    d = json.loads(run("show", "superpod", "--json").output)
    assert d["gpus"] == 248 and d["switches_by_tier"] == {"0": 31, "1": 8, "2": 4}
    assert d["injection_by_peer"] == {"switch tier 0": 450e9, "switch tier 1": 50e9}
    # 2 x (248 + 8 x 32) = 1,008 optical ends in twin-port modules (P40): the GPUs' 124
    # (two a module), each leaf's 31 down in 16 and 32 up in 16, each spine's 64 in 32
    assert d["bom"]["pluggable_transceivers"] == 248 // 2 + 8 * (16 + 16) + 4 * 32 == 508
    assert (d["bom"]["pluggable_ends"], d["bom"]["module_ports"]) == (2 * (248 + 256), 2)
    assert ("optics:      508 pluggable transceivers (twin-port modules holding 1,008 optical "
            "cable ends), 0 co-packaged ports") in run("show", "superpod").output
    single = run("show", "superpod:module_ports=1").output
    assert "optics:      1,008 pluggable transceivers, 0 co-packaged ports" in single
    s = json.loads(run("show", "superpod:module_ports=1", "--json").output)["bom"]
    assert (s["pluggable_transceivers"], s["pluggable_ends"], s["module_ports"]) == (1008, 1008, 1)
    o = json.loads(run("show", "ocs:gpus=8,ports=2,logical=ring", "--json").output)
    assert o["reconfiguration_time"] == 0.01 and o["bom"]["circuits"] == 8
    p = json.loads(run("show", "fat-tree:k=8", "--json", "--pair", "gpu0", "gpu1").output)
    assert p["path_diversity"] == {"source": "gpu0", "target": "gpu1", "hops": 2, "paths": 1}


def test_export_then_show_and_plot_the_file(tmp_path):
    out = tmp_path / "sp.graphml"
    r = run("export", "superpod", "-o", str(out))
    assert r.exit_code == 0 and "248 GPUs" in r.output
    d = json.loads(run("show", str(out), "--json").output)
    assert d["gpus"] == 248 and d["bisection_method"] == "closed form"
    js = tmp_path / "t.json"
    assert run("export", "torus:dims=3x3", "-o", str(js)).exit_code == 0
    assert json.loads(js.read_text())["graph"]["dims"] == "3x3"
    png = tmp_path / "t.png"
    r = run("plot", str(js), "-o", str(png))
    assert r.exit_code == 0 and png.read_bytes()[:4] == b"\x89PNG"


def test_export_astra_sim(tmp_path):
    out = tmp_path / "sp.yml"
    r = run("export", "superpod", "-o", str(out))
    assert r.exit_code == 0 and "8 x 31 NPUs: Switch, Switch" in r.output
    assert "approximated: in-network reduction" in r.output
    lines = [ln for ln in out.read_text().splitlines() if not ln.startswith("#")]
    assert lines == ["topology: [ Switch, Switch ]", "npus_count: [ 8, 31 ]",
                     f"bandwidth: [ {round(450e9 / 2**30, 9)}, {round(50e9 / 2**30, 9)} ]  # GB/s",
                     "latency: [ 85.0, 265.0 ]  # ns"]
    r = run("export", "ring:n=4", "--format", "astra-sim", "-o", str(tmp_path / "r.yaml"))
    assert r.exit_code == 0 and "4 NPUs: Ring" in r.output


def test_compare_table_json_and_plot(tmp_path):
    r = run("compare", "single-switch:n=8", "ring:n=8")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0].split() == ["single-switch:n=8", "ring:n=8"]
    cells = [re.split(r"\s{2,}", ln.strip()) for ln in lines[1:]]
    rows = {c[0]: c[1:] for c in cells if len(c) == 3}
    assert rows["diameter (GPU-to-GPU hops)"] == ["2", "4"]
    assert rows["bisection (TB/s)"] == ["1.800", "0.450"]
    assert rows["switches"] == ["1", "0"]
    d = json.loads(run("compare", "single-switch:n=8", "ring:n=8", "--group", "4",
                       "--json").output)
    assert d["group"] == 4 and [row["fabric"] for row in d["rows"]] == ["single-switch:n=8",
                                                                        "ring:n=8"]
    assert [row["diameter"] for row in d["rows"]] == [2, 4]
    assert [a["bytes"] for a in d["rows"][1]["all_reduce"]] == [2**20, 2**26, 2**30]
    png = tmp_path / "cmp.png"
    r = run("compare", "ring:n=8", "lite-flat", "--gpu", "Lite", "--plot", str(png), "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["plot"] == str(png) and png.read_bytes()[:4] == b"\x89PNG"
    assert [row["fabric"] for row in d["rows"]] == ["ring:gpu=Lite", "lite-flat@Lite"]
    assert list(tmp_path.iterdir()) == [png]  # no temporary file left beside it


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_compare_unwritable_plot_folder(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    one_line_error(run("compare", "ring:n=8", "ring:n=4", "--plot",
                       str(locked / "x.png")), "is not writable")
    assert list(locked.iterdir()) == []


@pytest.mark.parametrize("args, needles", [
    (("show", "fat-tree:k=5"), ("fat-tree: k must be even",)),
    (("show", "fat-tre"), ("unknown fabric 'fat-tre': neither a fabric builder (known:",
                           "'fat-tree'", "nor a scenario (known:", "'lite-ocs'")),
    (("show", "fat-tree:q=1"), ("unknown key 'q'", "'oversubscription'")),
    (("show", "ring:bandwidth=nan"), ("bandwidth", "finite number > 0")),
    (("show", "ring:bandwidth=-3GB/s"), ("bandwidth", "finite number > 0")),
    (("show", "ocs:gpus=5,ports=3,logical=full-mesh"), ("needs 4 circuits", "3 optical ports")),
    (("show", "leaf-spine:leaves=9,radix=8"), ("radix 8 is too small",)),
    (("show", "missing.json"), ("does not exist",)),
    (("export", "ring", "-o", "x.txt"), ("unknown fabric file type '.txt'",)),
    (("plot", "ring", "-o", "x.gif"), ("figure 'x.gif' must end in one of: .png, .svg, .pdf",)),
    (("plot", "ring", "-o", "no/x.png"), ("folder 'no' does not exist",)),
    (("plot", "ring", "-o", "."), ("names a folder, not a file",)),
    (("export", "ring", "-o", ""), ("must not be empty",)),
    (("export", "ring", "--format", "json", "-o", "x.yml"), ("--output 'x.yml': --format json writes a .json file, not '.yml'",)),
    (("export", "ocs", "-o", "x.yml"), ("cannot be expressed in ASTRA-sim", "circuits")),
    (("export", "lite-groups:split=gateway", "-o", "x.yml"), ("only Lite 0",)),
    (("export", "fat-tree:oversubscription=2", "--format", "astra-sim", "-o", "x.yaml"),
     ("oversubscription 2",)),
    (("show", "ring:n=3000000"), ("over the limit of 2,000,000 nodes",)),
    (("compare", "ring:n=8"), ("at least 2 fabrics (SPEC arguments), got 1",)),
    (("compare",), ("at least 2 fabrics (SPEC arguments), got 0",)),
    (("compare", "ring:n=8", "fat-tre"), ("unknown fabric 'fat-tre'", "'fat-tree'",
                                          "'lite-flat'")),
    (("compare", "ring:n=8", "ring:n=4", "--group", "8"),
     ("group of 8 GPUs does not fit fabric 'ring:n=4' (4 GPUs)",)),
    (("compare", "ring:n=8", "ring:n=4", "--group", "0"), ("group must be",)),
    (("compare", "ring:n=8", "ring:n=4", "--plot", "no/x.png"), ("folder 'no' does not exist",)),
    (("compare", "ring:n=8", "ring:n=4", "--plot", "x.gif"), ("must end in one of: .png",)),
    (("compare", "ring:n=8", "missing.json"), ("does not exist",)),
    (("compare", "ring:n=8", "lite-flat", "--gpu", "Nope"), ("Nope",)),
])
def test_bad_input_is_one_line_exit_2(tmp_path, monkeypatch, args, needles):
    monkeypatch.chdir(tmp_path)
    one_line_error(run(*args), *needles)
    assert list(tmp_path.iterdir()) == []  # nothing half-written


def test_one_optical_port_is_singular():
    """A GPU of one optical port is told '1 optical port' (the count and its noun agree, as
    compute.units.counted writes every count); it read '1 optical ports'."""
    from compute.errors import UserError
    from topologies import build
    with pytest.raises(UserError) as err:
        build("ocs", {"gpus": 2, "ports": 1, "logical": "ring"})
    assert str(err.value).endswith("needs 2 circuits at GPU 'gpu0' but it has 1 optical port")
