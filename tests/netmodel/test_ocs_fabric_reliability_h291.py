"""``blast-radius`` and ``availability`` on a user's OCS fabric whose circuits are set (h291).

Before, ``--fabric ocs:gpus=16,gpu=Lite,logical=ring`` (which ``infer --fabric`` runs) was
refused by both: "has an optical circuit switch ('ocs0'), whose circuits a scenario sets per
instance". Now such a fabric (a spec with ``logical=ring`` or ``logical=torus:AxB``, a file
saved from one, a scenario's OCS fabric) is built into the kind of scenario the shipped
``lite-ocs`` is: the ``ocs`` builder's cabling from the spec's own arguments, each
instance's circuits set to a ring (or torus) of its own GPUs and re-set, at the OCS's
reconfiguration time, when a spare joins. Refused in one line, exit 2: an OCS fabric with no
circuits set (with ``infer``'s advice, ``logical=ring``), and circuits the models cannot
re-set per instance (a circuit list, a full mesh).

The check: ``lite-ocs`` with its circuits fixed as rings (the shipped one sets a torus
where that is faster, ``circuits = "best"``) and the spec of its fabric with
``logical=ring`` give the same JSON, the scenario's label aside. What that does not keep of ``infer --fabric``'s meaning is asserted by hand: infer
costs the one logical ring over every GPU, one circuit (a quarter of the Lite's 112.5 GB/s
over 4 ports) per neighbour pair; the scenario sets each instance its own ring on its
members, two parallel circuits per pair (4 ports // 2), 56.25 GB/s.
"""

from __future__ import annotations

import json

import pytest

from tests.netmodel.cli_helpers import one_line_error, run_cli
from tests.netmodel.lite_ocs_ring_h479 import ring_file

#: lite-ocs's fabric as a spec: 128 Lites, 4 ports (the builder's default) on OCS of 136
#: ports, 10 m of fibre; bandwidth (the Lite's scale-up), 10 ms reconfiguration, 0 s OCS
#: latency and co-packaged optics are the builder's defaults and the scenario's values.
LITE_OCS = "ocs:gpus=128,ocs_ports=136,gpu=Lite,length=10,logical=ring"
MODEL = ["--model", "Llama-3-8B"]
#: Lite: 112.5 GB/s of scale-up per direction (compute's catalog), over 4 optical ports.
LITE_BW, PORTS = 112.5e9, 4


def _json(command: str, *where: str) -> dict:
    r = run_cli([command, *where, *MODEL, "--json"]
                + (["-q", "--no-plot"] if command == "availability" else []))
    assert r.exit_code == 0, (r.output, r.exception)
    return json.loads(r.output)


@pytest.mark.parametrize("command", ["blast-radius", "availability"])
def test_the_spec_of_lite_ocs_fabric_gives_lite_ocs_figures(command, tmp_path):
    ref = _json(command, "--scenario", ring_file(tmp_path))
    mine = _json(command, "--fabric", LITE_OCS)
    assert ref.pop("scenario") == "lite-ocs-ring@Lite"
    assert mine.pop("scenario") == LITE_OCS   # the spec names its GPU: no '@Lite' added
    assert mine == ref
    # the circuits are re-set on recovery: the swap charges the OCS's 10 ms
    if command == "availability":
        assert mine["swap_s"] == pytest.approx(ref["swap_s"])
        assert mine["gpus"] == 128 and mine["instances"] * mine["instance_gpus"] == 128


def test_a_saved_file_and_the_scenario_fabric_give_the_spec_figures(tmp_path):
    spec = "ocs:gpus=16,gpu=Lite,logical=ring"
    r = run_cli(["topology", "export", spec, "-o", tmp_path / "ring.json"])
    assert r.exit_code == 0, r.output
    by_spec = _json("blast-radius", "--fabric", spec)
    by_file = _json("blast-radius", "--fabric", str(tmp_path / "ring.json"))
    assert by_spec.pop("scenario") == spec
    assert by_file.pop("scenario") == f"{tmp_path / 'ring.json'}@Lite"
    assert by_file == by_spec
    by_name = _json("blast-radius", "--fabric", "lite-ocs")
    ref = _json("blast-radius", "--scenario", "lite-ocs")
    assert by_name.pop("scenario") == "fabric of lite-ocs@Lite"
    ref.pop("scenario")
    assert by_name == ref


def test_the_scenario_takes_the_spec_arguments_and_its_circuits():
    from netmodel.study.reliability_fabric import fabric_cluster_scenario
    from netmodel.study.scenario_catalog import shipped_scenario
    from netmodel.study.scenario_fabric import build_fabric

    s = fabric_cluster_scenario(LITE_OCS)
    ref = shipped_scenario("lite-ocs")
    assert s.is_ocs and s.circuits == "ring" and s.gpu == "Lite"
    ours, theirs = build_fabric(s), build_fabric(ref)   # built alike: the same cabling
    assert list(ours.nodes(data=True)) == list(theirs.nodes(data=True))
    assert list(ours.edges(data=True)) == list(theirs.edges(data=True))
    assert ours.number_of_edges() == 128 * PORTS   # GPU-OCS fibres: circuits set per instance
    t = fabric_cluster_scenario("ocs:gpus=32,ports=6,gpu=Lite,logical=torus:4x8")
    assert t.circuits == "torus" and t.fabric_spec() == "ocs:gpus=32,ports=6,gpu=Lite"


def test_per_instance_circuits_against_infer_s_one_ring_by_hand():
    """What the scenario does not keep of ``infer --fabric``: the fabric-wide ring's one
    circuit per pair (28.125 GB/s) against the instance's own ring of two (56.25 GB/s),
    closed among its members rather than over the other GPUs."""
    from netmodel.study.placed_graph import instance_circuits
    from netmodel.study.reliability_fabric import fabric_cluster_scenario
    from netmodel.study.scenario_fabric import build_fabric
    from topologies.specs import build

    spec = "ocs:gpus=16,gpu=Lite,logical=ring"
    wide = build(spec)
    assert wide.number_of_edges() == 16
    assert {d["bandwidth"] for *_, d in wide.edges(data=True)} == {LITE_BW / PORTS}
    assert not wide.has_edge("gpu0", "gpu7")   # a TP-8 instance's ring closes via gpu8..15
    s = fabric_cluster_scenario(spec)
    members = [f"gpu{i}" for i in range(8)]
    own = instance_circuits(s, build_fabric(s), members)
    assert own.number_of_edges() == 8 and own.has_edge("gpu0", "gpu7")
    assert {d["bandwidth"] for *_, d in own.edges(data=True)} == {2 * LITE_BW / PORTS}
    assert {d["links"] for *_, d in own.edges(data=True)} == {PORTS // 2}


def test_the_recovery_charges_the_reconfiguration_time():
    from netmodel.study.reliability_cluster import build_cluster
    from netmodel.study.reliability_fabric import fabric_cluster_scenario
    from netmodel.study.reliability_timings import recovery_times

    c = build_cluster(fabric_cluster_scenario(
        "ocs:gpus=16,gpu=Lite,logical=ring,reconfiguration_time=0.2"), "Llama-3-8B")
    d = build_cluster(fabric_cluster_scenario("ocs:gpus=16,gpu=Lite,logical=ring"),
                      "Llama-3-8B")
    assert recovery_times(c).reconfiguration_s == 0.2 and recovery_times(d).reconfiguration_s == 0.01
    assert recovery_times(c).swap_s() - recovery_times(d).swap_s() == pytest.approx(0.19)


BAD = [
    (lambda t: "ocs:gpus=16,gpu=Lite",
     ["fabric 'ocs:gpus=16,gpu=Lite' is an OCS fabric with no circuits set",
      "ocs:gpus=16,gpu=Lite,logical=ring (or logical=torus:AxB)"]),
    (lambda t: "ocs:gpus=4,gpu=Lite,logical=0-1;1-2;2-3;3-0",
     ["sets its circuits as '0-1;1-2;2-3;3-0'", "give logical=ring or logical=torus:AxB"]),
    (lambda t: "ocs:gpus=4,gpu=Lite,logical=full-mesh", ["sets its circuits as 'full-mesh'"]),
]


@pytest.mark.parametrize("command", ["blast-radius", "availability"])
@pytest.mark.parametrize("case", range(len(BAD)))
def test_an_ocs_fabric_without_circuits_it_can_reset_is_one_line(tmp_path, command, case):
    make, needles = BAD[case]
    out = tmp_path / "out"
    r = run_cli([command, *MODEL, "--fabric", make(tmp_path), "--out", out])
    one_line_error(r, *needles)
    assert not out.exists()


def test_a_saved_file_without_circuits_or_builder_is_one_line(tmp_path):
    r = run_cli(["topology", "export", "ocs:gpus=16,gpu=Lite", "-o", tmp_path / "p.json"])
    assert r.exit_code == 0, r.output
    one_line_error(run_cli(["blast-radius", *MODEL, "--fabric", tmp_path / "p.json"]),
                   "is an OCS fabric with no circuits set",
                   "save the fabric with its circuits set (a spec with logical=ring)")
    r = run_cli(["topology", "export", "ocs:gpus=16,gpu=Lite,logical=ring",
                 "-o", tmp_path / "r.json"])
    doc = json.loads((tmp_path / "r.json").read_text())
    for key in ("builder", "args"):
        doc["graph"].pop(key)
    (tmp_path / "h.json").write_text(json.dumps(doc))
    one_line_error(run_cli(["blast-radius", *MODEL, "--fabric", tmp_path / "h.json"]),
                   "holds OCS circuits but no 'ocs' builder's arguments")
