"""Two different models of one name (two model files both defining ``Mine``) are refused
with what tells them apart (scripts/hostile_round18.py): the line said only 'two different
models are named 'Mine'', which of the files given held which left to guess; now the first
field they differ in, with both values."""

from __future__ import annotations

from dataclasses import replace

import pytest

from compute.errors import UserError
from compute.models import get_model
from netmodel.study.rows import distinct_models


def test_the_first_field_apart_is_said():
    a = replace(get_model("Llama-3-8B"), name="Mine")
    b = replace(a, layers=16)
    with pytest.raises(UserError) as err:
        distinct_models([a, b])
    assert str(err.value) == ("two different models are named 'Mine' (layers 32 and 16; a "
                              "HuggingFace config.json takes its folder's name, another .json "
                              "file its own, unless it names itself); give each its own name")


def test_the_same_model_twice_is_kept_once():
    a = replace(get_model("Llama-3-8B"), name="Mine")
    assert distinct_models([a, replace(a), get_model("Llama-3-8B")]) == [a, get_model(
        "Llama-3-8B")]
