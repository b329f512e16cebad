"""Hostile input, round 11 (h380), through the command line: one line naming the value and
what is allowed, exit status 2, no traceback, nothing written."""

from __future__ import annotations

from compute.profiles import _shipped
from tests.netmodel.cli_helpers import one_line_error, run_cli

BELOW = "below the smallest number netmodel reads (2.225e-308); write 0 for zero"


def test_a_profile_value_below_the_smallest_is_one_line(tmp_path):
    """Before: infer ran with layer_overhead_s = 1e-400 read as no overhead, exit 0."""
    text = (_shipped() / "vllm-dgx-h100.toml").read_text()
    old = "value = 0.0002675556089174325"
    assert old in text
    path = tmp_path / "p.toml"
    path.write_text(text.replace(old, "value = 1e-400", 1))
    r = run_cli(["infer", "--model", "Llama-2-70B", "--gpu", "H100-SXM", "--tp", "8",
                 "--batch", "4", "--profile", path])
    assert one_line_error(r) == f"error: {path} holds the number 1e-400, {BELOW}"
