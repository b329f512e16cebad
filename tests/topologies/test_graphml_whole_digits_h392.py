"""A GraphML int value that is whole but longer than an int is read is told so, however it
is spelt.

``read_number`` reads ``1e3`` on an int key as the whole number 1000, and refuses one of
more than 4,300 digits (Python's ``int()`` limit) by returning None. The GraphML reader said
``has more than 4,300 digits`` only for a plain run of digits: ``1e5000`` (a 1 and 5,000
zeros, a whole number) was told it is ``not a whole number``, which is false.
"""

from __future__ import annotations

import sys

import pytest

from compute.errors import UserError
from topologies.io import read_graph, write_graph
from topologies.optical import ocs

LIMIT = sys.get_int_max_str_digits()   # 4,300 unless the interpreter is told otherwise


def _with_lanes(tmp_path, text: str):
    """A saved 2-GPU OCS cabling whose first fibre's ``lanes`` (an int key) reads ``text``."""
    path = tmp_path / "f.graphml"
    write_graph(ocs(gpus=2, ports=1, ocs_ports=2), path)
    raw = path.read_text()
    key = next(line.split('id="')[1].split('"')[0] for line in raw.splitlines()
               if 'attr.name="lanes"' in line)
    start = raw.index(f'<data key="{key}">') + len(f'<data key="{key}">')
    end = raw.index("</data>", start)
    path.write_text(raw[:start] + text + raw[end:])
    return path


@pytest.mark.parametrize("text", [f"1e{LIMIT}", f"-2.5e{LIMIT + 5}", f"1{'0' * LIMIT}",
                                  f"1{'0' * LIMIT}.000e0"])
def test_a_whole_number_of_too_many_digits_is_told_its_length(tmp_path, text):
    # each is whole: its digits before the point after moving it = exponent + 1 > LIMIT
    path = _with_lanes(tmp_path, text)
    with pytest.raises(UserError) as err:
        read_graph(path)
    said = str(err.value)   # out of range, as a float past a float's is told
    assert said.startswith(f"{path}: key 'lanes' holds the number "), said
    assert said.endswith(f", beyond the range of a whole number (at most {LIMIT:,} digits); "
                         "give a number within it"), said


@pytest.mark.parametrize("text", ["1.5", "1e-3", f"1.5e-{LIMIT + 5}"])
def test_a_number_that_is_not_whole_is_still_told_so(tmp_path, text):
    path = _with_lanes(tmp_path, text)
    with pytest.raises(UserError) as err:
        read_graph(path)
    assert f"is '{text}', not a whole number" in str(err.value) if len(text) < 50 else \
        "not a whole number" in str(err.value)


def test_the_longest_whole_number_reads_and_is_checked_by_the_schema(tmp_path):
    # LIMIT digits: read (an int), then refused by the schema's range of lanes, not the reader
    path = _with_lanes(tmp_path, f"1e{LIMIT - 1}")
    with pytest.raises(UserError, match=f"lanes must be at most .* got an integer of {LIMIT} "
                                        f"digits"):
        read_graph(path)
