"""An existing output file the user may not write is refused (scripts/hostile_round18.py).

Before: ``calibrate -o ro.toml``, ``ro.toml`` made read-only (0444) by a user who is not
root, replaced it and said 'wrote ro.toml': :func:`os.replace` asks only that the folder be
writable. Now one line naming the file, exit 2, the file as it was. Root may write any
file (as ``open()`` lets it), so for root the file is still written. The test runs as
root here, so whether the user may write is what :func:`os.access` says, replaced for the
one path.
"""

from __future__ import annotations

import os

import pytest

from compute.errors import UserError
from compute.outputs import atomic_write


@pytest.fixture
def read_only(tmp_path, monkeypatch):
    path = tmp_path / "ro.toml"
    path.write_text("keep")
    path.chmod(0o444)
    real = os.access

    def access(p, mode, *args, **kwargs):
        if os.fspath(p) == str(path) and mode & os.W_OK:
            return False
        return real(p, mode, *args, **kwargs)
    monkeypatch.setattr(os, "access", access)
    return path


def test_a_read_only_file_is_refused_and_kept(read_only):
    with pytest.raises(UserError) as err:
        atomic_write(read_only, b"new", "profile file", (".toml",))
    assert str(err.value) == (f"profile file {str(read_only)!r} is read-only; netmodel would "
                              "replace it: make it writable (chmod u+w) or give another path")
    assert read_only.read_text() == "keep"
    assert sorted(p.name for p in read_only.parent.iterdir()) == ["ro.toml"]


def test_a_file_the_user_may_write_is_replaced(tmp_path):
    path = tmp_path / "rw.toml"
    path.write_text("old")
    path.chmod(0o644)
    atomic_write(path, b"new")
    assert path.read_bytes() == b"new"
    assert oct(path.stat().st_mode & 0o777) == oct(0o666 & ~_umask())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
