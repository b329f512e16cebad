"""A data file of millions of small values is refused before it is parsed (hostile round
h354): a 16 MiB scenario file of ``[],`` (5.6 million empty lists, under the size limit)
took 30 s and 0.9 GB before its first key was refused."""

from __future__ import annotations

import pytest

from compute.config_files import DEFAULT_MAX_VALUES, parse_table
from compute.errors import UserError


@pytest.mark.parametrize("fmt, text, values", [
    ("toml", "a = [" + "1," * 1_200_000 + "]", 1_200_000),        # commas of a list
    ("toml", "a = [" + "[]," * 1_100_000 + "]", 1_100_001),       # its lists, the brackets
    ("toml", "a = {" + ",".join(f"k{i}=1" for i in range(1_000_002)) + "}", 1_000_001),
    ("json", '{"a": [' + "[]," * 1_100_000 + "1]}", 1_100_002),
])
def test_a_document_of_too_many_values_is_refused_before_parsing(fmt, text, values):
    with pytest.raises(UserError) as err:
        parse_table(text, fmt, f"f.{fmt}")
    assert str(err.value) == (f"f.{fmt} holds about {values:,} values in lists and tables, "
                              f"more than the {DEFAULT_MAX_VALUES:,} netmodel reads in such a "
                              f"file; is it the right file?")


def test_commas_and_brackets_in_strings_and_comments_are_not_values():
    text = 'a = "' + ",[{" * 400_000 + '"  # ' + ",[" * 400_000 + "\nb = [1, 2]\n"
    assert parse_table(text, "toml", "f.toml")["b"] == [1, 2]
    assert parse_table('{"a": "' + ",[" * 600_000 + '"}', "json", "f.json")["a"][:2] == ",["


def test_the_limit_is_where_it_says():
    ok = "a = [" + ",".join(["1"] * DEFAULT_MAX_VALUES) + "]"   # 999,999 commas
    assert len(parse_table(ok, "toml", "f.toml")["a"]) == DEFAULT_MAX_VALUES
    assert parse_table("a = [[], [], []]", "toml", "f.toml", max_values=4) == {"a": [[], [], []]}
    with pytest.raises(UserError, match="holds about 4 values"):
        parse_table("a = [[], [], []]", "toml", "f.toml", max_values=3)
