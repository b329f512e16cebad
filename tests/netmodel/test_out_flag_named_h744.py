"""A refused ``--out DIR`` names its flag, as ``costs -o`` names ``--output`` and
``calibrate -o`` names ``--out``: the command line's errors name the flags typed (the
library's name parameters).

Before: ``compare --out loop`` (a symbolic link to itself) said ``error: output folder 'loop'
is a symbolic link that loops ...``, ``--out afile/sub`` ``error: output folder 'afile/sub':
'.../afile' is a file, not a folder``: no flag, while ``costs -o loop`` said ``error:
--output 'loop': output folder 'loop' ...``. Each command of an output folder alike
(compare, sweep, study lite-gpu, blast-radius, availability).
"""

from __future__ import annotations

import pytest

from tests.netmodel.cli_helpers import one_line_error, run_cli

_COMMANDS = {
    "compare": ["compare", "--models", "Llama-3-8B", "--scenarios", "h100-dgx", "--phase",
                "decode", "--max-batch", "16", "-q", "--no-plot"],
    "sweep": ["sweep", "--scenario", "h100-dgx", "--param", "adjust.hop_latency=1us,2us",
              "--models", "Llama-3-8B", "--phase", "decode", "--max-batch", "16", "-q",
              "--no-plot"],
    "lite-gpu": ["study", "lite-gpu", "--models", "Llama-3-8B", "--no-plot"],
    "blast-radius": ["blast-radius", "--scenario", "h100-dgx", "--model", "Llama-3-8B",
                     "--max-batch", "16"],
    "availability": ["availability", "--scenario", "h100-dgx", "--model", "Llama-3-8B",
                     "--max-batch", "16"],
}


@pytest.mark.parametrize("command", sorted(_COMMANDS))
@pytest.mark.parametrize("place", ["loop", "file"])
def test_out_refused_names_its_flag(tmp_path, command, place):
    if place == "loop":
        (tmp_path / "loop").symlink_to(tmp_path / "loop")
        out, said = "loop", ("error: --out 'loop': output folder 'loop' is a symbolic link "
                             "that loops (it resolves to no folder); give a folder path")
    else:
        (tmp_path / "afile").write_text("mine\n")
        out, said = "afile/sub", (f"error: --out 'afile/sub': output folder 'afile/sub': "
                                  f"'{tmp_path / 'afile'}' is a file, not a folder")
    before = sorted(p.name for p in tmp_path.iterdir())
    r = run_cli([*_COMMANDS[command], "--out", out], tmp_path)
    assert one_line_error(r) == said
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert (tmp_path / "afile").read_text() == "mine\n" if place == "file" else True
