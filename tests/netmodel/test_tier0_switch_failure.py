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
from topologies.failure_domains import add_spares, components, degrade
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
    assert none.no_spares.mean - base.no_spares.mean == pytest.approx(
        18 * SWITCH * 18 * d / 36, rel=1e-6)


def test_lite_direct_nvswitch_stops_its_32_lites():
    # lite-direct: each H100 server's NVSwitch carries 8 groups of 4 Lites (32); TP 16:
    # 2 instances of 8 a server, 25% (was none down, 13.9%)
    b = blast_radius("lite-direct", "Llama-3-70B")
    assert b.cluster.tp == 16 and b.cluster.instances_total == 8
    row = _row(b, "nvswitch")
    assert (row.count, row.gpus_max, row.instances_down_max) == (4, 32, 2)
    assert row.tokens_lost_pct_max == pytest.approx(25.0)


SPARE_SITES = """name = "eight-on-one"
description = "8 H100 on one switch of 10 ports"
gpu = "H100-SXM"
[fabric]
builder = "single-switch"
n = 8
radix = 10
gpu = "$gpu"
[collective]
placement = "contiguous"
algorithm = "auto"
links = "scale-up"
calibration = "default"
[sources]
bandwidth = "test"
latency = "test"
"""


def test_a_spare_on_the_failed_switch_stops_with_it(tmp_path):
    # 8 H100 on a 10-port switch: 2 pod spare sites, both on that switch. A GPU failure is
    # covered by a spare; a switch failure stops every GPU and both spare sites, so every
    # instance waits for the repair (the old model cut the 8 GPUs into islands: 7 cut off)
    path = tmp_path / "eight.toml"
    path.write_text(SPARE_SITES)
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
