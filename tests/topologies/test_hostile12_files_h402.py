"""Hostile fabric files, round 12: each refusal one line naming the file, the value and what
is allowed (each test failed on the code before it)."""

from __future__ import annotations

import re

import pytest

from compute.errors import UserError
from topologies import build
from topologies.io import read_graph, write_graph


def _saved(tmp_path, suffix: str, old: str, new: str):
    """A 4-GPU ring saved as ``suffix`` with the first ``old`` in its text made ``new``."""
    path = tmp_path / f"ring{suffix}"
    write_graph(build("ring:n=4"), path)
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    return path


def _refusal(path) -> str:
    with pytest.raises(UserError) as err:
        read_graph(path)
    said = str(err.value)
    assert "\n" not in said and said.startswith(str(path)), said
    return said


@pytest.mark.parametrize("text", ["1e9999999999999999999", "-1e9999999999999999999",
                                  "2.5e99999999999999999999"])
def test_a_whole_number_with_an_exponent_past_decimals_is_out_of_range(tmp_path, text):
    """Before: 'is '1e9999999999999999999', not a whole number' (Decimal refused the exponent,
    and the reader took that for a fraction); it is whole, and out of range."""
    path = _saved(tmp_path, ".graphml", ">18<", f">{text}<")
    assert _refusal(path) == (f"{path}: key 'lanes' holds the number {text}, beyond the range "
                              "of a whole number (at most 4,300 digits); give a number within it")


def test_a_tiny_fraction_with_a_huge_exponent_is_still_not_whole(tmp_path):
    path = _saved(tmp_path, ".graphml", ">18<", ">1e-9999999999999999999<")
    assert "is '1e-9999999999999999999', not a whole number" in _refusal(path)


@pytest.mark.parametrize(("old", "new", "why"), [
    (">225000000000.0<", ">1e400<", "beyond the range of a float (at most about 1.8e308)"),
    (">1e-08<", ">1e-400<", "below the smallest number netmodel reads (2.225e-308)"),
    (">18<", ">1e5000<", "beyond the range of a whole number (at most 4,300 digits)"),
])
def test_a_graphml_value_out_of_range_is_told_in_one_wording(tmp_path, old, new, why):
    """Before: three frames: "key 'bandwidth' holds the number 1e400, beyond ...", "a value of
    key 'latency' '1e-400' is below ...", "... is not a readable graphml fabric: a value of
    key 'lanes' (attr.type 'long') has more than 4,300 digits"."""
    path = _saved(tmp_path, ".graphml", old, new)
    said = _refusal(path)
    assert re.fullmatch(rf"{re.escape(str(path))}: key '(bandwidth|latency|lanes)' holds the "
                        rf"number {re.escape(new[1:-1])}, {re.escape(why)}.*", said), said


@pytest.mark.parametrize("suffix", [".graphml", ".json"])
def test_an_edge_to_an_undeclared_node_is_named(tmp_path, suffix):
    """Before (GraphML): "invalid fabric graph: node 'gpu99' has kind None; allowed: 'gpu',
    'ocs', 'switch'" (networkx's reader adds the node); JSON named the edge."""
    old, new = (('target="gpu3"', 'target="gpu99"') if suffix == ".graphml" else
                ('"target": "gpu3"', '"target": "gpu99"'))
    path = _saved(tmp_path, suffix, old, new)
    said = _refusal(path)
    assert said.startswith(f"{path}: edge 'gpu0'-'gpu99' names node 'gpu99', which "), said
    assert said.endswith("no <node> declares" if suffix == ".graphml" else
                         "is not in 'nodes'"), said


@pytest.mark.parametrize("suffix", [".graphml", ".json"])
def test_valid_edge_values_still_load(tmp_path, suffix):
    # the largest lanes the schema takes, an exponent spelling of a whole number, zero latency
    path = _saved(tmp_path, suffix, "18", "1e6" if suffix == ".graphml" else "1000000")
    path.write_text(path.read_text().replace("1e-08", "0e-999" if suffix == ".graphml" else "0.0", 1))
    g = read_graph(path)
    assert g.edges["gpu0", "gpu3"]["lanes"] == 10**6
    assert g.edges["gpu0", "gpu3"]["latency"] == 0.0
