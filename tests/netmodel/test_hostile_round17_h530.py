"""The command-line defects scripts/hostile_round17.py found (every option of every command
given NaN, inf, negative, zero, 1e308, empty, unicode, long strings, bad paths and broken
files), each as the line it now gets, and the script's own reach: every command of the
registry has a base it runs on, so a command added later is attacked too.

Before: a path holding a NUL byte given to a file option (``--measurements``,
``--gpu-file``, ``--model-file``, ``--hf-config``) raised ValueError (exit 1, a
traceback); ``--profile`` or calibrate's ``--base`` of 300 characters raised OSError (file
name too long); ``costs --max-rows`` took the fullwidth digit '８' as 8; calibrate's
``--fit nan`` and ``--base`` named no flag; ``--algorithms`` of a name with a character its
repr escapes was blamed on ``--algorithm 'auto'``; an empty ``--plot`` or ``-o`` said only
'figure must not be empty'; ``cost --phase '  '`` said 'unknown phase ''' with no flag;
``costs --groups 0`` and ``--groups 1e308`` named no flag; ``yield --alpha 1e308`` said
'alpha must be ...' without its flag; an argument ``-inf`` was 'No such option '-i''.
"""

from __future__ import annotations

import importlib.util
import sys

import click
import pytest

from netmodel.cli.main import cli
from tests.netmodel.cli_helpers import ROOT, one_line_error, run_cli

COLL = ["collective", "all-reduce", "--fabric", "ring:n=8", "--group", "8", "--size", "1MiB"]
COSTS = ["costs", "--fabric", "ring:n=8", "--sizes", "1MiB", "--groups", "8"]
INFER = ["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "1", "--batch", "1"]
NUL = "a\x00b"


@pytest.mark.parametrize("args, flag", [
    (["calibrate", "--measurements", NUL, "-o", "x.toml"], "--measurements"),
    (["hardware", "--gpu-file", NUL], "--gpu-file"),
    (["models", "--model-file", NUL], "--model-file"),
    (["models", "--hf-config", NUL], "--hf-config"),
    ([*INFER[:5], "--gpu-file", NUL, *INFER[5:]], "--gpu-file"),
])
def test_a_file_path_with_a_nul_byte_is_one_line(args, flag, tmp_path):
    line = one_line_error(run_cli(args, cwd=tmp_path))
    assert line.startswith(f"error: Invalid value for '{flag}': 'a\\x00b' holds a NUL byte, "
                           "which no file name holds")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("option", ["--profile"])
def test_a_profile_name_over_the_file_system_limit_is_unknown(option):
    line = one_line_error(run_cli([*INFER, option, "x" * 300]))
    assert line.startswith(f"error: {option} 'xxx") and "unknown profile 'xxx" in line
    assert line.endswith("known: 'vllm-dgx-h100', 'vllm-h100-2024' (or a path to a .toml profile)")


def _measurements(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("model,gpu,tp,batch,phase,prompt,context,latency_s\n"
                    "Llama-2-70B,H100-SXM,8,1,prefill,2048,,0.1368\n"
                    "Llama-2-70B,H100-SXM,8,4,prefill,512,,0.1326\n"
                    "Llama-2-70B,H100-SXM,8,1,decode,,576,0.0298\n"
                    "Llama-2-70B,H100-SXM,8,32,decode,,576,0.0386\n")
    return path


@pytest.mark.parametrize("extra, start", [
    (["--base", "9" * 1000], "error: --base '9999"),
    (["--base", "nope"], "error: --base 'nope': unknown profile 'nope'; known: "),
    (["--fit", "nan"], "error: --fit 'nan': unknown profile parameter(s) nan; known: "),
])
def test_calibrate_names_base_and_fit(extra, start, tmp_path):
    m = _measurements(tmp_path)
    line = one_line_error(run_cli(["calibrate", "--measurements", m, "-o",
                                   tmp_path / "out.toml", *extra]))
    assert line.startswith(start)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.csv"]   # nothing written


def test_a_measurements_csv_with_a_byte_order_mark_fits_the_same_profile(tmp_path):
    plain = _measurements(tmp_path)
    marked = tmp_path / "bom.csv"
    marked.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    out = []
    for m in (plain, marked):
        r = run_cli(["calibrate", "--measurements", m, "-o", tmp_path / "p.toml", "--name",
                     "p"])
        assert r.exit_code == 0, r.output
        out.append((tmp_path / "p.toml").read_text())
    assert out[0] == out[1] and 'name = "p"' in out[0]


def test_max_rows_takes_ascii_digits_only():
    line = one_line_error(run_cli([*COSTS, "--max-rows", "\uff18"]))
    assert line == ("error: --max-rows '\uff18' has the digit '\uff18' (FULLWIDTH DIGIT EIGHT); a "
                    "number is written with the ASCII digits 0-9")


@pytest.mark.parametrize("name, said", [("\u00e9\u202e", "\u00e9\\u202e"),
                                        ("1\x002", "1\\x002")])
def test_an_unknown_algorithm_of_the_list_is_the_lists(name, said):
    line = one_line_error(run_cli([*COLL, "--algorithms", f"ring,{name}"]))
    assert line.startswith(f"error: --algorithms 'ring,{said}': unknown algorithm '{said}'; "
                           "known: ")
    # --algorithm's own is still its own
    line = one_line_error(run_cli([*COLL, "--algorithm", name]))
    assert line.startswith(f"error: --algorithm '{said}': unknown algorithm '{said}'")


@pytest.mark.parametrize("args, line", [
    ([*COLL, "--plot", ""], "error: --plot '': figure must not be empty"),
    ([*COSTS, "--plot", ""], "error: --plot '': figure must not be empty"),
    ([*COSTS, "-o", ""], "error: --output '': output file must not be empty"),
    ([*COSTS, "--format", "vidur", "-o", ""],
     "error: --output '': output folder must not be empty"),
    (["topology", "export", "ring:n=4", "-o", ""],
     "error: --output '': output file must not be empty"),
    (["topology", "plot", "ring:n=4", "-o", ""], "error: --output '': figure must not be empty"),
    (["topology", "export", "ring:n=4", "-o", "nan"],
     "error: --output 'nan': unknown fabric file type '(none)'; allowed: .json, .graphml, "
     ".yml (or give --format)"),
    (["cost", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--phase", "  "],
     "error: --phase '  ': unknown phase ''; known: 'decode', 'prefill' or 'both'"),
    ([*COSTS[:-1], "0"],
     "error: --groups '0': group sizes must be whole numbers of GPUs >= 2, got 0"),
    ([*COSTS[:-1], "4,1"],
     "error: --groups '4,1': group sizes must be whole numbers of GPUs >= 2, got 1"),
    (["yield", "--gpu", "H100-SXM", "--alpha", "1e308"],
     "error: --alpha '1e308': alpha must be a finite number >= 0.01 and <= 100, got 1e+308"),
    (["yield", "--area", "814", "--alpha", "0.001"],
     "error: --alpha '0.001': alpha must be a finite number >= 0.01 and <= 100, got 0.001"),
    (["topology", "show", "-inf"],
     "error: No such option '-i' (of '-inf', read as options: give a value that starts with "
     "'-' after '--', e.g. -- -inf) (see 'netmodel topology show --help')"),
])
def test_each_refusal_names_its_flag(args, line, tmp_path):
    assert one_line_error(run_cli(args, cwd=tmp_path)) == line
    assert list(tmp_path.iterdir()) == []


def test_a_group_over_the_fabric_names_groups():
    line = one_line_error(run_cli([*COSTS[:-1], "1e308"]))
    assert line.startswith("error: --groups '1e308': group size 1000") and \
        line.endswith("is larger than the fabric's 8 GPUs")


def test_a_value_after_double_dash_is_an_argument():
    line = one_line_error(run_cli(["topology", "show", "--", "-inf"]))
    assert line.startswith("error: unknown fabric '-inf': neither a fabric builder")


def test_an_unknown_short_option_alone_is_said_as_before():
    assert one_line_error(run_cli(["infer", "-x"])) == \
        "error: No such option '-x' (see 'netmodel infer --help')"


# ------------------------------------------------------------------ the script's reach

@pytest.fixture(scope="module")
def round17():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        spec = importlib.util.spec_from_file_location("hostile_round17",
                                                      ROOT / "scripts/hostile_round17.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(ROOT / "scripts"))


def test_every_command_has_a_base_and_every_option_is_attacked(round17):
    cases = list(round17.cases())
    assert not [c[0] for c in cases if "no base" in c[0]]
    names = {c[0] for c in cases}
    for path, command in round17.commands():
        for p in command.params:
            if isinstance(p, click.Option) and (p.is_flag or p.name == "help"):
                continue
            label = p.opts[0] if isinstance(p, click.Option) else p.name.upper()
            for what in (*round17.VALUES, *round17.PLACES, *round17.FILES):
                assert f"{path} {label} {what}" in names


@pytest.mark.parametrize("path", ["sweep", "topology plot", "calibrate"])
def test_each_base_runs(round17, path, tmp_path):
    (tmp_path / "m.csv").write_text(round17.CSV)
    args = [a.replace("{d}", str(tmp_path)) for a in [*path.split(), *round17.BASE[path]]]
    r = run_cli(args, cwd=tmp_path)
    assert r.exit_code == 0, r.output


def test_takes_lists_values_with_reasons(round17):
    assert round17.takes("availability", "--seed", "zero")
    assert not round17.takes("availability", "--seed", "negative")
    assert round17.takes("sweep", "--out", "nan") and not round17.takes("sweep", "--out",
                                                                        "missing parent")
    assert all(why for *_, why in round17.TAKES)
    assert {c for cs, *_ in round17.TAKES for c in cs} <= {"*", *round17.BASE}
    assert isinstance(cli, click.Group)
