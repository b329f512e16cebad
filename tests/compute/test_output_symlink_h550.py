"""An output file path that is a symbolic link is refused (scripts/hostile_round18.py).

Before: ``topology export ring:n=4 -o passwd.json``, ``passwd.json`` a link to another
file, printed 'wrote passwd.json' and exit 0: :func:`os.replace` put the new file in the
link's place, so the link was lost and the file it named left as it was. Following the link
instead would let one planted in a shared folder aim a write at any file past the suffix
check. Now: one line naming the path and where it points, exit 2, nothing changed.
"""

from __future__ import annotations

import os

import pytest

from compute.errors import UserError
from compute.output_paths import check_file_path
from compute.outputs import atomic_write
from tests.netmodel.cli_helpers import one_line_error, run_cli

CSV = ("model,gpu,tp,batch,phase,prompt,context,latency_s\n"
       "Llama-2-70B,H100-SXM,8,1,prefill,2048,,0.1368\n"
       "Llama-2-70B,H100-SXM,8,4,prefill,512,,0.1326\n"
       "Llama-2-70B,H100-SXM,8,1,decode,,576,0.0298\n"
       "Llama-2-70B,H100-SXM,8,32,decode,,576,0.0386\n")


@pytest.mark.parametrize("target", ["theirs.json", "gone.json"])
def test_atomic_write_refuses_a_link_and_leaves_it(tmp_path, target):
    (tmp_path / "theirs.json").write_text("keep")
    link = tmp_path / "out.json"
    os.symlink(tmp_path / target, link)
    with pytest.raises(UserError) as err:
        atomic_write(link, b"new")
    assert str(err.value) == (
        f"output file {str(link)!r} is a symbolic link (to {str(tmp_path / target)!r}); "
        "netmodel writes a new file in its place, which would replace the link, not write "
        "where it points: give the target's own path, or remove the link")
    assert link.is_symlink() and os.readlink(link) == str(tmp_path / target)
    assert (tmp_path / "theirs.json").read_text() == "keep"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json", "theirs.json"]


def test_a_file_in_a_linked_folder_is_still_written(tmp_path):
    # only the last part of the path is looked at: a folder reached through a link is fine
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "via")
    assert check_file_path(tmp_path / "via" / "x.json") == tmp_path / "via" / "x.json"
    atomic_write(tmp_path / "via" / "x.json", b"1")
    assert (tmp_path / "real" / "x.json").read_bytes() == b"1"


@pytest.mark.parametrize("args, what", [
    (["topology", "export", "ring:n=4", "-o", "passwd.json"],   # each said with its flag
     "--output 'passwd.json': output file"),
    (["topology", "plot", "ring:n=4", "-o", "passwd.png"],
     "--output 'passwd.png': figure"),
    (["calibrate", "--measurements", "m.csv", "-o", "passwd.toml"],
     "--out 'passwd.toml': profile file"),
    (["costs", "--fabric", "ring:n=8", "--sizes", "1MiB", "--groups", "8", "-o", "passwd.csv"],
     "--output 'passwd.csv': output file"),
])
def test_each_writer_refuses_a_link_to_a_file_of_others(tmp_path, args, what):
    (tmp_path / "m.csv").write_text(CSV)
    (tmp_path / "passwd").write_text("root:x:0:0\n")
    os.symlink(tmp_path / "passwd", tmp_path / args[-1])
    line = one_line_error(run_cli(args, cwd=tmp_path))
    assert line == (f"error: {what} {args[-1]!r} is a symbolic link (to "
                    f"{str(tmp_path / 'passwd')!r}); netmodel writes a new file in its place, "
                    "which would replace the link, not write where it points: give the "
                    "target's own path, or remove the link")
    assert (tmp_path / "passwd").read_text() == "root:x:0:0\n"
    assert (tmp_path / args[-1]).is_symlink()
