"""Hostile round 25 (scripts/hostile_round25.py): one option refused on either side of its
range states one range; a value just past a bound is not shown rounded onto it; saved
fabrics written and read back; serve's workload files in hostile encodings and values.

Found wrong, each checked here:

(a) A value below an option's range was told a weaker rule than one above it, the range
said only on one side: ``--batch 0`` 'must be a whole number >= 1' where ``--batch 2e9``
was told 'from 1 to 1,000,000,000'; ``--ttft 0`` 'a finite number > 0' where 601s was told
'outside the 1 us to 600 s'; availability's ``--horizon 0`` '> 0' (1 h to 100 y),
``--spares -1`` '>= 0' and ``-5%`` 'must be a whole number or a percentage' (0 to 32), ``--load-bandwidth 0`` '> 0' (1 MB/s to 1 PB/s),
``--detection``, ``--warmup`` and ``--repair-time`` -1 '>= 0' (0 to 100 y); cost's
``--clock 0`` '> 0' ([0.05, 1.5]); yield's ``--alpha 0`` '> 0' (0.01 to 100). Now each
refusal states the range.

(b) ``--flops-efficiency 0`` was 'a fraction in (0, 1]' and ``5e-5`` 'from 0.0001 to 1':
two ranges for one option, the first wrong (5e-5 lies in it). Now 'from 0.0001 to 1'.

(c) ``--nccl-buffsize`` had three: 0.5 'a message is at least 1 byte', 1e30 'at most 1
PiB' (a message's, not a buffer's 1 TiB) and 7 'in 8..1099511627776'. Now each 'a whole
number of bytes from 8 B to 1 TiB (1,099,511,627,776 B)'.

(d) A value just past a bound was shown rounded onto it: ``--ttft 600.001s is 600 s,
outside the 1 us to 600 s allowed``. Now ``is 600.001 s`` (as many digits as tell it from
the bound). ``--size`` said one bound a refusal: 0 '> 0', 0.5 'at least 1 byte', 2PiB 'at
most 1 PiB', 1.0000001PiB 'a whole number of bytes'. Now each 'a whole number of bytes from
1 B to 1 PiB'.

(e) ``topology compare FILE ... --gpu G`` was refused naming ``gpu`` (the library's
parameter), not the flag typed. Now ``--gpu 'G': ...``.

(f) yield's ``--wafer-price -1``, ``--defect-density -1``, ``--wafer-diameter 0`` and
``--critical-fraction -0.1`` were told '>= 0' or '> 0', where a value above was told the
bound (1e+07, 100 per cm^2, 1000 mm, 1). Now each refusal states both.

(g) ``topology export ring:n=8 -o ' f.json'`` wrote a file no command could read back:
every reader strips the path typed, so ``--fabric ' f.json'`` read 'f.json' ('fabric file
f.json does not exist'). An output path (file or folder) with a blank at either end is now
refused; one with a blank inside is written and read back as before.

(h) A whole number typed as help and messages write it, its thousands grouped
(``--max-transfers 20,000,000``, the help's default; ``--batch 1,024`` against 'from 1 to
1,000,000,000') was refused as 'not a whole number (a number is ASCII digits ...)' without
a word of the commas. Only --cluster-gpus reads them; the others now say to write the
number without them.

(i) search's ``--ep all,2`` was refused as ``--ep must be a whole number from 1 to
1,000,000,000, got 'all'``, though 'all' is what the help offers: it is taken alone. Now
the refusal says so.

(j) A group larger than a fabric of one GPU was 'larger than the fabric's 1 GPUs'. Now
'1 GPU' (compute.units.counted).

(k) A text file holding a NUL byte was refused by its parser's words, saying nothing of
it: a workload JSON saved as UTF-16 without its byte-order mark (valid UTF-8, a NUL after
each character) as 'malformed JSON: Expecting property name enclosed in double quotes',
'prompt = 100<NUL>' as 'malformed TOML: Expected newline or end of document after a
statement'. Now 'holds a NUL byte (\\x00) at line 1, column 2: not UTF-8 text (UTF-16
without its byte-order mark, or a binary file?)' (compute.config_files.read_text: every
TOML, JSON and CSV file but fabrics).

(l) ``--pp 0`` was told 'from 1 to 1,000,000,000' where the help says 'from 1 to the
model's layers' (and ``--pp 33`` of a 32-layer model 'allowed: 1 to 32'). Now 'must be a
whole number from 1 to the model's layers', the model read later.

(m) ``topology show single-switch:n=1 --pair gpu0 gpu1`` (a GPU the fabric lacks) and
``--pair gpu0 gpu0`` printed the analysis, exit 0, the pair dropped without a word, where a
larger fabric refuses both. Now refused: the fabric has only one GPU.

(n) ``costs -o`` of a 300-character name without a suffix raised ``OSError: File name too
long`` (a traceback, exit 1) from the suffix check's ``is_dir()``, before the output path's
own check, which says so in one line (found by hostile round 17 run again). Now that line.

(o) A fabric file's refusals named its path bare ('fabric file f.json does not exist')
where a workload, profile or measurement file's quote it ('workload file 'w.json' does not
exist'), so a name of digits or one with a blank read as part of the sentence. Now quoted
(topologies.io_guards.fabric_file).

(p) availability's ``--spares 1e400%`` (and ``nan%``) got the generic 'must be a whole
number or a percentage such as 2%', no range, where ``-5%`` and ``101%`` state it. Now
'1e400%' 'exceed the cluster's 32 GPUs' and 'nan%' the generic line, each with the range.

(q) ``sweep --param cost.*`` said a value below the range by the library's check ('pue must
be >= 1', 'lifetime must be a time above 0', 'must be a finite number >= 0') and one above by
the sweep's ('over 1,000,000 times its shipped default 1.1: ...; the most a sweep takes is
1.1e+06'). Now both 'is outside the range a sweep takes, from 1 to 1.1e+06 (at most
1,000,000 times its shipped default 1.1: no system is priced so)', the lowest (and a highest
below the million-fold bound, as alpha's 100) declared once (netmodel.study.cost.
parameter_range).

(r) infer's ``--ep 0`` was 'must be a whole number from 1 to 1,000,000,000' where ``--ep 3``
of ``--tp 8`` is told 'allowed: 1, 2, 4, 8 (the divisors of TP 8)'. Now 'from 1 to 8 that
divides --tp 8' (--tp is read first). ``--tp 0`` still states the parser's range: the TP
degrees a model takes turn on attention DP and expert parallelism, read later.
"""

from __future__ import annotations

import json
import os

import pytest

from tests.netmodel.cli_helpers import one_line_error, run_cli

INFER = ["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "1", "--batch", "1"]
AVAIL = ["availability", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "-q", "--no-plot",
         "--max-batch", "8", "--trials", "5"]
COLL = ["collective", "all-reduce", "--fabric", "ring:n=8", "--group", "8", "--size", "1MiB"]
SERVE = ["serve", "--scenario", "h100-dgx", "--model", "Llama-3-70B", "--max-batch", "64",
         "--tp-only"]


@pytest.mark.parametrize("argv, values, line", [
    (INFER[:-2], ("0", "2e9"), "error: --batch must be a whole number from 1 to 1,000,000,000, "
                                "got {v!r}"),
    ([*INFER, "--phase", "prefill"], ("0", "-1s"),
     "error: --ttft must be a time from 1 us to 600 s, got {v!r}"),
    (AVAIL, ("0", "-1y", "nan"), "error: --horizon must be a duration from 1 h to 100 y, "
                                 "got {v!r}"),
    (AVAIL, ("-1", "nan"), "error: --warmup must be a duration from 0 to 100 y, got {v!r}"),
    (["cost", "--scenario", "h100-dgx", "--model", "Llama-3-8B"], ("0", "-1"),
     "error: --clock must be a clock ratio in the modelled range [0.05, 1.5] x nominal, "
     "got {v!r}"),
    (["yield", "--area", "814"], ("0", "-1"),
     "error: --alpha must be a finite number >= 0.01 and <= 100, got {v!r}"),
    (INFER, ("0", "2e9"), "error: --pp must be a whole number from 1 to the model's layers, "
                          "got {v!r}"),
    (INFER, ("0", "5e-5", "1.1"), "error: --flops-efficiency must be a fraction from 0.0001 "
                                  "to 1, got {v!r}"),
    (["yield", "--area", "814"], ("-1", "nan"),
     "error: --wafer-price must be a finite number >= 0 and <= 1e+07, got {v!r}"),
    (["yield", "--area", "814"], ("-1",),
     "error: --defect-density must be a finite number from 0 to 100 per cm^2, got {v!r}"),
    (["yield", "--area", "814"], ("0", "-3mm"),
     "error: --wafer-diameter must be a finite number > 0 and at most 1000 mm, got {v!r}"),
])
def test_below_the_range_the_range_is_said(argv, values, line):
    flag = line.split()[1]
    for v in values:
        args = [*argv, "--batch", v] if flag == "--batch" else [*argv, flag, v]
        assert one_line_error(run_cli(args)) == line.format(v=v)


@pytest.mark.parametrize("argv, below, above, allowed", [
    ([*INFER, "--phase", "prefill", "--ttft"], "-1", "601s", "1 us to 600 s"),
    ([*AVAIL, "--horizon"], "0", "101y", "1 h to 100 y"),
    ([*AVAIL, "--spares"], "-1", "33", "allowed: 0 to 32 (100%), a pool as large as the cluster"),
    ([*AVAIL, "--spares"], "-5%", "101%", "allowed: 0 to 32 (100%), a pool as large as the "
                                          "cluster"),
    ([*AVAIL, "--spares"], "-1e400%", "1e400%", "allowed: 0 to 32 (100%), a pool as large as "
                                               "the cluster"),
    ([*AVAIL, "--spares"], "nan%", "inf%", "allowed: 0 to 32 (100%), a pool as large as the "
                                           "cluster"),
    ([*AVAIL, "--load-from", "storage", "--load-bandwidth"], "0.5MB/s", "2PB/s",
     "1 MB/s to 1 PB/s"),
    ([*COLL, "--nccl-buffsize"], "0.5", "1e30", "a whole number of bytes from 8 B to 1 TiB "
                                                "(1,099,511,627,776 B)"),
])
def test_below_and_above_state_one_range(argv, below, above, allowed):
    for v in (below, above):
        one_line_error(run_cli([*argv, v]), argv[-1], allowed)


def test_a_value_past_its_bound_is_not_shown_as_the_bound():
    line = one_line_error(run_cli([*INFER, "--phase", "prefill", "--ttft", "600.001s"]))
    assert line == ("error: --ttft 600.001s is 600.001 s, outside the 1 us to 600 s allowed "
                    "for a prefill SLO (TTFT, time to first token)")
    line = one_line_error(run_cli([*INFER, "--tbt", "0.99999us"]))
    assert line.startswith("error: --tbt 0.99999us is 0.99999 us, outside the 1 us to 10 s")
    # the edges themselves are taken
    assert run_cli([*INFER, "--phase", "prefill", "--ttft", "600s"]).exit_code == 0
    assert run_cli([*INFER, "--tbt", "1us"]).exit_code == 0
    for v in ("0", "0.5", "1.0000001PiB"):   # one range, each side
        one_line_error(run_cli([*COLL[:-1], v]), "--size", "a whole number of bytes from 1 B to 1 PiB")


def test_topology_compare_gpu_of_a_saved_file_names_the_flag(tmp_path):
    assert run_cli(["topology", "export", "ring:n=8", "-o", tmp_path / "f.json"]).exit_code == 0
    line = one_line_error(run_cli(["topology", "compare", tmp_path / "f.json", "ring:n=8",
                                   "--gpu", "A100-SXM-80GB"]))
    assert line.startswith("error: --gpu 'A100-SXM-80GB': gpu cannot re-type the saved fabric "
                           "file"), line


def test_a_fabric_written_and_read_back_is_the_same(tmp_path):
    """torus:dims=3x4 as JSON, that file as GraphML and back: every reading's analysis the
    spec's, the third file the first's bytes."""
    def show(ref):
        r = run_cli(["topology", "show", ref, "--json"], tmp_path)
        assert r.exit_code == 0, r.output
        doc = json.loads(r.output)
        return {k: v for k, v in doc.items() if k not in ("name", "spec", "source", "file")}

    spec = "torus:dims=3x4"
    for src, out in ((spec, "a.json"), ("a.json", "b.graphml"), ("b.graphml", "c.json")):
        assert run_cli(["topology", "export", src, "-o", out], tmp_path).exit_code == 0
        assert show(out) == show(spec)
    assert (tmp_path / "c.json").read_bytes() == (tmp_path / "a.json").read_bytes()


@pytest.mark.parametrize("name, content, says", [
    ("w.json", '{"prompt": 100, "output": 10, "prompt": 200}', "'prompt' is given twice"),
    ("w.json", '{"prompt": 100, "output": 10, "rate": 1e400}', "beyond the range of a float"),
    ("w.json", json.dumps({"prompt": 100, "output": 10}).encode("utf-16"),
     "is not a UTF-8 text file"),
    ("w.toml", f"prompt = {10**400}\noutput = 10\n", "got an integer of 401 digits"),
    ("w.toml", "prompt = 100\noutput = 10\n" + "x = " + "[" * 1000 + "]" * 1000 + "\n",
     "nests deeper than 32 levels"),
    ("w.toml", None, "is not a regular file (a FIFO, device or socket)"),
    ("w.json", json.dumps({"prompt": 100, "output": 10}).encode("utf-16-le"),
     "holds a NUL byte (\\x00) at line 1, column 2: not UTF-8 text (UTF-16 without its "
     "byte-order mark, or a binary file?); save it as UTF-8"),
])
def test_hostile_workload_files_are_refused_in_one_line(tmp_path, name, content, says):
    path = tmp_path / name
    if content is None:
        os.mkfifo(path)   # read without blocking: refused, never opened for a read that waits
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    one_line_error(run_cli([*SERVE, "--workload", path]), name, says)
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


@pytest.mark.parametrize("argv, flag, path", [
    (["topology", "export", "ring:n=8"], "-o", " f.json"),
    (["topology", "export", "ring:n=8"], "-o", "f.json "),
    (["compare", "--models", "Llama-3-8B", "--scenarios", "h100-dgx", "-q"], "--out", " o"),
])
def test_an_output_with_a_blank_at_either_end_is_refused(tmp_path, argv, flag, path):
    name = "--output" if flag == "-o" else flag
    what = "output folder" if flag == "--out" else "output file"
    line = one_line_error(run_cli([*argv, flag, path], tmp_path))
    assert line == (f"error: {name} {path!r}: {what} {path!r} starts or ends with a blank, "
                    f"which the commands that read files drop: give the path without it")
    assert list(tmp_path.iterdir()) == []
    # a blank inside is kept, and read back
    assert run_cli(["topology", "export", "ring:n=8", "-o", "a b.json"], tmp_path).exit_code == 0
    assert run_cli(["topology", "show", "a b.json"], tmp_path).exit_code == 0


def test_a_number_with_its_thousands_grouped_is_told_to_drop_the_commas():
    line = one_line_error(run_cli([*COLL, "--max-transfers", "20,000,000"]))
    assert line.startswith("error: Invalid value for '--max-transfers': '20,000,000' groups its "
                           "thousands with commas; write it without them: 20000000"), line
    assert one_line_error(run_cli([*INFER[:-2], "--batch", "1,024"])) == (
        "error: --batch must be a whole number from 1 to 1,000,000,000, got '1,024' (write it "
        "without commas: 1024)")
    # a list is no grouped number: refused as before
    assert one_line_error(run_cli([*INFER[:-2], "--batch", "2,4"])).endswith("got '2,4'")


def test_a_fabric_of_one_gpu_is_said_as_one():
    assert one_line_error(run_cli([*COLL[:3], "single-switch:n=1", "--group", "2"])) == (
        "error: --group '2': group size 2 is larger than the fabric's 1 GPU")
    one_line_error(run_cli([*COLL[:3], "ring:n=8", "--group", "9"]),
                   "larger than the fabric's 8 GPUs")


def test_all_in_a_list_of_degrees_is_told_to_stand_alone():
    argv = ["search", "--model", "Mixtral-8x7B", "--gpu", "H100-SXM", "--max-batch", "8",
            "--tp", "8"]
    assert one_line_error(run_cli([*argv, "--ep", "all,2"])) == (
        "error: --ep 'all,2' names 'all' in a list; give 'all' alone (every divisor) or whole "
        "numbers, e.g. 1,2,4")


def test_a_pair_on_a_fabric_of_one_gpu_is_refused_not_dropped():
    for a, b in (("gpu0", "gpu1"), ("gpu0", "gpu0")):
        assert one_line_error(run_cli(["topology", "show", "single-switch:n=1", "--pair", a,
                                       b])) == (
            f"error: --pair '{a} {b}': path diversity joins two different GPUs; the fabric "
            f"has only one ('gpu0')")


def test_an_output_name_past_the_file_system_limit_is_one_line(tmp_path):
    """costs -o of a 300-character name (no suffix) raised OSError: File name too long, a
    traceback, from the suffix check's is_dir() (found by hostile round 17 run again)."""
    for argv in (["costs", "--fabric", "ring:n=8", "-o", "x" * 300],
                 ["topology", "export", "ring:n=8", "--format", "json", "-o", "x" * 300]):
        one_line_error(run_cli(argv, tmp_path), "--output", "File name too long (at most 255 "
                                                          "bytes a name")
    assert list(tmp_path.iterdir()) == []


def test_a_fabric_files_path_is_quoted_as_other_files_are(tmp_path):
    (tmp_path / "d.json").mkdir()
    for ref, says in (("f.json", "does not exist"), ("1 2.json", "does not exist"),
                      ("d.json", "is not a file")):
        assert one_line_error(run_cli([*COLL[:2], "--fabric", ref, *COLL[4:]], tmp_path)) == (
            f"error: fabric file {ref!r} {says}")
    assert one_line_error(run_cli([*SERVE, "--workload", "w.json"], tmp_path)) == (
        "error: --workload 'w.json': workload file 'w.json' does not exist")


def test_spares_of_an_infinite_share_is_said_past_the_range():
    assert one_line_error(run_cli([*AVAIL, "--spares", "1e400%"])) == (
        "error: --spares '1e400%' exceed the cluster's 32 GPUs; allowed: 0 to 32 (100%), a pool "
        "as large as the cluster")


@pytest.mark.parametrize("name, below, above, allowed", [
    ("pue", "0.5", "1e9", "from 1 to 1.1e+06 (at most 1,000,000 times its shipped default 1.1: "
                          "no system is priced so)"),
    ("lifetime", "0y", "1e7y", "above 0 up to 5e+06year (at most 1,000,000 times its shipped "
                               "default 5year: no system is priced so)"),
    ("alpha", "0", "101", "from 0.01 to 100"),
    ("utilization", "-1%", "101%", "from 0 to 1"),
    ("electricity_price", "-1USD/kWh", "1e9USD/kWh", "from 0 to 82600USD/kWh (at most "
                                                     "1,000,000 times its shipped default "
                                                     "0.0826USD/kWh: no system is priced so)"),
])
def test_a_swept_cost_states_one_range_below_and_above(name, below, above, allowed):
    for v in (below, above):
        assert one_line_error(run_cli(["sweep", "--scenarios", "h100-dgx", "--param",
                                       f"cost.{name}={v}"])) == (
            f"error: --param 'cost.{name}={v}': cost.{name} value {v!r} is outside the range a "
            f"sweep takes, {allowed}")


def test_infer_ep_below_and_above_states_the_divisors_of_tp():
    argv = ["infer", "--model", "Mixtral-8x7B", "--gpu", "H100-SXM", "--batch", "1", "--tp", "8",
            "--ep"]
    for v in ("0", "2e9"):
        assert one_line_error(run_cli([*argv, v])) == (
            f"error: --ep must be a whole number from 1 to 8 that divides --tp 8, got {v!r}")
    one_line_error(run_cli([*argv, "16"]), "allowed: 1, 2, 4, 8 (the divisors of TP 8)")
