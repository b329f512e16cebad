"""scripts/make_docs.py refuses a page it cannot read and a `shape` input that is not JSON in
one line, exit status 2, as every netmodel command does (they raised a traceback, exit 1, or
called a non-Markdown file 'all fresh')."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import make_docs  # noqa: E402


@pytest.mark.parametrize("page", ["docs/no-such-page.md", "README", "pyproject.toml"])
def test_a_page_that_is_no_markdown_file_is_refused_in_one_line(page, capsys):
    assert make_docs.main(["--check", page]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: page '{page}'")
    assert "Traceback" not in err


@pytest.mark.parametrize("text", ["not json", "", "{\"a\": 1"])
def test_shape_of_a_text_that_is_not_json_is_refused_in_one_line(text, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    assert make_docs.main(["shape"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: shape reads one JSON document")


def test_shape_of_json_still_prints_its_keys(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO('{"a": 1, "b": [{"c": "x"}]}'))
    assert make_docs.main(["shape"]) == 0
    assert capsys.readouterr().out == make_docs.shape({"a": 1, "b": [{"c": "x"}]}) + "\n"
