"""A failed tier-0 (scale-up) switch stops every GPU wired to it, by hand.

NVIDIA Fabric Manager User Guide (release 2.3), Error Handling > High Availability Mode
Comparison > DGX H100/HGX H100, NVSWITCH_FAILURE_MODE: "H100 systems ignore this setting.
If an NVLink Switch is unavailable GPUs will fail to complete registration with the NVLink
fabric and CUDA application launch fails." (the 5/6-bandwidth degraded mode is "effective
only on DGX A100 and NVIDIA HGX A100"). NMX-M Partition Health (NVL72): "There could be a
loss of a switch ... This state is not considered operational", in every resiliency mode.
So the instances with a member on the switch are down until it is repaired; the GPUs are
not failed, they are stopped (``gpus_disabled``), and nothing is re-routed over the NICs
(the old model removed the switch node and slowed the instances: h100-dgx 12.7% of the
tokens, no instance down).
"""

from pathlib import Path

import pytest

from netmodel.study.availability import availability
from netmodel.study.blast_radius import blast_radius
from netmodel.study.reliability_catalog import HOUR, catalog
from tests.netmodel.scenario_helpers import write_scenario
from topologies.degrade import degrade
from topologies.failure_domains import components
from topologies.spares import add_spares
from topologies.specs import build

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
SWITCH = 3.33e-6     # per switch-hour (F54, failures.toml [class.nvswitch])


def _row(table, cls):
    return next(r for r in table.rows if r.cls == cls)


@pytest.fixture(scope="module")
def dgx():
    return blast_radius("h100-dgx", "Llama-3-70B")


def test_h100_dgx_nvswitch_takes_its_server_down(dgx):
    # 4 DGX H100 of 8 GPUs, each on its own (logical) NVSwitch; TP 4 placed contiguously:
    # 2 instances a server, 8 in all. One NVSwitch down stops its 8 GPUs: 2 of 8 instances,
    # 25% of the tokens (was 0 instances and 12.7%, re-routed over the NICs)
    c = dgx.cluster
    assert (c.tp, c.instance_gpus, c.instances_total, c.gpus) == (4, 4, 8, 32)
    row = _row(dgx, "nvswitch")
    assert row.count == 4 and row.events_per_year == pytest.approx(4 * SWITCH * 8766)
    assert (row.gpus_max, row.sms_max, row.instances_down_max) == (8, 8 * 132, 2)
    assert row.tokens_lost_pct_max == pytest.approx(25.0)
    assert row.tokens_lost_pct_mean == pytest.approx(25.0)
    assert row.recovery_without_spares.startswith("repair (")
    (e,) = [x for x in dgx.effects if x.cls == "nvswitch"]
    # the hardware radius: stopped, not failed and not cut off (the NICs still reach them)
    assert (e.gpus_lost, e.gpus_disabled, e.gpus_cut, e.gpus) == (0, 8, 0, 8)
    assert e.slow == 0 and e.down_members == (4, 4)
    # the server's host failure takes the same two instances
    assert _row(dgx, "host").tokens_lost_pct_max == pytest.approx(25.0)


def test_h100_dgx_availability_nvswitch_term(dgx):
    # without spares the 4 NVSwitches cost 4 x 3.33e-6/h x 2 instances x d / 8 of the
    # capacity, d = 30 s + 24 h + 60 s + the 35 GB shard at 450 GB/s = 24.0251 h
    c = dgx.cluster
    base = availability("h100-dgx", "Llama-3-70B", trials=10, cluster=c)
    none = availability("h100-dgx", "Llama-3-70B", trials=10,
                        cluster=c.with_catalog(catalog().with_(rates={"nvswitch": 0.0})))
    kind = next(k for k in base.kinds if k.cls == "nvswitch")
    d = kind.d_repair / HOUR
    assert d == pytest.approx(24 + 90 / 3600, abs=1e-4)
    assert none.no_spares.mean - base.no_spares.mean == pytest.approx(
        4 * SWITCH * 2 * d / 8, rel=1e-6)


def test_nvl72_switch_tray_stops_the_rack():
    # docs/examples/gb300-nvl72.toml: 2 racks of 72, TP 4: 36 instances. A switch tray (9
    # a rack, 18 parts) stops its rack's 72 GPUs: 18 instances, 50% (was none down, 34.2%);
    # capacity 18 x 3.33e-6/h x 18 x d / 36, d = 24.02504 h
    example = str(EXAMPLES / "gb300-nvl72.toml")
    b = blast_radius(example, "Llama-3.1-405B")
    row = _row(b, "nvswitch")
    assert row.count == 18
    assert (row.gpus_max, row.instances_down_max) == (72, 18)
    assert row.tokens_lost_pct_max == pytest.approx(50.0)
    (e,) = [x for x in b.effects if x.cls == "nvswitch"]
    assert (e.gpus_lost, e.gpus_disabled, e.gpus_cut) == (0, 72, 0)
    c = b.cluster
    base = availability(example, "Llama-3.1-405B", trials=10, cluster=c)
    none = availability(example, "Llama-3.1-405B", trials=10,
                        cluster=c.with_catalog(catalog().with_(rates={"nvswitch": 0.0})))
    d = next(k for k in base.kinds if k.cls == "nvswitch").d_repair / HOUR
    assert d == pytest.approx(24.02504, abs=1e-5)
    # first order (the losses in progress added): 18 trays' worth of rate x 18 instances x d
    first = base.no_spares.overlap - none.no_spares.overlap
    assert first == pytest.approx(18 * SWITCH * 18 * d / 36, rel=1e-6)
    # the mean caps that sum at the whole cluster (789b653): two trays down at once already
    # reach the 36 instances, so the share cut off is about P(two of the 18 trays down),
    # (18 x SWITCH x d)^2 / 2 = 1.0e-6, times the few other losses then in progress (2.8e-9),
    # and is the whole difference between the means
    past = base.no_spares.mean - (1.0 - base.no_spares.overlap)
    assert 0.0 < past < (18 * SWITCH * d) ** 2 / 2
    assert none.no_spares.mean - (1.0 - none.no_spares.overlap) == 0.0
    assert none.no_spares.mean - base.no_spares.mean == pytest.approx(first - past, rel=1e-9)


def test_lite_direct_nvswitch_stops_its_32_lites():
    # lite-direct: each H100 server's NVSwitch carries 8 groups of 4 Lites (32); TP 16:
    # 2 instances of 8 a server, 25% (was none down, 13.9%)
    b = blast_radius("lite-direct", "Llama-3-70B")
    assert b.cluster.tp == 16 and b.cluster.instances_total == 8
    row = _row(b, "nvswitch")
    assert (row.count, row.gpus_max, row.instances_down_max) == (4, 32, 2)
    assert row.tokens_lost_pct_max == pytest.approx(25.0)


#: 8 H100 on one switch of 10 ports
SPARE_SITES = {"builder": "single-switch", "n": 8, "radix": 10, "gpu": "$gpu"}


def test_a_spare_on_the_failed_switch_stops_with_it(tmp_path):
    # 8 H100 on a 10-port switch: 2 pod spare sites, both on that switch. A GPU failure is
    # covered by a spare; a switch failure stops every GPU and both spare sites, so every
    # instance waits for the repair (the old model cut the 8 GPUs into islands: 7 cut off)
    path = write_scenario(tmp_path, "eight-on-one", "H100-SXM", SPARE_SITES, file="eight.toml",
                          description="8 H100 on one switch of 10 ports")
    b = blast_radius(str(path), "Llama-3-8B")
    assert b.cluster.gpus == 8
    assert _row(b, "gpu-die").recovery_with_spares.startswith("substitute 1 spare")
    row = _row(b, "nvswitch")
    assert row.gpus_max == 8 and row.tokens_lost_pct_max == pytest.approx(100.0)
    assert row.recovery_with_spares == "every spare site is on the failed switch: repair"


def test_degrade_stops_a_spare_wired_to_the_failed_switch():
    g = build("single-switch:n=4,radix=6")
    (nvs,) = components(g)["nvswitch"]
    assert nvs.disabled == ("gpu0", "gpu1", "gpu2", "gpu3")
    with_spares, names = add_spares(g, 2)
    assert names == ("spare0", "spare1")
    out = degrade(with_spares, [nvs])
    assert out.graph["gpus"] == 0 and not any(n in out for n in names)
    # a leaf (tier 1) stops no GPU
    leaf = components(build("leaf-spine:leaves=2,radix=4"))["leaf"][0]
    assert leaf.disabled == ()


def _scenario(tmp_path, name, fabric):
    return str(write_scenario(tmp_path, name, "H100-SXM", fabric, links="as-built",
                              description="8 H100 on one switch of 10 ports"))


def test_a_host_holding_its_switch_stops_the_spares_on_it(tmp_path):
    # 4 DGX-like servers of 8 H100, each NVSwitch with 180 ports: 144 for its GPUs' 18
    # NVLinks each, 36 free, so 2 spare sites (18 links each) per switch, 8 in the cell.
    # A host (chassis, PSU, IO board) holds its HGX baseboard's NVSwitch: its failure stops
    # the 2 spares wired there, as the switch's own failure does, leaving 6 sites for the
    # 8 GPUs of its two TP-4 instances: both wait for the repair (the old model kept the
    # switch and substituted 8 spares, 2 of them inside the failed server)
    path = _scenario(tmp_path, "dgx-free", {"builder": "rail-optimized", "domains": 4,
                                            "domain_size": 8, "gpus_per_server": 8,
                                            "nvswitch_radix": 180, "gpu": "$gpu"})
    b = blast_radius(path, "Llama-3-70B")
    assert (b.cluster.tp, b.cluster.instances_total) == (4, 8)
    host = next(e for e in b.effects if e.cls == "host")
    assert host.component.nodes[-1] == "nvs0" and host.gpus == 8
    for cls in ("host", "rack", "nvswitch"):
        assert _row(b, cls).recovery_with_spares == \
            "only 6 free port(s) for 8 spares: repair", cls
    # a GPU's failure draws on the first 4 sites (2 on nvs0, 2 on nvs1): a GPU of nvs0 or
    # nvs1 substitutes a spare on its own switch, one of nvs2 or nvs3 finds none there and
    # its instance is re-created on the 4 (the class was gpu0's, 'substitute 1', for all 32)
    got: dict = {}
    for e in b.effects:
        if e.cls == "gpu-die":
            key = (b.recoveries[id(e)]["path"], b.recoveries[id(e)]["units"])
            got[key] = got.get(key, 0) + e.components
    assert got == {("substitute 1 spare", 1): 16, ("re-create on 4 spares", 4): 16}
    assert _row(b, "gpu-die").recovery_with_spares.startswith("re-create on 4 spares")


def test_a_switch_of_several_servers_stays_with_a_host():
    # a 16-GPU NVLink domain over two 8-GPU servers: the switch is outside either host
    g = build("rail-optimized:domains=2,domain_size=16,gpus_per_server=8")
    hosts_ = components(g)["host"]
    assert len(hosts_) == 4 and all(len(h.nodes) == 8 for h in hosts_)
    assert not any(str(n).startswith("nvs") for h in hosts_ for n in h.nodes)
    # one server per domain: the host holds its NVSwitch, a rack its too
    one = components(build("rail-optimized:domains=2,domain_size=8"))
    assert [h.nodes[-1] for h in one["host"]] == ["nvs0", "nvs1"]
    assert [r.nodes[-1] for r in one["rack"]] == ["nvs0", "nvs1"]


def test_spare_sites_on_the_failed_switch_split_its_class(tmp_path):
    # A DGX H100 SuperPOD SU: 31 servers (248 GPUs), NVSwitch radix 256 (112 ports free:
    # 6 spare sites of 18 NVLinks), one free port on each of the 8 rail leaves. The cell's 8
    # pod spare sites fill nvs0 (rails 0-5) and nvs1 (rails 6, 7). nvs0's failure leaves 2
    # sites for its 8 GPUs, nvs1's 6, the 29 other switches' all 8: they substitute 8
    # spares. The old model took nvs0 for all 31 (one symmetry class): every NVSwitch
    # failure waited for its repair
    path = _scenario(tmp_path, "su", {"builder": "superpod", "sus": 1, "gpu": "$gpu"})
    c = blast_radius(path, "Llama-3-70B").cluster
    from netmodel.study.reliability_recovery import recovery

    got = sorted((e.components, recovery(c, e, "pod").path) for e in c.effects(["nvswitch"]))
    assert got == [(1, "only 2 free port(s) for 8 spares"),
                   (1, "only 6 free port(s) for 8 spares"),
                   (29, "substitute 8 spares")]
    hosts_ = sorted((e.components, recovery(c, e, "pod").units) for e in c.effects(["host"]))
    assert hosts_ == [(1, None), (1, None), (29, 8)]


def test_collective_fail_stops_the_switchs_gpus():
    # netmodel collective --fail nvs0 on h100-dgx: the 8 GPUs of nvs0's server stop with
    # it, as blast-radius counts them; a group of 16 over two servers runs on the 8 of
    # nvs1 over its NVSwitch (the old command re-routed gpu0-7 over their NICs and leaves:
    # group of 8, ring 2.578 ms, 'slowdown 8.18x' against in-network 315.1 us)
    import json

    from click.testing import CliRunner

    from netmodel.cli.main import cli

    run = CliRunner().invoke
    r = run(cli, ["collective", "all-reduce", "--scenario", "h100-dgx", "--group", "16",
                  "--fail", "nvs0", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    stopped = [f"gpu{i}" for i in range(8)]
    assert doc["failures"]["stopped"] == stopped and doc["failures"]["lost"] == stopped
    r = run(cli, ["collective", "all-reduce", "--scenario", "h100-dgx", "--group", "16",
                  "--fail", "nvs0"])
    assert "stopped (on a failed tier-0 switch) gpu0, gpu1" in r.output
    assert "(gpu8, gpu9, gpu10, gpu11, gpu12, gpu13, gpu14, gpu15)" in r.output
    # the group of 8 on nvs0 alone: nothing left to run
    r = run(cli, ["collective", "all-reduce", "--scenario", "h100-dgx", "--group", "8",
                  "--fail", "nvs0"])
    assert r.exit_code == 2
    assert "every GPU of the group failed or stopped with a failed tier-0 switch" in r.output
    # a leaf (tier 1) stops nothing: the route moves to another rail
    r = run(cli, ["collective", "all-reduce", "--scenario", "h100-dgx", "--group", "16",
                  "--fail", "leaf0", "--json"])
    assert "stopped" not in json.loads(r.output)["failures"]
