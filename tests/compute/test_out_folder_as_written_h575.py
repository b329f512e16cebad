"""An ``--out`` folder is replaced whole only if each file its manifest lists is still the
file netmodel wrote there: the size and SHA-256 the manifest records. Before, a listed name
was enough: a user's folder whose files bore the manifest's names but other contents (edited
by hand, or written by another tool) was silently replaced. Each refusal is one line naming
the file and why, and leaves the folder as it was (nothing staged left beside it)."""

from __future__ import annotations

import hashlib
import json
import os

import pytest
from click.testing import CliRunner

from compute.errors import UserError
from compute.output_paths import MANIFEST
from compute.outputs import write_outputs
from netmodel.cli.main import cli


def _first(tmp_path):
    out = tmp_path / "out"
    write_outputs(out, {"a.csv": b"1,2\n", "b.csv": b"3\n"}, run={"command": "first"})
    return out


def _untouched(tmp_path, out, manifest: bytes, files: dict[str, bytes]) -> None:
    assert (out / MANIFEST).read_bytes() == manifest
    for name, data in files.items():
        assert (out / name).read_bytes() == data
    assert [p.name for p in tmp_path.iterdir()] == ["out"]   # no staging folder left


@pytest.mark.parametrize("edited, why", [
    (b"9,9\n", "its SHA-256 is {new}..., its netmodel-manifest.json records {old}..."),
    (b"1,2,3\n", "it holds 6 bytes, its netmodel-manifest.json records 4"),
])
def test_a_listed_file_edited_since_is_not_replaced(tmp_path, edited, why):
    out = _first(tmp_path)
    manifest = (out / MANIFEST).read_bytes()
    (out / "a.csv").write_bytes(edited)
    with pytest.raises(UserError) as err:
        write_outputs(out, {"a.csv": b"new\n"}, run={"command": "second"})
    said = why.format(new=hashlib.sha256(edited).hexdigest()[:12],
                      old=hashlib.sha256(b"1,2\n").hexdigest()[:12])
    assert str(err.value) == (f"output folder '{out}' holds 'a.csv', which is not the file "
                              f"netmodel wrote there: {said} (edited since, or another "
                              f"tool's); netmodel replaces its output folder whole, so move "
                              f"it out or give another folder")
    _untouched(tmp_path, out, manifest, {"a.csv": edited, "b.csv": b"3\n"})


def test_a_listed_name_now_a_folder_or_a_link_is_not_replaced(tmp_path):
    out = _first(tmp_path)
    manifest = (out / MANIFEST).read_bytes()
    (out / "b.csv").unlink()
    (out / "b.csv").mkdir()
    (out / "b.csv" / "mine.txt").write_text("mine")
    with pytest.raises(UserError, match="holds 'b.csv', which is not the file netmodel wrote "
                                        "there: it is now a folder"):
        write_outputs(out, {"a.csv": b"x"})
    assert (out / "b.csv" / "mine.txt").read_text() == "mine"
    (out / "b.csv" / "mine.txt").unlink()
    (out / "b.csv").rmdir()
    target = tmp_path / "elsewhere.csv"
    target.write_bytes(b"3\n")   # the same bytes, through a link: not what netmodel wrote
    os.symlink(target, out / "b.csv")
    with pytest.raises(UserError, match="it is now a symbolic link"):
        write_outputs(out, {"a.csv": b"x"})
    assert (out / MANIFEST).read_bytes() == manifest and (out / "b.csv").is_symlink()


def test_an_old_manifest_without_sizes_and_hashes_vouches_for_no_file(tmp_path):
    # a manifest whose entries record no bytes and sha256 (netmodel's have always recorded
    # both; one written by hand or another tool) cannot tell its files from a user's
    out = tmp_path / "out"
    out.mkdir()
    manifest = json.dumps({"netmodel": "0.0.1", "files": {"a.csv": {}}}).encode()
    (out / MANIFEST).write_bytes(manifest)
    (out / "a.csv").write_bytes(b"mine\n")
    with pytest.raises(UserError) as err:
        write_outputs(out, {"a.csv": b"new\n"})
    assert str(err.value) == (f"output folder '{out}' holds 'a.csv', which is not the file "
                              f"netmodel wrote there: its netmodel-manifest.json records no "
                              f"size and SHA-256 for it, so nothing says it is (edited since, "
                              f"or another tool's); netmodel replaces its output folder "
                              f"whole, so move it out or give another folder")
    _untouched(tmp_path, out, manifest, {"a.csv": b"mine\n"})
    (out / "a.csv").unlink()   # a listed file that is gone loses nothing: replaced
    write_outputs(out, {"a.csv": b"new\n"})
    assert (out / "a.csv").read_bytes() == b"new\n"
    entry = json.loads((out / MANIFEST).read_text())["files"]["a.csv"]
    assert entry == {"bytes": 4, "sha256": hashlib.sha256(b"new\n").hexdigest()}


def test_an_unchanged_or_deleted_file_is_replaced_as_before(tmp_path):
    out = _first(tmp_path)
    (out / "b.csv").unlink()   # the user deleted one: nothing of theirs is lost
    write_outputs(out, {"a.csv": b"2\n"}, run={"command": "second"})
    assert sorted(p.name for p in out.iterdir()) == ["a.csv", MANIFEST]
    assert (out / "a.csv").read_bytes() == b"2\n"


def test_compare_out_keeps_a_hand_edited_table(tmp_path):
    out = tmp_path / "out"
    args = ["compare", "--models", "Llama-3-8B", "--phases", "decode", "--no-plot", "-q",
            "--scenarios", "h100-dgx", "--out", str(out)]
    assert CliRunner().invoke(cli, args).exit_code == 0
    table = out / "compare.csv"
    edited = table.read_bytes().replace(b"h100-dgx", b"H100-DGX")   # same size, my edit
    table.write_bytes(edited)
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 2
    assert r.output.count("\n") == 1 and "Traceback" not in r.output
    assert r.output.startswith(f"error: --out '{out}': output folder '{out}' holds "
                               f"'compare.csv', which is "
                               f"not the file netmodel wrote there: its SHA-256 is ")
    assert table.read_bytes() == edited
