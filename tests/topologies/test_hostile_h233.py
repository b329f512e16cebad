"""Hostile input, helper 233: the GPU label ``device`` (the device index NCCL's PXN relays by,
9a29eee) in a fabric file.

Routing (``route_pxn.PxnRoutes._pxn_devices``) reads the labels only where every GPU with a
``server`` label has a whole, unique one, and silently fell back to the GPUs' positions
otherwise: a file's -1, 2.5, True, '3', None, a duplicate within a server, a GPU left
without one, or one on a GPU with no server was taken without a word. A device of 10**12
got through to PXN's (server, device) table: ``collective all-to-all --fabric FILE`` died
with numpy's ``_ArrayMemoryError`` (14.6 TiB) and a traceback, exit 1; ``[3]`` raised
``TypeError: unhashable type: 'list'`` in ``route_sharing.router_for``. The schema now
checks them; and a spare wired like a labelled GPU takes its server's next index (it
copied the template's, which the uniqueness rule refuses and routing ignored).
"""

from __future__ import annotations

import json

import networkx as nx
import pytest

from compute.errors import UserError
from tests.netmodel.cli_helpers import one_line_error, run_cli
from topologies.degrade import keep_devices
from topologies.io import read_graph, write_graph
from topologies.registry import build
from topologies.schema import validate
from topologies.spares import add_spares

# 2 servers of 8 H100 (gpu0-7 server 0, gpu8-15 server 1), rail-optimized: PXN applies
SPEC = "rail-optimized:domains=2"


def _saved(tmp_path, device):
    """The fabric saved as JSON with ``device(i)`` set on GPU i (``...``: left unset)."""
    path = tmp_path / "f.json"
    write_graph(build(SPEC), path)
    data = json.loads(path.read_text())
    for node in data["nodes"]:
        if node["kind"] == "gpu":
            value = device(int(node["id"][3:]))
            if value is not ...:
                node["device"] = value
    path.write_text(json.dumps(data))
    return path


def _gpu3(value):
    return lambda i: value if i == 3 else i % 8


PREFIX = "invalid fabric graph: "
TYPE = "gpu node 'gpu3' label 'device' must be a whole number >= 0 (its device index in its " \
       "server), got "


@pytest.mark.parametrize("value, shown", [(-1, "-1"), (2.5, "2.5"), (3.0, "3.0"), (True, "True"),
                                          ("3", "'3'"), (None, "null"), ([3], "[3]")])
def test_a_device_that_is_no_whole_number_is_refused(tmp_path, value, shown):
    with pytest.raises(UserError) as info:
        read_graph(path := _saved(tmp_path, _gpu3(value)))
    assert str(info.value) == f"{path}: " + PREFIX + TYPE + shown


def test_a_device_past_the_fabric_limit_is_refused_in_one_line(tmp_path):
    """The case that crashed: numpy's 14.6 TiB allocation, a traceback and exit 1."""
    path = _saved(tmp_path, _gpu3(10**12))
    line = (f"error: {path}: invalid fabric graph: gpu node 'gpu3' label 'device' is "
            "1000000000000, "
            "above 1,999,999: a device index numbers a GPU of its server, and a fabric has at "
            "most 2,000,000 nodes (NETMODEL_MAX_FABRIC_NODES)")
    r = run_cli(["collective", "all-to-all", "--fabric", path, "--group", "16"])
    assert one_line_error(r) == line


def test_a_device_given_twice_in_a_server_is_refused(tmp_path):
    with pytest.raises(UserError) as info:
        read_graph(path := _saved(tmp_path, _gpu3(0)))
    assert str(info.value) == f"{path}: " + PREFIX + (
        "gpu nodes 'gpu0' and 'gpu3' of server 0 both have device 0; each GPU of a server has "
        "its own device index")


def test_the_same_device_in_two_servers_is_read(tmp_path):
    g = read_graph(_saved(tmp_path, lambda i: i % 8))
    assert [g.nodes[f"gpu{i}"]["device"] for i in (0, 7, 8, 15)] == [0, 7, 0, 7]


def test_a_gpu_left_without_a_device_is_refused(tmp_path):
    r = run_cli(["topology", "show", path := _saved(tmp_path, _gpu3(...))])
    assert one_line_error(r) == (
        f"error: {path}: invalid fabric graph: gpu node 'gpu3' has a 'server' label but no 'device' "
        "label, while gpu node 'gpu0' has one; give every GPU with a 'server' label its device "
        "index, or none (then it is the GPU's position among its server's GPUs)")


def test_a_device_on_a_gpu_without_a_server_is_refused(tmp_path):
    path = _saved(tmp_path, lambda i: i % 8)
    data = json.loads(path.read_text())
    gpu3 = next(n for n in data["nodes"] if n["id"] == "gpu3")
    del gpu3["server"]
    path.write_text(json.dumps(data))
    with pytest.raises(UserError) as info:
        read_graph(path)
    assert str(info.value) == f"{path}: " + PREFIX + (
        "gpu node 'gpu3' has label 'device' (3) but no 'server' label; a device index numbers "
        "a GPU of its server")


def test_a_degraded_server_keeps_indices_up_to_its_count():
    """gpu0 failed: server 0 has 7 GPUs, devices 1 to 7 (7 is its count): valid, as
    ``degrade`` leaves it (the collective model validates the degraded graph)."""
    g = build(SPEC)
    keep_devices(g, ["gpu0"])
    g.remove_node("gpu0")
    g.graph["gpus"] = 15
    assert validate(g) is g
    assert sorted(g.nodes[f"gpu{i}"]["device"] for i in range(1, 8)) == [1, 2, 3, 4, 5, 6, 7]


def test_a_spare_takes_its_servers_next_device():
    """Three spares wired like gpu0 (one switch, free ports) in server 0 of devices 0 and 1:
    2, 3, 4; the template's 0 (copied before) made two GPUs of device 0."""
    g = nx.Graph(name="t", spec="", gpus=4)
    g.add_node("sw", kind="switch", tier=0, radix=8, latency=0.0, in_network_reduction=False)
    for i in range(4):
        g.add_node(f"gpu{i}", kind="gpu", gpu="H100-SXM", server=i // 2)
        g.add_edge(f"gpu{i}", "sw", bandwidth=1e9, latency=0.0, medium="copper", lanes=1)
    keep_devices(g, ["gpu0"])
    out, names = add_spares(g, 3)
    assert [(out.nodes[n]["server"], out.nodes[n]["device"]) for n in names] == \
        [(0, 2), (0, 3), (0, 4)]
    assert validate(out) is out
    g_plain = build("flat:n=6,planes=2,radix=8")   # no device labels: spares get none
    out, names = add_spares(g_plain, 2)
    assert all("device" not in out.nodes[n] for n in names)


def test_a_json_fabric_with_a_key_given_twice_is_refused(tmp_path):
    """json kept the last of two values: a GPU's "rail": 1, "rail": 2 read as 2."""
    path = tmp_path / "f.json"
    write_graph(build(SPEC), path)
    text = path.read_text()
    at = text.index('"rail": 3')
    path.write_text(text[:at] + '"rail": 9, ' + text[at:])
    r = run_cli(["topology", "show", path])
    assert one_line_error(r) == (f"error: {path} is not a readable json fabric: key 'rail' is "
                                 f"given twice in one object; give each key once")
