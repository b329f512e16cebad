"""Hostile files, pass h244: the measurements CSV and engine profiles read by
``compute.profiles``. Each case failed on the code before its fix: a CSV cell left open at
the end of the file or text after a closing quote was read as if closed (the row fitted),
a quoted cell running onto a line that starts with ``#`` lost that line, a form feed or
U+2028 inside a cell split its row in two, and a GEMM curve whose intensities do not
increase was refused without naming the file."""

from __future__ import annotations

import math
import re

import pytest

from compute.config_files import parse_table
from compute.errors import UserError
from compute.measurements import read_measurements
from compute.outputs import atomic_write
from compute.profiles import read_profile
from tests.netmodel.cli_helpers import ROOT, one_line_error, run_cli

HEADER = "model,gpu,tp,batch,phase,prompt,context,latency_s,source"
ROW = "Llama-2-70B,H100-SXM,8,{batch},decode,,576,0.03,{source}"
GOOD = "\n".join([HEADER] + [ROW.format(batch=b, source="s") for b in (1, 32, 64)]) + "\n"


@pytest.mark.parametrize("tail,needle", [
    # a quote opened and never closed: the cell ran to the end of the file
    ('"abc\n', "m.csv: row 5 is not readable CSV: a quoted cell is not closed"),
    # text after the closing quote: read as 'xy'
    ('"x"y\n', "m.csv: row 5 is not readable CSV: ',' expected after '\"'"),
    # the cell's second line starts with '#': it was dropped as a comment, the cell 'multi'
    ('"multi\n# line"\n', "m.csv: row 5: source 'multi\\n# line' holds a control character"),
    # a blank line inside the cell was dropped too
    ('"multi\n\nline"\n', "m.csv: row 5: source 'multi\\n\\nline' holds a control character"),
    # str.splitlines broke the row at U+2028 and a form feed, which csv keeps in a cell
    ("a\u2028b\n", "m.csv: row 5: source 'a\\u2028b' holds a control character"),
    ("a\x0cb\n", "m.csv: row 5: source 'a\\x0cb' holds a control character"),
], ids=["unclosed", "after-quote", "hash-line", "blank-line", "u2028", "form-feed"])
def test_a_measurements_cell_is_read_as_csv_reads_it(tmp_path, tail, needle):
    f = tmp_path / "m.csv"
    f.write_text(GOOD + ROW.format(batch=2, source="") + tail)
    with pytest.raises(UserError) as e:
        read_measurements(f)
    assert needle in str(e.value) and "\n" not in str(e.value), str(e.value)
    out = tmp_path / "p.toml"
    one_line_error(run_cli(["calibrate", "--measurements", f, "-o", out, "--fit",
                            "layer_overhead_s"]), needle)
    assert not out.exists()


def test_quoted_cells_and_comments_still_read(tmp_path):
    # a quoted cell with a comma and a doubled quote, comments, blank lines, CRLF and a
    # lone CR: every row read, its source as typed
    f = tmp_path / "m.csv"
    rows = [ROW.format(batch=1, source='"a, ""b"""'), "# a comment, with a \" quote",
            "", ROW.format(batch=2, source="c")]
    f.write_text("# head\r\n" + HEADER + "\r\n" + "\r".join(rows) + "\n")
    ms = read_measurements(f)
    assert [(m.batch, m.source) for m in ms] == [(1, 'a, "b"'), (2, "c")]


def test_a_decreasing_gemm_curve_names_the_file(tmp_path):
    # before: "profile 'vllm-dgx-h100': gemm_efficiency intensities must increase", with
    # no word of which file
    text = (ROOT / "compute/data/profiles/vllm-dgx-h100.toml").read_text()
    text, n = re.subn(r"(\[parameters\.gemm_efficiency\][^\n]*\n)value = [^\n]*",
                      r"\1intensity = [10, 1]\nefficiency = [0.5, 0.6]", text)
    assert n == 1
    f = tmp_path / "curve.toml"
    f.write_text(text)
    with pytest.raises(UserError) as e:
        read_profile(f)
    assert str(e.value) == (f"{f}: [parameters.gemm_efficiency]: intensities must increase "
                            f"from point to point, got [10.0, 1.0]")
    one_line_error(run_cli(["infer", "--model", "Llama-3-70B", "--gpu", "H100-SXM", "--tp",
                            "8", "--batch", "8", "--profile", f]),
                   "curve.toml: [parameters.gemm_efficiency]: intensities must increase")


# -- a number past a float's range in a file is named as typed, not as the inf Python reads

@pytest.mark.parametrize("fmt,text,typed,place", [
    ("toml", "a = 1e400", "1e400", "line 1 (a)"),
    ("toml", "a = -1.5e400", "-1.5e400", "line 1 (a)"),
    ("toml", "[t]\nb = [1, 2e999]", "2e999", "line 2 ([t] b)"),
    ("json", '{"a": 1e400}', "1e400", 'line 1 ("a")'),
    ("json", '{"a": [-1E+400]}', "-1E+400", 'line 1 ("a")')])
def test_a_number_past_a_float_is_refused_as_typed(fmt, text, typed, place):
    # with its line and key since h502
    with pytest.raises(UserError) as e:
        parse_table(text, fmt, f"x.{fmt}")
    assert str(e.value) == (f"x.{fmt} holds the number {typed} at {place}, beyond the range "
                            f"of a float (at most about 1.8e308); give a number within it")


def test_inf_and_nan_written_as_such_stay_for_the_value_check():
    doc = parse_table("a = inf\nb = -inf\nc = nan\nd = 1e308\ne = 0e-400", "toml", "x.toml")
    assert doc["a"] == math.inf and doc["b"] == -math.inf and math.isnan(doc["c"])
    assert doc["d"] == 1e308 and doc["e"] == 0.0
    assert parse_table('{"a": Infinity, "b": 2.5}', "json", "x.json") == {"a": math.inf,
                                                                        "b": 2.5}


def test_files_name_1e400_as_typed(tmp_path):
    # before: 'p.toml: [parameters.gemm_efficiency]: value must be a number from 0.0001 to
    # 1, got inf', 'm.csv: row 5: latency_s must be ..., got inf': a value never typed
    text = (ROOT / "compute/data/profiles/vllm-dgx-h100.toml").read_text()
    text, n = re.subn(r"(\[parameters\.gemm_efficiency\][^\n]*\n)value = [^\n]*",
                      r"\1value = 1e400", text)
    assert n == 1
    at = text[:text.index("value = 1e400")].count("\n") + 1   # the shipped file's layout
    (tmp_path / "p.toml").write_text(text)
    line = one_line_error(run_cli(["infer", "--model", "Llama-3-70B", "--gpu", "H100-SXM",
                                   "--tp", "8", "--batch", "8", "--profile",
                                   tmp_path / "p.toml"]),
                          f"p.toml holds the number 1e400 at line {at} ([parameters.gemm_"
                          "efficiency] value), beyond the range of a float")
    assert "inf" not in line
    for column, cell, needle in (("latency_s", "0.03", "latency_s must be a number from "
                                  "1e-09 to 1,000,000 s, got '1e400'"),
                                 ("tp", "8", "tp must be a whole number from 1 to 1,000,000, "
                                  "got '-1e400'")):
        row = ROW.format(batch=2, source="s").split(",")
        row[HEADER.split(",").index(column)] = "1e400" if column == "latency_s" else "-1e400"
        assert cell in ROW.format(batch=2, source="s")
        (tmp_path / "m.csv").write_text(GOOD + ",".join(row) + "\n")
        with pytest.raises(UserError, match=re.escape(f"m.csv: row 5: {needle}")):
            read_measurements(tmp_path / "m.csv")


# -- an output path that is a symbolic link looping ------------------------------------------

@pytest.mark.parametrize("chain", [1, 2], ids=["a-to-a", "a-to-b-to-a"])
def test_an_output_file_that_is_a_looping_link_is_refused(tmp_path, chain):
    # before: os.path.exists said False, so the write replaced the link by a file (exit 0)
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    if chain == 1:
        a.symlink_to(a)
    else:
        a.symlink_to(b)
        b.symlink_to(a)
    want = f"profile file {str(a)!r} is a symbolic link that loops (it resolves to no file)"
    with pytest.raises(UserError, match=re.escape(want)):
        atomic_write(a, b"x", "profile file")
    assert a.is_symlink() and sorted(p.name for p in tmp_path.iterdir()) == \
        ["a.toml", "b.toml"][:chain]
    csv_path = tmp_path / "m.csv"
    csv_path.write_text(GOOD + ROW.format(batch=2, source="s") + "\n")
    one_line_error(run_cli(["calibrate", "--measurements", csv_path, "-o", a, "--fit",
                            "layer_overhead_s"]), want)
    assert a.is_symlink()
    png = tmp_path / "f.png"
    png.symlink_to(png)
    one_line_error(run_cli(["topology", "plot", "ring:n=4", "-o", png]),
                   f"figure {str(png)!r} is a symbolic link that loops")
    assert png.is_symlink()


def test_a_dangling_link_is_refused_and_kept(tmp_path):
    # a link to nothing (not a loop) was replaced by the file, the link lost and nothing
    # written where it pointed; now refused as every link is (test_output_symlink_h550)
    a = tmp_path / "a.toml"
    a.symlink_to(tmp_path / "nowhere.toml")
    with pytest.raises(UserError, match=r"a.toml' is a symbolic link \(to .*nowhere.toml'\)"):
        atomic_write(a, b"x", "profile file")
    assert a.is_symlink() and not (tmp_path / "nowhere.toml").exists()


# -- a measurement's errors after reading name its file and row ----------------------------

@pytest.mark.parametrize("swap,needle", [
    (("H100-SXM", "H100"), "m.csv: row 4: gpu: unknown GPU 'H100'; known: "),
    (("Llama-2-70B", "Nope"), "m.csv: row 4: model: unknown model 'Nope'; known: "),
    (("0.03", "30"), "m.csv: row 4 (Llama-2-70B TP 8 decode batch 64 context 576 on H100-SXM): "
                     "latency_s 30 s is"),
    ((",8,", ",3,"), "m.csv: row 4 (Llama-2-70B TP 3 decode batch 64 context 576 on H100-SXM): "
                     "TP degree 3 does not divide the 64 attention heads"),
], ids=["gpu", "model", "latency-in-ms", "tp"])
def test_a_row_the_fit_refuses_is_named_by_file_and_row(tmp_path, swap, needle):
    # before: "unknown GPU 'H100'; ..." / "unknown model 'Nope'" with no file or row, and
    # "measurement 3 (...)" for the file's row 4
    lines = GOOD.splitlines()
    lines[3] = lines[3].replace(*swap)
    f = tmp_path / "m.csv"
    f.write_text("\n".join(lines) + "\n")
    out = tmp_path / "p.toml"
    one_line_error(run_cli(["calibrate", "--measurements", f, "-o", out, "--fit",
                            "layer_overhead_s"]), needle)
    assert not out.exists()


@pytest.mark.parametrize("value", ['[["gemm_efficiency"]]', '[{a = 1}]',
                                   '["layer_overhead_s", "layer_overhead_s"]', "[]"],
                         ids=["list-in-list", "table-in-list", "twice", "empty"])
def test_a_fit_parameters_list_of_other_things_is_refused(tmp_path, value):
    # before: a list or table in the list raised TypeError (unhashable) through the command
    # line; a name twice and no name at all were read as given
    text = (ROOT / "compute/data/profiles/vllm-dgx-h100.toml").read_text()
    text, n = re.subn(r"(?m)^parameters = .*$", f"parameters = {value}", text)
    assert n == 1
    f = tmp_path / "p.toml"
    f.write_text(text)
    want = f"{f}: [fit]: parameters must be a list of 'attention_efficiency', "
    with pytest.raises(UserError, match=re.escape(want)):
        read_profile(f)
    one_line_error(run_cli(["infer", "--model", "Llama-3-70B", "--gpu", "H100-SXM", "--tp", "8",
                            "--batch", "8", "--profile", f]), want, "each at most once")
