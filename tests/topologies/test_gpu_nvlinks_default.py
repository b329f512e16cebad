"""rail-optimized's NVLinks per GPU follow the GPU (its catalog entry's ``nvlinks``) when
not given: an A100 has 12 NVLink3 links (NVIDIA A100 datasheet: 12 x 25 GB/s a direction =
600 GB/s bidirectional), an H100 and a B200 18. The builder took 18 whatever the GPU, so a
4 x 8 A100 fabric had 32 x 18 = 576 NVLink traces and 4 x 8 x 18 = 576 domain-switch ports
where the hardware has 384."""

import pytest

from compute.errors import UserError
from compute.hardware import get_gpu, gpu_names, load_gpu_file
from netmodel.study.fabric_table import nvlinks_of
from topologies.hierarchical import rail_optimized


def _scaleup(g):
    edges = [d for u, v, d in g.edges(data=True) if "nvs" in (u[:3], v[:3])]
    return {d["links"] for d in edges}, sum(d["links"] for d in edges)


def test_a100_fabric_has_twelve_nvlinks_per_gpu():
    g = rail_optimized(domains=4, domain_size=8, gpu="A100-SXM-80GB")
    links, total = _scaleup(g)
    assert links == {12} and total == 32 * 12
    assert {g.nodes[f"nvs{d}"]["radix"] for d in range(4)} == {8 * 12}


def test_explicit_nvlinks_still_honoured():
    g = rail_optimized(domains=1, gpu="A100-SXM-80GB", nvlinks=18)
    assert _scaleup(g) == ({18}, 8 * 18) and g.nodes["nvs0"]["radix"] == 144


def test_h100_and_lite_keep_eighteen():
    for gpu in ("H100-SXM", "Lite", "B200-HGX"):
        assert _scaleup(rail_optimized(domains=1, gpu=gpu))[0] == {18}


def test_catalog_agrees_with_the_bandwidth_rule():
    # each catalog count is the scale-up bandwidth over one NVLink's line rate of the GPU's
    # generation (collective_generations.toml nvlink_bandwidth: 25 GB/s Ampere and Hopper,
    # 50 GB/s Blackwell), computed here, not through nvlinks_of (which returns the count)
    from compute.gpu_facts import root_gpu
    from netmodel.collectives.calibration_files import default_calibration

    for name in gpu_names():
        root = root_gpu(get_gpu(name))
        rate = default_calibration().generation_of(root.name).nvlink_bandwidth
        assert get_gpu(name).nvlinks == root.scaleup_bandwidth / rate \
            == nvlinks_of(get_gpu(name))


def test_gpu_file_nvlinks(tmp_path):
    f = tmp_path / "g.toml"
    f.write_text('[gpu.Mine]\nderive_from = "A100-SXM-80GB"\nsource = "test"\nfraction = 0.5\n'
                 '[gpu.Own]\nderive_from = "H100-SXM"\nsource = "test"\nnvlinks = 6\n')
    gpus = load_gpu_file(f)
    assert gpus["Mine"].nvlinks == 12 and gpus["Own"].nvlinks == 6
    assert _scaleup(rail_optimized(domains=1, gpu=gpus["Own"]))[0] == {6}


@pytest.mark.parametrize("bad", [0, 2000, 1.5, "x", True])
def test_gpu_file_bad_nvlinks(tmp_path, bad):
    f = tmp_path / "g.toml"
    v = f'"{bad}"' if isinstance(bad, str) else str(bad).lower()
    f.write_text(f'[gpu.Bad]\nderive_from = "H100-SXM"\nsource = "test"\nnvlinks = {v}\n')
    with pytest.raises(UserError, match="nvlinks"):
        load_gpu_file(f)


def test_superpod_and_nvl72_follow_the_gpu():
    # both hard-coded 18 links whatever the GPU; their own GPUs keep 18
    from topologies.hierarchical import nvl72, superpod

    assert _scaleup(superpod(1))[0] == {18} and _scaleup(nvl72())[0] == {18}
    assert _scaleup(superpod(1, "A100-SXM-80GB"))[0] == {12}
    g = nvl72(gpu="A100-SXM-80GB")
    assert _scaleup(g)[0] == {12} and g.nodes["nvs0"]["radix"] == 18 * 72
