"""A GraphML fabric giving its graph's 'id' both as the <graph> element's id and in a graph
<data> is told so (h443). c1840a8 reads <graph id> as the graph attribute 'id' and 431de42
refuses an attribute given twice, but the refusal said "the graph has two <data> for 'id'
(of one <key>, or of two keys of that attr.name)": the file has one <data> and no second
key, so the line sent its reader looking for what is not there.
"""

from __future__ import annotations

import re

import pytest

from compute.errors import UserError
from topologies import build
from topologies.io import read_graph, write_graph

_KEY = '<key id="gid" for="graph" attr.name="id" attr.type="string"/>\n  '


def _with_graph_data(text: str, *data: str) -> str:
    text = text.replace("<graph ", _KEY + "<graph ", 1)
    extra = "".join(f'\n    <data key="gid">{d}</data>' for d in data)
    return re.sub(r"(<graph [^>]*>)", lambda m: m.group(1) + extra, text, count=1)


@pytest.fixture
def ring_text(tmp_path):
    g = build("ring:n=4")
    g.graph["id"] = "lab-7"
    write_graph(g, tmp_path / "r.graphml")
    text = (tmp_path / "r.graphml").read_text()
    assert re.search(r'<graph [^>]*id="lab-7"', text)   # networkx writes it there
    return text


def test_id_on_the_graph_element_and_in_a_data(ring_text, tmp_path):
    path = tmp_path / "two.graphml"
    path.write_text(_with_graph_data(ring_text, "other"))
    with pytest.raises(UserError, match=r"the graph has its 'id' twice: as the <graph> "
                                        r"element's id and in a <data>; give it once"):
        read_graph(path)


def test_two_data_without_a_graph_id_keep_their_line(ring_text, tmp_path):
    path = tmp_path / "data.graphml"
    path.write_text(_with_graph_data(ring_text.replace(' id="lab-7"', ""), "a", "b"))
    with pytest.raises(UserError, match=r"the graph has two <data> for 'id' \(of one <key>"):
        read_graph(path)


def test_one_id_either_way_reads(ring_text, tmp_path):
    path = tmp_path / "one.graphml"
    path.write_text(_with_graph_data(ring_text.replace(' id="lab-7"', ""), "lab-8"))
    assert read_graph(path).graph["id"] == "lab-8"
    path.write_text(ring_text)
    assert read_graph(path).graph["id"] == "lab-7"
