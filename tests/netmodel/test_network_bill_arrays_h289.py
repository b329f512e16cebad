"""network_bill's optics ends and cables from the edge arrays (h289) are the running sums of
a loop over the edges to the last bit: every item's count, capex and power equal a plain
loop's (the rules of netmodel/study/cost.py before h289, spelled out here), shares of 1/3
and 1/4 of a cable included (sums that are not exact in binary), at both shares and
other prices. A guard of identity: it passes on the old code by design. And (h300) the
``edges`` a caller gives must be the graph's own arrays. A pluggable end is charged the
modules it makes up at its module class (netmodel/data/network_costs.toml's
pluggable_module_price and _power rows, by the module's rate; per bit of the nearest row
where its rate is none's), each class scaled by the prices' pluggable_price and
pluggable_energy over their defaults."""

import math

import pytest

from netmodel.study.network_bill import NetworkPrices, network_bill
from topologies.common import CPO_DELAY, PROPAGATION_DELAY
from topologies.schema import TRACE_MEDIA
from topologies.specs import build

SPECS = [
    "lite-groups:base=[leaf-spine:leaves=2,radix=8],lites=3,split=even",
    "lite-groups:base=[fat-tree:k=8],lites=4,split=even",
    "lite-groups:base=[nvl72:racks=1],lites=4,split=even",
    "nvl72:racks=2",
    "superpod:sus=1",
    "superpod:sus=1,module_ports=1",
    "rail-optimized:domains=4,module_ports=2",
    "lite-groups:base=[rail-optimized:domains=2,module_ports=2],lites=4,split=gateway",
    "ocs:gpus=64,ports=4,ocs_ports=64",
    "torus:dims=4x4x4",
    "flat:n=64,planes=4,radix=64",
    "rail-optimized:domains=4",
    "full-mesh:n=8",
]


def _length(data, engines):
    """Metres of a link as the loop read them: its length, else from its latency less a
    co-packaged engine at each of its ``engines`` ends (an OCS end has none: mirrors)."""
    if "length" in data:
        return float(data["length"])
    extra = engines * CPO_DELAY if data["medium"] == "co-packaged-optics" else 0.0
    return max(0.0, (float(data["latency"]) - extra) / PROPAGATION_DELAY)


def _module_share(graph):
    """``{(edge, end node): modules}`` of a twin-port fabric's paired ends, from
    topologies.optic_modules.optical_modules: each cable a module holds ``1 / (its ends)``
    of it (a server's module sits at its first GPU: the end is the edge's GPU)."""
    from topologies.edge_arrays import edge_arrays
    from topologies.optic_modules import optical_modules

    e = edge_arrays(graph)
    share: dict = {}
    for where, held in optical_modules(graph, e):
        ends = sum(k for _, k in held)
        for i, k in held:
            u, v = e.nodes[e.u[i]], e.nodes[e.v[i]]
            end = where if where in (u, v) else (u if graph.nodes[u]["kind"] == "gpu" else v)
            share[(u, v), end] = share.get(((u, v), end), 0.0) + k / ends
    return share


def _module(prices, rate):
    """(USD, W) of one pluggable module of ``rate`` bit/s: its class's row, else per bit of
    the row nearest by ratio (the faster at a tie), scaled by the prices' pluggable figures
    over the shipped ones."""
    from netmodel.study.network_bill import network_costs
    from netmodel.study.optic_classes import module_classes

    rows = module_classes()
    exact = [c for c in rows if math.isclose(rate, c.rate, rel_tol=1e-9)]
    c = exact[0] if exact else min(reversed(rows), key=lambda k: abs(math.log(rate / k.rate)))
    share = 1.0 if exact else rate / c.rate
    table = network_costs()
    return (c.price * share * (prices.pluggable_price / table["pluggable_price"].value),
            c.power * share * (prices.pluggable_energy / table["pluggable_energy"].value))


def _loop(graph, scale, prices):
    """The optics and cable items as the loop over the edges summed them; a twin-port
    fabric's (module_ports 2) pluggable optics lines name it and count their modules (an
    end no module of several ports holds, a module of its own: a breakout share)."""
    kind = dict(graph.nodes(data="kind"))
    groups: dict = {}
    twin = graph.graph.get("module_ports", 1) == 2
    share = _module_share(graph) if twin else {}

    def add(key, count, capex, power, modules=None):
        c, x, p, *m = groups.get(key, (0.0, 0.0, 0.0))
        groups[key] = (c + count, x + capex, p + power,
                       *([] if modules is None else [(m or [0.0])[0] + modules]))

    for u, v, d in graph.edges(data=True):
        medium, links = d["medium"], d.get("links", 1)
        s = scale if kind[u] != "gpu" and kind[v] != "gpu" else 1.0
        optics = medium if medium != "ocs-circuit" else d.get("optics", "co-packaged-optics")
        price, energy = prices.optics(optics)
        bits = d["bandwidth"] * 8
        plug = twin and medium in ("pluggable-optics", "fibre")
        for end in (u, v):
            if kind[end] == "ocs" or (price == 0 and energy == 0):
                continue
            count = math.ceil(links - 1e-9) if kind[end] == "gpu" else links
            what = f"{medium} end {bits / count / 1e9:g} Gb/s" + (
                " (twin-port modules, 2 ends a module)" if plug else "")
            paired = plug and links == math.trunc(links)
            mods = s * (share.get(((u, v), end), count) if paired else count)
            if optics in ("pluggable-optics", "fibre"):   # whole modules of their class
                usd, w = _module(prices, bits / count * (2 if paired else 1))
                capex, power = mods * usd, mods * w
            else:
                capex, power = s * price * bits, s * energy * bits
            add(("optics", what), s * count, capex, power, mods if plug else None)
        if medium == "ocs-circuit" or medium in TRACE_MEDIA:
            continue
        if medium == "copper" and any(kind[e] == "switch" and graph.nodes[e]["tier"] == 0
                                      for e in (u, v)):
            continue
        length = _length(d, sum(kind[e] != "ocs" for e in (u, v)))
        add(("cable", f"{medium} cable {length:g} m"), s * links,
            s * links * prices.cable(medium, length), 0.0)
    return groups


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("share", ["ports-used", "as-built"])
def test_links_as_the_loop_summed(spec, share):
    g = build(spec)
    for prices in (NetworkPrices(), NetworkPrices(cpo_price=3.3e-9, pluggable_energy=1.7e-11)):
        bill = network_bill(g, share=share, prices=prices)
        want = _loop(g, bill.fill if share == "ports-used" else 1.0, prices)
        got = {(i.category, i.what): (i.count, i.capex, i.power,
                                      *([] if i.modules is None else [i.modules]))
               for i in bill.items if i.category in ("optics", "cable")}
        assert got == want
        assert all(type(x) is float for v in got.values() for x in v)


# leaves=4,radix=8: 4 leaves of 4 GPUs and 4 up-links, 4 spines: 24 nodes, 16 + 16 links;
# leaves=2,radix=4: 2 leaves of 2 GPUs and 2 up-links, 2 spines: 8 nodes, 4 + 4 links
@pytest.mark.parametrize(("given", "says"), [
    ("leaf-spine:leaves=4,radix=8", "got another graph's (24 nodes, 32 links)"),
    ("leaf-spine:leaves=2,radix=4", "got another graph's (8 nodes, 8 links)"),
])
def test_another_graphs_edge_arrays_refused_in_one_line(given, says):
    # (h300) edges= given another graph's arrays: before, a KeyError from the node loop
    # ('leaf2', 'gpu2'), or a bill priced from the wrong links where the names matched
    from compute.errors import UserError
    from topologies.edge_arrays import edge_arrays

    graph = build("leaf-spine:leaves=2,radix=4" if given != "leaf-spine:leaves=2,radix=4"
                  else "leaf-spine:leaves=4,radix=8")
    with pytest.raises(UserError) as e:
        network_bill(graph, edges=edge_arrays(build(given)))
    msg = str(e.value)
    assert msg.startswith("edges must be edge_arrays(graph) of this graph (") and says in msg
    assert "\n" not in msg
    with pytest.raises(UserError, match=r"^edges must be a .*EdgeArrays .*got 'x'"):
        network_bill(graph, edges="x")
