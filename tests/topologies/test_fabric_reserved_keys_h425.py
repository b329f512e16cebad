"""A node attribute 'id' or an edge attribute 'source'/'target' is refused: a fabric file's
node-link JSON gives a node its id and an edge its ends under those keys, so write_graph
wrote the attribute in their place (node gpu0 saved as "id": "zzz") and the file it had
just validated could not be read back ("edge 'gpu0'-'gpu3' names node 'gpu0', which is not
in 'nodes'"). A GraphML file could carry such an attribute (a <key> of attr.name 'id') into
'topology export x.graphml -o x.json'."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from topologies import build
from topologies.io import read_graph, write_graph


@pytest.mark.parametrize(("where", "key", "said"), [
    ("node", "id", "node 'gpu0' has attribute 'id', the key a fabric file's JSON gives a node "
                   "its id (written to .json, it replaced the id); rename it"),
    ("edge", "source", "edge 'gpu0'-'gpu1' has attribute 'source', the key a fabric file's JSON "
                       "gives an edge its ends (written to .json, it replaced that end); rename it"),
    ("edge", "target", "edge 'gpu0'-'gpu1' has attribute 'target', the key a fabric file's JSON "
                       "gives an edge its ends (written to .json, it replaced that end); rename it"),
])
def test_a_key_of_the_node_link_format_is_refused_before_writing(tmp_path, where, key, said):
    g = build("ring:n=4")
    (g.nodes["gpu0"] if where == "node" else g.edges["gpu0", "gpu1"])[key] = "gpu2"
    path = tmp_path / "ring.json"
    with pytest.raises(UserError) as err:
        write_graph(g, path)
    assert str(err.value) == f"invalid fabric graph: {said}"
    assert not path.exists()


def test_a_graphml_node_with_data_named_id_is_refused(tmp_path):
    path = tmp_path / "ring.graphml"
    write_graph(build("ring:n=4"), path)
    text = path.read_text()
    head = '<key id="d13"'
    gpu = '<data key="d9">H100-SXM</data>'
    text = text.replace(head, '<key id="d99" for="node" attr.name="id" attr.type="string" />'
                        + head, 1).replace(gpu, gpu + '<data key="d99">zzz</data>', 1)
    path.write_text(text)
    with pytest.raises(UserError) as err:
        read_graph(path)
    assert str(err.value).startswith(f"{path}: invalid fabric graph: node 'gpu0' has attribute "
                                     "'id', the key")


def test_the_same_names_elsewhere_still_save(tmp_path):
    """A node's 'source' (where its figures come from) and an edge's 'id' are not the
    format's keys: saved and read back."""
    g = build("ring:n=4")
    g.nodes["gpu0"]["source"] = "datasheet"
    g.edges["gpu0", "gpu1"]["id"] = "e0"
    for suffix in (".json", ".graphml"):
        back = read_graph(write_graph(g, tmp_path / f"ring{suffix}"))
        assert back.nodes["gpu0"]["source"] == "datasheet"
        assert back.edges["gpu0", "gpu1"]["id"] == "e0"
