"""A fabric JSON file's ``null`` is refused as the file spells it, ``null`` (h516).

``"bandwidth": null`` on an edge was 'bandwidth must be finite and > 0 bytes/s, got None',
``"directed": null`` 'directed must be false, got None': Python's word for a value the
file wrote ``null``.
"""

from __future__ import annotations

import json

import pytest

from compute.errors import UserError
from topologies.io import read_graph, write_graph
from topologies.specs import build


@pytest.fixture(scope="module")
def doc(tmp_path_factory) -> dict:
    path = tmp_path_factory.mktemp("fab") / "leaf-spine.json"
    write_graph(build("leaf-spine:leaves=2"), path)
    return json.loads(path.read_text())


@pytest.mark.parametrize("where, said", [
    (("directed",), "a fabric is an undirected simple graph (directed must be false, got null)"),
    (("edges", 0, "bandwidth"), "edge 'leaf0'-'gpu0' bandwidth must be finite and > 0 "
                                "bytes/s, got null"),
    (("nodes", 0, "kind"), "node 'leaf0' has kind null; allowed: 'gpu', 'ocs', 'switch'"),
    (("graph", "gpus"), "graph attribute 'gpus' must be a whole number, got null"),
    (("nodes", 0), "every node must be an object with an 'id', got null"),
])
def test_a_null_is_said_as_null(tmp_path, doc, where, said):
    bad = json.loads(json.dumps(doc))
    inner = bad
    for key in where[:-1]:
        inner = inner[key]
    inner[where[-1]] = None
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(UserError) as err:
        read_graph(path)
    assert str(err.value).endswith(said), str(err.value)
    assert "None" not in str(err.value)
