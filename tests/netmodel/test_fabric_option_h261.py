"""``blast-radius`` and ``availability`` on a user's own fabric: ``--fabric FILE|SPEC`` (h261).

Before, both took only ``--scenario`` (a shipped name, ``NAME@GPU`` or a ``.toml`` file whose
``[fabric]`` names a builder), so a fabric saved by ``netmodel topology export`` (or edited,
or made by hand) could not be asked about: ``--scenario dgx.json`` was 'unknown scenario'.
Now ``--fabric`` takes it as ``infer``, ``search`` and ``collective`` do (the CLI builds the
graph, :func:`netmodel.study.scenarios.fabric_scenario` makes the scenario object the library
takes), with their settings: placement contiguous, algorithm auto, the default calibration.

The checks: ``h100-dgx`` exported to JSON and GraphML (and stripped of its builder claim, so
read as hand-made) gives the scenario's figures exactly (its settings are those); a small
hand fabric's counts, failures a year, radii and first-order unavailability derived by hand;
the rule for a fabric without server labels; bad input refused in one line, exit 2, nothing
written.
"""

from __future__ import annotations

import json

import pytest

from tests.netmodel.cli_helpers import one_line_error, run_cli

MODEL = ["--model", "Llama-3-70B", "--no-plot"]
#: Hours of a Julian year (365.25 d), the year events are counted in.
YEAR_H = 8766.0
#: The failure catalog's figures (netmodel/data/failures.toml, with their sources there):
#: the reference GPU's whole rate (H100, F04: 268 GPU interruptions / 21,233,664 GPU-hours),
#: its area share (171 of 268), a host, a NIC, a transceiver and a switch per hour.
GPU, AREA, HOST, NIC, XCVR, SWITCH = 1.26e-5, 0.638, 1.73e-5, 3.3e-7, 6.6e-7, 3.33e-6
#: H100 SXM: 132 SMs (NVIDIA H100 datasheet).
SMS = 132
#: Local repair 24 h, detection 30 s, warm-up 60 s (the catalog's defaults).
REPAIR_S, DETECT_S, WARMUP_S = 86_400.0, 30.0, 60.0


def _hand(server: bool = True, **edit) -> dict:
    """Two servers of 4 H100, each on its own NVSwitch (board traces, 450 GB/s), every GPU
    with two 50 GB/s NIC cables over pluggable optics, one to each of two leaves (2 rails)."""
    nodes = [{"id": f"nvs{s}", "kind": "switch", "tier": 0, "radix": 72, "latency": 1.5e-7,
              "in_network_reduction": True} for s in range(2)]
    nodes += [{"id": f"leaf{r}", "kind": "switch", "tier": 1, "radix": 8, "latency": 3.3e-7,
               "in_network_reduction": False} for r in range(2)]
    edges = []
    for g in range(8):
        nodes.append({"id": f"gpu{g}", "kind": "gpu", "gpu": "H100-SXM",
                      **({"server": g // 4} if server else {})})
        edges.append({"source": f"gpu{g}", "target": f"nvs{g // 4}", "bandwidth": 450e9,
                      "latency": 1e-8, "medium": "board", "lanes": 36, "links": 18})
        edges += [{"source": f"gpu{g}", "target": f"leaf{r}", "bandwidth": 50e9,
                   "latency": 1e-7, "medium": "pluggable-optics", "lanes": 4} for r in range(2)]
    doc = {"directed": False, "multigraph": False,
           "graph": {"name": "2 servers x 4 H100, 2 rails", "spec": "", "gpus": 8},
           "nodes": nodes, "edges": edges}
    for gpu, labels in edit.items():
        node = next(n for n in doc["nodes"] if n["id"] == gpu)
        for k, v in labels.items():
            if v is None:
                node.pop(k)
            else:
                node[k] = v
    return doc


def _write(tmp_path, name: str, doc: dict):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """h100-dgx's fabric saved by ``topology export`` as JSON and GraphML, and the JSON with
    its builder claim removed (read as a hand-made graph)."""
    folder = tmp_path_factory.mktemp("fabrics")
    paths = {}
    for suffix in ("json", "graphml"):
        paths[suffix] = folder / f"dgx.{suffix}"
        r = run_cli(["topology", "export", "h100-dgx", "-o", paths[suffix]])
        assert r.exit_code == 0, r.output
    doc = json.loads(paths["json"].read_text())
    for key in ("builder", "args", "nodes_built", "edges_built"):
        doc["graph"].pop(key)
    doc["graph"]["spec"] = ""
    paths["hand-made"] = _write(folder, "dgx-hand.json", doc)
    return paths


def _json(args) -> dict:
    r = run_cli([*args, "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


@pytest.mark.parametrize("kind", ["json", "graphml", "hand-made"])
def test_exported_h100_dgx_gives_the_scenarios_blast_radius(exported, kind):
    # 64 GPUs: two copies, whose leaves, spines and uplinks are shared (8 cells a set)
    args = ["blast-radius", *MODEL, "--cluster-gpus", "64"]
    scen = _json([*args, "--scenario", "h100-dgx"])
    mine = _json([*args, "--fabric", exported[kind]])
    assert mine.pop("scenario") == f"{exported[kind]}@H100-SXM"
    assert scen.pop("scenario") == "h100-dgx@H100-SXM"
    assert mine == scen
    # and they are the counts of 64 H100 in 8 DGX: 8 hosts, 8 NVSwitch nodes, one set of
    # 8 rail leaves and 4 spines, 64 GPU-leaf cables x 2 ends + a quarter of the SU's 512
    # leaf-spine ends, in twin-port modules (two ends a module, P40; the file keeps
    # module_ports): (128 + 128) / 2
    counts = {r["cls"]: r["count"] for r in scen["rows"]}
    assert counts == {"gpu-die": 64, "gpu-package": 64, "host": 8, "rack": 8, "nic": 64,
                      "transceiver": (128 + 128) / 2, "nvswitch": 8, "leaf": 8, "spine": 4}


def test_a_scenarios_fabric_is_named_by_the_scenario_once():
    # it was 'lite-flat@Lite+BW@Lite+BW' (the reference, then the GPU again)
    args = ["blast-radius", *MODEL]
    mine = _json([*args, "--fabric", "h100-dgx@H100-SXM"])
    scen = _json([*args, "--scenario", "h100-dgx"])
    assert mine.pop("scenario") == "fabric of h100-dgx@H100-SXM"
    scen.pop("scenario")
    assert mine == scen   # h100-dgx's settings are --fabric's


def test_exported_h100_dgx_gives_the_scenarios_availability(exported):
    args = ["availability", *MODEL, "-q", "--trials", "20", "--spares", "2"]
    scen = _json([*args, "--scenario", "h100-dgx"])
    mine = _json([*args, "--fabric", exported["json"]])
    scen.pop("scenario"), mine.pop("scenario")
    assert mine == scen


def _rows(doc: dict) -> dict:
    return {r["cls"]: r for r in doc["rows"]}


def test_a_hand_fabric_blast_radius_by_hand(tmp_path):
    doc = _json(["blast-radius", *MODEL, "--fabric", _write(tmp_path, "h.json", _hand())])
    assert (doc["tp"], doc["instances"], doc["gpus"]) == (4, 2, 8)   # one TP-4 a server
    rows = _rows(doc)
    # class: (parts, rate per part per hour, GPUs, instances down) of one failure
    hand = {"gpu-die": (8, GPU * AREA, 1, 1), "gpu-package": (8, GPU * (1 - AREA), 1, 1),
            "host": (2, HOST, 4, 1),          # a server's 4 GPUs (and its NVSwitch)
            "nic": (16, NIC, 0, 0),           # a GPU keeps its other rail and its NVSwitch
            "transceiver": (32, XCVR, 0, 0),  # 16 cables x 2 ends
            "nvswitch": (2, SWITCH, 4, 1),    # stops its server's 4 GPUs
            "leaf": (2, SWITCH, 0, 0)}        # the other rail carries on; TP 4 stays inside
    assert list(rows) == list(hand)           # no rack label: no rack; no spine
    for cls, (parts, rate, gpus, down) in hand.items():
        r = rows[cls]
        assert r["count"] == parts
        assert r["rate_per_hour"] == pytest.approx(rate, rel=1e-12)
        assert r["events_per_year"] == pytest.approx(parts * rate * YEAR_H, rel=1e-12)
        assert (r["gpus_mean"], r["sms_mean"], r["instances_down_mean"]) == \
            (gpus, gpus * SMS, down)
        assert r["tokens_lost_pct_mean"] == pytest.approx(50.0 * down)   # 1 of 2 instances
    # failures a year that take an instance down: 8 x 1.26e-5 + 2 x 1.73e-5 + 2 x 3.33e-6
    # per hour x 8766 h = 1.24529796
    assert sum(rows[c]["events_per_year"] for c in ("gpu-die", "gpu-package", "host",
                                                     "nvswitch")) == pytest.approx(1.24529796)


def test_a_hand_fabric_availability_to_first_order(tmp_path):
    path = _write(tmp_path, "h.json", _hand())
    doc = _json(["availability", *MODEL, "-q", "--trials", "20", "--fabric", path])
    blast = _json(["blast-radius", *MODEL, "--fabric", path])
    assert doc["analytic"]["instance_down_events_per_year"] == pytest.approx(1.24529796)
    # each such failure takes half the capacity (1 of 2 instances) for detection + repair +
    # loading the TP-4 shard from a peer + warm-up (the swap without a spare is detection,
    # shard and warm-up: 90.1 s): unavailability 1.24529796 x 0.5 x 86,490.1 s / 31,557,600
    # s a year = 1.7065e-3 (to first order: failures that overlap are left out, a few in a
    # million of it)
    assert DETECT_S + WARMUP_S < blast["swap_s"] < DETECT_S + WARMUP_S + 1
    down_s = REPAIR_S + blast["swap_s"]
    lost = 1.24529796 * 0.5 * down_s / (YEAR_H * 3600)
    assert 1 - doc["analytic"]["mean"] == pytest.approx(lost, rel=1e-5)


def test_a_fabric_without_server_labels_takes_8_consecutive_h100_a_host(tmp_path):
    # the rule the shipped lite-flat (no labels) runs by: the catalog's host of 8 GPUs of a
    # full-size GPU; here one host of all 8, holding both NVSwitches
    doc = _json(["blast-radius", *MODEL, "--fabric",
                 _write(tmp_path, "u.json", _hand(server=False))])
    host = _rows(doc)["host"]
    assert host["count"] == 1
    assert host["events_per_year"] == pytest.approx(HOST * YEAR_H)
    assert (host["gpus_mean"], host["sms_mean"], host["instances_down_mean"],
            host["tokens_lost_pct_mean"]) == (8, 8 * SMS, 2, pytest.approx(100.0))


def _bad_json(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text('{"nodes": [')
    return p


BAD = [
    (lambda t: ["--fabric", t / "missing.json"], ["missing.json", "does not exist"]),
    (lambda t: ["--fabric", _bad_json(t)], ["bad.json", "not a readable json fabric"]),
    (lambda t: ["--fabric", "warp:n=4"], ["unknown fabric 'warp:n=4'", "known: "]),
    (lambda t: ["--fabric", "ring:n=8,gpu=H100-SXM", "--scenario", "h100-dgx"],
     ["give --scenario or --fabric, not both"]),
    (lambda t: [], ["give --scenario S", "or --fabric FILE|SPEC"]),
    (lambda t: ["--fabric", _write(t, "p.json", _hand(gpu5={"server": None}))],
     ["GPU 'gpu5' has no 'server' label", "7 of its 8", "or none (then every 8 consecutive"]),
    (lambda t: ["--fabric", _write(t, "r.json", _hand(gpu0={"rack": 0}))],
     ["GPU 'gpu1' has no 'rack' label", "1 of its 8"]),
    (lambda t: ["--fabric", _write(t, "m.json", _hand(gpu7={"gpu": "A100-SXM-80GB"}))],
     ["holds 2 GPU types (A100-SXM-80GB, H100-SXM)"]),
    (lambda t: ["--fabric", "ocs:gpus=16,gpu=Lite"], ["is an OCS fabric with no circuits set",
                                                      "logical=ring"]),
]


@pytest.mark.parametrize("command", ["blast-radius", "availability"])
@pytest.mark.parametrize("case", range(len(BAD)))
def test_bad_fabric_input_is_one_line_exit_2_nothing_written(tmp_path, command, case):
    make, needles = BAD[case]
    out = tmp_path / "out"
    r = run_cli([command, *MODEL, *make(tmp_path), "--out", out]
                + (["-q"] if command == "availability" else []))
    one_line_error(r, *needles)
    assert not out.exists()


def test_a_switch_without_its_tier_is_refused_naming_it(tmp_path):
    doc = _hand()
    del doc["nodes"][2]["tier"]
    r = run_cli(["blast-radius", *MODEL, "--fabric", _write(tmp_path, "t.json", doc)])
    one_line_error(r, "switch node 'leaf0' lacks attribute(s) tier")


def test_the_library_takes_the_graph_and_refuses_what_it_cannot_run():
    from compute.errors import UserError
    from netmodel.study.blast_radius import blast_radius
    from netmodel.study.scenario_fabric import build_fabric
    from netmodel.study.scenarios import fabric_scenario

    s = fabric_scenario(build_fabric("h100-dgx"), "mine")
    dgx = blast_radius(s, "Llama-3-70B")
    ref = blast_radius("h100-dgx", "Llama-3-70B")
    assert [r.to_dict() for r in dgx.rows] == [r.to_dict() for r in ref.rows]
    with pytest.raises(UserError, match="built for GPU 'H100-SXM', not 'Lite'"):
        s.with_gpu("Lite")
    with pytest.raises(UserError, match="save the fabric with netmodel topology export"):
        s.to_toml()
    with pytest.raises(UserError, match="is a graph, with no builder parameters"):
        s.with_param("fabric.domains", 8)
