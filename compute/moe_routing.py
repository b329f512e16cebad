"""Where a token's routed experts sit: the servers and GPUs one MoE all-to-all reaches.

Under expert parallelism of degree ``ep`` the ``E`` routed experts are spread evenly over
the ``ep`` GPUs, ``per_node`` GPUs a server (``N = ep / per_node`` servers). A token's
``k`` experts are ``k`` of the ``E`` drawn without replacement; what a dispatch sends
depends on how it counts them:

* **every copy** (DeepEP's low-latency kernels, which DeepSeek's decode runs: every copy
  over RDMA): ``k`` copies a token, ``k (ep - per_node) / ep`` of them to other servers;
* **once a server** (DeepEP's normal kernels, which its prefill runs, "Normal kernels with
  NVLink and RDMA forwarding", deepseek-ai/DeepEP README and ``docs/legacy.md``): a token
  crosses the network once to each other server its experts sit on, to the GPU of its own
  rail there, which forwards it over NVLink to each GPU of that server holding one of its
  experts (once a GPU); the combine is reduced inside a server before it crosses back.

:func:`expected_units_touched` counts the distinct servers (or GPUs) a token reaches;
:func:`node_dedup_traffic` gives the bytes per GPU of the second way.

Uniform routing (each ``k``-subset of the experts equally likely): a unit holding ``E / U``
experts is missed with probability ``C(E - E/U, k) / C(E, k)``, so ``D(U) = U (1 -
C(E - E/U, k) / C(E, k))``.

Group-limited routing (DeepSeek-V3/R1: ``n_group`` 8 groups of 32 experts, a token picks
``topk_group`` 4 groups, by the sum of each group's two highest affinities, then its 8
experts among those 128; :attr:`~compute.models.ModelSpec.expert_groups`): the picked
groups are a uniform ``T``-subset of the ``G``, and each picked group gets at least one of
the token's experts (``k >= T``; its best expert is what picked it). With ``q = G / U``
whole groups a unit, a unit is reached when one of its groups is picked: ``D(U) = U (1 -
C(G - q, T) / C(G, T))`` (at most ``T`` units); with a group spread over ``u = U / G``
units, ``D(U) = T u (1 - C(s - s/u, k/T) / C(s, k/T))`` (``s = E / G``, ``k / T`` experts a
picked group). Against a draw of i.i.d. affinities routed as DeepSeek-V3 routes them
(group score the sum of the top two) these are within 1% for 2, 4 and 8 servers (1.971,
3.143, 4 servers against 1.966, 3.110, 3.951 drawn) and 6% high for 16 (6.06 against
5.72). ``T >= G`` is uniform routing; other shapes (a unit that is neither whole groups
nor part of one) fall back to it.
"""

from __future__ import annotations

import math

from compute import validate
from compute.errors import UserError

__all__ = ["MOE_ALL_TO_ALL", "expected_units_touched", "moe_comm", "node_dedup_traffic"]

#: How each phase's MoE dispatch and combine cross the network, as DeepSeek serves
#: DeepSeek-V3/R1 with DeepEP: prefill with the normal kernels (``"once a server"``),
#: decode with the low-latency kernels (``"every copy"``, each of a token's ``k`` copies
#: over RDMA; DeepEP README, "Low-latency kernels with pure RDMA"). Once a server needs a
#: fabric that knows its servers: a collective model with ``moe_all_to_all_time``
#: (``netmodel.study.scenario_collectives.ScenarioCollectives``); other models (the default ring
#: over the scale-up bandwidth, a function) cost every copy in both phases.
MOE_ALL_TO_ALL = {"prefill": "once a server", "decode": "every copy"}

#: Most units (servers, GPUs) a reach is asked for: 2**30, far past any fabric.
_MAX_UNITS = 1 << 30


def _missed(pool: float, part: float, picks: float) -> float:
    """``C(pool - part, picks) / C(pool, picks)``: the chance that ``picks`` drawn without
    replacement from ``pool`` miss a ``part`` of it (real arguments through the gamma
    function; 0 once fewer than ``picks`` lie outside the part)."""
    rest = pool - part
    if part <= 0:
        return 1.0
    if rest - picks + 1 <= 0:
        return 0.0
    lg = math.lgamma
    return math.exp(lg(rest + 1) - lg(rest - picks + 1) + lg(pool - picks + 1) - lg(pool + 1))


def expected_units_touched(model, units: float) -> float:
    """Expected number of distinct units (servers, or GPUs) one token's routed experts sit
    on, the experts split evenly over ``units`` units (see the module docstring). With at
    least as many units as experts (EP over the experts: each unit holds one expert or a
    redundant copy of one, :func:`compute.parallel.expert_slots`) a token's ``k`` distinct
    experts sit on ``k`` distinct units, one copy each.

    >>> from compute.models import get_model
    >>> v3 = get_model("DeepSeek-V3")   # 8 groups, 4 a token
    >>> [round(expected_units_touched(v3, n), 4) for n in (1, 2, 4, 8, 16, 256, 512)]
    [1.0, 1.9714, 3.1429, 4.0, 6.0645, 8.0, 8.0]
    """
    units = validate.number("", "units", units, minimum=0, maximum=_MAX_UNITS)
    e, k = float(model.experts), float(model.experts_per_token)
    if model.experts <= 1 or units <= 1:
        return 1.0
    if units >= e:          # a unit holds at most one expert (or a copy of one): k units
        return min(k, float(units))
    g, t = model.expert_groups, model.groups_per_token
    if g and t < g and k >= t:
        whole = units == int(units) and g % int(units) == 0
        if whole:                                   # q whole groups a unit
            q = g // int(units)
            return units * (1.0 - math.comb(g - q, t) / math.comb(g, t))
        if units == int(units) and int(units) % g == 0:   # a group over u units
            u, s = int(units) // g, e / g
            return t * u * (1.0 - _missed(s, s / u, k / t))
    return units * (1.0 - _missed(e, e / units, k))


def node_dedup_traffic(model, tokens: float, ep: int, per_node: int,
                       element_bytes: float) -> tuple[float, float]:
    """``(network, nvlink)`` bytes a GPU sends in one MoE all-to-all that crosses the
    network once a server (DeepEP's normal kernels), for ``tokens`` tokens of ``hidden``
    elements of ``element_bytes`` each, among ``ep`` GPUs of ``per_node`` a server:

    * network: ``tokens x D(N) x (N - 1) / N x hidden x element_bytes``, ``N = ep /
      per_node`` servers, ``D(N)`` those a token reaches (:func:`expected_units_touched`;
      one of them, by symmetry ``D / N`` of the time, is its own);
    * nvlink (the fan-out inside the servers, as much received as sent): ``tokens x D(ep)
      x (per_node - 1) / per_node x hidden x element_bytes``: a token once to each GPU
      holding one of its experts, from the GPU of its rail in that server (none when that
      is the GPU itself).

    The combine moves the same in reverse (the GPUs of a server reduce a token's outputs
    before one copy crosses back).

    >>> from compute.models import get_model
    >>> net, nvl = node_dedup_traffic(get_model("DeepSeek-V3"), 4096, 32, 8, 1 + 4 / 128)
    >>> round(net / 1e6, 3), round(nvl / 1e6, 3)    # 4 servers: 3.143 reached, 3/4 remote
    (71.369, 188.014)
    """
    tokens = validate.number("", "tokens", tokens, minimum=0, maximum=1e15)
    ep = validate.number("", "ep", ep, minimum=1, maximum=_MAX_UNITS, integer=True)
    per_node = validate.number("", "per_node", per_node, minimum=1, maximum=_MAX_UNITS,
                               integer=True)
    element_bytes = validate.number("", "element_bytes", element_bytes, minimum=0, maximum=64)
    if ep % per_node:
        raise UserError(f"an EP group of {ep} GPUs does not split into servers of {per_node} "
                        f"GPUs; allowed: a server size that divides it")
    nodes = ep // per_node
    h = float(model.hidden) * element_bytes
    net = tokens * expected_units_touched(model, nodes) * (nodes - 1) / nodes * h
    nvl = tokens * expected_units_touched(model, ep) * (per_node - 1) / per_node * h
    return net, nvl


class _OnceAServer:
    """``comm`` with its all-to-alls (compute's only ones are the MoE dispatch and
    combine) crossing the network once a server: ``comm.moe_all_to_all_time``."""

    def __init__(self, comm, model):
        self.comm, self.model = comm, model

    def __repr__(self) -> str:
        return f"{self.comm!r} (MoE all-to-alls once a server)"

    def reach(self, units: float) -> float:
        return expected_units_touched(self.model, units)

    def collective_time(self, op, nbytes, group_size):
        if op == "all-to-all":
            return self.comm.moe_all_to_all_time(nbytes, group_size,
                                                 self.model.experts_per_token, self.reach)
        return self.comm.collective_time(op, nbytes, group_size)


class _PlacedOnceAServer(_OnceAServer):
    """:class:`_OnceAServer` of a ``comm`` that places an instance's smaller groups
    (``for_instance``, :class:`~compute.comm.CollectiveCostModel`)."""

    def for_instance(self, gpus: int, stage: int):
        return _PlacedOnceAServer(self.comm.for_instance(gpus, stage), self.model)


def moe_comm(comm, model, phase: str):
    """The collective model a step of ``phase`` asks: ``comm`` itself, or, for an MoE
    model's prefill on a ``comm`` that can (:data:`MOE_ALL_TO_ALL`), ``comm`` with the
    all-to-alls crossing once a server. The all-to-all's bytes stay every copy's (what a
    stage shows); ``comm`` counts a token's from them (``bytes / experts_per_token``),
    exact at TP = EP and an upper bound where TP exceeds EP (a token's copies then reach
    ``TP / EP`` shards of each expert, counted as copies), still below every copy."""
    if (model.experts > 1 and MOE_ALL_TO_ALL.get(phase) == "once a server"
            and callable(getattr(comm, "moe_all_to_all_time", None))):
        placed = callable(getattr(comm, "for_instance", None))
        return (_PlacedOnceAServer if placed else _OnceAServer)(comm, model)
    return comm
