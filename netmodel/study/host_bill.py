"""What a cluster's hosts and scale-out NICs draw and cost: each GPU's host power from the
published max power of its own system where ``compute/data/economics.toml`` has it
(:func:`host_power`, never past :func:`host_power_ceiling`), the host's NIC taken out of
it (:func:`_host_nic`), and a fabric graph's scale-out NICs (:func:`scale_out_nics`)
charged by the class of their links' rate (:data:`NIC_CLASSES`, :func:`nic_charge`).
Split from :mod:`netmodel.study.cost`, whose
:func:`~netmodel.study.cost.cost_summary` adds them to the bill.
"""

from __future__ import annotations

from functools import cache, lru_cache
from typing import TYPE_CHECKING

from compute.errors import UserError
from compute.rows import check_number
from compute.validate import of_type

if TYPE_CHECKING:
    from compute.hardware import GpuSpec

__all__ = ["NIC_CLASSES", "host_power", "host_power_ceiling", "host_power_row", "host_powers",
           "nic_charge", "nic_class", "scale_out_nics"]


#: The NIC classes a GPU's link to the network is charged by, slowest first: ``(port rate
#: in bit/s, price row, power row)`` of ``compute/data/economics.toml``, whose sources name
#: the cards (ConnectX-7 200G and 400G, ConnectX-8 800G). A cable is charged the slowest
#: class at least its rate, one a cable (a breakout share its share); a cable faster than the
#: fastest class that class pro rata (:func:`nic_charge`). The 400G class (``nic_price``,
#: ``nic_power``) is the DGX H100's ConnectX-7, the NIC ``host_cost_per_h100`` and
#: ``host_power_per_h100`` hold.
NIC_CLASSES = ((200e9, "nic_price_200g", "nic_power_200g"), (400e9, "nic_price", "nic_power"),
               (800e9, "nic_price_800g", "nic_power_800g"))


@cache
def host_powers() -> dict:
    """The host power rows of ``compute/data/economics.toml``'s ``[host_power_per_gpu]``
    (:class:`compute.rows.Parameter`, SI: W per GPU at the system's max) by catalog GPU
    name, checked (read once).

    >>> host_powers()["B200-HGX"].value
    716.0
    """
    from compute.hardware import catalog
    from compute.rows import host_power_table, read_host_powers

    table, where = host_power_table()
    return read_host_powers(table, where, catalog())


def host_power_row(gpu: GpuSpec):
    """The row (:class:`compute.rows.Parameter`) that gives ``gpu``'s host power: its
    ``[host_power_per_gpu]`` row (a catalog GPU as shipped that has one) or its GPU file's
    ``host_power_W`` (the GPU as read), or None: the TDP rule from ``host_power_per_h100``
    applies. A GPU at another clock (:func:`compute.power.gpu_at_clock`) has the row of the
    GPU it was made from: its host is the same system's."""
    from compute.gpu_facts import host_power_of
    from compute.hardware import catalog
    from compute.power import nominal_spec

    gpu = nominal_spec(gpu)
    row = host_powers().get(gpu.name)
    if row is not None and catalog().get(gpu.name) == gpu:
        return row
    return host_power_of(gpu)


def host_power(gpu: GpuSpec, host_power_per_h100: float | None = None) -> float:
    """W per GPU that the host (server less GPUs and network) of ``gpu``'s system draws at
    its max: the row of ``compute/data/economics.toml``'s ``[host_power_per_gpu]`` for a
    catalog GPU that has one (derived from its system's published max power), or a GPU
    file's ``host_power_W`` (:func:`host_power_row`), else
    ``host_power_per_h100`` (None: the shipped default) scaled by the GPU's nominal TDP over
    the H100's 700 W (the Lites, a GPU file's GPU, H100-SXM and H200-SXM themselves), at
    most :func:`host_power_ceiling` / 535 W of it (1.34 DGX H100 hosts): a GPU file's
    1,400 W MI355X gets 716 W, not 1,068.

    >>> from compute.hardware import get_gpu
    >>> host_power(get_gpu("GB300-NVL72")), host_power(get_gpu("H100-SXM")), host_power(get_gpu("Lite"))
    (186.0, 535.0, 133.75)
    """
    from compute.hardware import GpuSpec, get_gpu
    from compute.power import nominal_tdp
    from compute.yield_model import parameter

    of_type("gpu", gpu, GpuSpec, "get_gpu('Lite')", default=False)
    row = host_power_row(gpu)
    if row is not None:
        return row.value
    per_h100 = parameter("host_power_per_h100") if host_power_per_h100 is None \
        else check_number("host_power_per_h100", host_power_per_h100)
    # the H100's host scaled by TDP, at most the largest published host (DGX B200's) over
    # the H100's: a sweep of host_power_per_h100 scales both alike
    share = min(nominal_tdp(gpu) / get_gpu("H100-SXM").tdp,
                host_power_ceiling() / parameter("host_power_per_h100"))
    return per_h100 * share


def host_power_ceiling() -> float:
    """The most host power per GPU (W, at the max) any published system leaves: the largest
    ``[host_power_per_gpu]`` row (DGX B200, 716 W). The TDP rule of :func:`host_power`
    stops there: no system's
    published max shows more, while the rule gave a 1,400 W GPU 1,068 W (the GB300 NVL72's
    row, same TDP, is 186 W). A swept ``host_power_per_h100`` scales it in proportion.

    >>> host_power_ceiling()
    716.0
    """
    return max(r.value for r in host_powers().values())


@lru_cache(maxsize=128)
def scale_out_nics(graph) -> int:
    """The scale-out NICs of a fabric graph: its GPUs with a link to the network that a NIC
    drives (:func:`topologies.nics.nic_gpus`: pluggable optics, fibre or copper to a
    switch of tier >= 1 or an OCS), one each however many such links it has, as a host's
    price and power hold one a GPU (``nic_price``, ``nic_power`` in
    ``compute/data/economics.toml``). A GPU that reaches the network only through its
    scale-up domain (rail-optimized's ``nics_per_server`` below ``gpus_per_server``; a
    fabric of one scale-up domain), only through other GPUs, or only through co-packaged
    optics on its own package (lite-flat, lite-hier, lite-ocs: its die's I/O drives them,
    the engines priced as optics) has none. Kept per graph object (built graphs are cached
    and never modified).

    >>> from topologies import build
    >>> scale_out_nics(build("rail-optimized:domains=2"))
    16
    >>> scale_out_nics(build("rail-optimized:domains=2,nics_per_server=4"))
    8
    """
    from topologies.nics import nic_gpus

    return len(nic_gpus(graph))


def _nic_power_share(gpu: GpuSpec, host_power_per_h100: float) -> float:
    """The share of one NIC's power (``nic_power``) in the host of one ``gpu``: its own
    system's row where it has one (one NIC a GPU, as every published system has: 1), else
    the DGX H100's scaled by :func:`host_power`'s TDP rule, its NIC alike (a Lite's host a
    quarter of one). Its price follows the host's, scaled by TDP in
    :func:`~netmodel.study.cost.cost_summary`."""
    if host_power_row(gpu) is not None:
        return 1.0
    if not host_power_per_h100:   # no host power, no NIC's power to take off it
        return 0.0
    return host_power(gpu, host_power_per_h100) / host_power_per_h100


def nic_class(rate: float) -> tuple[float, str, str]:
    """The :data:`NIC_CLASSES` row a cable of ``rate`` (bit/s) is charged: the slowest class
    at least its rate, else the fastest.

    >>> nic_class(100e9)[1], nic_class(400e9)[1], nic_class(800e9)[1], nic_class(1.6e12)[1]
    ('nic_price_200g', 'nic_price', 'nic_price_800g', 'nic_price_800g')
    """
    for row in NIC_CLASSES:
        if rate <= row[0] * (1 + 1e-9):
            return row
    return NIC_CLASSES[-1]


@lru_cache(maxsize=128)
def _nic_units(graph) -> tuple[tuple[float, float], ...]:
    """``(class rate, NICs' worth)`` of a graph's NIC ports (:func:`nic_charge`), slowest
    class first; kept per graph object (built graphs are cached and never modified)."""
    from topologies.nics import nic_ports

    units: dict[float, float] = {}
    for _, rate, cables in nic_ports(graph):
        bits = rate * 8
        cls = nic_class(bits)[0]
        units[cls] = units.get(cls, 0.0) + cables * max(1.0, bits / cls)
    return tuple(sorted(units.items()))


def nic_charge(graph, tco: dict | None = None) -> tuple[float, float, tuple]:
    """``(USD, W at the max, classes)`` of the scale-out NICs of a fabric graph: each GPU
    end of a link a NIC drives (:func:`topologies.nics.nic_ports`) is charged the
    :func:`nic_class` of its cable rate, one a cable (a breakout share its share); a cable
    faster than the fastest class that class pro rata. A realized OCS fabric is charged a
    NIC port on every fibre of its cabling of pluggable optics, its circuit set or not
    (:func:`~topologies.nics.ocs_fibres`). ``classes``: ``(class rate in bit/s, NICs'
    worth)``. ``tco``: the prices and powers by row name (None: the shipped ones).

    >>> from topologies import build
    >>> usd, w, classes = nic_charge(build("rail-optimized:domains=2"))   # 16 x 400G
    >>> round(usd), round(w, 1), classes
    (25584, 398.4, ((400000000000.0, 16.0),))
    """
    from compute.yield_model import parameter

    rows = {r[0]: r for r in NIC_CLASSES}
    value = (lambda k: tco[k]) if tco is not None else parameter
    units = _nic_units(graph)
    usd = sum(u * value(rows[r][1]) for r, u in units)
    watts = sum(u * value(rows[r][2]) for r, u in units)
    return usd, watts, units


def _host_nic(gpu: GpuSpec, tco: dict) -> tuple[float, float]:
    """``(USD, W at the max)`` of the NIC the host figures of one ``gpu`` hold, which its
    host is charged without (its GPUs' own NICs are charged by their links,
    :func:`nic_charge`): USD a DGX H100 host's ConnectX-7 (``nic_price``;
    :func:`~netmodel.study.cost.cost_summary` scales it by TDP with the host price); W its own system's NIC where its host power is a
    published system's (one a GPU, of the :func:`nic_class` of the GPU's own scale-out
    rate: a DGX B300's ConnectX-8; above the fastest class that class pro rata, as
    :func:`nic_charge` charges the GPU's link), else the DGX H100's at the host's share
    (:func:`_nic_power_share`: a Lite's host a quarter of one)."""
    if host_power_row(gpu) is not None:
        bits = gpu.scaleout_bandwidth * 8
        rate, _, power = nic_class(bits)
        return tco["nic_price"], tco[power] * max(1.0, bits / rate)
    return tco["nic_price"], tco["nic_power"] * _nic_power_share(
        gpu, tco["host_power_per_h100"])


def _check_nic_in_host(tco: dict) -> None:
    """Refuse a NIC dearer or hungrier than the host that holds it, whatever the fabric:
    ``host_cost_per_h100`` and ``host_power_per_h100`` hold one NIC a GPU, so below
    ``nic_price`` or ``nic_power`` the inputs contradict each other, on a fabric whose GPUs
    all hold one (nothing taken off) as on one whose GPUs hold none (a Lite on co-packaged
    optics: a negative host). One rule for every scenario, so a sweep of several is refused
    or run as a whole, not by which scenarios it holds.

    >>> _check_nic_in_host({"nic_price": 1599, "host_cost_per_h100": 1000,
    ...                     "nic_power": 16, "host_power_per_h100": 534})
    Traceback (most recent call last):
    ...
    compute.errors.UserError: nic_price (1,599 USD) must be at most host_cost_per_h100 (1,000 USD): a host's price holds one NIC a GPU, which a GPU without one takes off; to price hosts below 1,599 USD lower nic_price with it (nic_price = 0 charges every host its whole price)
    """
    for nic, host, unit in (("nic_price", "host_cost_per_h100", "USD"),
                            ("nic_power", "host_power_per_h100", "W")):
        if tco[nic] > tco[host] and (nic == "nic_price" or tco[host] > 0):
            what = "price" if unit == "USD" else "power"
            raise UserError(
                f"{nic} ({tco[nic]:,.6g} {unit}) must be at most {host} ({tco[host]:,.6g} "
                f"{unit}): a host's {what} holds one NIC a GPU, which a GPU without one takes "
                f"off; to {what} hosts below {tco[nic]:,.6g} {unit} lower {nic} with it "
                f"({nic} = 0 charges every host its whole {what})")


def _check_own_nic(gpu: GpuSpec, own_w: float, host_w: float, tco: dict) -> None:
    """Refuse a NIC hungrier than the host power that holds it (a published system's row:
    its own class's power row, e.g. ``nic_power_800g`` above a GB300 NVL72 host's 186 W)."""
    if own_w > host_w * (1 + 1e-12):
        row = nic_class(gpu.scaleout_bandwidth * 8)[2] if host_power_row(gpu) is not None \
            else "nic_power"
        worth = own_w / tco[row] if host_power_row(gpu) is not None and tco[row] else 1.0
        times = f" x {worth:,.6g} NICs' worth, the GPU's scale-out rate" if worth > 1 else ""
        raise UserError(f"{row} ({tco[row]:,.6g} W{times}) must be at most the host power of "
                        f"{gpu.name} ({host_w:,.6g} W a GPU): a host's power holds its NIC, "
                        f"which the host is charged without")
