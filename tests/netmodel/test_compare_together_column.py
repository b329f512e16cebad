"""compare --instances all: a row's tokens/s are then every instance's together (Llama-3-8B
decode on h100-dgx: 32 instances of TP 1 x batch 306 at TBT 23.00 ms, 32 x 306 / 23.00 ms
= 425,672), yet the column stayed headed 'tok/s/inst' (found by the walk-through, helper
183). The header now reads 'tok/s all' when every row counts all instances, and a line
names the rows that do when only some do."""

from __future__ import annotations

from importlib import resources

from netmodel import compare


def _hier_all(tmp_path):
    text = resources.files("netmodel").joinpath("data/scenarios/lite-hier.toml").read_text()
    path = tmp_path / "hier-all.toml"
    path.write_text(text.replace('calibration = "default"',
                                 'calibration = "default"\ninstances = "all"', 1)
                    .replace('name = "lite-hier"', 'name = "hier-all"', 1))
    return str(path)


def test_every_row_together_heads_the_column_tok_s_all():
    res = compare(["Llama-3-8B"], ["h100-dgx"], ["decode"], instances="all")
    row = res.rows[0]
    assert row.instances == 32 and (row.tp, row.batch) == (1, 306)
    assert abs(row.tokens_per_s - 32 * 306 / row.latency_s) < 1e-6
    lines = res.table().splitlines()
    assert "tok/s all" in lines[1] and "tok/s/inst" not in lines[1]
    assert lines[3] == "  tok/s all: every instance together (h100-dgx@H100-SXM 32)"


def test_some_rows_together_are_named(tmp_path):
    res = compare(["Llama-3-8B"], ["h100-dgx", _hier_all(tmp_path)], ["decode"])
    alone, together = res.rows
    assert alone.instances is None and together.instances == 32
    lines = res.table().splitlines()
    assert "tok/s/inst" in lines[1]
    assert lines[4] == ("  tok/s/inst of hier-all@Lite: its 32 instances together "
                        "(instances = all)")


def test_rows_alone_print_no_note():
    text = compare(["Llama-3-8B"], ["h100-dgx"], ["decode"]).table()
    assert "together" not in text and "tok/s/inst" in text.splitlines()[1]
