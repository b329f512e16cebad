"""docs/reliability.md's shape of ``availability.json`` holds every key of the closed
forms' results: ``analytic`` and ``analytic_no_spares`` are
:class:`~netmodel.study.availability_analytic.Analytic` (its fields, ``fallback`` among
them), and the prose list of the keys names the ones the table has no column for."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

import pytest

from netmodel.study.availability_analytic import Analytic

ROOT = Path(__file__).resolve().parent.parent
TEXT = " ".join((ROOT / "docs" / "reliability.md").read_text().split())


@pytest.mark.parametrize("name", ["analytic", "analytic_no_spares"])
def test_the_shape_sample_holds_every_field(name):
    m = re.search(rf"\b{name}: \{{(.*?)\}}(?= \w+: )", TEXT)
    assert m, f"the shape sample's {name} line moved"
    body = re.sub(r"\{[^{}]*\}", "", m.group(1))   # lost_per_year's classes
    assert re.findall(r"(\w+):", body) == [f.name for f in fields(Analytic)]


def test_the_prose_names_the_keys_past_the_table():
    said = re.search(r"The keys of `availability\.json` \(what `--json` prints\): (.*?)\. A row",
                     TEXT)
    assert said, "the sentence listing availability.json's keys moved"
    for key in ("blocking", "exact_threshold", "fallback"):
        assert f"`{key}`" in said.group(1)
