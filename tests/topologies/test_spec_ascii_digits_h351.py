"""Fabric specs, graph files and fabric limits take numbers in the ASCII digits 0-9 only
(compute.validate.ascii_digits): Python's int() built 'fat-tree:k=８' as k=8 and read a
GraphML value '٠' as 0."""

from __future__ import annotations

import pytest

from compute.errors import UserError


def test_fabric_spec_values():
    from topologies.registry import build

    for spec in ("fat-tree:k=８", "torus:dims=４x4", "fat-tree:k=4,bandwidth=５0GB/s",
                 "fat-tree:k=4,oversubscription=１"):
        with pytest.raises(UserError, match="ASCII digits 0-9"):
            build(spec)
    assert build("fat-tree:k=4").graph["gpus"] == 16   # k^3/4


def test_direct_dims():
    from topologies.direct import parse_dims

    with pytest.raises(UserError, match=r"dims '٤x4' has the digit '٤'"):
        parse_dims("٤x4")
    assert parse_dims("4x2") == (4, 2)


def test_fabric_limit_environment(monkeypatch):
    from topologies.limits import ENV, _limit

    monkeypatch.setenv(ENV["nodes"], "１０００")
    with pytest.raises(UserError, match=f"environment variable {ENV['nodes']} '１０００'"):
        _limit("nodes")
    monkeypatch.setenv(ENV["nodes"], "1000")
    assert _limit("nodes") == 1000


def test_graphml_value(tmp_path):
    from topologies.io import read_graph, write_graph
    from topologies.registry import build

    path = tmp_path / "f.graphml"
    write_graph(build("fat-tree:k=4"), path)
    text = path.read_text()
    key = text.split('attr.name="pod"')[0].rsplit('<key id="', 1)[1].split('"')[0]
    bad = tmp_path / "bad.graphml"
    bad.write_text(text.replace(f'<data key="{key}">0</data>', f'<data key="{key}">٠</data>', 1))
    with pytest.raises(UserError, match=r"key 'pod' '٠' has the digit '٠'"):
        read_graph(bad)
    assert read_graph(path).graph["gpus"] == 16
