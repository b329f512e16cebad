"""A channel's threads come in whole warps: ``[p2p] threads`` (NCCL_MAX_NTHREADS, 640) and
``ll_ring_threads`` (NCCL_LL_MAX_NTHREADS, 512) are 0 (not modelled) or multiples of 32.
Fewer than a warp gave send/recv's LL no send warp (``p2p_ll_share`` 0: a
ZeroDivisionError out of the cost model) or a ring of no warps (a division by zero)."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from netmodel.collectives.calibration import DEFAULTS_PATH, WARP_SIZE
from netmodel.collectives.calibration_files import default_calibration, load_calibration
from netmodel.collectives.pipeline_fill import p2p_ll_share


@pytest.mark.parametrize("key", ["p2p_threads", "ll_ring_threads"])
@pytest.mark.parametrize("value", [1, 16, 33, 650])
def test_threads_not_whole_warps_are_refused(key, value):
    with pytest.raises(UserError) as err:
        default_calibration().with_(**{key: value})
    assert str(err.value) == (f"{key} must be 0 or a whole number of warps (a multiple of "
                              f"32) in 0..1024, got {value}")


def test_a_calibration_files_threads_are_named_with_the_file(tmp_path):
    path = tmp_path / DEFAULTS_PATH.name
    text = DEFAULTS_PATH.read_text()
    assert text.count("threads = 640") == 1
    path.write_text(text.replace("threads = 640", "threads = 16"))
    with pytest.raises(UserError) as err:
        load_calibration(path)
    assert str(err.value).startswith(f"{path}: p2p_threads must be 0 or a whole number of warps")


@pytest.mark.parametrize("threads", [0, WARP_SIZE, 640])
def test_whole_warps_are_taken(threads):
    # one warp a channel: the send half is that warp (1 - 1 // 2), 28 of them on 8 B200
    # against 32 x 16 ring warps; 0 leaves LL's own rate
    cal = default_calibration().with_(p2p_threads=threads).for_gpu("B200-HGX")
    want = {0: 1.0, WARP_SIZE: 28 / 512, 640: 280 / 512}[threads]
    assert float(p2p_ll_share(8, cal)) == pytest.approx(want)
