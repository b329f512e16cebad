"""Hostile round 38 (scripts/hostile_round38.py): public library functions no round called
before, given text, NaN, None, Decimal, negatives and arrays where a number is taken, and
dataclasses built with absurd fields.

Found wrong, each checked here:

(a) ``netmodel.study.queueing.md1_wait`` multiplied ``rate`` by ``service`` before any
check: text raised TypeError ("can't multiply sequence"), None and a Decimal TypeError,
and ``service=True`` was one second. ``batch_wait`` read ``batch`` by ``int()``: a
fraction of an array raised ZeroDivisionError, -1 gave a wait of -1.5 cycles, inf an
OverflowError; ``cycle`` was taken as anything numpy reads: text ('0.5'), NaN, None (a
NaN wait) and a negative cycle (a negative wait). ``mdc_wait`` took any ``service``. Now
each names its parameter and the range it takes, before any root is sought.
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest

from compute.errors import UserError
from netmodel.study.queueing import batch_wait, md1_wait, mdc_wait


@pytest.mark.parametrize("rate", ["0.5", None, Decimal("0.5"), True, float("nan")])
def test_md1_wait_rate_refused(rate):
    with pytest.raises(UserError, match="md1_wait: rate must be a number from 0"):
        md1_wait(rate, 1.0)


@pytest.mark.parametrize("service", ["0.5", None, True, -1.0, float("inf")])
def test_md1_and_mdc_wait_service_refused(service):
    with pytest.raises(UserError, match="md1_wait: service must be a number from 0"):
        md1_wait(0.5, service)
    with pytest.raises(UserError, match="mdc_wait: service must be a number from 0"):
        mdc_wait(0.5, 2, service)


@pytest.mark.parametrize("batch", [-1.0, np.array([0.5, 0.6]), Decimal("0.5"), float("inf"),
                                   None, np.array([0, 2]), True])
def test_batch_wait_batch_refused(batch):
    with pytest.raises(UserError, match="batch_wait: batch must be a whole number from 1"):
        batch_wait(0.5, batch, 1.0)


@pytest.mark.parametrize("cycle", ["0.5", float("nan"), None, -1.0, np.array([0.5, -1.0]),
                                   np.array(["0.5"]), 10**31])
def test_batch_wait_cycle_refused(cycle):
    with pytest.raises(UserError, match="batch_wait: cycle must be .*from 0 to 1"):
        batch_wait(0.5, 4, cycle)


def test_md1_wait_closed_form_kept():
    # R D^2 / (2 (1 - R D)) at R = 0.25/s, D = 2 s: 0.25 * 4 / (2 * 0.5) = 1 s
    assert md1_wait(0.25, 2.0) == pytest.approx(1.0)
    assert md1_wait(np.float64(0.25), 2) == pytest.approx(1.0)


def test_batch_wait_arrays_kept():
    # one a batch is M/D/1 in cycles (rho^2 / (2 (1 - rho)) / rho at rho 0.5: 0.5 cycle)
    w = batch_wait(0.5, np.array([1, 1]), np.array([1.0, 2.0]))
    assert w.tolist() == pytest.approx([0.5, 1.0])
    assert float(batch_wait(0.5, np.int64(1), 2)) == pytest.approx(1.0)


# (b) A reliability Catalog made in code (dataclasses.replace of the shipped one) took any
# object: a NaN host_sms raised ValueError from round() where a Lite's host was sized,
# text TypeError, host_gpus=0 made hosts of no GPU and -5 of -5; a NaN storage bandwidth,
# an unknown repair or load_from went on to the runs. Now each is checked as the file's.

@pytest.mark.parametrize("value", [float("nan"), "1056", None, 0, -5, 10**30, True,
                                   np.array([1, 2])])
@pytest.mark.parametrize("key", ["host_sms", "host_gpus"])
def test_catalog_host_counts_refused(key, value):
    import dataclasses

    from netmodel.study.reliability_catalog import catalog

    with pytest.raises(UserError, match=f"Catalog: {key} must be a whole number from 1 to"):
        dataclasses.replace(catalog(), **{key: value})


@pytest.mark.parametrize(("key", "value", "words"), [
    ("host_storage_bandwidth", float("nan"), "host_storage_bandwidth must be a number from 0"),
    ("detection_s", -1.0, "detection_s must be a number of seconds from 0"),
    ("gpu_rate_per_hour", None, "gpu_rate_per_hour must be a number from 0 to 1 per hour"),
    ("area_share", 2.0, "area_share must be in"),
    ("repair", "nope", "repair 'nope' is unknown; known: 'local', 'vendor'"),
    ("load_from", None, "load_from None is unknown"),
])
def test_catalog_fields_refused(key, value, words):
    import dataclasses

    from netmodel.study.reliability_catalog import catalog

    with pytest.raises(UserError, match=f"Catalog: {words}"):
        dataclasses.replace(catalog(), **{key: value})


def test_catalog_host_sms_taken():
    import dataclasses

    from netmodel.study.reliability_catalog import catalog

    # a Lite has 33 SMs (a quarter of an H100's 132): 1056 / 33 = 32 a host; 528 / 33 = 16
    c = dataclasses.replace(catalog(), host_sms=np.int64(528))
    assert c.gpus_per_host("Lite") == 16 and type(c.host_sms) is int
    assert catalog().gpus_per_host("Lite") == 32


# (c) FabricCostModel.moe_all_to_all_time (and ScenarioCollectives') took any ``copies``
# on a fabric of 8-GPU servers: NaN gave a NaN time, -1 a negative one (-5.8e-05 s), 0
# divided by zero, 2.5 and True were taken, text and a Decimal raised TypeError, an array
# ValueError (broadcast); a number for ``reach`` raised TypeError (not callable), a
# ``reach`` giving NaN or -1 a NaN or a wrong time. Now each is refused naming it.

def _rails():
    from netmodel.collectives.model import FabricCostModel
    from topologies import build

    return FabricCostModel(build("rail-optimized:domains=4,domain_size=8,gpus_per_server=8"))


def _reach(units):
    return min(units, 2.0)


@pytest.mark.parametrize("copies", ["2", float("nan"), None, -1, 0, 2.5, True, 10**30,
                                    np.array([1, 2]), Decimal(2)])
def test_moe_all_to_all_copies_refused(copies):
    with pytest.raises(UserError, match="moe_all_to_all_time: copies must be a whole number"):
        _rails().moe_all_to_all_time(1e6, 16, copies, _reach)


def test_scenario_moe_all_to_all_copies_refused():
    from netmodel.study.scenario_collectives import ScenarioCollectives

    with pytest.raises(UserError, match="moe_all_to_all_time: copies must be a whole number"):
        ScenarioCollectives("h100-dgx").moe_all_to_all_time(1e6, 16, float("nan"), _reach)
    with pytest.raises(UserError, match="moe_all_to_all_time: reach must be a function"):
        ScenarioCollectives("h100-dgx").moe_all_to_all_time(1e6, 1, 2, 5)


@pytest.mark.parametrize(("reach", "words"), [
    (5, "reach must be a function"), (None, "reach must be a function"),
    (lambda u: float("nan"), r"reach\(2\) must be a number from 1 to 2"),
    (lambda u: -1.0, r"reach\(2\) must be a number from 1 to 2 .*, got -1.0"),
    (lambda u: "2", r"reach\(2\) must be a number from 1 to 2 .*, got '2'"),
])
def test_moe_all_to_all_reach_refused(reach, words):
    with pytest.raises(UserError, match=words):
        _rails().moe_all_to_all_time(1e6, 16, 2, reach)


def test_moe_all_to_all_taken():
    # a token to one server of two carries no more than every copy's all-to-all, and
    # np.int64 copies are 2 copies
    m = _rails()
    t = float(m.moe_all_to_all_time(1e6, 16, np.int64(2), _reach))
    every = float(m.collective_time("all-to-all", 1e6, 16))
    assert 0 < t <= every
    assert t == float(m.moe_all_to_all_time(1e6, 16, 2, _reach))


# (d) netmodel.study.availability_analytic.kaufman_roberts read ``loads`` and ``units`` once
# for every occupancy: generators were read up by the first and the rest taken as no
# class (capacity 4, loads 0.5 and 0.2 Erlangs of 1 and 2 units: [0.667, 0.333, 0, 0, 0]
# for [0.502, 0.251, 0.163, 0.061, 0.024]); a load of -1 gave negative shares, NaN and inf
# NaN ones, a capacity of -1 IndexError, 10**30 ValueError (dimension), text and None
# TypeError. Now each is checked first, naming it.

def test_kaufman_roberts_generators_read_once():
    from netmodel.study.availability_analytic import kaufman_roberts

    q = kaufman_roberts(4, (x for x in [0.5, 0.2]), (u for u in [1, 2]))
    assert q.tolist() == pytest.approx(kaufman_roberts(4, [0.5, 0.2], [1, 2]).tolist())
    # hand recursion: j q_j = sum a_k u_k q_{j - u_k}; q0 = 1, q1 = 0.5, q2 = (0.5 * 0.5 +
    # 0.4 * 1) / 2 = 0.325, ... normalised
    assert q[1] / q[0] == pytest.approx(0.5) and q[2] / q[0] == pytest.approx(0.325)


@pytest.mark.parametrize(("args", "words"), [
    ((-1, [0.5], [1]), "capacity must be a whole number from 0"),
    ((10**30, [0.5], [1]), "capacity must be a whole number from 0"),
    (("4", [0.5], [1]), "capacity must be a whole number from 0"),
    ((4, [-1], [1]), "loads must be a number from 0"),
    ((4, [float("nan")], [1]), "loads must be a number from 0"),
    ((4, [float("inf")], [1]), "loads must be a number from 0"),
    ((4, [None], [1]), "loads must be a number from 0"),
    ((4, [0.5], ["1"]), "units must be a whole number from 0"),
    ((4, [0.5], [-1]), "units must be a whole number from 0"),
    ((4, 0.5, [1]), "loads must be a list of"),
    ((4, [0.5, 0.2], [1]), "loads and units must be as many"),
])
def test_kaufman_roberts_refused(args, words):
    from netmodel.study.availability_analytic import kaufman_roberts

    with pytest.raises(UserError, match=f"kaufman_roberts: {words}|{words}"):
        kaufman_roberts(*args)


# (e) compute.mtp.expected_tokens and mean_steps took any k and a: k = 10**30 drafts summed
# without end (past 20 s), text raised TypeError, NaN gave a NaN count (a = NaN) or a
# TypeError (k = NaN), n = -1 IndexError, True one draft. Now k is a whole number from 0
# to 16 (MAX_MTP_TOKENS), a a probability and n a whole number from 1, named.

@pytest.mark.parametrize(("call", "words"), [
    (lambda f: f.expected_tokens(10**30, 0.7), "expected_tokens: k must be a whole number from 0 to 16"),
    (lambda f: f.expected_tokens("2", 0.7), "expected_tokens: k must be"),
    (lambda f: f.expected_tokens(True, 0.7), "expected_tokens: k must be"),
    (lambda f: f.expected_tokens(2, float("nan")), "expected_tokens: a must be a number from 0 to 1"),
    (lambda f: f.expected_tokens(2, -1), "expected_tokens: a must be"),
    (lambda f: f.expected_tokens(2, None), "expected_tokens: a must be"),
    (lambda f: f.mean_steps(2, 0.7, -1), "mean_steps: n must be a whole number from 1"),
    (lambda f: f.mean_steps(2, 0.7, float("nan")), "mean_steps: n must be"),
    (lambda f: f.mean_steps(2, 0.7, np.array([1, 2])), "mean_steps: n must be"),
    (lambda f: f.mean_steps(2, Decimal("0.7"), 10), "mean_steps: a must be"),
])
def test_mtp_counts_refused(call, words):
    import compute.mtp as f

    with pytest.raises(UserError, match=words):
        call(f)


def test_mtp_counts_taken():
    from compute.mtp import expected_tokens, mean_steps

    assert expected_tokens(np.int64(2), np.float64(0.5)) == 1.75   # 1 + 0.5 + 0.25
    # one token left: one step whatever k; two with k = 1, a = 0.5: 1 + 0.5 * S(1) = 1.5
    assert mean_steps(3, 0.9, 1) == 1.0
    assert mean_steps(1, 0.5, 2) == pytest.approx(1.5)


# (f) netmodel.collectives.algorithms.transfer_count read p's bit_length: a float, NaN,
# inf, a Decimal or a numpy array raised AttributeError, -1 counted -4 transfers;
# netmodel.collectives.results.bus_factor gave NaN for NaN and inf, ValueError for an
# array. Now p is a whole number from 1, named.

@pytest.mark.parametrize("p", [4.0, float("nan"), float("inf"), Decimal(2), np.array(4),
                               np.array([1, 2]), -1, "4", None, True])
def test_transfer_count_and_bus_factor_p_refused(p):
    from netmodel.collectives.algorithms import transfer_count
    from netmodel.collectives.results import bus_factor

    with pytest.raises(UserError, match="transfer_count: p must be a whole number from 1"):
        transfer_count("ring", "all-reduce", p)
    with pytest.raises(UserError, match="bus_factor: p must be a whole number from 1"):
        bus_factor("all-reduce", p)


def test_transfer_count_and_bus_factor_taken():
    from netmodel.collectives.algorithms import transfer_count
    from netmodel.collectives.results import bus_factor

    # direct all-reduce on 4: p (p - 1) = 12; ring: 4 p bit_length(p) = 4 * 8 * 4 = 128
    assert transfer_count("direct", "all-reduce", np.int64(4)) == 12
    assert transfer_count("ring", "all-reduce", 8) == 128
    assert bus_factor("all-reduce", np.int64(8)) == 2 * 7 / 8 and bus_factor("broadcast", 1) == 1
