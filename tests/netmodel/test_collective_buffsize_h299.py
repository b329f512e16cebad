"""The run's Simple buffer (NCCL_BUFFSIZE) as a declared calibration setting (h299, issue 11).

NCCL (src/init.cc computeBuffSizes, src/enqueue.cc): NCCL_BUFFSIZE sets the Simple
protocol's buffer only; a Simple step is the buffer over NCCL_STEPS (8); Simple send/recv's
p2p chunk is at most that step; LL and LL128 have their own buffers.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from compute.errors import UserError
from netmodel.cli.main import cli
from netmodel.collectives.calibration_files import default_calibration, load_calibration
from netmodel.collectives.model import FabricCostModel
from topologies import build

MiB = 2 ** 20
ROOT = Path(__file__).resolve().parents[2]


def test_default_is_nccls_4_mib_and_a_step_is_an_eighth():
    cal = default_calibration()
    assert cal.simple_buffer == 4 * MiB
    assert cal.protocol("Simple").chunk == 512 * 1024
    big = cal.with_(simple_buffer=8 * MiB)
    assert big.protocol("Simple").chunk == 1 * MiB
    # LL, LL128 and NVLS keep their own buffers' chunks
    for name in ("LL", "LL128"):
        assert big.protocol(name).chunk == cal.protocol(name).chunk
    assert big.in_network.chunk == cal.in_network.chunk == 128 * 1024
    # the p2p NVLink chunk (512 KiB) is at most a Simple step: 2 MiB / 8 = 256 KiB caps it
    assert big.p2p_chunk == 512 * 1024
    assert cal.with_(simple_buffer=2 * MiB).p2p_chunk == 256 * 1024
    # a generation's resolve keeps the buffer's chunk
    assert big.for_gpu("H100-SXM").protocol("Simple").chunk == 1 * MiB


def test_fill_of_a_two_node_tree_with_8_mib_buffers():
    """2 x 8 H100, rail-optimized, tree all-reduce of 1 GiB (Simple at both buffers).

    The tree chains each node's 8 GPUs (7 NVLink hops, one per rail's tree but the one
    leaving through that GPU: 7/8 of the message on each hop) and crosses the 2 nodes by
    one edge: 8 stages, so each of its two pipelined steps (reduce, broadcast) fills for 7
    stages of one slice. An NVLink moves 0.824 x 450 GB/s, the slowest per byte (a NIC
    carries 1/16 of the message at 47 GB/s). A slice is 16 channels x chunk: 8 MiB at 4
    MiB buffers, 16 MiB at 8 MiB buffers. Past both slices the time differs by the fill of
    the extra 8 MiB: 2 x 7 x (7/8) / (0.824 x 450e9) x 8 MiB = 277.13 us.
    """
    g = build("rail-optimized:domains=2")
    cal = default_calibration()
    t = {}
    for buf in (4 * MiB, 8 * MiB):
        m = FabricCostModel(g, validated=True, calibration=cal.with_(simple_buffer=buf))
        r = m.cost("all-reduce", 2 ** 30, 16, "tree")
        assert r.protocol == "Simple"
        t[buf] = r.time
    expect = 2 * 7 * (7 / 8) / (0.824 * 450e9) * (16 * MiB - 8 * MiB)
    assert t[8 * MiB] - t[4 * MiB] == pytest.approx(expect, rel=1e-9)
    assert expect == pytest.approx(277.13e-6, rel=1e-4)


def test_slice_moves_with_the_buffer():
    """Simple alone: the tree's time is one line below its slice (16 channels x step), so
    4, 8 and 16 MiB are collinear with 8 MiB buffers (slice 16 MiB) and not with 4 MiB
    ones (slice 8 MiB: past it the fill stops growing, the time bends down)."""
    g = build("rail-optimized:domains=2")
    cal = default_calibration()
    only = cal.with_(protocols=(cal.protocol("Simple"),))
    for buf, straight in ((8 * MiB, True), (4 * MiB, False)):
        m = FabricCostModel(g, validated=True, calibration=only.with_(simple_buffer=buf))
        t4, t8, t16 = (m.cost("all-reduce", n * MiB, 16, "tree").time for n in (4, 8, 16))
        bend = (t16 - t8) / (2 * (t8 - t4))
        assert (bend == pytest.approx(1.0, rel=1e-9)) is straight


def test_calibration_file_key(tmp_path):
    text = (ROOT / "netmodel" / "data" / "collective_defaults.toml").read_text()
    assert "simple_buffer = 4194304" in text
    f = tmp_path / "cal.toml"
    f.write_text(text.replace("simple_buffer = 4194304", "simple_buffer = 8388608"))
    assert load_calibration(f).protocol("Simple").chunk == 1 * MiB
    f.write_text(text.replace("simple_buffer = 4194304", "simple_buffer = 0"))
    with pytest.raises(UserError, match=r"simple_buffer must be a whole number of bytes"):
        load_calibration(f)


@pytest.mark.parametrize("bad", [0.5, -1, float("nan"), 7, 2 ** 41, True, "8MiB"])
def test_library_refuses(bad):
    with pytest.raises(UserError, match=r"^simple_buffer must be a whole number of bytes "
                                        r"from 8 B to 1 TiB \(1,099,511,627,776 B\)"):
        default_calibration().with_(simple_buffer=bad)


def test_cli_option():
    runner = CliRunner()
    args = ["collective", "all-reduce", "--fabric", "rail-optimized:domains=2", "--group",
            "16", "--size", "1GiB", "--algorithm", "tree"]
    base = runner.invoke(cli, args)
    big = runner.invoke(cli, [*args, "--nccl-buffsize", "8MiB"])
    assert base.exit_code == big.exit_code == 0
    # the option gives the library's cost at that buffer (6.849 ms at 4 MiB and 7.126 ms at
    # 8 MiB when written; h356: was a pin of both): past both slices the 8 MiB buffers pay
    # the fill of the extra 8 MiB (test_fill_of_a_two_node_tree_with_8_mib_buffers)
    from compute.units import format_time

    g = build("rail-optimized:domains=2")
    want = {buf: FabricCostModel(g, calibration=default_calibration().with_(
        simple_buffer=buf)).cost("all-reduce", 2 ** 30, 16, "tree").time
        for buf in (4 * MiB, 8 * MiB)}
    assert f"time {format_time(want[4 * MiB])} " in base.output, base.output
    assert f"time {format_time(want[8 * MiB])} " in big.output, big.output
    assert format_time(want[4 * MiB]) != format_time(want[8 * MiB])
    assert want[8 * MiB] - want[4 * MiB] == pytest.approx(
        2 * 7 * (7 / 8) / (0.824 * 450e9) * 8 * MiB, rel=1e-9)
    for bad in ("0", "-1", "nan", "7", "4.5", "abc"):
        r = runner.invoke(cli, [*args, "--nccl-buffsize", bad])
        assert r.exit_code == 2, (bad, r.output)
        lines = r.output.strip().splitlines()
        assert len(lines) == 1 and "--nccl-buffsize" in lines[0], (bad, r.output)
        assert "Traceback" not in r.output


def test_accuracy_rows_take_the_runs_buffer():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import accuracy_collectives as ac
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    curves = {c.key: c for c in ac.cited_curves()}
    set_ = {k for k, c in curves.items() if c.buffsize is not None}
    assert set_ == {"h100-a3mega-2x8", *(f"h100-p5-{n}x8-efa" for n in (2, 4, 8, 16, 32))}
    assert all(curves[k].buffsize == 8 * MiB for k in set_)
    assert all("NCCL_BUFFSIZE=8388608" in curves[k].source + curves[k].note for k in set_)
