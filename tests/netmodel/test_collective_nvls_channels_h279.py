"""NCCL's NVLS channels by GPU generation (h279, issue 11).

NCCL fixes its NVLS channel count once per communicator (src/transport/nvls.cc,
ncclNvlsInit): 16 on Hopper (NVLS_NCHANNELS 16 in 2.17-2.2x; NVLS_NCHANNELS_SM90 16 in
v2.28.3-1) and, from v2.28.3-1 at the latest, 24 on Blackwell inside one NVLink domain
(NVLS_NCHANNELS_SM100_NVL: one node or an MNNVL clique holding every rank). NVLS's pipeline
streams slices of heads x channels x NVLS_CHUNKSIZE (128 KiB): its two phases run one after
the other until the pipeline holds a slice, so the time is one line up to the slice and a
flatter one beyond. On 8 GPUs (8 heads) that knee is 8 x 24 x 128 KiB = 24 MiB on 8 B200
and 8 x 16 x 128 KiB = 16 MiB on 8 H100; the old model put Blackwell's at 16 MiB too.
"""

from dataclasses import replace

import numpy as np
import pytest

from compute.errors import UserError
from netmodel.collectives.calibration_files import default_calibration, load_generations
from netmodel.collectives.model import FabricCostModel
from topologies import build

MIB = 2 ** 20
#: 8 MiB to 36 MiB in 4 MiB steps
SIZES = np.arange(8, 37, 4) * MIB


def _steps(fabric: str, gpus: int = 8, algorithm: str = "in-network",
           calibration=None) -> np.ndarray:
    """Seconds added by each 4 MiB step of :data:`SIZES` (forced ``algorithm``)."""
    m = FabricCostModel(build(fabric), calibration=calibration)
    return np.diff(m.sweep("all-reduce", SIZES, gpus, algorithm).time)


def _knee(steps: np.ndarray) -> float:
    """The size (bytes) where the time's slope drops: the end of the last step whose
    increment equals the first one's."""
    same = np.isclose(steps, steps[0], rtol=1e-9, atol=0.0)
    last = int(np.argmin(same)) if not same.all() else len(same)
    return float(SIZES[last])


def test_blackwell_nvls_slice_is_24_channels_of_8_heads():
    steps = _steps("single-switch:n=8,gpu=B200-HGX")
    # 8 heads x 24 channels x 128 KiB = 24 MiB; the old model's 16 channels: 16 MiB
    assert _knee(steps) == 8 * 24 * 128 * 1024 == 24 * MIB
    assert steps[-1] < steps[0]                       # flatter beyond the slice


def test_hopper_nvls_slice_stays_16_channels_of_8_heads():
    assert _knee(_steps("single-switch:n=8,gpu=H100-SXM")) == 8 * 16 * 128 * 1024 == 16 * MIB


def test_an_mnnvl_clique_is_one_domain_24_channels():
    # 8 GPUs of two GB300 trays of one NVL72 domain: every rank in the clique (SM100_NVL)
    assert _knee(_steps("nvl72:gpu=GB300-NVL72")) == 24 * MIB


def test_nvls_across_domains_keeps_the_pipeline_channels():
    # NVLSTree on 2 x 8 B200: a phase crosses the network, so the 24 of one NVLink domain does
    # not apply; the same time with the Blackwell count set to the pipeline's 16
    cal = default_calibration()
    gens = tuple(replace(g, in_network_channels=None) for g in cal.generations)
    plain = cal.with_(generations=gens)
    fabric = "rail-optimized:domains=2,gpu=B200-HGX"
    a = _steps(fabric, 16, "in-network-tree")
    b = _steps(fabric, 16, "in-network-tree", plain)
    np.testing.assert_allclose(a, b, rtol=1e-12)


def test_generation_channels_must_be_a_count(tmp_path):
    path = tmp_path / "gen.toml"
    path.write_text('default = "x"\n[generation.x]\n'
                    "in_network_channels = 2.5\n")
    with pytest.raises(UserError, match=r"in_network_channels must be a whole number in "
                                        r"1\.\.1024, got 2\.5"):
        load_generations(path)
