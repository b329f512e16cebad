"""A fabric's ``nodes_built`` and ``edges_built`` are counts, refused below one (h516).

They record what the fabric's builder made (:mod:`topologies.registry`): a value that no
longer matches the graph marks it edited (not as built), so any whole number was taken,
and a saved fabric's ``"nodes_built": -1`` read without a word. A builder makes a GPU at
least, and a count of links is >= 0: below those the file is refused in one line naming
the attribute, its value and what is allowed.
"""

from __future__ import annotations

import json

import pytest

from compute.errors import UserError
from topologies.io import read_graph, write_graph
from topologies.registry import as_built
from topologies.schema import validate
from topologies.specs import build


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("fab") / "leaf-spine.json"
    write_graph(build("leaf-spine:leaves=2"), path)
    return json.loads(path.read_text())


@pytest.mark.parametrize("key, value, least, what", [
    ("nodes_built", -1, 1, "nodes"), ("nodes_built", 0, 1, "nodes"),
    ("edges_built", -1, 0, "links"),
])
def test_a_count_below_its_least_is_refused(tmp_path, saved, key, value, least, what):
    doc = json.loads(json.dumps(saved))
    doc["graph"][key] = value
    path = tmp_path / "f.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(UserError) as err:
        read_graph(path)
    assert str(err.value) == (f"{path}: invalid fabric graph: graph attribute {key!r} is "
                              f"{value}; it counts the {what} its builder made: a whole "
                              f"number >= {least}")
    g = build("leaf-spine:leaves=2")   # a graph made in Python: the same rule
    g.graph[key] = value
    with pytest.raises(UserError, match=f"graph attribute '{key}' is {value}; "):
        validate(g)


def test_counts_at_their_least_or_not_matching_read_as_edited(tmp_path, saved):
    # leaf-spine:leaves=2: 8 GPUs + 2 leaves + 4 spines = 14 nodes; 8 + 2 x 4 = 16 links
    assert (saved["graph"]["nodes_built"], saved["graph"]["edges_built"]) == (14, 16)
    for key, value in (("nodes_built", 1), ("edges_built", 0), ("nodes_built", 15)):
        doc = json.loads(json.dumps(saved))
        doc["graph"][key] = value
        path = tmp_path / "f.json"
        path.write_text(json.dumps(doc))
        assert not as_built(read_graph(path))   # taken; no longer what the builder made
    path = tmp_path / "f.json"
    path.write_text(json.dumps(saved))
    assert as_built(read_graph(path))
