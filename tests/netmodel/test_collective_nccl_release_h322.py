"""The NCCL release the model emulates (h322, issue 11).

Constants that differ by NCCL release are taken from netmodel/data/collective_generations.toml
for the calibration's ``nccl_release`` (default: the newest release the file holds, 2.30).
Hand-derived cases where the release changes the result:

* NVLS on 8 B200: NCCL's NVLS channels on Blackwell are 32 in 2.25-2.26
  (NVLS_NCHANNELS_SM100) and 24 inside one node from v2.28.3-1 (NVLS_NCHANNELS_SM100_NVL).
  NVLS streams slices of heads x channels x NVLS_CHUNKSIZE (128 KiB), its two phases one
  after the other until the pipeline holds a slice: the time's slope drops at 8 x 32 x 128
  KiB = 32 MiB under 2.26 and at 8 x 24 x 128 KiB = 24 MiB under 2.28. Below 24 MiB the
  two releases cost the same; past 32 MiB 2.26 pays the fill of its 8 MiB larger slice, a
  constant gap of (steep slope - flat slope) x 8 MiB.
* A tree all-reduce on 2 x 8 B200 (8 rails): NCCL caps a tree channel's busbw at
  perChMaxTreeBws, Blackwell 2 nodes 42.8 GB/s from v2.28.3-1 and 2 x Hopper's 41.4 = 82.8
  GB/s before it; the tree's algbw is at most rails x cap / 2, its busbw that x 2 (n-1)/n:
  8 x 42.8 / 2 x 2 x 15/16 = 321.0 GB/s under 2.28, 621.0 GB/s under 2.27.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from compute.errors import UserError
from netmodel.cli.main import cli
from netmodel.collectives.calibration_files import (
    default_calibration,
    load_generations,
    load_releases,
)
from netmodel.collectives.calibration_generations import parse_release
from netmodel.collectives.model import FabricCostModel
from netmodel.study.collective_setup import collective_setup
from topologies import build

MIB = 2 ** 20
ROOT = Path(__file__).resolve().parents[2]
B200_8 = "single-switch:n=8,gpu=B200-HGX"
#: 8 MiB to 40 MiB in 4 MiB steps
SIZES = np.arange(8, 41, 4) * MIB


def _times(release: str, fabric: str = B200_8) -> np.ndarray:
    cal = default_calibration().with_(nccl_release=release)
    m = FabricCostModel(build(fabric), calibration=cal)
    return m.sweep("all-reduce", SIZES, 8, "in-network").time


def _knee(times: np.ndarray) -> float:
    """The size where the time's slope drops (end of the last step as steep as the first)."""
    steps = np.diff(times)
    same = np.isclose(steps, steps[0], rtol=1e-9, atol=0.0)
    return float(SIZES[int(np.argmin(same))])


def test_default_is_the_newest_release_the_file_holds():
    cal = default_calibration()
    assert cal.releases.covered() == "2.17..2.30"
    assert cal.nccl_release == "2.30" and parse_release(cal.nccl_release) == cal.releases.newest
    assert cal.for_gpu("B200-HGX").in_network_channels == 24
    # the default and an explicit newest cost alike
    np.testing.assert_array_equal(_times("2.30"), FabricCostModel(build(B200_8)).sweep(
        "all-reduce", SIZES, 8, "in-network").time)


def test_blackwell_nvls_channels_by_release_move_the_knee():
    old, new = _times("2.26"), _times("2.28.9")
    assert _knee(old) == 8 * 32 * 128 * 1024 == 32 * MIB
    assert _knee(new) == 8 * 24 * 128 * 1024 == 24 * MIB
    below = SIZES <= 24 * MIB
    np.testing.assert_array_equal(old[below], new[below])
    steep, flat = np.diff(new)[0], np.diff(new)[-1]
    assert flat < steep
    beyond = SIZES >= 32 * MIB
    np.testing.assert_allclose(old[beyond] - new[beyond], 2 * (steep - flat), rtol=1e-9)
    assert np.all(old[~below] > new[~below])


def test_hopper_nvls_channels_do_not_move():
    h = "single-switch:n=8,gpu=H100-SXM"
    np.testing.assert_array_equal(_times("2.18", h), _times("2.30", h))


def test_blackwell_tree_cap_by_release():
    g = build("rail-optimized:domains=2,gpu=B200-HGX")
    bus = {}
    for release in ("2.27.3", "2.28"):
        m = FabricCostModel(g, calibration=default_calibration().with_(nccl_release=release))
        bus[release] = m.cost("all-reduce", 8 * 2 ** 30, 16, "tree").busbw
    cap_new = 8 * 42.8e9 / 2 * 2 * 15 / 16      # 321.0 GB/s
    cap_old = 8 * 2 * 41.4e9 / 2 * 2 * 15 / 16  # 621.0 GB/s
    assert 0.98 * cap_new < bus["2.28"] <= cap_new
    assert cap_new < bus["2.27.3"] <= cap_old


def test_send_recv_network_channels_by_release():
    # NCCL 2.29+: by NIC bandwidth (14 GB/s a channel); 2.20-2.28: halving with the ranks;
    # 2.19 and older: the fixed 2 (collective_defaults.toml [p2p])
    cal = default_calibration()
    at = {r: cal.with_(nccl_release=r).for_gpu("H100-SXM") for r in ("2.30", "2.28", "2.19")}
    assert (at["2.30"].p2p_net_channel_bandwidth, at["2.30"].p2p_net_channels) == (14e9, 16)
    assert (at["2.28"].p2p_net_channel_bandwidth, at["2.28"].p2p_net_channels) == (0.0, 16)
    assert (at["2.19"].p2p_net_channel_bandwidth, at["2.19"].p2p_net_channels) == (0.0, 0)


@pytest.mark.parametrize("bad, why", [
    ("2.31", r"nccl_release '2\.31' is not a release whose constants the data file holds: "
             r"NCCL 2\.17\.\.2\.30"),
    ("2.16.5", r"nccl_release '2\.16\.5' is not a release .*2\.17\.\.2\.30"),
    ("two", r"nccl_release must be an NCCL release MAJOR\.MINOR\[\.PATCH\].*got 'two'"),
    (2.28, r"nccl_release must be an NCCL release .*got 2\.28"),
])
def test_a_release_outside_the_file_is_refused(bad, why):
    with pytest.raises(UserError, match=why):
        default_calibration().with_(nccl_release=bad)


def test_a_calibration_without_releases_refuses_one():
    from netmodel.collectives.calibration import Calibration

    with pytest.raises(UserError, match=r"nccl_release '2\.28': this calibration holds no "
                                        r"constants by NCCL release"):
        Calibration.ideal().with_(nccl_release="2.28")


def test_setup_carries_the_release():
    s = collective_setup(B200_8, nccl_release="2.26.2")
    assert s.calibration.nccl_release == "2.26"
    assert s.describe()["calibration"]["nccl_release"] == "2.26"
    assert collective_setup(B200_8).describe()["calibration"]["nccl_release"] == "2.30"
    with pytest.raises(UserError, match=r"nccl_release '2\.99'"):
        collective_setup(B200_8, nccl_release="2.99")


def test_cli_option():
    runner = CliRunner()
    args = ["collective", "all-reduce", "--fabric", B200_8, "--group", "8", "--size",
            "28MiB", "--algorithm", "in-network"]
    base = runner.invoke(cli, args)
    old = runner.invoke(cli, [*args, "--nccl-release", "2.26"])
    assert base.exit_code == old.exit_code == 0
    # 28 MiB: past 2.28's 24 MiB slice, short of 2.26's 32 MiB (test above): the option
    # gives the library's cost under that release (128.2 us under 2.30 and 135.1 us under
    # 2.26 when written; h356: was a pin of both), and 2.26 is the slower
    from compute.units import format_time

    want = {}
    for release, out in (("2.30", base), ("2.26", old)):
        cal = default_calibration().with_(nccl_release=release)
        m = FabricCostModel(build(B200_8), calibration=cal)
        want[release] = m.cost("all-reduce", 28 * MIB, 8, "in-network").time
        assert f"time {format_time(want[release])} " in out.output, (release, out.output)
    assert want["2.26"] > want["2.30"] * (1 + 1e-3)
    assert format_time(want["2.26"]) != format_time(want["2.30"])
    for bad in ("2.31.2", "2.5", "x", ""):
        r = runner.invoke(cli, [*args, "--nccl-release", bad])
        assert r.exit_code == 2, (bad, r.output)
        lines = r.output.strip().splitlines()
        assert len(lines) == 1 and "--nccl-release" in lines[0], (bad, r.output)
        assert "Traceback" not in r.output


def test_generations_file_release_entries_are_checked(tmp_path):
    path = tmp_path / "gen.toml"
    path.write_text('default = "x"\n[generation.x]\n'
                    '[[generation.x.until]]\nrelease = "2.20"\nin_network_channels = 0\n')
    with pytest.raises(UserError, match=r"until\[0\]\.in_network_channels must be a whole "
                                        r"number in 1\.\.1024, got 0"):
        load_generations(path)
    path.write_text('default = "x"\n[generation.x]\n'
                    '[[generation.x.until]]\nrelease = "2.20"\nflagship_gpu = "A100-SXM-80GB"\n')
    with pytest.raises(UserError, match=r"flagship_gpu"):   # not a key of a release's values
        load_generations(path)
    path.write_text('default = "x"\n[release]\noldest = "2.30"\nnewest = "2.17"\n'
                    '[generation.x]\n')
    with pytest.raises(UserError, match=r"oldest '2\.30' is after newest '2\.17'"):
        load_releases(path)


def test_accuracy_rows_take_the_runs_release():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import accuracy_collectives as ac
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    assert ac.emulated("2.26.2")[0] == "2.26.2"
    assert ac.emulated("")[0] == "2.30"
    assert ac.emulated("2.31.2") == ("2.30", "NCCL 2.31.2, outside the data file's releases "
                                     "(2.17..2.30): 2.30's constants")
    curves = {c.key: c for c in ac.cited_curves()}
    assert curves["nvl72-1"].release == "2.26.2"
    ops = {c.key: c for c in ac.ops_curves()}
    assert ops["gb300-oci-a2a-1tray/all-to-all"].release == "2.28.7"
    assert curves["h100-2x8-roce"].release == "2.31.2" and curves["h100-2x8-ib"].release == ""
    # every stated release is quoted by its curve's source or note ('same': the curve
    # above's), as printed or as nccl-tests' nccl-library code (2.26.2: 22602)
    source = ""
    for c in [*curves.values(), *ops.values()]:
        source = source if c.source == "same" else c.source
        if c.release.startswith("<="):   # inferred, none stated: the data file says why
            assert c.key.startswith(("b200-8-sweep/", "b200-8-vultr")), c.key
        elif c.release:
            major, minor, *patch = (int(x) for x in c.release.split("."))
            code = f"nccl-library={major}{minor:02d}{(patch or [0])[0]:02d}"
            assert c.release in source + c.note or code in source + c.note, c.key
