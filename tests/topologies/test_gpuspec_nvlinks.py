"""NVLinks per GPU are a GpuSpec field (``GpuSpec.nvlinks``), not a side table by GPU name.

Before, the count was kept by name beside the GpuSpec (filled from a GPU file's ``nvlinks``
key), so a GPU built in code did not carry its base's: ``derive_gpu(A100, "HalfA100")`` was
wired with the builders' 18 NVLinks a GPU (a 4 x 8 fabric: 576 NVLink cables, 144-port
domain switches) where the A100 has 12 (NVIDIA A100 datasheet: 12 NVLink3 links x 25 GB/s a
direction, compute/data/gpus.toml; 384 cables, 96 ports), and its ``"$nvlinks"`` token
counted 6 (150 GB/s over NVLink3's 25). A derived GPU keeps its base's links, each carrying
its share of the scaled bandwidth (the Lite convention: a Lite keeps the H100's 18).

The old-format files in ``data/`` were written by the code before this change
(``git archive`` of it, ``topologies.io.write_graph``): ``old_a100_half.*`` is
``rail_optimized(domains=1, gpu=derive_gpu(A100, "HalfA100", fraction=0.5))`` (18 links a
GPU, as it then wired), ``old_a100_clock.*`` the same with ``gpu_at_clock(A100, 0.5)`` (12:
the old table looked ``A100-SXM-80GB@0.5x`` up by ``A100-SXM-80GB``).
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from compute.errors import UserError
from compute.hardware import derive_gpu, get_gpu, load_gpu_file
from netmodel.cli.main import cli
from netmodel.study.fabric_table import nvlinks_of
from topologies.hierarchical import nvl72, rail_optimized, superpod
from topologies.io import read_graph, write_graph
from topologies.schema import gpu_types
from topologies.schema_gpu import gpu_spec_from_dict

DATA = Path(__file__).parent / "data"
A100_LINKS = 12   # NVIDIA A100 datasheet: 12 NVLink3 links a GPU (compute/data/gpus.toml)


def _wired(g) -> tuple[list[float], int, int]:
    """Per-GPU NVLink counts, their total and the domain switches' ports, counted edge by
    edge: every edge between a GPU and a tier-0 switch."""
    per_gpu, total = [], 0
    for u, v, d in g.edges(data=True):
        ends = {g.nodes[u]["kind"], g.nodes[v]["kind"]}
        switch = u if g.nodes[u]["kind"] == "switch" else v
        if ends == {"gpu", "switch"} and g.nodes[switch]["tier"] == 0:
            per_gpu.append(d.get("links", 1))
            total += d.get("links", 1)
    ports = sum(d["radix"] for _, d in g.nodes(data=True)
                if d["kind"] == "switch" and d["tier"] == 0)
    return per_gpu, total, ports


def _half_a100():
    return derive_gpu(get_gpu("A100-SXM-80GB"), "HalfA100", fraction=0.5)


def test_derived_a100_is_wired_with_the_a100s_twelve():
    # before: 18 links a GPU, 576 cables and 4 x 144 ports
    g = rail_optimized(domains=4, domain_size=8, gpu=_half_a100())
    per_gpu, total, ports = _wired(g)
    assert len(per_gpu) == 32 and set(per_gpu) == {A100_LINKS}
    assert total == 32 * A100_LINKS == 384 and ports == 4 * 8 * A100_LINKS == 384
    # superpod keeps its 256-port domain switch; nvl72 its 18 x 72 ports
    assert set(_wired(superpod(1, _half_a100()))[0]) == {A100_LINKS}
    assert set(_wired(nvl72(gpu=_half_a100()))[0]) == {A100_LINKS}


def test_derived_links_share_the_derived_bandwidth():
    # 12 links x 12.5 GB/s = the half A100's 150 GB/s (a quarter H100: 18 x 6.25 = 112.5)
    half = _half_a100()
    assert half.nvlinks == A100_LINKS
    assert half.scaleup_bandwidth / half.nvlinks == 300e9 / 12 * 0.5
    lite = get_gpu("Lite")
    assert lite.nvlinks == 18 and lite.scaleup_bandwidth / lite.nvlinks == 450e9 / 18 / 4


def test_the_scenario_token_counts_the_derived_gpus_links():
    # before: 6 (its 150 GB/s over NVLink3's 25) where rail-optimized wired 18
    assert nvlinks_of(_half_a100()) == A100_LINKS


@pytest.mark.parametrize("links", [1, 6, 24])
def test_replace_changes_what_builders_wire(links):
    # before: replace() had no nvlinks field (TypeError)
    gpu = replace(get_gpu("H100-SXM"), name="Mine", nvlinks=links)
    per_gpu, total, ports = _wired(rail_optimized(domains=2, domain_size=8, gpu=gpu))
    assert set(per_gpu) == {links} and total == 16 * links and ports == 16 * links
    assert nvlinks_of(gpu) == links
    # the builder's explicit argument still wins over the GPU's count
    assert set(_wired(rail_optimized(domains=1, gpu=gpu, nvlinks=3))[0]) == {3}


BAD = [(0, "0"), (-1, "-1"), (1e9, "1000000000.0"), ("x", "'x'"), (math.nan, "nan")]
RANGE = "nvlinks must be a whole number from 1 to 1,024, got "


def _toml(v) -> str:
    """``v`` as a TOML value (json.dumps writes NaN as NaN, TOML as nan)."""
    return "nan" if isinstance(v, float) and math.isnan(v) else json.dumps(v)


ENTRIES = ['derive_from = "H100-SXM"', 'derive_from = "A100-SXM-80GB"\nfraction = 0.5',
           "sms = 132\nbf16_dense_TFLOPs = 989.4\nhbm_capacity_GB = 80\nhbm_bandwidth_TBps = 3.35\n"
           "scaleup_GBps_per_direction = 450\nscaleout_Gbps = 400\ntdp_W = 700\nmax_instance = 8"]


@pytest.mark.parametrize("value, shown", BAD + [(True, "True"), (1.5, "1.5")])
def test_bad_nvlinks_refused_alike_everywhere(tmp_path, value, shown):
    # a GpuSpec built in code, a saved fabric's gpu_types and a GPU file's entries (derived
    # or not) are held to limits.toml's [gpu.nvlinks] range, each in one line naming the
    # value; the CLI exits 2. Before: GpuSpec had no such field (TypeError) and a saved
    # fabric's 'nvlinks' was an unknown field (only the GPU file checked the range).
    with pytest.raises(UserError) as e:
        replace(get_gpu("H100-SXM"), nvlinks=value)
    assert str(e.value) == f"GPU 'H100-SXM': {RANGE}{shown}"
    saved = dict(get_gpu("H100-SXM").to_dict(), name="Mine", nvlinks=value)
    with pytest.raises(UserError) as e:
        gpu_spec_from_dict("Mine", saved, "f.json: gpu_types")
    assert str(e.value) == f"f.json: gpu_types: GPU type 'Mine': {RANGE}{shown}"
    for i, entry in enumerate(ENTRIES):
        f = tmp_path / f"bad{i}.toml"
        f.write_text(f'[gpu.Bad]\n{entry}\nnvlinks = {_toml(value)}\nsource = "test"\n')
        with pytest.raises(UserError) as e:
            load_gpu_file(f)
        assert str(e.value) == f"{f}: GPU 'Bad': {RANGE}{shown}"
        r = CliRunner().invoke(cli, ["hardware", "--gpu-file", str(f)])
        assert r.exit_code == 2 and r.output == f"error: {e.value}\n", r.output


def test_gpu_file_key_wins_over_the_base(tmp_path):
    f = tmp_path / "g.toml"
    f.write_text('[gpu.Half]\nderive_from = "A100-SXM-80GB"\nfraction = 0.5\nsource = "test"\n'
                 '[gpu.Six]\nderive_from = "Half"\nnvlinks = 6\nsource = "test"\n'
                 '[gpu.Kept]\nderive_from = "Six"\nfraction = 0.5\nsource = "test"\n')
    gpus = load_gpu_file(f)
    assert [gpus[n].nvlinks for n in ("Half", "Six", "Kept")] == [12, 6, 6]


def test_hardware_json_has_the_field(tmp_path):
    # before: no "nvlinks" in the JSON
    r = CliRunner().invoke(cli, ["hardware", "A100-SXM-80GB", "--json"])
    assert r.exit_code == 0 and json.loads(r.output)["nvlinks"] == A100_LINKS
    f = tmp_path / "g.toml"
    f.write_text('[gpu.Half]\nderive_from = "A100-SXM-80GB"\nfraction = 0.5\nsource = "test"\n'
                 '[gpu.Bare]\nsms = 132\nbf16_dense_TFLOPs = 989.4\nhbm_capacity_GB = 80\n'
                 'hbm_bandwidth_TBps = 3.35\nscaleup_GBps_per_direction = 450\n'
                 'scaleout_Gbps = 400\ntdp_W = 700\nmax_instance = 8\nsource = "test"\n')
    r = CliRunner().invoke(cli, ["hardware", "--gpu-file", str(f), "--json"])
    listed = {g["name"]: g["nvlinks"] for g in json.loads(r.output)["gpus"]}
    assert listed["Half"] == A100_LINKS and listed["Bare"] is None and listed["Lite"] == 18


@pytest.mark.parametrize("links, wired", [(4, 4), (None, 6)])
@pytest.mark.parametrize("ext", ["json", "graphml"])
def test_saved_fabric_keeps_the_count(tmp_path, ext, links, wired):
    # before: gpu_types had no nvlinks; the count came back by name (18 for HalfA100).
    # None (none given) is saved as null and read back as None; the builder counts it by
    # compute.gpu_facts.nvlink_count, as "$nvlinks" does: a GPU derived in code and then
    # stripped of its count is a root of its own, 150 GB/s (half an A100's 300) over the
    # H100's 25 GB/s links = 6 (the builder wired 18, its old default, where "$nvlinks"
    # said 6)
    gpu = replace(_half_a100(), nvlinks=links)
    path = tmp_path / f"f.{ext}"
    write_graph(rail_optimized(domains=1, gpu=gpu), path)
    g = read_graph(path)
    assert gpu_types(g)["HalfA100"] == gpu and g.graph["builder"] == "rail-optimized"
    assert set(_wired(g)[0]) == {wired}


@pytest.mark.parametrize("ext", ["json", "graphml"])
def test_fabric_saved_by_the_old_code_still_loads(ext):
    # no nvlinks in its gpu_types: a GPU not in the catalog has none given (the builders'
    # 18, as the old code wired it, so the file still rebuilds as built) ...
    assert "nvlinks" not in (DATA / f"old_a100_half.{ext}").read_text()
    g = read_graph(DATA / f"old_a100_half.{ext}")
    assert gpu_types(g)["HalfA100"].nvlinks is None
    assert set(_wired(g)[0]) == {18} and g.graph["builder"] == "rail-optimized"
    # ... a GPU at another clock of a catalog GPU has that GPU's count
    g = read_graph(DATA / f"old_a100_clock.{ext}")
    assert gpu_types(g)["A100-SXM-80GB@0.5x"].nvlinks == A100_LINKS
    assert set(_wired(g)[0]) == {A100_LINKS} and g.graph["builder"] == "rail-optimized"
