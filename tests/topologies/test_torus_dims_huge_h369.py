"""A torus ``dims`` whose sides' product is past a float's range is refused in one line.

topologies.schema_torus.check_dims printed the product with ``{total:.3g}``, which raises
OverflowError for an int past ~1.8e308: a graph (or a fabric file) with dims '1e400x2',
a spelling the one number grammar reads as 10**400, or a 400-digit side, ended in a
traceback instead of the schema's refusal.
"""

from __future__ import annotations

import json

import pytest

from compute.errors import UserError
from topologies import build
from topologies.io import read_graph, write_graph
from topologies.schema import validate


@pytest.mark.parametrize("dims, power", [("1e400x2", 400), ("1" + "0" * 400 + "x2", 400),
                                         ("1e4299x1e4299x1e4299", 12897)])
def test_a_product_past_a_float_is_refused_with_its_power_of_ten(dims, power):
    g = build("torus:dims=4x4")
    g.graph["dims"] = dims
    with pytest.raises(UserError) as err:
        validate(g)
    text = str(err.value)
    assert "\n" not in text and f"is a torus of about 10^{power} GPUs" in text


def test_a_product_within_a_float_keeps_its_three_digits():
    g = build("torus:dims=4x4")
    g.graph["dims"] = "1e20x2"
    with pytest.raises(UserError, match=r"is a torus of 2e\+20 GPUs; its sides' product"):
        validate(g)


def test_a_fabric_file_with_such_dims_is_refused(tmp_path):
    path = tmp_path / "t.json"
    write_graph(build("torus:dims=4x4"), path)
    doc = json.loads(path.read_text())
    doc["graph"]["dims"] = "1e400x2"
    path.write_text(json.dumps(doc))
    with pytest.raises(UserError, match="about 10\\^400 GPUs"):
        read_graph(path)
