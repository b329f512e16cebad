"""A fabric's placement labels (server, rack, pod, group, rail) have an upper bound, and
docs/fabrics.md says the gpu_types rule.

Before: a label was any whole number >= 0: a GraphML long of 1e400 was read as a 401-digit
server number and the fabric analysed (topology show, exit 0). Now a label is below
NETMODEL_MAX_FABRIC_NODES (default 2,000,000), the most nodes a fabric has, as a GPU's
``device`` index already was: a fabric has fewer servers, racks, pods, groups and rails than
that. One line naming the node, the label and the limit.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compute.errors import UserError
from tests.netmodel.cli_helpers import one_line_error, run_cli
from topologies.io import read_graph, write_graph
from topologies.limits import max_nodes
from topologies.schema import LABELS, validate
from topologies.specs import build

SPEC = "rail-optimized:domains=2"


def _json_with(tmp_path: Path, key: str, value) -> Path:
    path = tmp_path / "f.json"
    write_graph(build(SPEC), path)
    doc = json.loads(path.read_text())
    node = next(n for n in doc["nodes"] if n.get("kind") == "gpu" and n["id"] == "gpu1")
    assert key in node
    node[key] = value
    path.write_text(json.dumps(doc))
    return path


def _refusal(key: str, shown: str, most: int = 1_999_999) -> str:
    return (f"invalid fabric graph: gpu node 'gpu1' label {key!r} is {shown}, above "
            f"{most:,}: it numbers a {key} of the fabric, and a fabric has at most "
            f"{most + 1:,} nodes (NETMODEL_MAX_FABRIC_NODES)")


def test_the_default_limit():
    assert max_nodes() == 2_000_000


@pytest.mark.parametrize("key", LABELS)
@pytest.mark.parametrize(("value", "shown"), [(2_000_000, "2000000"), (10**12, "1000000000000"),
                                              (10**400, "an integer of 401 digits")],
                         ids=["2e6", "1e12", "1e400"])
def test_a_label_past_the_limit_is_refused(tmp_path, key, value, shown):
    path = _json_with(tmp_path, key, value)
    with pytest.raises(UserError) as e:
        read_graph(path)
    assert str(e.value) == f"{path}: {_refusal(key, shown)}"


@pytest.mark.parametrize("key", LABELS)
def test_a_label_at_the_limit_is_read(tmp_path, key):
    """The guard: 1,999,999 is a label (sparse numbers, as another tool's, stay)."""
    assert read_graph(_json_with(tmp_path, key, 1_999_999)).nodes["gpu1"][key] == 1_999_999


def test_the_limit_follows_the_setting(tmp_path, monkeypatch):
    monkeypatch.setenv("NETMODEL_MAX_FABRIC_NODES", "100")
    assert read_graph(_json_with(tmp_path, "rack", 99)).nodes["gpu1"]["rack"] == 99
    path = _json_with(tmp_path, "rack", 100)
    with pytest.raises(UserError) as e:
        read_graph(path)
    assert str(e.value) == f"{path}: {_refusal('rack', '100', 99)}"


def test_a_graphml_long_of_1e400_is_refused(tmp_path):
    path = tmp_path / "f.graphml"
    write_graph(build(SPEC), path)
    text = path.read_text()
    key = next(line.split('id="')[1].split('"')[0] for line in text.splitlines()
               if 'attr.name="server"' in line)
    start = text.index('<node id="gpu1">')
    at = text.index(f'<data key="{key}">', start)
    end = text.index("</data>", at)
    path.write_text(text[:at] + f'<data key="{key}">1e400' + text[end:])
    one_line_error(run_cli(["topology", "show", path]),
                   f"{path}: {_refusal('server', 'an integer of 401 digits')}")


def test_a_graph_in_memory_is_held_to_it():
    g = build(SPEC)
    g.nodes["gpu1"]["pod"] = 10**7
    with pytest.raises(UserError, match="label 'pod' is 10000000, above 1,999,999"):
        validate(g)


def test_fabrics_md_says_the_gpu_types_rule():
    """docs/fabrics.md (the schema's docstring) says what docs/compute.md says: a fabric
    file's gpu_types names hold no ',', '=', ':' and take no catalog name with other
    figures."""
    text = " ".join((Path(__file__).parents[2] / "docs" / "fabrics.md").read_text().split())
    assert ("in a fabric file a name holds none of `,`, `=`, `:`, as a GPU file's, and is no "
            "catalog GPU's name, in any case, with other figures than the catalog's") in text
