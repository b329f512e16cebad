"""Hostile round 12 on the command line (h401): an output file named by its suffix alone
(``-o .csv``, ``--plot .png``) was refused as "'.csv' must end in one of: .csv", words that
contradict themselves (to the file system '.csv' is a hidden file with no suffix). Now the
line says the name is a suffix alone and gives an example; nothing is written."""

from __future__ import annotations

import pytest

from tests.netmodel.cli_helpers import one_line_error, run_cli


@pytest.mark.parametrize("args, line", [
    # before: "output file '.csv' must end in one of: .csv" (it does: to the file system
    # '.csv' is a hidden file without a suffix)
    (["costs", "--fabric", "flat", "-o", ".csv"],
     "error: --output '.csv': output file '.csv' is a suffix alone: give a name before it, "
     "e.g. 'file.csv'"),
    (["costs", "--fabric", "flat", "--format", "json", "-o", "sub/.JSON"],
     "error: --output 'sub/.JSON': output file 'sub/.JSON' is a suffix alone: give a name "
     "before it, e.g. 'sub/file.json'"),
    # before: "figure '.png' must end in one of: .png, .svg, .pdf"
    (["collective", "all-reduce", "--fabric", "flat", "--plot", ".png"],
     "error: --plot '.png': figure '.png' is a suffix alone: give a name before it, e.g. "
     "'figure.png'"),
    (["topology", "plot", "flat", "-o", ".svg"],
     "error: --output '.svg': figure '.svg' is a suffix alone: give a name before it, "
     "e.g. 'figure.svg'"),
    # before: ".json: unknown fabric file type '(none)'; allowed: .json, ..."
    (["topology", "export", "flat", "-o", ".json"],
     "error: --output '.json': output file '.json' is a suffix alone: give a name before it, "
     "e.g. 'file.json'"),
])
def test_a_file_name_that_is_a_suffix_alone(tmp_path, args, line):
    r = run_cli(args, tmp_path)
    assert one_line_error(r) == line
    assert list(tmp_path.iterdir()) == []


def test_calibrate_profile_named_by_a_suffix_alone(tmp_path):
    from tests.netmodel.cli_helpers import measured_csv

    csv = measured_csv(tmp_path)
    r = run_cli(["calibrate", "--measurements", csv, "-o", ".toml"], tmp_path)
    assert one_line_error(r) == ("error: --out '.toml': profile file '.toml' is a suffix alone: "
                                 "give a name before it, e.g. 'file.toml'")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["measured.csv"]
    # a name before the suffix, any case of it, is written
    r = run_cli(["calibrate", "--measurements", csv, "-o", "mine.TOML"], tmp_path)
    assert r.exit_code == 0 and (tmp_path / "mine.TOML").is_file()
