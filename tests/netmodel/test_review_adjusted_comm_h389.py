"""Re-scoring with added per-hop latency agrees with compiling at that latency.

Per-hop latency enters a candidate's line only through its ``a`` (``hops x latency``), so
(i) the slope :func:`hop_latency_slopes` gives is the finite difference of ``a`` between
two compilations of the scenario at its own latency plus ``d`` and plus ``2 d`` (an
independent measurement: neither at the slope's own step nor from its compilation), and
(ii) :class:`AdjustedComm` at ``scale`` and ``hop`` (and its instances as placed,
:class:`PlacedAdjusted`) costs what the scenario compiled with ``bandwidth_scale =
scale`` and ``hop_latency = own + hop`` costs. Scenarios with a per-hop latency of their
own: before f24d282 the slopes were measured from the own latency replaced, not added to.

``lite-ocs`` ships ``circuits = "best"``, whose layout may change with the latency (8 Lites:
a ring at 1.5 us a hop, a torus at 3.5 us); a slope is a layout's, so the slopes are
checked on its layouts fixed (``lite-ocs:ring``, ``lite-ocs:torus``), the re-scoring on
the shipped scenario and on its rings.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from netmodel.study.adjusted_comm import AdjustedComm, PlacedAdjusted, hop_latency_slopes
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_collectives import ScenarioCollectives

OWN, D = 1.5e-6, 2e-6
OPS = (("all-reduce", 8), ("all-gather", 16), ("send-recv", 2), ("all-reduce", 32))


def _at(name, hop, scale=1.0):
    name, _, circuits = name.partition(":")   # lite-ocs:ring: its circuits fixed as rings
    s = get_scenario(name)
    s = replace(s, circuits=circuits) if circuits else s
    s = s.with_param("adjust.hop_latency", hop)
    return s if scale == 1.0 else s.with_param("adjust.bandwidth_scale", scale)


@pytest.mark.parametrize("name", ["lite-hier", "lite-ocs:ring", "lite-ocs:torus"])
def test_slopes_are_the_finite_difference(name):
    s = _at(name, OWN)
    slopes = hop_latency_slopes(s, ScenarioCollectives(s), {})
    one, two = ScenarioCollectives(_at(name, OWN + D)), ScenarioCollectives(_at(name, OWN + 2 * D))
    for op, size in OPS:
        fd = (two.parts(op, size)[0] - one.parts(op, size)[0]) / D
        np.testing.assert_allclose(slopes(op, size), fd, rtol=1e-6)
        # a hop of latency costs at least one hop's worth: every line has >= 1 hop
        assert (fd >= 1 - 1e-6).all()


@pytest.mark.parametrize("name", ["lite-hier", "lite-ocs", "lite-ocs:ring"])
@pytest.mark.parametrize("scale", [1.0, 2.0])
def test_rescored_equals_compiled(name, scale):
    s = _at(name, OWN)
    coll = ScenarioCollectives(s)
    comm = AdjustedComm(coll, scale, D, hop_latency_slopes(s, coll, {}))
    compiled = ScenarioCollectives(_at(name, OWN + D, scale))
    n = np.array([1e3, 1e5, 1e7, 1e9])
    for op, size in OPS:
        if op == "send-recv" and scale != 1.0 and name.startswith("lite-ocs"):
            continue   # Simple's lines by channel at scaled links: the xfail below
        np.testing.assert_allclose(comm.collective_time(op, n, size),
                                   compiled.collective_time(op, n, size), rtol=1e-9)
    placed = comm.for_instance(32, 8)
    assert isinstance(placed, PlacedAdjusted)
    own = compiled.for_instance(32, 8)
    for op, size in (("all-reduce", 8), ("all-gather", 4), ("send-recv", 2)):
        if op == "send-recv" and scale != 1.0 and name.startswith("lite-ocs"):
            continue   # as above
        np.testing.assert_allclose(placed.collective_time(op, n, size),
                                   own.collective_time(op, n, size), rtol=1e-9)


@pytest.mark.xfail(strict=True, reason=(
    "a re-scored Simple send-recv keeps its lines by channel at the scenario's own links "
    "(CompiledCollective.size_range with b: 'which the links' scale does not move'), where "
    "the fabric rebuilt at 2x gives a peer more channels (lite-ocs's 56.25 GB/s circuits: "
    "4; at 112.5 GB/s: 8, pipeline_fill.p2p_path_channels): 2 Lites at 100 kB re-scored "
    "17.03 us against 18.65 compiled (-8.7%). Since NCCL 2.29's LL rule (the default 2.30: "
    "Simple above 16 KiB a peer) 100 kB runs Simple; at 2.28 (LL to 4 x 16 KiB, 8 x 16 KiB "
    "at 2x) the same miss is at 600 kB (-3.4%)"))
def test_rescored_simple_send_recv_at_scaled_links():
    s = _at("lite-ocs", OWN)
    coll = ScenarioCollectives(s)
    comm = AdjustedComm(coll, 2.0, D, hop_latency_slopes(s, coll, {}))
    compiled = ScenarioCollectives(_at("lite-ocs", OWN + D, 2.0))
    n = np.array([1e5, 6e5])
    np.testing.assert_allclose(comm.collective_time("send-recv", n, 2),
                               compiled.collective_time("send-recv", n, 2), rtol=1e-9)
