"""A spare loads its weight shard from a peer over the scale-up link at the payload share
of that link the collective model applies (netmodel/data/collective_defaults.toml,
[links] scaleup_efficiency: NCCL counts an NVLink4 link as 20.6 of its 25 GB/s), not at
the raw line rate (audit of helper 232: 8.989 GB / 112.5 GB/s in the Lite case)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.reliability_timings import recovery_times
from netmodel.study.scenario_catalog import get_scenario


def test_lite_reload_at_nvlink_payload_rate():
    # Llama-3-70B decode at TP 16: 70.55e9 params x 2 B / 16 (and the embeddings) =
    # 8,989,458,432 B a Lite; 112.5 GB/s x 20.6/25 = 92.7 GB/s: 96.97 ms (was 79.91 ms)
    c = build_cluster("lite-flat", "Llama-3-70B", "decode")
    rt = recovery_times(c)
    assert rt.shard_bytes == 8_989_458_432
    assert rt.load_bandwidth == pytest.approx(112.5e9 * 20.6 / 25, rel=1e-12)
    reload = 8_989_458_432 / 92.7e9
    assert rt.reload_s == pytest.approx(reload, rel=1e-12)
    assert reload == pytest.approx(0.09697, abs=1e-5)
    # swap: detection 30 s + reload + warm-up 60 s (no circuits); repair adds its 24 h
    assert rt.swap_s() == pytest.approx(30 + reload + 60, rel=1e-14)
    assert rt.repair_down_s("gpu-die") == pytest.approx(30 + 24 * 3600 + reload + 60,
                                                        rel=1e-14)
    # a spare stands in for detection + repair (24 h), then returns to the pool
    assert rt.hold_s("gpu-die") == 30 + 24 * 3600


def test_h100_reload_at_nvlink_payload_rate():
    # 35,278,831,616 B an H100 at TP 4; 450 GB/s x 20.6/25 = 370.8 GB/s: 95.14 ms
    c = build_cluster("h100-dgx", "Llama-3-70B", "decode")
    assert recovery_times(c).reload_s == pytest.approx(35_278_831_616 / 370.8e9, rel=1e-12)


def test_ideal_calibration_and_storage_load_at_their_own_rates():
    # the ideal collective model moves payload at the line rate: so does the reload
    ideal = replace(get_scenario("lite-flat"), calibration="ideal")
    c = build_cluster(ideal, "Llama-3-70B", "decode")
    assert recovery_times(c).reload_s == pytest.approx(8_989_458_432 / 112.5e9, rel=1e-12)
    # from storage, a Lite's share of its host's storage ports, no link efficiency
    # (test_storage_shared_by_the_hosts_gpus)
    s = build_cluster("lite-flat", "Llama-3-70B", "decode")
    s = s.with_catalog(s.catalog.with_(load_from="storage"))
    assert recovery_times(s).reload_s == pytest.approx(8_989_458_432 / 3.125e9, rel=1e-12)


@pytest.mark.parametrize("scenario, shard, host, share", [
    # Llama-3-70B decode: 8,989,458,432 B a Lite at TP 16, 35,278,831,616 B an H100 at TP 4
    ("lite-flat", 8_989_458_432, 32, 3.125e9),     # 1,056 SMs of an 8-H100 host / 33
    ("h100-dgx", 35_278_831_616, 8, 12.5e9),       # the DGX H100's 8 GPUs (server labels)
])
def test_storage_shared_by_the_hosts_gpus(scenario, shard, host, share):
    # a host's two 400 Gb/s storage ports = 100 GB/s, shared by its GPUs: 12.5 GB/s an
    # H100 of 8, 3.125 GB/s a Lite of 32; by hand a Lite's shard loads in
    # 8.989458432 GB / 3.125 GB/s = 2.8766 s (it took 0.7192 s at 12.5 GB/s a GPU, the
    # whole server's storage for each of its 32 Lites), an H100's in 35.2788 / 12.5 = 2.8223 s
    assert 2 * 400e9 / 8 / host == share
    c = build_cluster(scenario, "Llama-3-70B", "decode")
    s = c.with_catalog(c.catalog.with_(load_from="storage"))
    rt = recovery_times(s)
    assert s.catalog.host_size(s.graph, s.gpu) == host
    assert (rt.shard_bytes, rt.load_bandwidth) == (shard, share)
    assert rt.reload_s == pytest.approx(shard / share, rel=1e-12)
    assert round(rt.reload_s, 4) == {"lite-flat": 2.8766, "h100-dgx": 2.8223}[scenario]
    assert rt.swap_s() == pytest.approx(30 + shard / share + 60, rel=1e-14)
    # a host's bandwidth given (--load-bandwidth) is shared the same way
    half = c.with_catalog(c.catalog.with_(load_from="storage", host_storage_bandwidth=50e9))
    assert recovery_times(half).load_bandwidth == 50e9 / host


def test_labelled_servers_set_the_share():
    # an NVL72 compute tray (a server label) holds 4 GPUs: 100 GB/s / 4 = 25 GB/s each;
    # unlabelled, the catalog's rule (8 full-size GPUs a host)
    from netmodel.study.reliability_catalog import catalog
    from topologies.specs import build

    cat = catalog().with_(load_from="storage")
    size = cat.host_size(build("nvl72"), "B200-HGX")
    assert size == 4 and cat.load_bandwidth("B200-HGX", size) == 25e9
    assert cat.host_size(build("flat:n=16,planes=2,radix=16"), "H100-SXM") == 8


def test_timings_follow_the_catalog_not_the_first_cluster():
    # worked out once per cluster: a cluster under other figures (with_catalog) has its
    # own, even after the first cluster's were read (storage: 3.125 GB/s a Lite of a
    # 32-Lite host, no efficiency; detection 30 -> 10 s)
    c = build_cluster("lite-flat", "Llama-3-70B", "decode")
    fabric = recovery_times(c)
    s = c.with_catalog(c.catalog.with_(load_from="storage", detection_s=10.0))
    assert recovery_times(c) is fabric and recovery_times(s) is not fabric
    assert recovery_times(s).reload_s == pytest.approx(8_989_458_432 / 3.125e9, rel=1e-12)
    assert recovery_times(s).hold_s("gpu-die") == 10 + 24 * 3600
    assert fabric.reload_s == pytest.approx(8_989_458_432 / 92.7e9, rel=1e-12)


@pytest.mark.parametrize("bad", [None, "lite-flat", 3.0])
def test_recovery_times_of_a_non_cluster_refused_in_one_line(bad):
    # it raised AttributeError ('NoneType' object has no attribute '__dict__') deep inside
    from compute.errors import UserError

    with pytest.raises(UserError) as e:
        recovery_times(bad)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("cluster must be a netmodel.study."
                                              "reliability_cluster.Cluster"), msg
