"""The in-switch reduction ceiling said over the group where the in-switch phases run in
domains of fewer GPUs (an all-reduce across scale-up domains: hierarchical with NVLS
inside, in-network with SHARP above).

superpod, 16 H100 on 2 DGX (8 a domain), all-reduce of 256 MiB: the NVLS phases in each
domain are held to 1.067 x 450 GB/s = 480.15 GB/s of busbw over a domain's 8 GPUs, each
phase moving 7/8 of the message; the collective's busbw counts 15/16 of it, so while the
phases stream its busbw is 480.15 x (15/16) / (7/8) = 514.4 GB/s. The headline said
'busbw at most 480.1 GB/s ... while the in-switch phases stream, 978.4 us of the 1.392
ms' beside 'busbw 361.49 GB/s': over those 978.4 us the collective's busbw is 514.4 GB/s,
above the bound it had just printed.
"""

import pytest
from click.testing import CliRunner

from netmodel.cli.main import cli
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.results import InSwitchCeiling
from topologies import build

CEILING = 1.067 * 450e9   # Hopper's in-switch ceiling x an H100's NVLink rate


@pytest.mark.parametrize(("spec", "algorithm"), [
    ("superpod", "hierarchical"),
    ("rail-optimized:domains=2,sharp=true", "in-network"),
])
def test_the_streamed_busbw_is_the_ceiling_over_the_group(spec, algorithm):
    m = FabricCostModel(build(spec))
    n = 2.0**28
    r = m.cost("all-reduce", n, 16, algorithm)
    top = r.in_switch_ceiling
    assert top is not None and top.heads == 8
    assert top.busbw == pytest.approx(CEILING, rel=1e-12)
    ours = CEILING * (15 / 16) / (7 / 8)
    assert top.group_busbw(16) == pytest.approx(ours, rel=1e-12)
    assert ours / 1e9 == pytest.approx(514.4, abs=0.05)
    # the busbw over the streamed part is the group's ceiling: the figures reconcile
    streamed = top.per_byte * n
    assert r.busbw * r.time / streamed == pytest.approx(ours, rel=1e-9)


def test_the_headline_says_both():
    res = CliRunner().invoke(cli, ["collective", "all-reduce", "--fabric", "superpod",
                                   "--group", "16", "--size", "256MiB"])
    assert res.exit_code == 0, res.output
    assert ("= 480.1 GB/s (the highest published NVLS busbw of the generation) over a "
            "domain's 8 GPUs, 514.4 GB/s over these 16 while the in-switch phases stream, "
            "978.4 us of the 1.392 ms") in res.output


def test_one_domain_is_said_as_before():
    res = CliRunner().invoke(cli, ["collective", "all-reduce", "--fabric", "single-switch",
                                   "--group", "8", "--size", "1GiB"])
    assert res.exit_code == 0, res.output
    assert ("= 480.1 GB/s (the highest published NVLS busbw of the generation) while the "
            "in-switch phases stream") in res.output
    assert InSwitchCeiling(1.067, 450e9, 1.0, heads=8).group_busbw(8) == \
        pytest.approx(CEILING, rel=1e-12)
