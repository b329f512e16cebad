"""Hostile input, helper 233: a JSON file that gives one key twice in an object.

TOML refuses a key given twice ('Cannot overwrite a value'); Python's json keeps the last
value without a word, so a JSON profile, GPU file, model file, HuggingFace config.json or
fabric file read its second value and dropped the first: ``--profile p.json`` holding two
``"profile"`` tables ran with the second, exit 0. Every JSON reader now refuses it
(:func:`compute.config_files.unique_keys`), naming the file and the key.
"""

from __future__ import annotations

import pytest

from compute.config_files import parse_table
from compute.errors import UserError
from tests.netmodel.cli_helpers import one_line_error, run_cli


def test_parse_table_refuses_a_key_given_twice():
    with pytest.raises(UserError) as info:
        parse_table('{"gpu": {"X": {"tp": 2, "tp": 4}}}', "json", "g.json")
    assert str(info.value) == ("g.json is malformed JSON: key 'tp' is given twice in one "
                               "object; give each key once")


def test_the_same_key_in_two_objects_is_read():
    doc = parse_table('{"a": {"k": 1}, "b": {"k": 2}}', "json", "x.json")
    assert doc == {"a": {"k": 1}, "b": {"k": 2}}
    assert parse_table('[{"k": 1}, {"k": 1}]', "json", "x.json") == [{"k": 1}] * 2


@pytest.mark.parametrize("name, text, args, key", [
    ("p.json", '{"profile": {"name": "x"}, "parameters": {}, "profile": {"name": "y"}}',
     ["infer", "--model", "Llama-3-70B", "--gpu", "H100-SXM", "--tp", "8", "--batch", "4",
      "--profile", "p.json"], "profile"),
    ("g.json", '{"gpu": {"X": {"derive_from": "H100-SXM"}, "X": {"derive_from": "Lite"}}}',
     ["infer", "--model", "Llama-3-70B", "--gpu", "X", "--gpu-file", "g.json", "--tp", "8",
      "--batch", "4"], "X"),
    ("config.json", '{"hidden_size": 4096, "hidden_size": 8192}',
     ["infer", "--hf-config", "config.json", "--gpu", "H100-SXM", "--tp", "8", "--batch", "4"],
     "hidden_size"),
])
def test_the_cli_refuses_a_json_file_with_a_key_given_twice(tmp_path, name, text, args, key):
    (tmp_path / name).write_text(text)
    r = run_cli(args, cwd=tmp_path)
    assert one_line_error(r) == (f"error: {name} is malformed JSON: key {key!r} is given "
                                 f"twice in one object; give each key once")


HEADER = "model,gpu,tp,batch,phase,prompt,context,latency_s\n"
ROW = "Llama-2-70B,H100-SXM,8,1,decode,,576,0.0298\n"
NEEDS = "every measurement gives model, gpu, tp, batch, phase, latency_s"


@pytest.mark.parametrize("row, line", [
    (",H100-SXM,8,1,decode,,576,0.0298\n", "row 3: model is empty"),
    ("Llama-2-70B,H100-SXM,,1,decode,,576,0.0298\n", "row 3: tp is empty"),
    ("Llama-2-70B,H100-SXM,8,1,,,576,0.0298\n", "row 3: phase is empty"),
    ("Llama-2-70B,H100-SXM,8,1,decode,,576,\n", "row 3: latency_s is empty"),
    (",,,,,,,\n", "row 3: model, gpu, tp, batch, phase, latency_s are empty"),
])
def test_calibrate_names_an_empty_required_cell_as_empty(tmp_path, row, line):
    """An empty cell read as None and was named so: 'phase None is unknown', 'tp must be a
    whole number from 1 to 1,000,000, got None', 'model name None must be non-empty text'."""
    (tmp_path / "m.csv").write_text(HEADER + ROW + row)
    r = run_cli(["calibrate", "--measurements", "m.csv", "-o", "p.toml"], cwd=tmp_path)
    assert one_line_error(r) == f"error: m.csv: {line}; {NEEDS}"
    assert not (tmp_path / "p.toml").exists()


@pytest.mark.parametrize("text, shown", [("1MiB,1MiB", "1 MiB twice ('1MiB' and '1MiB')"),
                                         ("1MiB, 1048576", "1 MiB twice ('1MiB' and '1048576')"),
                                         ("1,2,1", "1 B twice ('1' and '1')")])
def test_a_size_listed_twice_is_refused(text, shown):
    """costs --sizes '1MiB,1MiB' printed every row twice, where --groups 8,8 and --ops
    all-reduce,all-reduce are refused."""
    from compute.units import parse_size_range

    with pytest.raises(UserError) as info:
        parse_size_range(text, "--sizes")
    assert str(info.value) == f"--sizes {text!r} names {shown}; give each size once"
    r = run_cli(["costs", "--fabric", "ring:n=8", "--sizes", text])
    assert one_line_error(r) == f"error: --sizes {text!r} names {shown}; give each size once"


def test_distinct_sizes_are_kept_in_order():
    from compute.units import parse_size_range

    assert parse_size_range("1MiB,1KiB,1000") == [2.0**20, 1024.0, 1000.0]
