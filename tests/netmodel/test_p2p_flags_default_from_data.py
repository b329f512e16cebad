"""A calibration file that leaves a ``[p2p]`` rule out takes the shipped defaults' value,
not one the code held of its own: ``ll_per_channel`` defaulted to false in the reader (NCCL
2.28's send/recv LL rule) while the shipped ``collective_defaults.toml`` sets true (2.29 and
later, the default release 2.30), so a copy of the shipped file without the line costed
LL send/recv up to 32x the shipped model's size (4 MiB, not 128 KiB, for 8 H100-SXM)."""

from __future__ import annotations

from dataclasses import fields

from netmodel.collectives.calibration import DEFAULTS_PATH, GENERATIONS_PATH, Calibration
from netmodel.collectives.calibration_files import (
    default_calibration,
    load_calibration,
    shipped_p2p_flags,
)
from netmodel.collectives.protocol_lines import p2p_size_range


def test_the_shipped_rules_are_the_data_files():
    text = DEFAULTS_PATH.read_text()
    assert "\nll_per_channel = true\n" in text and "\npxn = true\n" in text
    assert "\nnet_ll_buffers = false\n" in text
    assert shipped_p2p_flags() == {"pxn": True, "net_ll_buffers": False,
                                   "ll_per_channel": True}


def test_the_calibrations_own_defaults_are_the_shipped_rules():
    defaults = {f.name: f.default for f in fields(Calibration)}
    assert {"pxn": defaults["pxn"], "net_ll_buffers": defaults["p2p_net_ll_buffers"],
            "ll_per_channel": defaults["p2p_ll_per_channel"]} == shipped_p2p_flags()


def test_a_file_without_the_rule_takes_the_shipped_one(tmp_path):
    f = tmp_path / "cal.toml"
    text = DEFAULTS_PATH.read_text()
    f.write_text(text.replace("\nll_per_channel = true\n", "\n"))
    cal = load_calibration(f, GENERATIONS_PATH)
    assert cal.p2p_ll_per_channel is True
    h100 = cal.for_gpu("H100-SXM")
    # 8 peers x one 16 KiB threshold (2.29's rule), as the shipped model; 2.28's: x 32
    assert p2p_size_range("LL", "all-to-all", 8, False, [450e9], h100) == (0.0, 131072.0)
    assert p2p_size_range("LL", "all-to-all", 8, False, [450e9],
                          default_calibration().for_gpu("H100-SXM")) == (0.0, 131072.0)
    # the release table still gives 2.28 its rule
    old = cal.with_(nccl_release="2.28").for_gpu("H100-SXM")
    assert old.p2p_ll_per_channel is False
    assert p2p_size_range("LL", "all-to-all", 8, False, [450e9], old) == (0.0, 4194304.0)
