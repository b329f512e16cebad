"""An MoE all-to-all that crosses the network once a server: DeepEP's normal kernels.

DeepSeek's prefill dispatches with DeepEP's normal (throughput) kernels, "Normal kernels
with NVLink and RDMA forwarding" (deepseek-ai/DeepEP README, ``docs/legacy.md``): a token
crosses the network once to each other server its experts sit on, to the GPU of its own
rail there, which forwards it over NVLink to each GPU of that server holding one of its
experts, once a GPU; the combine runs the same way back, reduced inside a server before
it crosses. The two phases are pipelined (chunks stream from the NIC into the NVLink
forwarders), so the steady time is the slower phase's.

The group (``p`` GPUs over ``N`` scale-up domains of ``m``) and ``reach`` (``units ->``
the expected distinct units, servers or GPUs, one token's experts sit on, the experts
spread evenly; :func:`compute.moe_routing.expected_units_touched`) fix the traffic, per
byte of ``n``, one token's bytes on each GPU (its tokens x hidden x element bytes):

* across: GPU ``r`` of each domain to GPU ``r`` of every other domain, ``reach(N) / N``
  (the chance a token reaches that server) x ``n``;
* inside each domain: every GPU to every other, ``N x reach(p) / p`` x ``n`` (the tokens it
  received from the ``N`` servers' GPUs of its rail, its own included, that a given GPU
  needs).

A GPU thus sends ``reach(N) (N - 1) / N x n`` over the network and ``reach(p) (m - 1) / m
x n`` over NVLink (:func:`compute.moe_routing.node_dedup_traffic`). One domain (``N = 1``)
leaves the NVLink phase alone (DeepEP's intranode kernels, a token once a GPU).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

import numpy as np

from compute.errors import UserError
from compute.validate import MAX_WHOLE, describe, is_finite, number
from netmodel.collectives.cost import GroupCut, compile_steps
from netmodel.collectives.group_domains import domain_indices
from netmodel.collectives.steps import NotApplicable, Pairs, Step

__all__ = ["ONCE_A_SERVER", "check_once_a_server", "once_a_server_lines", "once_a_server_steps", "once_a_server_time"]

#: The algorithm's name in a breakdown.
ONCE_A_SERVER = "once-a-server"


def check_once_a_server(where: str, copies: object, reach: object) -> int:
    """``copies`` (each token's copies, its experts: a whole number from 1) as an int, once
    ``reach`` is a function; else one line naming the parameter. The public
    ``moe_all_to_all_time`` methods ask it first, before any cost (a NaN ``copies`` gave a
    NaN time, -1 a negative one, text a numpy TypeError; a number for ``reach`` raised
    TypeError, not callable)."""
    c = number(where, "copies", copies, minimum=1, maximum=MAX_WHOLE, integer=True)
    if not callable(reach):
        raise UserError(f"{where}: reach must be a function of a count of units giving the "
                        f"expected distinct units one token's experts sit on, got "
                        f"{describe(reach)}")
    return c


def _reached(reach: Callable[[float], float], units: int) -> float:
    """``reach(units)``, a number from 1 to ``units``, else one line naming it."""
    r = reach(units)
    v = float(r) if is_finite(r) else float("nan")
    if not 1 - 1e-9 <= v <= units * (1 + 1e-9):
        raise UserError(f"reach({units}) must be a number from 1 to {units} (the expected "
                        f"distinct units of {units} one token's experts sit on), got "
                        f"{describe(r)}")
    return v


def once_a_server_steps(group: tuple[Hashable, ...], graph,
                        reach: Callable[[float], float]) -> list[Step]:
    """The two pipelined phases (see the module docstring); :class:`NotApplicable` when the
    group's domains differ in size."""
    members, sizes = domain_indices(graph, group)
    if (sizes != sizes[0]).any():
        raise NotApplicable("once-a-server needs the same number of GPUs in every domain, "
                            "got " + "/".join(str(x) for x in sizes.tolist()))
    n_dom, m, p = len(sizes), int(sizes[0]), len(group)
    table = members.reshape(n_dom, m)
    steps = []
    if n_dom > 1:
        a, b = np.nonzero(~np.eye(n_dom, dtype=bool))          # every ordered domain pair
        src, dst = table[a, :].ravel(), table[b, :].ravel()      # rail to rail
        steps.append(Step("across, once a server (rails)",
                          Pairs(group, src, dst, reach(n_dom) / n_dom),
                          latencies=(0, 1), pipeline=1))
    if m > 1:
        i, j = np.nonzero(~np.eye(m, dtype=bool))
        src, dst = table[:, i].ravel(), table[:, j].ravel()      # within each domain
        steps.append(Step("fan-out in server (scale-up)",
                          Pairs(group, src, dst, n_dom * reach(p) / p),
                          latencies=(1, 0), pipeline=1))
    return steps


def once_a_server_lines(model, group: tuple[Hashable, ...],
                        reach: Callable[[float], float]) -> tuple[np.ndarray, np.ndarray]:
    """``(a, b)``: the once-a-server all-to-all of ``group`` on ``model``'s fabric (a
    :class:`~netmodel.collectives.model.FabricCostModel`) takes ``min(a + b n)`` seconds
    for ``n`` bytes of tokens a GPU (one line per protocol and pipeline-fill range).
    Raises :class:`NotApplicable` as :func:`once_a_server_steps`, or
    :class:`~netmodel.collectives.cost.GroupCut`."""
    steps = once_a_server_steps(group, model.graph, reach)
    cal = model.calibration
    comp = compile_steps(model.router, "all-to-all", ONCE_A_SERVER, group, steps, cal,
                         model._step_cache)
    lines = [ab for proto in comp.protocols(cal) for ab in comp.lines(proto, cal)]
    return np.array([x[0] for x in lines]), np.array([x[1] for x in lines])


def once_a_server_time(model, group: tuple[Hashable, ...], nbytes: np.ndarray, copies: int,
                       reach: Callable[[float], float],
                       every: Callable[[], np.ndarray]) -> np.ndarray:
    """Seconds for an MoE all-to-all of ``nbytes`` (an array, ``copies`` copies of each
    token) a GPU among ``group`` (more than one GPU) on ``model``'s fabric (a
    :class:`~netmodel.collectives.model.FabricCostModel`), crossing the network once a
    server: the faster of this module's way and every copy's, ``every()`` (the same bytes
    as a plain all-to-all), as ``auto`` picks among algorithms (on a fabric whose servers
    are no faster inside than out, a mesh of Lites, the fan-out costs more than every
    copy's share of the network saves); ``every()`` alone where the group's scale-up
    domains differ in size or each GPU is its own (the same traffic); 0 where ``nbytes``
    is 0. The lines (:func:`once_a_server_lines`) are compiled once per (group, reach) in
    ``model``'s cache, a cut group's :class:`~netmodel.collectives.cost.GroupCut` with
    them, raised again on every call.

    Both :meth:`~netmodel.collectives.model.FabricCostModel.moe_all_to_all_time` (``inf``
    where cut) and :meth:`netmodel.study.scenario_collectives.ScenarioCollectives.
    moe_all_to_all_time` (an instance alone; one line of error where cut) are this."""
    sizes = domain_indices(model.graph, group)[1]
    if (sizes != sizes[0]).any() or sizes[0] == 1:
        return every()
    key = (ONCE_A_SERVER, group, _reached(reach, len(sizes)), _reached(reach, len(group)))
    hit = model._lines.get(key)
    if hit is None:
        try:
            hit = once_a_server_lines(model, group, reach)
        except GroupCut as exc:
            hit = exc
        model._lines[key] = hit
    if isinstance(hit, GroupCut):
        raise hit.with_traceback(None)
    a, b = hit
    tokens = nbytes / copies
    shape = (-1,) + (1,) * nbytes.ndim
    t = (a.reshape(shape) + b.reshape(shape) * tokens).min(0)
    return np.where(nbytes > 0, np.minimum(t, every()), 0.0)
