"""The network's bill of materials priced and powered from a fabric graph: every switch,
optics end, OCS and cable (:func:`network_bill`) at the prices and power of
``netmodel/data/network_costs.toml``, and how much of a shared fabric a scenario is charged
(``share``). The rules:

* a switch costs and draws by its switching capacity (radix x port rate): a switch
  system's ``$/(Gb/s)``, and the ASIC's ``pJ/bit`` times a system overhead (the overhead
  multiplies the power only); tier-0 (scale-up, NVSwitch-class) switches are priced as the
  baseboard they sit on, by their wired ports (a DGX H100's four
  NVSwitch chips have 256 ports, 144 of them wired to its GPUs: the board's price and power
  are those of the 144);
* every link end at a GPU or a switch carries optics on an optical medium: a co-packaged
  engine priced and powered by the end's bandwidth, a pluggable module whole, at its
  class by rate (:mod:`netmodel.study.optic_classes`; the modules
  :mod:`topologies.optic_modules` makes of the ends: one a cable end, or two 400G ends an
  800G twin-port module where the fabric's ``module_ports`` is 2, a half-used one whole);
  an end at an OCS needs none (the OCS steers light); copper ends add no power (their
  SerDes is in the GPU's TDP and the switch ASIC's figure);
* an OCS costs and draws per port; a cable costs a fixed part plus a part per metre (the
  length is its ``length``, else read back from the link latency: 5 ns/m, less a CPO
  engine's 5 ns at each end but an OCS's, whose end is mirrors, and a scenario's
  adjustment of the latency undone, so an adjusted fabric's cables are as long); a board's
  traces (medium ``board``: the NVLinks of an HGX baseboard) are no cable, and a copper
  spine to a tier-0 switch (an NVL72 rack's) is priced with that switch;
* a realized OCS fabric (its circuits set, :func:`topologies.optical.realize`: GPU-GPU
  ``ocs-circuit`` edges and the graph attribute ``ocs_cabling``) is priced as its
  cabling, every fibre from a GPU port to an OCS with its optics, cable and OCS port, set
  or not (:func:`ocs_cabling_ports`): the optics are bought with the port, and the
  circuits are re-set per job on the same fibres, so an unset port still holds its
  transceiver; the circuits themselves add no part.

``share="as-built"`` prices every part of the graph whole. ``share="ports-used"`` (the
default) prices the scenario as a slice of a fabric built out to full size: a tier >= 1
switch or OCS is charged for the ports its GPUs use plus, for its ports towards other
switches, the share ``fill`` of the fabric's GPU-facing ports in use; switch-to-switch
links likewise. A shipped scenario is a few servers cut from a SuperPOD-shaped fabric
(h100-dgx: 32 H100 on 8 rail leaves and 4 spines sized for 256), and as built its network
would be charged eight times over.

A fabric is priced as built: a degraded graph (failed parts taken out by
:func:`topologies.degrade.degrade` or :func:`netmodel.collectives.degraded.degrade`,
which mark it) is refused (:func:`check_not_degraded`), since what failed was bought all
the same; price the healthy graph it was degraded from.

>>> from netmodel.study.scenario_fabric import build_fabric
>>> b = network_bill(build_fabric("lite-flat"))
>>> b.counts["cpo_ports"], round(b.fill, 4)
(1024, 0.8889)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from functools import cache, lru_cache
from operator import itemgetter
from typing import TYPE_CHECKING

import numpy as np

from compute.errors import UserError, chosen, known, lookalike
from compute.rows import check_number
from compute.validate import describe, of_type
from netmodel.study.choice_names import SHARES
from netmodel.study.optic_classes import (
    MODULE_TABLES,
    estimate_note,
    module_figures,
    network_costs_data,
)
from topologies.common import latency_adjustment
from topologies.inventory import OPTICAL_MEDIA
from topologies.optic_modules import module_ports, module_worth, paired_ends
from topologies.schema import check_graph, check_switches_linked, circuit_via

if TYPE_CHECKING:
    import networkx as nx

    from topologies.edge_arrays import EdgeArrays

__all__ = ["SHARES", "NetworkBill", "NetworkItem", "NetworkPrices", "check_not_degraded",
           "network_bill", "network_costs", "ocs_cabling_ports"]

# SHARES: how the network of a scenario is charged (see the module docstring), in
# :mod:`netmodel.study.choice_names`.


@cache
def network_costs() -> dict:
    """The shipped network prices and power (``netmodel/data/network_costs.toml``) as
    :class:`compute.yield_model.Parameter` rows by name (read once); the pluggable module
    classes are :func:`netmodel.study.optic_classes.module_classes`."""
    from compute.rows import read_rows

    data = {k: v for k, v in network_costs_data().items() if k not in MODULE_TABLES}
    return read_rows(data, "netmodel/data/network_costs.toml")


@dataclass(frozen=True)
class NetworkPrices:
    """Prices (USD per bit/s of capacity or of link-end bandwidth, USD per port or cable,
    USD/m) and power (J/bit, W per port) of the network's parts; ``None`` takes the shipped
    default of the same name in ``network_costs.toml``."""

    switch_price: float | None = None
    scaleup_switch_price: float | None = None
    switch_energy: float | None = None
    switch_overhead: float | None = None
    scaleup_switch_overhead: float | None = None
    pluggable_price: float | None = None
    pluggable_energy: float | None = None
    cpo_price: float | None = None
    cpo_energy: float | None = None
    copper_energy: float | None = None
    ocs_price: float | None = None
    ocs_power: float | None = None
    fibre_cable_price: float | None = None
    fibre_price_per_m: float | None = None
    copper_cable_price: float | None = None
    copper_price_per_m: float | None = None

    def __post_init__(self):
        table = network_costs()
        for f in fields(self):
            v = getattr(self, f.name)
            object.__setattr__(self, f.name, check_number(
                f.name, table[f.name].value if v is None else v))

    def optics(self, medium: str) -> tuple[float, float]:
        """``(USD per bit/s, J per bit)`` of the optics on one end of a ``medium`` link (a
        pluggable module's per bit of the 800G class: the bill charges pluggable modules
        whole by class, :meth:`modules`)."""
        if medium in OPTICAL_MEDIA:
            return self.pluggable_price, self.pluggable_energy
        if medium == "co-packaged-optics":
            return self.cpo_price, self.cpo_energy
        if medium == "copper":
            return 0.0, self.copper_energy
        return 0.0, 0.0

    def modules(self, rates: np.ndarray) -> tuple[np.ndarray, np.ndarray, tuple]:
        """``(USD, W, estimated)`` of one pluggable module of each rate of ``rates``
        (bit/s: its ports x its ends' rate), by its class
        (:func:`netmodel.study.optic_classes.module_figures`), every class scaled by
        :attr:`pluggable_price` and :attr:`pluggable_energy` over their defaults."""
        table = network_costs()
        shipped = [table[k].value for k in ("pluggable_price", "pluggable_energy")]
        if not all(shipped):   # an edited data file: the classes scale by a setting over it
            raise UserError("netmodel/data/network_costs.toml: pluggable_price and "
                            "pluggable_energy must be > 0 (the 800G module class per bit, "
                            "which a setting scales every class by)")
        return module_figures(rates, self.pluggable_price / shipped[0],
                              self.pluggable_energy / shipped[1])

    def cable(self, medium: str, length: float) -> float:
        """USD of one cable of ``medium`` and ``length`` metres."""
        if medium in (*OPTICAL_MEDIA, "co-packaged-optics"):
            return self.fibre_cable_price + self.fibre_price_per_m * length
        if medium == "copper":
            return self.copper_cable_price + self.copper_price_per_m * length
        return 0.0

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class NetworkItem:
    """One kind of part: how many (weighted by the share charged), capex (USD), power (W)."""

    category: str   #: "switch", "optics", "ocs" or "cable"
    what: str
    count: float
    capex: float
    power: float
    #: an optics line of pluggable ends in twin-port modules (the fabric's ``module_ports``
    #: 2): the modules its ends make up, weighted as ``count`` is (None elsewhere)
    modules: float | None = None

    def to_dict(self) -> dict:
        return {"category": self.category, "what": self.what, "count": self.count,
                "capex_usd": self.capex, "power_w": self.power,
                **({} if self.modules is None else {"modules": self.modules})}


@dataclass(frozen=True)
class NetworkBill:
    """The priced and powered network of one fabric graph."""

    share: str
    fill: float                 #: share of the GPU-facing ports of tier >= 1 in use
    items: tuple[NetworkItem, ...]
    counts: dict                #: topologies.analysis bill of materials (as built)
    #: what the bill had to infer (a fabric file's OCS cabling without its fibres' facts)
    notes: tuple[str, ...] = ()

    @property
    def capex(self) -> float:
        """USD."""
        return sum(i.capex for i in self.items)

    @property
    def power(self) -> float:
        """W."""
        return sum(i.power for i in self.items)

    def by_category(self) -> dict[str, dict[str, float]]:
        """``{category: {"capex": USD, "power": W}}`` summed over items."""
        out: dict = {}
        for i in self.items:
            c = out.setdefault(i.category, {"capex": 0.0, "power": 0.0})
            c["capex"] += i.capex
            c["power"] += i.power
        return out

    def to_dict(self) -> dict:
        return {"share": self.share, "fill": self.fill, "capex_usd": self.capex,
                "power_w": self.power,
                "by_category": {k: {"capex_usd": v["capex"], "power_w": v["power"]}
                                for k, v in self.by_category().items()},
                "items": [i.to_dict() for i in self.items],
                "bill_of_materials": self.bill_of_materials(),
                **({"notes": list(self.notes)} if self.notes else {})}

    def bill_of_materials(self) -> dict:
        """A copy of :attr:`counts` (the bill is cached per fabric: a caller's changes to
        what ``to_dict`` gives must not reach it)."""
        return {k: dict(v) if isinstance(v, dict) else v for k, v in self.counts.items()}


@lru_cache(maxsize=128)
def network_bill_cached(graph, share: str, prices: NetworkPrices) -> NetworkBill:
    """:func:`network_bill` once per (graph object, share, prices): a comparison prices
    the same fabric for every model and phase (the built graphs are cached and never
    modified)."""
    return network_bill(graph, share=share, prices=prices)


def check_not_degraded(graph: nx.Graph, subject: str = "graph") -> None:
    """UserError where ``graph`` is marked degraded
    (:func:`topologies.degrade.is_degraded`): its failed parts were bought, so
    counting parts from it would charge a fabric with a failed link a NIC, optics and a
    cable less than the healthy one. ``subject``: the parameter that gave the graph, as
    the message names it (``"the graph of scenario 'x'"``).

    >>> from topologies import build
    >>> from topologies.degrade import mark_degraded
    >>> check_not_degraded(mark_degraded(build("ring:n=4")))
    Traceback (most recent call last):
    ...
    compute.errors.UserError: graph is a degraded fabric (graph attribute 'degraded': failed parts taken out), which cannot be priced: its failed parts were bought all the same; price the healthy fabric it was degraded from
    """
    from topologies.degrade import is_degraded
    from topologies.schema import DEGRADED

    if is_degraded(graph):
        raise UserError(f"{subject} is a degraded fabric (graph attribute "
                        f"{DEGRADED!r}: failed parts taken out), which cannot be priced: its "
                        f"failed parts were bought all the same; price the healthy fabric it "
                        f"was degraded from")


def check_share(share: object) -> str:
    """``share`` if it is one of :data:`SHARES` (a string first: an array is unhashable)."""
    text = chosen(share, SHARES)   # blanks at either end dropped, as every choice's
    if text is None:
        raise UserError(f"unknown network share {describe(share)}{lookalike(share, SHARES)}; "
                        f"known: {known(SHARES)}")
    return text


def network_bill(graph: nx.Graph, *, share: str = "ports-used",
                 prices: NetworkPrices | None = None, edges: EdgeArrays | None = None
                 ) -> NetworkBill:
    """Price and power every switch, optics end, OCS and cable of a fabric graph (see the
    module docstring for the rules and ``share``). ``edges``: the graph's
    :func:`~topologies.edge_arrays.edge_arrays`, where the caller has them.

    >>> from topologies import build
    >>> b = network_bill(build("leaf-spine:leaves=2,radix=4"), share="as-built")
    >>> [(i.what, i.count) for i in b.items if i.category != "cable"]
    [('pluggable-optics end 400 Gb/s', 16.0), ('tier-1 switch 4 x 400 Gb/s', 2.0), ('tier-2 switch 4 x 400 Gb/s', 2.0)]
    """
    from topologies.edge_arrays import edges_of
    from topologies.inventory import bill_of_materials, port_fill, port_use

    share = check_share(share)
    check_graph(graph)
    check_not_degraded(graph)
    check_switches_linked(graph)   # a switch's price is by its links' port rate
    prices = of_type("prices", prices, NetworkPrices, "NetworkPrices(switch_price=1e-9)") \
        or NetworkPrices()
    edges = edges_of(graph, edges)   # one pass over the links for all below
    counts = asdict(bill_of_materials(graph, edges))
    gpu_ports, net_ports, port_rate = port_use(graph, edges)
    # fill: GPU-facing ports in use over the ports not taken by links to other switches,
    # on the tier >= 1 switches and OCSes GPUs attach to (the failure model counts the
    # parts shared between copies of the fabric by the same figure: topologies.analysis)
    fill = port_fill(graph, use=(gpu_ports, net_ports, port_rate))
    cabling = _cabling_fibres(graph, edges)
    ocs_ports = sum(_ports(graph, n) for n, k in graph.nodes(data="kind") if k == "ocs")
    if cabling is not None and ocs_ports:   # its fibres are its OCSes' GPU-facing ports
        fill = min(1.0, cabling[1] / ocs_ports)
    scale = fill if share == "ports-used" else 1.0

    groups: dict = {}

    def add(category: str, what: str, count: float, capex: float, power: float,
            modules: float | None = None) -> None:
        key = (category, what)
        c, x, p, m = groups.get(key, (0.0, 0.0, 0.0, None))
        if modules is not None:
            m = (m or 0.0) + modules
        groups[key] = (c + count, x + capex, p + power, m)

    tier0s = np.zeros(len(edges.nodes), dtype=bool)   # by position in edges.nodes
    for i, (n, d) in enumerate(graph.nodes(data=True)):
        if d["kind"] == "gpu":
            continue
        ports = _ports(graph, n)
        tier0 = tier0s[i] = d["kind"] == "switch" and d["tier"] == 0
        if share == "as-built" or tier0:
            charged = 1.0
        elif cabling is not None and d["kind"] == "ocs":
            # the fibres of a realized fabric, an OCS's share of them by its ports (each
            # OCS its own where all are alike, as the ocs builder cables them)
            charged = cabling[1] / ocs_ports
        else:
            charged = (gpu_ports.get(n, 0.0) + scale * net_ports.get(n, 0.0)) / ports
        if d["kind"] == "ocs":
            add("ocs", f"OCS {ports} ports", charged, charged * ports * prices.ocs_price,
                charged * ports * prices.ocs_power)
            continue
        rate = port_rate.get(n, 0.0)
        what = f"tier-{d['tier']} switch {ports} x {rate * 8 / 1e9:g} Gb/s"
        if tier0:
            # a baseboard (NVSwitch-class) switch is priced and powered by its wired ports:
            # network_costs.toml derives both over the 144 NVLinks a DGX H100's four
            # NVSwitch chips give its GPUs, not over the chips' 256 ports
            wired = min(ports, gpu_ports.get(n, 0.0) + net_ports.get(n, 0.0))
            if wired < ports:
                what = f"tier-0 switch {wired:g} of {ports} x {rate * 8 / 1e9:g} Gb/s"
            ports = wired
        bits = ports * rate * 8
        price = prices.scaleup_switch_price if tier0 else prices.switch_price
        overhead = prices.scaleup_switch_overhead if tier0 else prices.switch_overhead
        add("switch", what, charged,
            charged * price * bits, charged * prices.switch_energy * bits * overhead)
    estimated = _links_bill(graph, edges, scale, prices, tier0s, add, cabling)
    items = tuple(NetworkItem(c, w, n, x, p, m)
                  for (c, w), (n, x, p, m) in sorted(groups.items()))
    notes = (() if cabling is None or cabling[3] is None else (cabling[3],)) \
        + tuple(dict.fromkeys(estimated))
    return NetworkBill(share=share, fill=fill, items=items, counts=counts, notes=notes)


def _links_bill(graph: nx.Graph, e, scale: float, prices: NetworkPrices, tier0: np.ndarray,
                add, cabling: tuple | None = None) -> list[str]:
    """:func:`network_bill`'s optics ends and cables, from the edge arrays ``e`` of
    ``graph`` (``tier0``: each of ``e.nodes`` a tier-0 switch?): ``add`` once a group, with
    its sums taken in the order a loop over the edges would take them (an edge's first end,
    its second, then the next edge), so every figure is the loop's to the last bit
    (np.bincount adds its weights in input order). ``cabling``: a realized OCS fabric's
    :func:`_cabling_fibres`, whose fibres are priced in place of its circuits. A pluggable
    end is charged the modules it makes up (one a cable end, or its share of a twin-port
    module) at its module class's price and power (:meth:`NetworkPrices.modules`).
    Returns the bill's notes on module classes priced per bit of another
    (:func:`netmodel.study.optic_classes.estimate_note`)."""
    from topologies.schema import TRACE_MEDIA

    notes: list[str] = []

    gpu, ocs = e.kind_is("gpu"), e.kind_is("ocs")
    s = np.where(gpu[e.u] | gpu[e.v], 1.0, scale)   # shared links at the fill's share
    circuit = e.medium_in(("ocs-circuit",))
    if cabling is not None:
        # every GPU port cabled to an OCS holds its optics and its fibre, its circuit set
        # or not (an OCS end needs none: it steers light); the circuits ride these fibres
        medium, fibres = cabling[0], cabling[2]
        price, energy = prices.optics(medium)
        for rate, cables in _tally(fibres, 0):   # each rate's ports
            bits = rate * 8
            if medium in OPTICAL_MEDIA:   # a module a fibre's GPU end, by its class
                usd, w, off = prices.modules(np.array([bits]))
                notes.extend(estimate_note(medium, r, c) for r, c in off)
                add("optics", f"{medium} end {bits / 1e9:g} Gb/s", float(cables),
                    cables * float(usd[0]), cables * float(w[0]))
                continue
            add("optics", f"{medium} end {bits / 1e9:g} Gb/s", float(cables),
                cables * price * bits, cables * energy * bits)
        for length, cables in _tally(fibres, 1):   # each length's fibres
            add("cable", f"{medium} cable {length:g} m", float(cables),
                cables * prices.cable(medium, length), 0.0)
        keep = ~circuit   # any other link of the graph as below
        if not keep.any():
            return notes
    else:
        keep = np.ones(len(e.u), dtype=bool)
    # optics priced by the circuit's optics on an OCS circuit, else by the medium
    table = np.array([prices.optics(m) for m in e.media], dtype=float).reshape(-1, 2)
    priced = np.where(circuit, e.optics, e.medium)
    price, energy = table[priced, 0], table[priced, 1]
    bits = e.bandwidth * 8
    capex, power = s * price * bits, s * energy * bits
    # every edge's two ends in turn, as the loop priced them
    node = np.stack([e.u, e.v], axis=1).ravel()
    edge = np.repeat(np.arange(len(e.u)), 2)
    side = np.tile(np.array([0, 1]), len(e.u))
    at = ~ocs[node] & ((price != 0) | (energy != 0))[edge] & keep[edge]
    node, edge, side = node[at], edge[at], side[at]
    # a GPU end of a breakout share is one transceiver, a switch end its share of a port
    # (counted as topologies.analysis counts them); priced by bandwidth
    count = np.where(gpu[node], np.ceil(e.links[edge] - 1e-9), e.links[edge])
    ends = [e.medium[edge], bits[edge] / count / 1e9, s[edge] * count, capex[edge],
            power[edge]]
    ports = module_ports(graph)
    twin = ports > 1
    paired = paired_ends(graph, e, e.medium_in(OPTICAL_MEDIA) & ~circuit)[edge]
    # the modules an end makes up: its share of the twin-port modules holding it, else one
    # a cable end (a breakout share's switch end its share)
    worth = module_worth(graph, e, OPTICAL_MEDIA)[edge, side] if twin else 0.0
    ends.append(s[edge] * np.where(paired, worth, count))
    each = _circuits_each(graph, e, circuit & keep)
    if each:   # circuits of unequal ports: each end of each at its own rate, in via's order
        rates = [each.get(i) for i in edge.tolist()]
        at = np.repeat(np.arange(len(edge)), [1 if r is None else len(r) for r in rates])
        ends = [x[at] for x in ends]
        edge, paired = edge[at], paired[at]
        mine = np.array([x for r in rates if r is not None for x in r]) * 8
        split = np.array([r is not None for r in rates])[at]
        k = edge[split]
        ends[1][split] = mine / 1e9
        ends[2][split] = s[k]
        ends[3][split] = s[k] * price[k] * mine
        ends[4][split] = s[k] * energy[k] * mine
        ends[5][split] = s[k]
    # a pluggable end (of a pluggable medium, or an OCS circuit on pluggable optics) is
    # charged its modules whole at their class (network_costs.toml's module classes, by
    # the module's rate: its ports x the end's rate a cable); a line of a twin-port
    # fabric's pluggable ends says so and counts its modules too
    pluggable = [i for i, m in enumerate(e.media) if m in OPTICAL_MEDIA]
    optical = np.isin(priced[edge], pluggable)
    if optical.any():
        rate = ends[1][optical] * 1e9 * np.where(paired[optical], ports, 1)
        usd, w = np.empty(len(rate)), np.empty(len(rate))
        of = priced[edge][optical]
        for m in np.unique(of).tolist():   # by medium, for the notes on estimated classes
            mine = of == m
            usd[mine], w[mine], off = prices.modules(rate[mine])
            notes.extend(estimate_note(e.media[m], r, c) for r, c in off)
        ends[3][optical] = ends[5][optical] * usd
        ends[4][optical] = ends[5][optical] * w
    plugs = set(pluggable) if twin else set()
    _add_groups(add, "optics", ends[0], ends[1],
                lambda m, x: f"{e.media[m]} end {x:g} Gb/s"
                + (" (twin-port modules, 2 ends a module)" if m in plugs else ""),
                *ends[2:5], modules=ends[5] if twin else None, moduled=plugs)
    # a board's or a package's wiring has no cable (topologies.schema), nor a circuit; a
    # scale-up domain cabled across trays (an NVL72 rack's copper spine) has cables in the
    # bill of materials and the failure model, but priced with the tier-0 switch as a
    # baseboard's traces are (scaleup_switch_price is an HGX board's price per wired Gb/s,
    # its wiring included); no price of the spine's cable cartridges is published
    # (docs/economics.md)
    cabled = ~circuit & ~e.medium_in(TRACE_MEDIA) \
        & ~(e.medium_in(("copper",)) & (tier0[e.u] | tier0[e.v]))
    at = np.flatnonzero(cabled)
    if not len(at):
        return notes
    medium = e.medium[at]
    adj, nodes = graph._adj, e.nodes   # the edges' attribute dicts, in edge-array order
    # a co-packaged engine at each end but an OCS's (mirrors: topologies.optical.ocs)
    cpo = medium == e.media.index("co-packaged-optics") if "co-packaged-optics" in e.media \
        else np.zeros(len(at), dtype=bool)
    engines = np.where(cpo, 2 - ocs[e.u[at]].astype(int) - ocs[e.v[at]].astype(int), 0)
    length = _lengths([adj[nodes[u]][nodes[v]] for u, v in zip(e.u[at].tolist(),
                                                                e.v[at].tolist(), strict=True)],
                      engines, latency_adjustment(graph.graph))
    pairs, inverse = _pairs(medium, length)
    cable = np.array([prices.cable(e.media[m], x) for m, x in pairs])
    counted = s[at] * e.links[at]
    _add_groups(add, "cable", medium, length, lambda m, x: f"{e.media[m]} cable {x:g} m",
                counted, counted * cable[inverse.reshape(-1)], np.zeros(len(at)))
    return notes


# the notes' shared clauses
_NO_FIBRES = "a fabric file without the cabling's fibres"
_AT_RATE = "every fibre at the circuits' rate a lane"
_SLOWER = " (a port faster than its circuit's other end at the slower rate)"
_FROM_CIRCUITS = (f"OCS cabling inferred from its circuits ({_NO_FIBRES} or its builder's "
                  "parameters): ")
#: The bill's notes on a realized OCS fabric whose cabling kept no fibre facts (a fabric
#: file written before ``ocs_cabling`` held them): what :func:`ocs_cabling_ports` inferred,
#: the rate and the length by where the length came from (:func:`_legacy_length`): the
#: ``ocs`` builder's ``length`` the file records (its ``args``), else its circuits'
#: latency, else nothing.
INFERRED_CABLING = (f"OCS cabling inferred ({_NO_FIBRES}): {_AT_RATE}{_SLOWER} and at the "
                    "length its ocs builder's parameters give (the file's args: length, else "
                    "the builder's default)")
INFERRED_FROM_CIRCUITS = (f"{_FROM_CIRCUITS}{_AT_RATE}{_SLOWER} and at the mean length of "
                          "the fibres the circuits set ride on, read back from their latency "
                          "(a file saved while a co-packaged fibre's latency counted two "
                          "optical engines reads 1 m long)")
LENGTH_NOT_KNOWN = (f"{_FROM_CIRCUITS}{_AT_RATE}; their length is not known (no circuit's "
                    "latency exceeds what its OCS and optics take): priced at 0 m, their "
                    "price a metre left out")


def ocs_cabling_ports(graph: nx.Graph, edges: EdgeArrays | None = None
                      ) -> tuple[str, int, float, float] | None:
    """``(medium, cables, rate, length)`` of the fibres of a realized OCS fabric (one whose
    circuits are set, :func:`topologies.optical.realize`, so its fibres are the graph
    attribute ``ocs_cabling`` and not edges): their optics' medium, how many (one a GPU
    port, set or not), each one's rate (bytes/s per direction) and length (m), the means
    over the cables where they differ (:func:`_cabling_fibres` has each one's). None for
    any other graph (its fibres are edges, priced as edges). The network bill prices
    these fibres (:func:`network_bill`) and the cost model their NICs
    (:func:`netmodel.study.host_bill.nic_charge`): a deployment buys the optics of every port it
    cables to an OCS, and re-sets circuits per job on them.

    The cabling's own fibres are read where realize recorded them (``ocs_cabling``'s
    ``fibres``); a fabric file written before that has none, so they are inferred as
    before, and refused (UserError) where no circuit is set (see :func:`_cabling_fibres`).

    >>> from topologies import build
    >>> g = build("ocs:gpus=8,ports=4,ocs_ports=8,medium=pluggable-optics,logical=ring")
    >>> g.graph["circuits"], ocs_cabling_ports(g)   # 8 circuits; 32 fibres of 112.5 GB/s
    (8, ('pluggable-optics', 32, 112500000000.0, 10.0))
    >>> ocs_cabling_ports(build("ocs:gpus=8,ports=4,ocs_ports=8")) is None
    True
    """
    found = _cabling_fibres(graph, edges)
    if found is None:
        return None
    medium, cables, fibres, _ = found
    rate, length, count = fibres
    if len(set(rate.tolist())) == 1 and len(set(length.tolist())) == 1:
        return medium, cables, float(rate[0]), float(length[0])
    return (medium, cables, float(np.average(rate, weights=count)),
            float(np.average(length, weights=count)))


def _cabling_fibres(graph: nx.Graph, edges: EdgeArrays | None = None) -> tuple | None:
    """``(medium, cables, (rate, length, count), note)`` of a realized OCS
    fabric's cabling: ``rate`` (bytes/s per direction, a cable) and ``length`` (m) arrays
    with ``count`` cables each, and ``note`` None where they are the cabling's own
    (realize's record, :func:`topologies.nics.ocs_fibre_rows`), else the bill's note
    on how they were inferred (a fabric file written before it: the circuits' rate a lane
    x the cabling's lanes a fibre, :func:`topologies.nics.ocs_fibre_rate`, refused
    where no circuit is set; the length :func:`_legacy_length`'s). None for any other
    graph."""
    from topologies.edge_arrays import edges_of
    from topologies.nics import ocs_fibre_rate, ocs_fibre_rows

    cabling = graph.graph.get("ocs_cabling")
    if cabling is None:
        return None
    cables = int(cabling["cables"])
    rows = ocs_fibre_rows(graph)
    if rows is not None:
        count = np.array([r[2] for r in rows], dtype=float)
        rate = np.array([r[3] for r in rows], dtype=float) / count
        length = np.array([r[5] for r in rows], dtype=float)
        return cabling["medium"], cables, (rate, length, count), None
    e = edges_of(graph, edges)
    rate = ocs_fibre_rate(graph, e)   # UserError where no circuit is set
    length, note = _legacy_length(graph, e, cabling["medium"])
    return (cabling["medium"], cables,
            (np.array([rate]), np.array([length]), np.array([float(cables)])), note)


def _legacy_length(graph: nx.Graph, e, medium: str) -> tuple[float, str]:
    """``(length, note)``: the length (m) of every fibre of a realized OCS fabric from a
    file saved without its cabling's fibres, and the bill's note saying where it came
    from. The file's own record first: the ``ocs`` builder's ``length`` in its ``args``
    (the builder's default where they give none; every fibre that long,
    :data:`INFERRED_CABLING`); else the mean length of the fibres its circuits ride on,
    each half of its latency less the OCS's, read back as :func:`_lengths` reads a fibre
    to an OCS (less one co-packaged engine, the GPU's; a file saved while a fibre's
    latency counted two, before 33de305, reads 1 m long: no way to tell it apart,
    :data:`INFERRED_FROM_CIRCUITS`); 0 m where no circuit's latency exceeds what its OCS
    and optics take, said as not known (:data:`LENGTH_NOT_KNOWN`)."""
    from topologies.common import OCS_LENGTH
    from topologies.schema import check_length

    args = graph.graph.get("args")
    if graph.graph.get("builder") == "ocs" and isinstance(args, dict):
        try:
            return check_length(args.get("length", OCS_LENGTH)), INFERRED_CABLING
        except UserError:
            pass   # not a length: read back from the circuits
    circuit = np.flatnonzero(e.medium_in(("ocs-circuit",)))
    adj, nodes, fibres, counts = graph._adj, e.nodes, [], []
    for i in circuit.tolist():
        u, v = nodes[e.u[i]], nodes[e.v[i]]
        d = adj[u][v]
        via = circuit_via(u, v, d, graph.nodes) or ()
        lost = max((graph.nodes[o].get("latency", 0.0) for o in via), default=0.0)
        fibres.append({"latency": (float(d["latency"]) - lost) / 2})
        counts.append(float(e.links[i]))
    # a fibre's co-packaged engine is the GPU's alone (the OCS end is mirrors)
    engines = np.full(len(fibres), int(medium == "co-packaged-optics"))
    # a circuit adjusted after it was set (a file's): its latency and its OCS's scaled, one
    # hop added, so half of it less the OCS's carries half a hop
    scale, hop = latency_adjustment(graph.graph)
    each = _lengths(fibres, engines, (scale, hop / 2))
    if not (each > 0).any():
        return 0.0, LENGTH_NOT_KNOWN
    return float(np.average(each, weights=counts)), INFERRED_FROM_CIRCUITS


def _tally(fibres: tuple, which: int) -> list[tuple[float, float]]:
    """``(value, cables)`` for each distinct rate (``which`` 0) or length (1) of
    :func:`_cabling_fibres`' ``fibres``, the cables summed in the fibres' order."""
    out: dict = {}
    for x, c in zip(fibres[which].tolist(), fibres[2].tolist(), strict=True):
        out[x] = out.get(x, 0.0) + c
    return list(out.items())


def _circuits_each(graph: nx.Graph, e, circuit: np.ndarray) -> dict[int, list[float]]:
    """Each circuit's bandwidth (bytes/s, in its ``via``'s order) of the ``ocs-circuit``
    edges of ``e`` (``circuit``: which) whose circuits differ
    (:func:`topologies.schema.circuit_each`), by edge index; {} where none do (the
    ``ocs`` builder's: every port alike)."""
    from topologies.schema import circuit_each

    adj, nodes, out = graph._adj, e.nodes, {}
    for i in np.flatnonzero(circuit).tolist():
        u, v = nodes[e.u[i]], nodes[e.v[i]]
        data = adj[u][v]
        if "via_bandwidth" in data:
            out[i] = circuit_each(u, v, data)[0]
    return out


def _add_groups(add, category: str, medium: np.ndarray, value: np.ndarray, label, count,
                capex, power, modules: np.ndarray | None = None,
                moduled: set | frozenset = frozenset()) -> None:
    """``add`` each group of items labelled ``label(medium code, value)`` once, with the sums
    of its ``count``, ``capex`` and ``power`` taken in input order (and of ``modules``,
    for a group of a medium code in ``moduled``)."""
    if not len(medium):
        return
    pairs, inverse = _pairs(medium, value)
    names: dict = {}
    media: dict = {}
    group = np.array([names.setdefault(label(m, x), len(names)) for m, x in pairs])[inverse]
    for m, x in pairs:
        media[names[label(m, x)]] = m
    weights = (count, capex, power) if modules is None else (count, capex, power, modules)
    sums = [np.bincount(group, weights=w, minlength=len(names)).tolist() for w in weights]
    for name, i in names.items():
        mods = sums[3][i] if modules is not None and media[i] in moduled else None
        add(category, name, sums[0][i], sums[1][i], sums[2][i], mods)


def _pairs(codes: np.ndarray, values: np.ndarray) -> tuple[list, np.ndarray]:
    """The distinct ``(code, value)`` pairs (ints, floats) and each input's position among
    them."""
    distinct, at = np.unique(values, return_inverse=True)
    keys, inverse = np.unique(codes * len(distinct) + at.reshape(-1), return_inverse=True)
    code, value = np.divmod(keys, len(distinct))
    return (list(zip(code.tolist(), distinct[value].tolist(), strict=True)),
            inverse.reshape(-1))


def _lengths(data: list[dict], engines: np.ndarray,
             adjustment: tuple[float, float] = (1.0, 0.0)) -> np.ndarray:
    """Metres of each link, by its attributes ``data`` (``engines``: the co-packaged
    optical engines it crosses, as :func:`topologies.common.cable_latency` charged them:
    2 a co-packaged cable, 1 a co-packaged fibre to an OCS, whose end is mirrors, 0 any
    other medium): its ``length`` attribute, else read back from its latency
    (:func:`topologies.common.cable_length`: the graph's ``adjustment`` undone, less those
    engines' delay, at least 0).

    >>> round(float(_lengths([{"latency": 55e-9}], np.array([1]))[0]), 9)   # 10 m + 1
    10.0
    >>> round(float(_lengths([{"latency": 55e-9}], np.array([2]))[0]), 9)   # 9 m + 2
    9.0
    >>> round(float(_lengths([{"latency": 210e-9}], np.array([2]), (2.0, 1e-7))[0]), 9)
    9.0
    """
    from topologies.common import cable_length

    given = [d.get("length") for d in data]
    if given.count(None) == len(given):   # none has a length: every one from its latency
        latency = np.array([float(x) for x in map(itemgetter("latency"), data)], dtype=float)
        return cable_length(latency, engines, adjustment)
    length = np.array([np.nan if x is None else float(x) for x in given], dtype=float)
    latency = np.array([float(d["latency"]) if x is None else np.nan
                        for d, x in zip(data, given, strict=True)], dtype=float)
    return np.where(np.isnan(length), cable_length(latency, engines, adjustment), length)


def _ports(graph, node) -> int:
    d = graph.nodes[node]
    return int(d["ports"] if d["kind"] == "ocs" else d["radix"])
