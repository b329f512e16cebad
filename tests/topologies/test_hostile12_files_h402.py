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


def _json_document(tmp_path, edit):
    import json

    path = tmp_path / "ring.json"
    write_graph(build("ring:n=4"), path)
    document = json.loads(path.read_text())
    edit(document)
    path.write_text(json.dumps(document))
    return path


def test_a_misspelt_edges_key_is_refused_not_read_as_no_links(tmp_path):
    """Before: 'edge' for 'edges' read a fabric of no links: "invalid fabric graph: GPU
    'gpu1' cannot reach GPU 'gpu0' (3 GPU(s) disconnected)"; 'edgez' beside 'edges': exit 0."""
    path = _json_document(tmp_path, lambda d: d.__setitem__("edge", d.pop("edges")))
    assert _refusal(path) == (f"{path}: unknown key(s) 'edge' in the node-link document; "
                              "allowed: directed, multigraph, graph, nodes, edges, links")


def test_both_edges_and_links_are_refused(tmp_path):
    """Before: 'links' beside 'edges' was dropped without a word (exit 0)."""
    path = _json_document(tmp_path, lambda d: d.__setitem__("links", d["edges"][:1]))
    assert _refusal(path) == (f"{path}: gives both 'edges' and 'links' (older networkx's name "
                              "for them); give one")


@pytest.mark.parametrize("suffix", [".json", ".graphml"])
def test_a_unit_for_a_quantity_netmodel_does_not_know_is_refused(tmp_path, suffix):
    """Before: units {"bandwith": "Gbps"} (the user's unit for bandwidth, misspelt) was passed
    over and the bandwidths read as bytes/s (exit 0)."""
    path = tmp_path / f"ring{suffix}"
    write_graph(build("ring:n=4"), path)
    text = path.read_text()
    old = ('"bandwidth": "bytes/s per direction"' if suffix == ".json" else
           '{"bandwidth": "bytes/s per direction"')
    assert old in text
    path.write_text(text.replace(old, old + ', "bandwith": "Gbps"', 1))
    said = _refusal(path)
    assert said == (f"{path}: 'units' names quantity(ies) 'bandwith' netmodel has no unit for; "
                    "allowed: bandwidth, latency, reconfiguration_time, radix, ports, lanes, "
                    "links, gpus, gpu_types"), said


def test_a_links_document_and_extra_node_attributes_still_load(tmp_path):
    # networkx before 3.4 wrote 'links'; attributes the schema does not know are kept
    def edit(d):
        d["links"] = d.pop("edges")
        d["nodes"][0]["label"] = "first"
    g = read_graph(_json_document(tmp_path, edit))
    assert g.number_of_edges() == 4 and g.nodes["gpu0"]["label"] == "first"


def _realized():
    from topologies.optical import ocs, realize

    return realize(ocs(gpus=4, ports=2, ocs_ports=4), [("gpu0", "gpu1")] * 2)


@pytest.mark.parametrize(("ocs", "fibres"), [("ocs10", ()), ("ocs", ()), ((), "gpu0"),
                                             ((), [["gpu0", "ocs0"]]), (None, ())])
def test_drop_circuits_takes_sets_of_ids_not_text(ocs, fibres):
    """Before: drop_circuits(g, "ocs10") matched 'ocs1' by substring and took its circuit
    (and "ocs" took both); fibres "gpu0" raised TypeError ('in <string>' requires string)."""
    from topologies.optical import drop_circuits

    g = _realized()
    before = dict(g.edges["gpu0", "gpu1"])
    with pytest.raises(UserError, match=r"^(ocs|fibres) must be a set of "):
        drop_circuits(g, ocs, fibres)
    assert dict(g.edges["gpu0", "gpu1"]) == before and "ocs_cabling" in g.graph   # untouched


def test_drop_circuits_matches_ids_exactly():
    from topologies.optical import drop_circuits

    g = _realized()
    both = g.edges["gpu0", "gpu1"]["bandwidth"]
    drop_circuits(g, ["ocs1"])   # a list is a set of ids too; one circuit of two left
    assert g.edges["gpu0", "gpu1"]["via"] == "ocs0"
    assert g.edges["gpu0", "gpu1"]["bandwidth"] == both / 2


@pytest.mark.parametrize(("field", "bad"), [("sms", 0), ("max_instance", 1.5),
                                            ("sms", True), ("max_instance", 100_001)])
def test_a_saved_gpu_types_whole_field_is_told_its_range_from_the_limits_file(tmp_path, field,
                                                                              bad):
    """Before: topologies/schema_gpu declared sms and max_instance whole itself (beside
    compute/data/limits.toml, which says so too) and told 'must be a whole number >= 1, got
    0' (100,001 then the limits file's range): one fact, now read from the limits file."""
    import json

    from compute.gpu_ranges import spec_ranges
    from compute.hardware import get_gpu

    lo, hi, whole, _, _ = spec_ranges()[field]
    assert whole and (lo, hi) == (1, 100_000)
    fields = dict(get_gpu("Lite").to_dict(), **{field: bad})
    path = _json_document(tmp_path, lambda d: d["graph"].__setitem__("gpu_types",
                                                                    {"Lite": fields}))
    assert json.loads(path.read_text())["graph"]["gpu_types"]["Lite"][field] == bad
    said = _refusal(path)
    assert said.endswith(f"gpu_types: GPU type 'Lite': {field} must be a whole number from 1 "
                         f"to 100,000, got {bad}"), said


def test_a_graphml_key_id_declared_twice_is_named(tmp_path):
    """Before: the second <key id='d13'> replaced the first (networkx's way), and the
    file was told of the first key's <data>: "data refers to key 'd12', which no <key>
    declares"."""
    path = tmp_path / "ring.graphml"
    write_graph(build("ring:n=4"), path)
    text = path.read_text()
    first = re.search(r'<key id="(d\d+)"', text)[1]
    second = re.findall(r'<key id="(d\d+)"', text)[1]
    path.write_text(text.replace(f'<key id="{second}"', f'<key id="{first}"', 1))
    assert _refusal(path) == (f"{path} is not a readable graphml fabric: <key> id '{first}' is "
                              "declared twice; give each <key> its own id")


def test_graphml_keys_are_counted_as_they_are_declared(tmp_path):
    """Before: 2,000,000 unused <key> elements (a 140 MB file, under the 1 GiB limit) were
    all kept: 0.82 GB and 14 s for a 4-GPU ring. Now the MAX_KEYS + 1st is refused."""
    from topologies.graphml import MAX_KEYS

    path = tmp_path / "ring.graphml"
    write_graph(build("ring:n=4"), path)
    text = path.read_text()
    keys = "".join(f'<key id="k{i}" for="node" attr.name="a{i}" attr.type="string"/>'
                   for i in range(MAX_KEYS))   # with the file's own: MAX_KEYS + its 14
    path.write_text(text.replace("<graph ", keys + "<graph ", 1))
    assert _refusal(path) == (f"{path}: more than {MAX_KEYS:,} <key> elements; a fabric's "
                              "attributes need about 25")
    few = "".join(f'<key id="k{i}" for="node" attr.name="a{i}" attr.type="string"/>'
                  for i in range(MAX_KEYS - 14))   # exactly MAX_KEYS in all: read
    path.write_text(text.replace("<graph ", few + "<graph ", 1))
    assert read_graph(path).number_of_edges() == 4
