"""A spec value keeps brackets that do not enclose all of it (h482).

The grammar brackets a value holding commas (``base=[fat-tree:k=4,gpu=H100-SXM]``), and the
parser took off a value's first and last characters wherever it started with ``[`` and
ended with ``]``: ``gpu=[a]-[b]`` was read as ``a]-[b`` (and refused so: "unknown GPU
'a]-[b'"), ``n=[4]-[5]`` as ``4]-[5``. Now the brackets come off only where the first
``[`` closes at the value's end.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compute.errors import UserError
from topologies.registry import format_value, parse_spec
from topologies.specs import build


@pytest.mark.parametrize("value, read", [
    ("[a]-[b]", "[a]-[b]"),
    ("[4]-[5]", "[4]-[5]"),
    ("[x][y]", "[x][y]"),
    ("[fat-tree:k=4,gpu=H100-SXM]", "fat-tree:k=4,gpu=H100-SXM"),
    ("[[x]]", "[x]"),
    ("[x]", "x"),
    (" [a] ", "a"),
])
def test_brackets_come_off_only_around_the_whole_value(value, read):
    assert parse_spec(f"ring:gpu={value}")[1]["gpu"] == read


def test_the_refusal_quotes_the_value_as_written():
    with pytest.raises(UserError, match=r"^ring: gpu: unknown GPU '\[a\]-\[b\]'"):
        build("ring:n=4,gpu=[a]-[b]")
    with pytest.raises(UserError, match=r"^ring: n must be an integer, got '\[4\]-\[5\]'"):
        build("ring:n=[4]-[5]")


_atom = st.text(alphabet="ab-.", min_size=0, max_size=3)
_value = st.recursive(_atom, lambda inner: st.builds(
    lambda a, b, c: a + "[" + b + "]" + c, _atom, inner, _atom), max_leaves=6)


@given(_value)
def test_a_value_written_as_a_spec_writes_it_reads_back(value):
    # format_value brackets a value holding ',', '[' or ']'; reading takes them off again
    value = value.strip() or "a"
    assert parse_spec(f"ring:gpu={format_value(value)}")[1]["gpu"] == value
