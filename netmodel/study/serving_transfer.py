"""The KV-cache transfer of disaggregated serving (:mod:`netmodel.study.serving`): seconds to
send a prefill batch's caches between a prefill and a decode GPU over the scenario's
fabric, one linear fit of the pair's ``send-recv`` per scenario and pair of instance sizes.

**On an optical circuit-switched fabric** (``lite-ocs``) a GPU's optical ports are all the
links it has (no packet-switched path), and an instance's circuits (a ring of ``ports /
2`` parallel copies, or a torus of one circuit to each of 4 neighbours) take every one of
them: on ``lite-ocs``'s 4-port Lites every instance of 2 or more GPUs uses all 4. A
circuit from a prefill GPU to a decode GPU needs a free port at both ends (on the same
OCS plane), so the KV cache has none unless ports are set aside for it. Re-setting the
circuits between the phases is not what a deployment does: both instances' collectives
stop while the mirrors move (the scenario's 10 ms, each way), and a decode instance takes
caches from many prefill batches a second; the scenario's own terms are that circuits stay
put while an instance serves (its reconfiguration is charged once per provisioning). So
each GPU sets aside ``kv_ports`` of its ports (the same planes on every GPU) for static KV
circuits, and its instance's circuits are set on the other ``ports - kv_ports``
(:func:`pool_scenario`: the fabric with fewer ports, each at the same rate, so a 4-port
Lite's ring on 2 ports is one copy, not two, and a torus is out). An instance of one GPU
sets no circuits: all its ports are free. A pair's KV circuits are the fewer of its two
GPUs' free ports (:func:`kv_circuits`), each at one port's rate (the fabric's ``bandwidth
/ ports``, 28.125 GB/s a Lite port): the pair's ``send-recv`` on a fabric of those
circuits alone. :func:`kv_splits` lists the splits the service is searched over.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from compute.errors import UserError

if TYPE_CHECKING:   # numpy loaded to compute only: serve's help is written without it
    import numpy as np

__all__ = ["KvTransfer", "best_split", "check_kv_ports", "kv_circuits", "kv_ports_help",
           "kv_splits", "pool_scenario"]


def kv_splits(scenario) -> tuple[int, ...]:
    """The optical ports a GPU may set aside for the KV circuits (see the module docstring):
    1 to ``ports - 1`` on an OCS fabric (every GPU's ports: the fewest of any), ``(0,)``
    elsewhere (no port to set aside: the cache takes the fabric's paths).

    >>> from netmodel.study.scenario_catalog import get_scenario
    >>> kv_splits(get_scenario("lite-ocs")), kv_splits(get_scenario("lite-flat"))
    ((1, 2, 3), (0,))
    """
    return _port_splits(_ports(scenario)) if scenario.is_ocs else (0,)


def _port_splits(ports: int) -> tuple[int, ...]:
    """:func:`kv_splits` of an OCS whose GPUs have ``ports`` optical ports: 1 to ``ports -
    1`` (the instance's circuits keep one at least), ``(0,)`` with one (none to spare)."""
    return tuple(range(1, ports)) if ports >= 2 else (0,)


def check_kv_ports(scenario, kv_ports: object) -> int:
    """``kv_ports`` if it is one of :func:`kv_splits` of an OCS ``scenario``, else
    UserError (one line).

    >>> from netmodel.study.scenario_catalog import get_scenario
    >>> check_kv_ports(get_scenario("lite-ocs"), 4)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: kv_ports must be a whole number from 1 to 3 (a GPU's 4 optical \
ports less one, which its instance's circuits keep), got 4
    """
    if not scenario.is_ocs:
        raise UserError(f"kv_ports: scenario {scenario.label!r} is not optical "
                        f"circuit-switched (its KV cache takes the fabric's paths)")
    if kv_splits(scenario) == (0,):
        raise UserError(f"kv_ports: scenario {scenario.label!r}'s GPUs have 1 optical port, "
                        f"none to set aside (an instance of one GPU sends on it)")
    from compute import validate

    most = max(kv_splits(scenario))
    try:
        return validate.number("", "kv_ports", kv_ports, minimum=1, maximum=most, integer=True)
    except UserError as exc:   # the range said with where it comes from
        head, got = str(exc).split(", got ", 1)
        raise UserError(f"{head} (a GPU's {most + 1} optical ports less one, which its "
                        f"instance's circuits keep), got {got}") from None


def kv_ports_help() -> str:
    """``serve --kv-ports``'s help, with each shipped OCS scenario's range (:func:`kv_splits`
    of its file's ``fabric.ports``, read without building the scenario: help is written
    without numpy)."""
    import tomllib
    from importlib import resources

    ranges = []
    folder = resources.files("netmodel").joinpath("data/scenarios")
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".toml"):
            fabric = tomllib.loads(entry.read_text(encoding="utf-8")).get("fabric", {})
            splits = (_port_splits(fabric.get("ports", 1)) if fabric.get("builder") == "ocs"
                      else (0,))
            if splits != (0,):
                ranges.append(f"{entry.name.removesuffix('.toml')}: 1 to {max(splits)}")
    return ("On an optical circuit-switched scenario, the optical ports each GPU sets aside "
            "for the KV cache's static circuits: a whole number from 1 to a GPU's optical "
            f"ports less one ({'; '.join(ranges)}). Unset: each is tried and the one of "
            "most tokens/s/SM kept. Refused on any other scenario (its KV cache takes the "
            "fabric's paths).")


def best_split(answers: list):
    """Of the services at each split (:func:`kv_splits`), the feasible one of most
    tokens/s/SM (ties: the lower TTFT, then the fewer ports); none feasible: the first."""
    done = [r for r in answers if r.feasible]
    return answers[0] if not done else min(done, key=lambda r: (
        -r.tokens_per_s_per_sm, r.ttft_s, r.settings["kv_ports"]))


#: :func:`_ports` of each frozen fabric graph (:func:`~netmodel.study.scenario_fabric.
#: build_fabric`'s: no node or link can be added or removed), held while the graph lives
_PORTS: WeakKeyDictionary = WeakKeyDictionary()


def _ports(scenario) -> int:
    """Optical ports per GPU of an OCS scenario, read off its built fabric (the fewest of
    any GPU's), counted once per frozen graph: a service asks it of every split, pool
    and KV fit (62 times in ``study lite-gpu``, a pass over every GPU's links each)."""
    import networkx as nx

    from netmodel.study.circuit_copies import ocs_ports
    from netmodel.study.scenario_fabric import build_fabric
    from topologies.schema import gpu_nodes

    graph = build_fabric(scenario)
    if not nx.is_frozen(graph):   # a caller's graph, which may change: counted afresh
        return ocs_ports(graph, gpu_nodes(graph))
    hit = _PORTS.get(graph)
    if hit is None:
        hit = _PORTS[graph] = ocs_ports(graph, gpu_nodes(graph))
    return hit


def pool_scenario(scenario, kv_ports: int):
    """``scenario`` as its instances' circuits see it with ``kv_ports`` of each GPU's optical
    ports set aside for the KV cache (see the module docstring): the OCS fabric with
    ``ports - kv_ports`` ports a GPU, each at the rate it had (the fabric's bandwidth
    scaled by the ports kept); ``scenario`` itself where ``kv_ports`` is 0.

    >>> from netmodel.study.scenario_catalog import get_scenario
    >>> p = pool_scenario(get_scenario("lite-ocs"), 2).fabric_params()[1]
    >>> p["ports"], p["bandwidth"] / 1e9
    (2, 56.25)
    """
    if not kv_ports:
        return scenario
    ports = _ports(scenario)
    if not 0 < kv_ports < ports:
        raise UserError(f"scenario {scenario.name!r}: kv_ports must be 1 to {ports - 1} (its "
                        f"GPUs have {ports} optical ports), got {kv_ports}")
    params = scenario.fabric_params()[1]
    bandwidth = params.get("bandwidth") or scenario.gpu_spec.scaleup_bandwidth
    return (scenario.with_param("fabric.ports", ports - kv_ports)
            .with_param("fabric.bandwidth", bandwidth * (ports - kv_ports) / ports))


def kv_circuits(kv_ports: int, ports: int, prefill_gpus: int, decode_gpus: int) -> int:
    """Circuits between a prefill and a decode GPU: the fewer of the two GPUs' free ports,
    ``kv_ports`` each, or all ``ports`` of an instance of one GPU (no circuits of its own).

    >>> kv_circuits(2, 4, 8, 32), kv_circuits(2, 4, 1, 32), kv_circuits(2, 4, 1, 1)
    (2, 2, 4)
    """
    return min(ports if g == 1 else kv_ports for g in (prefill_gpus, decode_gpus))


class KvTransfer:
    """Seconds to send ``nbytes`` between a prefill and a decode GPU (see the docstring of
    :mod:`netmodel.study.serving`), elementwise; one linear fit per scenario and pair of
    instance sizes."""

    def __init__(self, collectives, override=None):
        self.collectives, self.override, self._fits = collectives, override, {}
        self.sides = None   # (prefill's, decode's) collectives where the pools' GPUs differ
        self.kv_ports = 0   # on an OCS: each GPU's ports set aside for the KV circuits

    def time(self, nbytes: float | np.ndarray, prefill_gpus: int, decode_gpus: int,
             sides: tuple | None = None) -> np.ndarray:
        """Seconds to move ``nbytes`` a pair; with ``sides`` (the bytes a prefill GPU sends,
        the bytes a decode GPU receives) and pools of two GPU types, the slower of each
        side's bytes at its own pair's rate (an H100 sending to 8 Lites is limited by its
        own 50 GB/s NIC, not by a Lite's 12.5 GB/s times the H100's bytes)."""
        import numpy as np

        n = np.asarray(nbytes, dtype=float)
        if self.override is not None:
            return np.asarray(self.override.collective_time("send-recv", n, 2), dtype=float)
        from netmodel.collectives.cost import lines_time

        out = np.zeros_like(n)
        if sides is not None and self.sides is not None:
            for coll, b in zip(self.sides, sides, strict=True):
                b = np.asarray(b, dtype=float)
                out = np.maximum(out, lines_time(*self._fit(coll, prefill_gpus, decode_gpus), b))
            return np.where(n > 0, out, 0.0)
        for coll in self.collectives:
            out = np.maximum(out, lines_time(*self._fit(coll, prefill_gpus, decode_gpus), n))
        return np.where(n > 0, out, 0.0)

    def _fit(self, coll, gp: int, gd: int):
        """``(a, b, lo, hi)`` of the pair's ``send-recv`` candidates (``time = a + b
        bytes`` at the sizes ``lo < bytes <= hi`` each runs at: NCCL's send/recv picks LL or
        Simple by size; :func:`~netmodel.collectives.cost.lines_time`). The
        pools sit on the two halves of the fabric (the scenario's placement of two groups
        of half its GPUs): the pair is the first GPU of each. On an optical circuit-switched
        fabric the pair's circuits are set on the ports neither GPU's instance holds
        (:func:`kv_circuits`, see the module docstring): the pair alone on a fabric of
        those circuits."""
        scen = coll.scenario
        circuits = kv_circuits(self.kv_ports, _ports(scen), gp, gd) if scen.is_ocs else 0
        key = (scen.label, circuits)
        hit = self._fits.get(key)
        if hit is None:
            import numpy as np

            from netmodel.collectives.cost import GroupCut
            from netmodel.collectives.model import candidate_lines
            from netmodel.collectives.placement import partition

            if scen.is_ocs and circuits < 1:   # no port free at an end: never sent
                hit = (np.array([np.inf]), np.array([0.0]), np.array([0.0]),
                       np.array([np.inf]))
                self._fits[key] = hit
                return hit
            if scen.is_ocs:
                model, pair = _circuit_pair(coll, circuits)
            else:
                model = coll.model(2)
                halves = partition(model.graph, coll.gpus // 2, scen.placement,
                                   gpus=model.router.gpu_list)
                pair = (halves[0][0], halves[1][0])
            try:
                cands = model.candidates("send-recv", tuple(pair))
            except GroupCut as exc:
                raise UserError(f"scenario {coll.scenario.label!r}: no path between the prefill "
                                f"and the decode pool ({exc})") from None
            hit = candidate_lines(model, cands)
            self._fits[key] = hit
        return hit


def _circuit_pair(coll, circuits: int):
    """``(model, pair)``: the cost model of a prefill and a decode GPU (the first of each
    half of the fabric, the scenario's placement) joined by ``circuits`` circuits of
    ``coll``'s OCS fabric and nothing else, its ``[adjust]`` applied (:func:`kv_circuits`)."""
    from netmodel.collectives.placement import partition
    from netmodel.study.scenario_fabric import adjusted, scenario_cost_model
    from topologies.optical import realize
    from topologies.schema import gpu_nodes

    halves = partition(coll.graph, coll.gpus // 2, coll.scenario.placement,
                       gpus=gpu_nodes(coll.graph))
    a, b = halves[0][0], halves[1][0]
    pair = realize(coll.graph, [(a, b)] * circuits, [a, b], validated=True)
    return scenario_cost_model(coll.scenario, adjusted(pair, coll.scenario.adjust),
                               coll.calibration), (a, b)
