"""The KV cache on an optical circuit switch (netmodel.study.serving_transfer): each GPU
sets ports aside for static KV circuits, its instance's circuits on the rest.

Hand figures: lite-ocs's Lite has 4 optical ports and 112.5 GB/s over them, 28.125 GB/s a
port; NCCL's Simple efficiency on scale-up links is 0.824 (collective_defaults.toml), so
a large send-recv on ``c`` circuits runs at ``c x 28.125 x 0.824 = c x 23.175`` GB/s."""

from __future__ import annotations

import json

import numpy as np
import pytest

from compute.errors import UserError
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_collectives import ScenarioCollectives
from netmodel.study.serving import serve
from netmodel.study.serving_transfer import (
    KvTransfer,
    kv_circuits,
    kv_splits,
    pool_scenario,
)

PORT = 112.5e9 / 4          # one Lite port, bytes/s
SIMPLE = 0.824              # NCCL's Simple efficiency on the scale-up links


@pytest.fixture(scope="module")
def ocs():
    return ScenarioCollectives(get_scenario("lite-ocs"))


def _port_bandwidth(coll, size):
    """Bytes/s of circuits at the first GPU of an instance of ``size``."""
    m = coll.model(size)
    first = m.group(size)[0]
    return sum(d["bandwidth"] for _, _, d in m.graph.edges(first, data=True))


@pytest.mark.parametrize("size", [2, 4, 8, 16])
def test_lite_ocs_instances_leave_no_port_free(ocs, size):
    """Why the KV needs ports of its own: every instance of 2 or more Lites sets its
    circuits (a ring of 2 copies, a torus of 4 neighbours) on all 4 ports, 112.5 GB/s."""
    assert _port_bandwidth(ocs, size) == pytest.approx(4 * PORT, rel=1e-12)


@pytest.mark.parametrize("size", [4, 8, 16])
def test_two_ports_set_aside_leave_the_instance_one_ring(size):
    """2 of 4 ports for the KV: the instance's ring is one copy on 2 ports, 56.25 GB/s at a
    GPU (the torus of 16 is gone)."""
    coll = ScenarioCollectives(pool_scenario(get_scenario("lite-ocs"), 2))
    assert _port_bandwidth(coll, size) == pytest.approx(2 * PORT, rel=1e-12)


def test_splits_and_pool_scenario_from_the_scenario_data():
    s = get_scenario("lite-ocs")
    assert kv_splits(s) == (1, 2, 3)
    assert kv_splits(get_scenario("lite-flat")) == (0,)
    p = pool_scenario(s, 1).fabric_params()[1]
    assert (p["ports"], p["bandwidth"]) == (3, 3 * PORT)
    assert pool_scenario(s, 0) is s


def test_circuits_are_the_fewer_free_ports():
    # instances of 2+ GPUs keep kv_ports free; one GPU sets no circuits: all 4
    assert kv_circuits(1, 4, 8, 16) == 1
    assert kv_circuits(3, 4, 2, 1) == 3
    assert kv_circuits(2, 4, 1, 1) == 4


@pytest.mark.parametrize("kv", [1, 2, 3])
def test_pair_rate_is_circuits_times_a_port(ocs, kv):
    """Between instances of 8 GPUs a further GB of cache takes 1 GB over kv circuits at
    23.175 GB/s each (the start, NCCL's latency, is the same at both sizes)."""
    x = KvTransfer([ocs])
    x.kv_ports = kv
    t1, t2 = x.time(np.array([1e9, 2e9]), 8, 8)
    assert t2 - t1 == pytest.approx(1e9 / (kv * PORT * SIMPLE), rel=1e-9)


def test_fewer_ports_never_faster(ocs):
    x = KvTransfer([ocs])
    sizes = np.logspace(3, 10, 29)
    times = []
    for kv in (1, 2, 3):
        x.kv_ports = kv
        times.append(x.time(sizes, 8, 8))
    x.kv_ports = 1
    times.append(x.time(sizes, 1, 1))   # all 4 ports: instances of one GPU
    for fewer, more in zip(times[:-1], times[1:], strict=True):
        assert np.all(fewer >= more)
    assert np.all(times[0][-5:] > 3.9 * times[-1][-5:])   # 1 circuit against 4


def test_one_gpu_instances_priced_as_before(ocs):
    """Instances of one GPU hold no circuits: the pair has all 4 ports, the 2-GPU group's
    circuits the transfer was priced on before, bit for bit."""
    from netmodel.collectives.cost import lines_time
    from netmodel.collectives.model import candidate_lines

    m = ocs.model(2)
    before = candidate_lines(m, m.candidates("send-recv", tuple(m.group(2))))
    x = KvTransfer([ocs])
    x.kv_ports = 2
    sizes = np.logspace(2, 10, 17)
    assert np.array_equal(x.time(sizes, 1, 1), lines_time(*before, sizes))


def test_serve_on_lite_ocs_prices_the_kv_on_its_ports():
    """Llama-3-8B, TP alone, batch up to 64: the prefill is one Lite at batch 10, the
    decode two, one stream; at 2 ports set aside the stream's 10 x 196.608 MB move on 2
    circuits, 1.96608 GB / 46.35 GB/s = 42.42 ms (+ the 11.9 us start); fewer ports are
    slower, and the default is the best of the splits."""
    kw = dict(dimensions="tp", max_batch=64)
    runs = {k: serve("Llama-3-8B", "lite-ocs", kv_ports=k, **kw) for k in (1, 2, 3)}
    r = runs[2]
    assert (r.prefill.gpus, r.prefill.batch, r.decode.gpus, r.transfer_streams) == (1, 10, 2, 1)
    assert r.settings["kv_ports"] == 2 and r.settings["kv_circuits"] == 2
    assert r.transfer_s == pytest.approx(10 * 196.608e6 / (2 * PORT * SIMPLE), rel=1e-3)
    assert "1 stream on 2 circuits each (2 of each GPU's optical ports" in r.table()
    assert runs[1].transfer_s > runs[2].transfer_s > runs[3].transfer_s
    best = serve("Llama-3-8B", "lite-ocs", **kw)
    assert best.tokens_per_s_per_sm == max(x.tokens_per_s_per_sm for x in runs.values())
    assert best.to_dict() == runs[best.settings["kv_ports"]].to_dict()


def test_kv_ports_refused_off_an_ocs_or_out_of_range():
    with pytest.raises(UserError, match="not optical circuit-switched"):
        serve("Llama-3-8B", "lite-flat", kv_ports=1)
    for bad in (0, 4, True, "2"):
        with pytest.raises(UserError, match="kv_ports must be a whole number from 1 to 3"):
            serve("Llama-3-8B", "lite-ocs", kv_ports=bad)


def test_other_fabrics_say_nothing_of_kv_ports():
    """Off an OCS the service is as before: no split searched, no new keys."""
    r = serve("Llama-3-8B", "lite-flat", dimensions="tp", max_batch=64)
    d = json.loads(r.to_json())
    assert "kv_ports" not in d["settings"] and "kv_circuits" not in d["settings"]
    assert "circuit" not in r.table()


def test_one_port_has_none_to_spare():
    """Lites of 1 port (28.125 GB/s): no split; instances of one GPU send on their port
    (1.96608 GB at 23.175 GB/s = 84.8 ms), a decode instance of 2 holds its port in its
    own circuit, so no cache reaches it."""
    s = get_scenario("lite-ocs").with_param("fabric.ports", 1).with_param(
        "fabric.bandwidth", PORT)
    assert kv_splits(s) == (0,)
    with pytest.raises(UserError, match="1 optical port, none to set aside"):
        serve("Llama-3-8B", s, kv_ports=1)
    one = serve("Llama-3-8B", s, dimensions="tp", max_batch=64, tp=1)
    assert (one.prefill.batch, one.transfer_streams) == (10, 1)
    assert one.transfer_s == pytest.approx(10 * 196.608e6 / (PORT * SIMPLE), rel=1e-3)
    wide = serve("Llama-3-8B", s, dimensions="tp", max_batch=64)
    assert wide.decode.gpus == 2 and not wide.feasible
    assert "no optical port is free at both ends" in wide.reason
