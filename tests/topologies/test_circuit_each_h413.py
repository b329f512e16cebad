"""A circuit edge's ``via_bandwidth`` and ``via_lanes`` are checked where a fabric is read.

realize writes each circuit's bandwidth and lanes (comma-separated, in ``via``'s order)
where a pair's circuits differ, and drop_circuits keeps those of the circuits left; the
schema let any text through (a negative rate, NaN, a count or sum that does not match
the edge), so a fabric file was read and costed, and the figure refused (or summed as
given) only when a failure dropped a circuit. Now validate refuses it in one line naming
both attributes, and the CLI exits 2.
"""

from __future__ import annotations

import json
import math

import pytest

from compute.errors import UserError
from tests.netmodel.cli_helpers import run_cli
from topologies.io import read_graph, write_graph
from topologies.optical import drop_circuits, ocs, realize
from topologies.schema import validate

PORT, SLOW = 37.5e9, 9.375e9   # a Lite's port; one of gpu0's made a quarter of it


@pytest.fixture
def unequal():
    """gpu0-gpu1 on 3 circuits, gpu0's port on ocs1 a quarter rate with 1 lane."""
    g = ocs(gpus=2, ports=3, ocs_ports=4, gpu="Lite")
    g.edges["gpu0", "ocs1"]["bandwidth"] = SLOW
    g.edges["gpu0", "ocs1"]["lanes"] = 1
    return realize(g, [("gpu0", "gpu1")] * 3)


def test_realize_writes_each_circuit(unequal):
    d = unequal.edges["gpu0", "gpu1"]
    assert [float(x) for x in d["via_bandwidth"].split(",")] == [PORT, SLOW, PORT]
    assert d["bandwidth"] == 2 * PORT + SLOW
    assert d["via_lanes"] == "3,1,3" and d["lanes"] == 7


@pytest.mark.parametrize(("key", "value"), [
    ("via_bandwidth", "-1.0,9375000000.0,37500000000.0"),     # negative
    ("via_bandwidth", "nan,9375000000.0,37500000000.0"),      # NaN
    ("via_bandwidth", "inf,9375000000.0,37500000000.0"),      # infinite
    ("via_bandwidth", "37500000000.0,9375000000.0"),          # 2 rates for 3 circuits
    ("via_bandwidth", "37500000000.0,37500000000.0,37500000000.0"),   # sums to 112.5e9
    ("via_bandwidth", "37500000000.0,x,37500000000.0"),       # not a number
    ("via_lanes", "3,0,3"),                                   # a circuit of no lane
    ("via_lanes", "3,1,2"),                                   # sums to 6, the edge 7
    ("via_lanes", "3,1.5,2.5"),                               # not whole
    ("via_lanes", None),                                      # one without the other
])
def test_bad_per_circuit_figures_are_refused(unequal, key, value):
    d = unequal.edges["gpu0", "gpu1"]
    if value is None:
        del d[key]
    else:
        d[key] = value
    with pytest.raises(UserError, match=r"circuit 'gpu0'-'gpu1' via_bandwidth .* and "
                                        r"via_lanes .* must give each of its 3 circuits'"):
        validate(unequal, check_connected=False)


@pytest.mark.parametrize("suffix", [".json", ".graphml"])
def test_round_trip_keeps_each_circuit(unequal, tmp_path, suffix):
    path = tmp_path / f"f{suffix}"
    write_graph(unequal, path)
    back = read_graph(path)
    assert back.edges["gpu0", "gpu1"] == unequal.edges["gpu0", "gpu1"]
    drop_circuits(back, {"ocs0"})
    d = back.edges["gpu0", "gpu1"]
    assert math.isclose(d["bandwidth"], SLOW + PORT) and d["lanes"] == 1 + 3
    validate(back, check_connected=False)   # what is left still adds up


def test_the_cli_refuses_a_file_of_bad_figures(unequal, tmp_path):
    path = tmp_path / "f.json"
    write_graph(unequal, path)
    text = path.read_text()
    assert text.count('"3,1,3"') == 1
    path.write_text(text.replace('"3,1,3"', '"3,1,9"'))
    json.loads(path.read_text())
    run = run_cli(["topology", "show", path])
    assert run.exit_code == 2, (run.output, run.exception)
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "via_lanes '3,1,9'" in lines[0] and "Traceback" not in run.stderr
