"""Every number on the command line takes the ASCII digits 0-9 only: a fullwidth '１６' or an
Arabic-Indic '١٦' was read as 16 by click's int, Python's float() and ``\\d`` (one rule,
compute.validate.ascii_digits); refused in one line naming the option, the value and the
digits allowed, exit status 2."""

from __future__ import annotations

import pytest

from tests.netmodel.cli_helpers import measured_csv, one_line_error, run_cli

AR = "--fabric fat-tree --group 16 --size 64MiB"
INFER = "infer --model Llama-3-70B --gpu H100-SXM --tp 4 --batch 8"
AVAIL = "availability --scenario lite-flat --model Llama-3-70B --spares 8 -q --trials 10"

CASES = [
    # (command line with {d} where the odd digit goes, the option named, the value shown)
    (f"collective all-reduce {AR} --max-transfers {{d}}", "--max-transfers", "{d}"),
    (f"collective all-reduce {AR} --seed {{d}}", "--seed", "{d}"),
    ("collective all-reduce --fabric fat-tree --size 64MiB --group 1{d}", "--group", "1{d}"),
    ("collective all-reduce --fabric fat-tree:k={d} --group 16 --size 1MiB", "fat-tree: k",
     "{d}"),
    ("collective all-reduce --fabric fat-tree --group 16 --size 6{d}MiB", "size", "6{d}MiB"),
    ("topology compare fat-tree:k=4 --group {d}", "--group", "{d}"),
    (INFER.replace("--tp 4", "--tp {d}"), "--tp", "{d}"),
    (f"{INFER} --flops-efficiency 0.{{d}}", "--flops-efficiency", "0.{d}"),
    (f"{INFER} --mtp-tokens {{d}}", "--mtp-tokens", "{d}"),
    ("search --model Llama-3-70B --gpu H100-SXM --phase decode --ep 8 --expert-skew 1.{d}",
     "--expert-skew", "1.{d}"),
    ("yield --area 800 --sms 144/13{d}", "--sms", "144/13{d}"),
    (f"{AVAIL} --seed {{d}}", "--seed", "{d}"),
    (f"{AVAIL} --threshold 9{{d}}%", "--threshold", "9{d}%"),
    (f"{AVAIL} --cluster-gpus 1{{d}}", "--cluster-gpus", "1{d}"),
    (f"{AVAIL} --area-share 0.{{d}}", "--area-share", "0.{d}"),
    ("serve --scenario lite-flat --model Llama-3-70B --rate 1{d}", "--rate", "1{d}"),
    ("study lite-gpu --workers {d}", "--workers", "{d}"),
]


@pytest.mark.parametrize("digit", ["２", "٢"])
@pytest.mark.parametrize(("line", "option", "shown"), CASES)
def test_other_scripts_digits_refused(line, option, shown, digit):
    r = run_cli(line.format(d=digit).split())
    one_line_error(r, f"{option} '{shown.format(d=digit)}' has the digit '{digit}'",
                   "a number is written with the ASCII digits 0-9")


def test_calibrate_measurements_cell(tmp_path):
    path = measured_csv(tmp_path)
    text = path.read_text()
    path.write_text(text.replace("Llama-2-70B,H100-SXM,8,", "Llama-2-70B,H100-SXM,８,", 1))
    r = run_cli(["calibrate", "--measurements", path, "-o", tmp_path / "p.toml"])
    one_line_error(r, "tp '８' has the digit '８' (FULLWIDTH DIGIT EIGHT)")
    assert not (tmp_path / "p.toml").exists()   # nothing half-written


def test_ascii_digits_run():
    r = run_cli(f"collective all-reduce {AR} --max-transfers 2000000 --placement random --seed 2 --json".split())
    assert r.exit_code == 0, r.output
