"""``serve --load``: the decode instance is chosen with its waits (a slot's, M^X/D/c as
the prefill's batches bring the requests, ordered by M/D/c's, and half a step to join),
which count against the TTFT SLO as the prefill batch's wait does; the TBT SLO is the
step's, which no load below capacity lengthens."""

from __future__ import annotations

import numpy as np
import pytest

from compute.mtp import capped_best
from compute.phases import Slo, Workload
from compute.search import search
from netmodel.study.serving import serve, with_load
from netmodel.study.serving_queue import decode_choices, decode_waits, slot_wait

KW = dict(dimensions="tp", max_batch=16)


def test_a_decode_that_waits_less_lets_the_ttft_slo_hold():
    """Llama-3-8B on h100-dgx, TP only up to batch 16, load 0.9, TTFT <= 60 ms. The
    search's best decode (TP 1, batch 16: 16 slots held 0.42 s) waits 12.58 ms for a slot
    one by one, 89.43 ms as the 1 s SLO's prefill (TP 1, batch 16) bunches them, + 2.72 ms
    to join; under 60 ms no prefill cell meets the SLO with it. TP 2 at batch 16 (a 3.27
    ms step) waits 7.54 + 1.63 ms behind a prefill of batch 1 (TP 8: one at a time, M/D/c),
    and the service meets the SLO at 55.81 ms."""
    slo = Slo(ttft=0.06, tbt=0.05)
    loose = serve("Llama-3-8B", "h100-dgx", with_load("coding", 0.9), **KW)
    assert (loose.decode.tp, loose.decode.batch, loose.prefill.batch) == (1, 16, 16)
    assert slot_wait(0.9, 16, loose.decode_rate) == pytest.approx(0.012585, abs=5e-7)
    assert loose.decode_wait_s == pytest.approx(0.089427, abs=5e-7)
    assert loose.join_wait_s == pytest.approx(0.0027245, abs=5e-8)
    r = serve("Llama-3-8B", "h100-dgx", with_load("coding", 0.9), slo=slo, **KW)
    assert r.feasible and (r.decode.tp, r.decode.batch) == (2, 16)
    assert (r.prefill.tp, r.prefill.batch) == (8, 1)
    assert r.join_wait_s == pytest.approx(r.decode.latency / 2, rel=1e-12)
    assert r.decode_wait_s == pytest.approx(slot_wait(0.9, 16, r.decode_rate), rel=1e-12)
    assert r.decode_wait_s == pytest.approx(0.0075442, abs=5e-8)
    assert r.ttft_s == pytest.approx(0.055812, abs=5e-7) and r.ttft_s <= 0.06
    assert r.ttft_s == pytest.approx(r.prefill.latency + r.transfer_visible_s + r._waited(),
                                     rel=1e-12)
    # without a load no decode waits: the search's best decode, as before
    plain = serve("Llama-3-8B", "h100-dgx", slo=slo, **KW)
    assert (plain.decode.tp, plain.decode.batch) == (1, 16)


def test_decode_choices_wait_less_each_and_score_no_more():
    from compute.hardware import get_gpu
    from compute.models import get_model
    from netmodel.study.scenario_catalog import get_scenario
    from netmodel.study.scenario_collectives import ScenarioCollectives

    scen = get_scenario("h100-dgx")
    res = search(get_model("Llama-3-8B"), get_gpu("H100-SXM"),
                 Workload("decode", prompt=1500, context=1513), slo=Slo(ttft=1.0, tbt=0.05),
                 comm=ScenarioCollectives(scen), max_batch=16, max_gpus=16)
    best, _ = capped_best(res, 12)
    got = list(decode_choices(res, 12, 0.9, best))
    assert got[0] is best and len(got) > 1
    waits = [sum(decode_waits(0.9, d, 12)) for d in got]
    assert all(a > b for a, b in zip(waits[:-1], waits[1:], strict=True))
    scores = [d.tokens_per_s_per_sm for d in got]
    assert all(a >= b for a, b in zip(scores[:-1], scores[1:], strict=True))
    # the second is, of every cell that meets the TBT SLO and waits less than the first,
    # the one of the most tokens/s/SM (all of them weighed here)
    g = res.grid
    cells = [g.result(int(i), int(j)) for i, j in zip(*np.nonzero(g.feasible), strict=True)]
    less = [d for d in cells if sum(decode_waits(0.9, d, 12)) < waits[0]]
    assert max(d.tokens_per_s_per_sm for d in less) == pytest.approx(scores[1], rel=1e-12)
