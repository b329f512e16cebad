"""The output rules (compute/outputs.py): one clear line for a bad path, the same permissions
everywhere, a set of files old or new but never mixed, even when the writer is killed."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from compute.errors import UserError
from compute.output_paths import MANIFEST, check_file_path, check_folder_path, figure_format
from compute.outputs import atomic_write, write_outputs

ROOT = Path(__file__).resolve().parents[2]


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _umask() -> int:
    m = os.umask(0)
    os.umask(m)
    return m


@pytest.mark.parametrize("bad, needle", [
    ("", "must not be empty"),
    (".", "names a folder"),
    ("sub/", "names a folder"),
    ("missing/f.csv", "does not exist (create it first)"),
    ("a\nb.csv", "control character"),
    # said "folder 'afile' does not exist (create it first)" of an existing file
    ("afile/f.csv", "'afile' is a file, not a folder"),
])
def test_bad_file_paths_are_one_line(tmp_path, monkeypatch, bad, needle):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "afile").write_text("x")
    with pytest.raises(UserError) as err:
        atomic_write(bad, b"x")
    assert needle in str(err.value) and "\n" not in str(err.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "sub"]
    assert (tmp_path / "afile").read_text() == "x"


def test_a_folder_under_a_file_is_refused_as_such(tmp_path):
    """Said "its parent folder '.../afile' does not exist (create it first)" of a file."""
    (tmp_path / "afile").write_text("x")
    with pytest.raises(UserError, match="afile' is a file, not a folder$"):
        check_folder_path(tmp_path / "afile" / "out")


def test_a_file_path_that_is_a_folder_is_refused(tmp_path):
    with pytest.raises(UserError, match="is an existing folder"):
        check_file_path(tmp_path)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes everywhere")
def test_an_unwritable_folder_is_refused(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        with pytest.raises(UserError, match="not writable"):
            atomic_write(ro / "f.csv", b"x")
        with pytest.raises(UserError, match="not writable"):
            write_outputs(ro / "out", {"a.csv": b"1"})
    finally:
        ro.chmod(0o700)


@pytest.mark.parametrize("bad, needle", [
    ("", "must not be empty"),
    ("missing/out", "parent folder"),
])
def test_bad_folder_paths_are_one_line(tmp_path, monkeypatch, bad, needle):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserError) as err:
        write_outputs(bad, {"a.csv": b"1"})
    assert needle in str(err.value)
    assert list(tmp_path.iterdir()) == []


def test_a_folder_of_someone_elses_files_is_not_replaced(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(UserError, match="did not write"):
        write_outputs(tmp_path, {"a.csv": b"1"})
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_a_file_where_the_folder_should_be_is_refused(tmp_path):
    (tmp_path / "out").write_text("x")
    with pytest.raises(UserError, match="exists and is not a folder"):
        write_outputs(tmp_path / "out", {"a.csv": b"1"})


def test_rerun_replaces_the_whole_set_and_lists_it(tmp_path):
    out = tmp_path / "out"
    write_outputs(out, {"a.csv": b"1", "b.csv": b"2"}, run={"command": "first"})
    write_outputs(out, {"a.csv": b"3"}, run={"command": "second"})
    assert sorted(p.name for p in out.iterdir()) == ["a.csv", MANIFEST]
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["run"] == {"command": "second"}
    assert manifest["files"]["a.csv"]["bytes"] == 1
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # no staging left


def test_every_file_gets_the_usual_permissions(tmp_path):
    want = 0o666 & ~_umask()
    write_outputs(tmp_path / "o", {"a.csv": b"1", "b.png": lambda p: Path(p).write_bytes(b"")})
    single = atomic_write(tmp_path / "single.csv", b"x")
    for path in [tmp_path / "o" / "a.csv", tmp_path / "o" / "b.png", tmp_path / "o" / MANIFEST,
                 Path(single)]:
        assert _mode(path) == want, path


def test_a_failing_writer_leaves_the_old_set(tmp_path):
    out = tmp_path / "out"
    write_outputs(out, {"a.csv": b"old"})

    def boom(path):
        raise RuntimeError("figure failed")

    with pytest.raises(RuntimeError):
        write_outputs(out, {"a.csv": b"new", "fig.png": boom})
    assert (out / "a.csv").read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


@pytest.mark.parametrize("suffix, fmt", [(".png", "png"), (".SVG", "svg"), (".pdf", "pdf")])
def test_figure_formats_follow_the_suffix(suffix, fmt):
    assert figure_format("fig" + suffix) == fmt


def test_an_unknown_figure_suffix_is_refused():
    with pytest.raises(UserError, match="must end in one of: .png, .svg, .pdf"):
        figure_format("fig.jpg")


_WRITER = """
import sys, time
from pathlib import Path
from compute.outputs import write_outputs
out, tag, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
def slow(path):
    time.sleep(0.05)   # 40 files: 0.5-2 s however many workers, so a kill at 0.3 s lands
    Path(path).write_text(tag)   # before the set is complete even on a fast machine
write_outputs(out, {f"f{i:03d}.txt": slow for i in range(n)})
"""


def test_a_killed_writer_leaves_the_folder_old_or_new(tmp_path):
    out = tmp_path / "out"
    n = 40
    write_outputs(out, {f"f{i:03d}.txt": b"old" for i in range(n)})
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    seen = set()
    for delay in (0.3, 0.6, 0.9, None):   # None: let it finish
        proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(out), "new", str(n)],
                                env=env, cwd=ROOT)
        if delay is not None:
            time.sleep(delay)
            proc.send_signal(signal.SIGKILL)
        proc.wait()
        contents = {p.read_text() for p in out.glob("f*.txt")}
        names = sorted(p.name for p in out.iterdir())
        assert contents in ({"old"}, {"new"}), contents     # never a mix
        assert names == sorted([f"f{i:03d}.txt" for i in range(n)] + [MANIFEST])
        seen |= contents
        # the next run cleans what the killed one left and succeeds
        write_outputs(out, {f"f{i:03d}.txt": b"old" for i in range(n)})
        assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert seen == {"old", "new"}


def _write_tag(tag):
    def writer(path):
        Path(path).write_text(tag)
    return writer


def test_writers_in_several_processes_write_every_file(tmp_path):
    files = {f"f{i}.txt": _write_tag(str(i)) for i in range(7)}
    write_outputs(tmp_path / "o", files, jobs=3)
    assert [(tmp_path / "o" / f"f{i}.txt").read_text() for i in range(7)] == \
        [str(i) for i in range(7)]


def test_a_writer_failing_in_a_worker_leaves_the_old_set(tmp_path):
    out = tmp_path / "o"
    write_outputs(out, {"a.txt": b"old"})

    def boom(path):
        raise RuntimeError("figure failed")

    files = {"a.txt": b"new", **{f"f{i}.png": boom if i == 3 else _write_tag("x")
                                 for i in range(6)}}
    with pytest.raises((UserError, RuntimeError)):
        write_outputs(out, files, jobs=2)
    assert (out / "a.txt").read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o"]


def test_a_file_the_manifest_does_not_list_is_not_replaced(tmp_path):
    # An input put into an earlier output folder (compare --scenarios out/s.toml --out out)
    # was deleted with the old output: the folder had a manifest, so it was taken whole.
    out = tmp_path / "out"
    write_outputs(out, {"a.csv": b"1"})
    (out / "s.toml").write_text("mine")
    with pytest.raises(UserError, match=r"holds 's\.toml', which its netmodel-manifest\.json "
                                        r"does not list"):
        write_outputs(out, {"a.csv": b"2"})
    assert (out / "s.toml").read_text() == "mine"
    assert (out / "a.csv").read_bytes() == b"1"


def test_a_manifest_that_lists_nothing_protects_every_other_file(tmp_path):
    # a manifest netmodel did not write (not JSON, or no files table) vouches for no file
    for text in ("not json", '{"files": ["a.csv"]}', "[]"):
        (tmp_path / MANIFEST).write_text(text)
        (tmp_path / "a.csv").write_text("mine")
        with pytest.raises(UserError, match="does not list"):
            write_outputs(tmp_path, {"a.csv": b"2"})
        assert (tmp_path / "a.csv").read_text() == "mine"
    (tmp_path / MANIFEST).unlink()
    os.mkfifo(tmp_path / MANIFEST)   # not read (it would block): it lists nothing
    with pytest.raises(UserError, match="does not list"):
        write_outputs(tmp_path, {"a.csv": b"2"})
    (tmp_path / MANIFEST).unlink()
    (tmp_path / MANIFEST).write_text("[]")
    (tmp_path / "a.csv").unlink()   # the manifest alone: an output folder, replaced
    write_outputs(tmp_path, {"a.csv": b"2"})
    assert (tmp_path / "a.csv").read_bytes() == b"2"
