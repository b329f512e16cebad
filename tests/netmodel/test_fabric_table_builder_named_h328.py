"""A scenario file whose [fabric] builder is misspelt is refused naming what was written
(h328): ``builder = "rail-optimised"`` said only "needs 'builder' naming a fabric builder;
known: ...", so the reader could not tell a typo from a missing key. A missing builder
keeps the message without a 'got'."""

from __future__ import annotations

import pytest

from tests.netmodel.cli_helpers import one_line_error, run_cli

BUILDER = 'builder = "rail-optimized"'


def _scenario(tmp_path, builder_line: str):
    r = run_cli(["compare", "--show", "h100-dgx"])
    assert r.exit_code == 0 and BUILDER in r.output, r.output
    path = tmp_path / "mine.toml"
    path.write_text(r.output.replace(BUILDER, builder_line))
    return path


@pytest.mark.parametrize("written,shown", [
    ('builder = "rail-optimised"', "got 'rail-optimised'"),
    # 'Rail_Optimized' builds, read as a spec string reads it (test_builder_name_everywhere)
    ('builder = "Rail Optimized"', "got 'Rail Optimized'"),
    ("builder = 7", "got 7"),
])
def test_a_misspelt_builder_is_named(tmp_path, written, shown):
    path = _scenario(tmp_path, written)
    one_line_error(run_cli(["compare", "--scenarios", path, "--models", "Llama-3-8B",
                            "--phases", "decode"], cwd=tmp_path),
                   f"[fabric] needs 'builder' naming a fabric builder, {shown}; known: "
                   "'fat-tree', 'flat'", "'rail-optimized'")


def test_a_missing_builder_says_so_without_a_value(tmp_path):
    path = _scenario(tmp_path, "")
    line = one_line_error(run_cli(["topology", "show", path], cwd=tmp_path),
                          "[fabric] needs 'builder' naming a fabric builder; known: ")
    assert "got" not in line, line
