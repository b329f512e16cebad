"""Hostile round 26 (scripts/hostile_round26.py): names that print as a catalog's, engine
profiles in TOML's rarer forms, measurement CSVs of odd shapes, scenario files naming
themselves, sweep grids that explode, options that contradict, a non-UTF-8 locale, memory.

Found wrong, each checked here:

(a) A name of a Cyrillic, Greek or fullwidth letter, or a hyphen of another kind, in place
of a catalog one's was taken as a name of its own, and its figures printed as the catalog's:
a GPU file's half H100 named 'Н100-SXM' (a Cyrillic EN) ran as '1 x Н100-SXM', a model
file's 'Llаma-3-8B', a profile's 'vllm-dgx-h1О0' (a Cyrillic O for the zero), a workload's
'сoding', a scenario file's 'lite-оcs', a HuggingFace config's _name_or_path, ``calibrate -o
vllm-h1ОО-2024.toml`` and ``--name``; a case apart was refused (a scenario file of a shipped
name exactly is still taken, as an edited ``compare --show``). Now refused, saying the name
it prints as and the character (code point and Unicode name); typed where a name is looked
up (``--gpu``, ``--model``, ``--profile``, ``--scenario``, ``--workload``) the refusal asks
'did you mean ...?' (compute.errors.looks_like: NFKC, dashes, Cyrillic and Greek homoglyphs
from UTS #39, 0/O and 1/l/I).

(b) A measurements CSV's cell that is no number was refused without its range: 'latency_s
must be a number', 'tp must be a number (a whole number >= 1)', where '0' and '1e308' state
'from 1 to 1,000,000'. Now each states it.

(c) A ``note`` (the source where no source column is given) was checked as the source:
'source 'a\\nb' holds a control character', 'source must be text of at most 2,000
characters', naming a column the file lacks. Now ``note``.

(d) A cell past the csv module's limit was said in its words: 'field larger than field
limit (131072)'. Now 'a cell holds more than 131,072 characters, the most a cell holds'.

(e) ``--dense-mlp-tp 1`` of a dense model (infer, serve, compare) was refused without a
word of the flag ('Llama-3-8B has no dense MLP layers among MoE ones; a dense MLP TP degree
applies ...'); so was one without attention DP. Now the library names its parameter
(``dense_mlp_tp 1``), the command line its flag, and each says to leave it unset.

(f) A sweep with NETMODEL_MAX_SWEEP_POINTS and _SEARCHES raised past what the machine
holds (10**8 points a parameter) ended in MemoryError's traceback, exit 1. Now one line,
'out of memory', naming the settings raised, exit 2; without a raised limit exit 1 (the
machine's, as a disk that is full).

(g) Under ``LC_ALL=C`` without Python's UTF-8 mode, a name typed in UTF-8 (``calibrate -o
pé.toml``) was refused as 'holds a byte that is not UTF-8; give UTF-8 text', though its bytes are.
Now 'is UTF-8 text ('p\\xe9') that this locale's encoding (ascii) cannot read; run under a
UTF-8 locale (LC_ALL=C.UTF-8) or with PYTHONUTF8=1'; a byte that is not UTF-8 is refused
as before.

(h) ``yield --sms 132/144`` (the two swapped) was 'need 1 <= enabled <= physical', which of
the two typed is which unsaid. Now '... (PHYSICAL/ENABLED, e.g. 144/132 for an H100), got 144
enabled of 132 physical'.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from compute.errors import UserError, lookalike, looks_like
from compute.measurements import read_measurements
from tests.netmodel.cli_helpers import ROOT, one_line_error, run_cli

INFER = ["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "1", "--batch", "1"]
INFER70 = ["infer", "--model", "Llama-2-70B", "--gpu", "H100-SXM", "--tp", "8", "--batch", "4"]
SERVE = ["serve", "--scenario", "h100-dgx", "--model", "Llama-3-70B", "--max-batch", "8",
         "--tp-only"]
COMPARE = ["compare", "--models", "Llama-3-8B", "--max-batch", "8", "-q", "--no-plot",
           "--scenarios", "h100-dgx"]
SWEEP = ["sweep", "--scenarios", "h100-dgx", "-q", "--no-plot", "--models", "Llama-3-8B",
         "--max-batch", "8"]
GPU = '[gpu.Mine]\nderive_from = "H100-SXM"\nfraction = 0.5\nsource = "what-if"\n'
MODEL = ('[model.M]\nlayers = 32\nhidden = 4096\nheads = 32\nkv_heads = 8\nffn = 14336\n'
         'vocab = 128256\nsource = "what-if"\n')
PROFILE = (ROOT / "compute/data/profiles/vllm-dgx-h100.toml").read_text()
HEADER = "model,gpu,tp,batch,phase,prompt,context,latency_s\n"
ROWS = ["Llama-2-70B,H100-SXM,8,1,prefill,2048,,0.1368",
        "Llama-2-70B,H100-SXM,8,1,decode,,576,0.0298"]
MEASURED = HEADER + "\n".join(ROWS) + "\n"
SHIPPED_CSV = ROOT / "compute/data/vllm_h100_2024_measurements.csv"


def _written(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("name, file, text, argv, line", [
    ("g.toml", "GPU", GPU.replace("Mine", '"\u041d100-SXM"'), [*INFER[:4], "FILE", *INFER[5:]],
     "GPU name '\u041d100-SXM' prints as the catalog GPU 'H100-SXM' but is another name (it has "
     "'\u041d', U+041D CYRILLIC CAPITAL LETTER EN); give yours a name of its own"),
    ("g.toml", "GPU", GPU.replace("Mine", '"H100\u2010SXM"'), [*INFER[:4], "FILE", *INFER[5:]],
     "GPU name 'H100\u2010SXM' prints as the catalog GPU 'H100-SXM' but is another name (it has "
     "'\u2010', U+2010 HYPHEN); give yours a name of its own"),
    ("m.toml", "model", MODEL.replace("model.M", 'model."Ll\u0430ma-3-8B"'),
     ["infer", "--model", "FILE", *INFER[3:]],
     "model name 'Ll\u0430ma-3-8B' prints as the catalog model 'Llama-3-8B' but is another name "
     "(it has '\u0430', U+0430 CYRILLIC SMALL LETTER A); give yours a name of its own"),
    ("c.json", "HF config", '{"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": '
     '16, "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 8192, '
     '"vocab_size": 128256, "_name_or_path": "Ll\u0430ma-3-8B"}',
     ["infer", "--model", "FILE", *INFER[3:]],
     "model name 'Ll\u0430ma-3-8B' prints as the catalog model 'Llama-3-8B' but is another name "
     "(it has '\u0430', U+0430 CYRILLIC SMALL LETTER A); give yours a name of its own"),
    ("p.toml", "profile", PROFILE.replace('name = "vllm-dgx-h100"', 'name = "vllm-dgx-h1\u041e0"'),
     [*INFER70, "--profile", "FILE"],
     "[profile] name 'vllm-dgx-h1\u041e0' prints as the shipped profile 'vllm-dgx-h100' but is "
     "another name (it has '\u041e', U+041E CYRILLIC CAPITAL LETTER O); give yours a name of "
     "its own"),
    ("s.toml", "scenario", (ROOT / "netmodel/data/scenarios/lite-ocs.toml").read_text().replace(
        'name = "lite-ocs"', 'name = "lite-\u043ecs"'), [*COMPARE[:-1], "FILE"],
     "name 'lite-\u043ecs' prints as the shipped scenario 'lite-ocs' but is another name (it "
     "has '\u043e', U+043E CYRILLIC SMALL LETTER O); give yours a name of its own"),
    ("w.toml", "workload", 'name = "\u0441oding"\nprompt = 100\noutput = 10\n',
     [*SERVE, "--workload", "FILE"],
     "name '\u0441oding' prints as the shipped workload 'coding' but is another name (it has "
     "'\u0441', U+0441 CYRILLIC SMALL LETTER ES); give yours a name of its own"),
])
def test_a_file_of_a_name_that_prints_as_a_catalog_one_is_refused(tmp_path, name, file, text,
                                                                   argv, line):
    path = _written(tmp_path, name, text)
    got = one_line_error(run_cli([str(path) if a == "FILE" else a for a in argv]))
    assert got == f"error: {path}: {line}", got
    assert [p.name for p in tmp_path.iterdir()] == [name]


def test_a_name_of_other_scripts_that_prints_as_no_catalog_name_is_taken(tmp_path):
    path = _written(tmp_path, "g.toml", GPU.replace("Mine", '"\u0394\u03b5\u03bb\u03c4\u03b1"'))
    r = run_cli([*INFER[:4], path, *INFER[5:]])
    assert r.exit_code == 0 and "1 x \u0394\u03b5\u03bb\u03c4\u03b1" in r.output, r.output
    # an ASCII name is what it shows: 'H1OO' is not taken for 'H100'
    assert looks_like("H1OO-SXM", ["H100-SXM"]) is None
    assert looks_like("vllm-dgx-h1\u041e0", ["vllm-dgx-h100"]) == "vllm-dgx-h100"


def test_calibrate_refuses_a_name_that_prints_as_a_shipped_profile(tmp_path):
    line = one_line_error(run_cli(["calibrate", "--measurements", SHIPPED_CSV, "-o",
                                   "vllm-h1\u041e\u041e-2024.toml"], tmp_path))
    assert line == ("error: the profile's name 'vllm-h1\u041e\u041e-2024' (--out's file stem, "
                    "with no --name) prints as the shipped profile 'vllm-h100-2024' but is "
                    "another name (it has '\u041e', U+041E CYRILLIC CAPITAL LETTER O); give "
                    "yours a name of its own with --name")
    one_line_error(run_cli(["calibrate", "--measurements", SHIPPED_CSV, "-o", "x.toml",
                            "--name", "vllm-dgx-\u04bb100"], tmp_path),
                   "--name 'vllm-dgx-\u04bb100' prints as the shipped profile 'vllm-dgx-h100'",
                   "U+04BB CYRILLIC SMALL LETTER SHHA")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, typed, meant, odd", [
    ([*INFER[:4], "\u041d100-SXM", *INFER[5:]], "unknown GPU '\u041d100-SXM'", "H100-SXM",
     "'\u041d', U+041D CYRILLIC CAPITAL LETTER EN"),
    (["infer", "--model", "Ll\u0430ma-3-8B", *INFER[3:]], "unknown model 'Ll\u0430ma-3-8B'",
     "Llama-3-8B", "'\u0430', U+0430 CYRILLIC SMALL LETTER A"),
    ([*INFER70, "--profile", "vllm-dgx-h1\u041e0"], "unknown profile 'vllm-dgx-h1\u041e0'",
     "vllm-dgx-h100", "'\u041e', U+041E CYRILLIC CAPITAL LETTER O"),
    ([*INFER, "--scenario", "h100-dg\u0445"], "unknown scenario 'h100-dg\u0445'", "h100-dgx",
     "'\u0445', U+0445 CYRILLIC SMALL LETTER HA"),
    ([*SERVE, "--workload", "\u0441oding"], "unknown workload '\u0441oding'", "coding",
     "'\u0441', U+0441 CYRILLIC SMALL LETTER ES"),
])
def test_a_name_typed_in_lookalike_letters_is_asked_about(argv, typed, meant, odd):
    one_line_error(run_cli(argv), f"{typed}; did you mean {meant!r}? (it has {odd}); known: ")


def test_lookalike_keeps_its_dash_and_fullwidth_cases():
    assert lookalike("H100\u2011SXM", ["H100-SXM"]) == (
        "; did you mean 'H100-SXM'? (it has '\u2011', U+2011 NON-BREAKING HYPHEN)")
    assert lookalike("\uff28100-SXM", ["H100-SXM"]).startswith("; did you mean 'H100-SXM'?")
    assert lookalike("H100-SMX", ["H100-SXM"]) == ""


@pytest.mark.parametrize("cell, column, line", [
    ("0.1368", "136.8ms", "latency_s must be a number from 1e-09 to 1,000,000 s, got '136.8ms'"),
    (",8,1,prefill", ",eight,1,prefill",
     "tp must be a whole number from 1 to 1,000,000, got 'eight'"),
    ("2048", "2k", "prompt must be a whole number from 1 to 10,000,000, got '2k'"),
])
def test_a_csv_cell_that_is_no_number_is_told_its_range(tmp_path, cell, column, line):
    path = _written(tmp_path, "m.csv", MEASURED.replace(cell, column, 1))
    with pytest.raises(UserError) as exc:
        read_measurements(path)
    assert str(exc.value) == f"{path}: row 2: {line}"


def test_a_note_is_refused_as_a_note(tmp_path):
    two = _written(tmp_path, "a.csv", HEADER.replace("\n", ",note\n") + ROWS[0] + ',"a\nb"\n')
    with pytest.raises(UserError) as exc:
        read_measurements(two)
    assert str(exc.value).startswith(f"{two}: row 2: note 'a\\nb' holds a control character")
    long = _written(tmp_path, "b.csv", HEADER.replace("\n", ",note\n") + ROWS[0] + ","
                    + "n" * 3000 + "\n")
    with pytest.raises(UserError, match="b.csv: row 2: note must be text of at most 2,000 "
                                        "characters"):
        read_measurements(long)
    # a note within them stands for the source, as before
    ok = _written(tmp_path, "c.csv", HEADER.replace("\n", ",note\n") + ROWS[0] + ",mine\n")
    assert read_measurements(ok)[0].source == "mine"


def test_a_cell_past_the_csv_limit_is_said_in_characters(tmp_path):
    path = _written(tmp_path, "m.csv", HEADER.replace("\n", ",source\n") + ROWS[0] + ","
                    + "x" * 200_000 + "\n")
    with pytest.raises(UserError) as exc:
        read_measurements(path)
    assert str(exc.value) == (f"{path}: row 2 is not readable CSV: a cell holds more than "
                              f"131,072 characters, the most a cell holds (a source or note is "
                              f"at most 2,000)")


@pytest.mark.parametrize("edit", [
    lambda t: t.replace(",8,", ',"8",'),                 # quoted numbers
    lambda t: t.replace("\n", "\r\n"),                   # CRLF
    lambda t: t.replace(",", ", ", 7),                   # blanks after the header's commas
    lambda t: t.replace(",8,", ",8.0,"),                 # a whole number as a float
])
def test_csv_spellings_that_are_read(tmp_path, edit):
    ms = read_measurements(_written(tmp_path, "m.csv", edit(MEASURED)))
    assert [(m.tp, m.batch, m.latency_s) for m in ms] == [(8, 1, 0.1368), (8, 1, 0.0298)]


@pytest.mark.parametrize("argv", [INFER, SERVE, COMPARE])
def test_dense_mlp_tp_of_a_dense_model_names_the_flag(argv):
    model = "Llama-3-70B" if argv is SERVE else "Llama-3-8B"
    assert one_line_error(run_cli([*argv, "--dense-mlp-tp", "1"])) == (
        f"error: {model} has no dense MLP layers among MoE ones; a dense MLP TP degree "
        f"(--dense-mlp-tp 1) applies to MoE models with dense layers (DeepSeek-V3's first 3): "
        f"leave it unset")


def test_dense_mlp_tp_in_the_library_names_the_parameter():
    from compute.models import get_model
    from compute.parallel import Parallelism, dense_data_parallel, layout

    m = get_model("Llama-3-8B")
    c = [Parallelism(1)]
    with pytest.raises(UserError, match=r"\(dense_mlp_tp 1\) applies") as exc:
        dense_data_parallel(m, c, layout(m, c), 1)
    assert "--" not in str(exc.value)


def test_out_of_memory_with_limits_raised_is_one_line(monkeypatch, tmp_path):
    """The sweep's values made past the machine's memory (10**8 a parameter with both
    limits raised): MemoryError's traceback, exit 1. Simulated here: numpy's geomspace
    raises it."""
    import netmodel.study.sweep_params as sp

    def no_room(*a, **k):
        raise MemoryError

    monkeypatch.setattr(sp.np, "geomspace", no_room)
    argv = [*SWEEP, "--param", "adjust.hop_latency=0.1us:10us", "--points", "5", "--out", "o"]
    env = {"NETMODEL_MAX_SWEEP_POINTS": "100000000"}
    assert one_line_error(run_cli(argv, tmp_path, env=env)) == (
        "error: out of memory: the request is larger than this machine holds; "
        "NETMODEL_MAX_SWEEP_POINTS=100000000 let it past the limit that refuses it before its "
        "memory is spent: lower (or unset) it, or ask for less")
    for k in [k for k in os.environ if k.startswith("NETMODEL_MAX_")]:
        monkeypatch.delenv(k)
    r = run_cli(argv, tmp_path)
    assert r.exit_code == 1 and r.output.strip() == (
        "error: out of memory: the request is larger than this machine holds; ask for less, or "
        "run it where more memory is free"), r.output
    assert list(tmp_path.iterdir()) == []


def test_a_utf8_name_under_a_c_locale_is_told_the_locale(tmp_path):
    """Python without its UTF-8 mode under LC_ALL=C reads 'pé' as 'p\\udcc3\\udca9'."""
    (tmp_path / "m.csv").write_text(MEASURED)
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0",
           "PYTHONCOERCECLOCALE": "0"}
    p = subprocess.run([sys.executable, "-m", "netmodel", "calibrate", "--measurements",
                        "m.csv", "-o", "p\u00e9.toml", "--fit", "layer_overhead_s"],
                       cwd=tmp_path, env=env, capture_output=True, timeout=60)
    assert p.returncode == 2, p.stderr
    assert p.stderr.decode("utf-8", "replace").strip().endswith(
        "profile name 'p\\udcc3\\udca9' is UTF-8 text ('p\\xe9') that this locale's encoding "
        "(ascii) cannot read; run under a UTF-8 locale (LC_ALL=C.UTF-8) or with PYTHONUTF8=1")
    assert sorted(q.name for q in tmp_path.iterdir()) == ["m.csv"]


def test_a_byte_that_is_not_utf8_is_refused_as_before():
    from compute import validate

    with pytest.raises(UserError, match="holds a byte that is not UTF-8; give UTF-8 text"):
        validate.string("calibrate", "--engine", b"v\xff".decode("utf-8", "surrogateescape"))


@pytest.mark.parametrize("argv, words", [
    ([*SWEEP, "--param", "adjust.hop_latency=0.1us:10us", "--param",
      "adjust.latency_scale=1:2", "--points", "1000"],
     ("sweep: about 1,000,000 searches, over the limit of 20,000",
      "NETMODEL_MAX_SWEEP_SEARCHES")),
    ([*SWEEP, "--param", "adjust.hop_latency=0.1us:10us", "--points", "1000000000"],
     ("about 1,000,000,000 values, over the limit of 1,000",)),
    (["search", "--model", "Llama-3-70B", "--gpu", "H100-SXM", "--max-batch", "8", "--front",
      "--json"], ("give one of --front and --json",)),
    (["calibrate", "--measurements", SHIPPED_CSV, "-o", "/dev/full"],
     ("--out '/dev/full'", "not a regular file")),
    (["calibrate", "--measurements", "-", "-o", "p.toml"], ("--measurements '-'",
                                                            "does not exist")),
    ([*COMPARE, "--out", "/dev/full/x"], ("'/dev/full' is a file, not a folder",)),
])
def test_already_refused_in_one_line(tmp_path, argv, words):
    one_line_error(run_cli(argv, tmp_path), *words)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("edit, says", [
    (lambda t: t.replace("[profile]", "[[profile]]"), "[profile] must be a table of keys, got a "
                                                      "list of 1 item"),
    (lambda t: t.replace("value = 1.0\n", "value = 1979-05-27\n", 1),
     "value must be a number from 0.0001 to 1, got the date 1979-05-27"),
    (lambda t: t.replace('name = "vllm-dgx-h100"', "name = 2024-01-01T00:00:00Z"),
     "profile name the date and time 2024-01-01T00:00:00+00:00 must be non-empty text"),
])
def test_profiles_in_rarer_toml_forms_are_refused(tmp_path, edit, says):
    path = _written(tmp_path, "p.toml", edit(PROFILE))
    one_line_error(run_cli([*INFER70, "--profile", path]), says)


def test_sms_swapped_says_which_number_is_which():
    assert one_line_error(run_cli(["yield", "--area", "814", "--sms", "132/144"])) == (
        "error: --sms '132/144': need 1 <= enabled <= physical (PHYSICAL/ENABLED, e.g. 144/132 "
        "for an H100), got 144 enabled of 132 physical")
    assert run_cli(["yield", "--area", "814", "--sms", "144/132"]).exit_code == 0
