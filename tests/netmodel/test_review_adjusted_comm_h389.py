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
        np.testing.assert_allclose(comm.collective_time(op, n, size),
                                   compiled.collective_time(op, n, size), rtol=1e-9)
    placed = comm.for_instance(32, 8)
    assert isinstance(placed, PlacedAdjusted)
    own = compiled.for_instance(32, 8)
    for op, size in (("all-reduce", 8), ("all-gather", 4), ("send-recv", 2)):
        np.testing.assert_allclose(placed.collective_time(op, n, size),
                                   own.collective_time(op, n, size), rtol=1e-9)


@pytest.mark.parametrize("release", [None, "2.28"])
def test_rescored_simple_send_recv_at_scaled_links(release):
    """A send/recv's lines depend on its path's rate (a peer's channels, two a whole
    NVLink: lite-ocs's 56.25 GB/s circuits 4, at 112.5 GB/s 8; a channel's ratio to the
    flagship's): re-scored at 2x they are the rebuilt fabric's, where keeping the own
    links' channels gave 2 Lites at 100 kB 17.03 us against 18.65 us compiled (under NCCL
    2.28's LL rule, LL to 4 x 16 KiB, 8 x 16 KiB at 2x, the miss was at 600 kB)."""
    s = replace(_at("lite-ocs", OWN), nccl_release=release)
    coll = ScenarioCollectives(s)
    comm = AdjustedComm(coll, 2.0, D, hop_latency_slopes(s, coll, {}))
    compiled = ScenarioCollectives(replace(_at("lite-ocs", OWN + D, 2.0), nccl_release=release))
    n = np.array([1e5, 6e5])
    np.testing.assert_allclose(comm.collective_time("send-recv", n, 2),
                               compiled.collective_time("send-recv", n, 2), rtol=1e-9)
    if release is None:
        np.testing.assert_allclose(compiled.collective_time("send-recv", 1e5, 2), 18.65e-6,
                                   rtol=1e-3)


@pytest.mark.parametrize(("name", "scale"), [("lite-direct", 2.0), ("lite-direct", 0.5),
                                             ("h100-dgx", 0.5), ("lite-ocs", 4.0)])
def test_rescored_send_recv_and_all_to_all_at_every_size(name, scale):
    """LL's share (its channels and their ratio on the path) and Simple's lines by channel
    at every size from 1 kB to 1 GB: an H100's NVLinks at half their rate (225 GB/s) are
    slower than the flagship's 450, so a channel's ratio is 2 there, not 1."""
    s = get_scenario(name)
    coll = ScenarioCollectives(s)
    comm = AdjustedComm(coll, scale, 0.0)
    compiled = ScenarioCollectives(s.with_param("adjust.bandwidth_scale", scale))
    n = np.logspace(3, 9, 25)
    for op, size in (("send-recv", 2), ("all-to-all", 8), ("all-to-all", 4)):
        np.testing.assert_allclose(comm.collective_time(op, n, size),
                                   compiled.collective_time(op, n, size), rtol=1e-9,
                                   err_msg=f"{op} of {size}")
