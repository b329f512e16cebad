"""What a scenario's cluster costs and draws, and what a token costs: GPU packages from the
yield model, hosts and their NICs (:mod:`netmodel.study.host_bill`), the network's bill
(:mod:`netmodel.study.network_bill`) and a cost of ownership per year at the served load.

**Cluster** (:func:`cost_summary`): GPUs at their purchase price
(:func:`compute.yield_model.gpu_price`), hosts (server less GPUs and network: power per
GPU from the published max power of the GPU's own system where ``economics.toml`` has it,
:func:`host_power`, else scaled from a DGX H100 by TDP up to the most any published
system leaves a GPU; cost scaled from a DGX H100 by TDP; both hold one scale-out NIC a
GPU, which every host is charged without, :func:`_host_nic`), the scale-out NICs of the
fabric graph by their links' rate (:func:`nic_charge`: a ConnectX-7 400G, a ConnectX-8
800G; none for a GPU without one, :func:`scale_out_nics`), the network (its ports, optics
and cables counted from the same graph, so a server with fewer NICs than GPUs saves those
too); amortized
over the lifetime plus maintenance; energy at the
served load: GPUs of the ``floor(GPUs / instance GPUs)`` instances (``TP x PP`` GPUs
each) draw the phase's power while
serving (a ``utilization`` share of the time) and idle power otherwise, GPUs left over
idle, hosts and the network draw constantly; times PUE and the electricity price. The
facility (space, power delivery and cooling) is rented: ``colocation_rent`` (USD per W of IT
power a second; ``economics.toml`` writes it per kW a month) times the IT power the cluster
is provisioned for, whatever it draws: GPUs at their rated power (the TDP, at ``clock`` by
the clock-power law), hosts at their max (:func:`host_power`), the network as powered, its
own line (``colocation_per_year``) beside capex and energy. Tokens per second per watt use
IT power; tokens per joule the facility's (with PUE).

Every default is a parameter: ``cost_summary(..., wafer_price=..., defect_density=...,
pluggable_price=..., cpo_energy=...)`` (SI units; :func:`parameters` lists them) so the
study can sweep them. A package parameter moves a margin-priced GPU's price with its own
package cost, at its anchor's margin taken at the defaults
(:func:`compute.yield_model.margin`); a list price stays. ``wafer_price`` is the
``wafer_price`` row, the reference (N4-class) node's: a die of another process keeps its own
row.

>>> s = cost_summary("lite-flat", "Llama-3-70B", "decode")
>>> s.gpus, s.capex_total > s.capex_network > 0, 0 < s.network_share_power < 1
(128, True, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from functools import lru_cache
from typing import TYPE_CHECKING

from compute.die_yield import MAX_ALPHA, MAX_DEFECT_DENSITY, MAX_WAFER_DIAMETER, MIN_ALPHA
from compute.dies import MAX_WAFER_PRICE
from compute.errors import UserError, known
from compute.memo import Memo
from compute.parallel import Parallelism
from compute.rows import check_number
from compute.units import SECONDS_PER_YEAR
from compute.validate import flag, of_type
from netmodel.study.host_bill import (
    _check_nic_in_host,
    _check_own_nic,
    _host_nic,
    host_power,
    nic_charge,
    scale_out_nics,
)
from netmodel.study.network_bill import (
    NetworkBill,
    NetworkPrices,
    check_not_degraded,
    check_share,
    network_bill_cached,
    network_costs,
)
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_fabric import build_fabric

if TYPE_CHECKING:
    from collections.abc import Iterable

    from compute.hardware import GpuSpec
    from compute.models import ModelSpec
    from compute.phases import Slo
    from compute.results import InferenceResult
    from netmodel.study.scenarios import Scenario

__all__ = ["CostSummary", "cost_summary", "parameter_range", "parameter_rows", "parameters"]


#: compute.yield_model's keywords renamed here: its ``model`` is ``yield_model``, so it
#: cannot be taken for the LLM model.
_RENAMED = {"model": "yield_model"}


def _package_args() -> tuple[str, ...]:
    from inspect import Parameter, signature

    from compute.yield_model import gpu_price, package_cost

    return tuple(_RENAMED.get(p.name, p.name) for f in (package_cost, gpu_price)
                 for p in signature(f).parameters.values() if p.kind is Parameter.KEYWORD_ONLY)


#: Parameters of compute.yield_model.package_cost / gpu_price that cost_summary passes on
#: (their keywords, in their order).
_PACKAGE_ARGS = _package_args()
#: compute.power.gpu_power's idle share and load parameters (compute.power.LOAD_PARAMETERS).
_POWER_ARGS = ("idle_fraction", "flop_utilization_at_tdp", "memory_power_share")
#: Cost-of-ownership parameters (rows of compute/data/economics.toml).
_TCO_ARGS = ("lifetime", "maintenance_fraction", "electricity_price", "pue", "utilization",
             "host_cost_per_h100", "host_power_per_h100", "host_load_fraction",
             "colocation_rent", "nic_price", "nic_power", "nic_price_200g", "nic_power_200g",
             "nic_price_800g", "nic_power_800g")


#: Each numeric parameter's range where it is other than 0 and up (SI): (lowest, highest,
#: lowest excluded). cost_summary checks pue, lifetime, utilization and host_load_fraction
#: by it; the rest are the checks of compute's yield and power models (their constants
#: named); a sweep states each (netmodel.study.sweep_values), said once here.
_RANGES = {
    "pue": (1.0, math.inf, False),
    "lifetime": (0.0, math.inf, True),                 # the capex is spread over it
    "utilization": (0.0, 1.0, False),                  # 0: an idle cluster, its power
    "host_load_fraction": (0.0, 1.0, False),           # of the host's max power draw
    "alpha": (MIN_ALPHA, MAX_ALPHA, False),
    "defect_density": (0.0, MAX_DEFECT_DENSITY, False),
    "wafer_price": (0.0, MAX_WAFER_PRICE, False),
    "wafer_diameter": (0.0, MAX_WAFER_DIAMETER, True),
    "critical_fraction": (0.0, 1.0, False),
    "test_fixed_fraction": (0.0, 1.0, False),
    "interposer_overhead": (1.0, math.inf, False),
    "idle_fraction": (0.0, 1.0, False),
    "memory_power_share": (0.0, 1.0, False),
}


def parameter_range(name: str) -> tuple[float, float, bool]:
    """The range the numeric parameter ``name`` takes (SI): lowest, highest, and whether the
    lowest is excluded.

    >>> parameter_range("pue"), parameter_range("lifetime"), parameter_range("nic_price")
    ((1.0, inf, False), (0.0, inf, True), (0.0, inf, False))
    """
    return _RANGES.get(name, (0.0, math.inf, False))


#: Parameters that take a name, not a number (``yield_model``: compute.yield_model's
#: ``model``, renamed so it cannot be taken for the LLM model).
_NAMED_ARGS = ("yield_model",)


#: Parameters whose default is a row of another name (compute.yield_model reads ``alpha``
#: from ``clustering_alpha`` and ``hbm_cost``, ``packaging_cost`` and ``test_cost`` from the
#: H100's ``reference_*`` rows).
_ROW_OF = {"alpha": "clustering_alpha", "hbm_cost": "reference_hbm_cost",
           "packaging_cost": "reference_packaging_cost", "test_cost": "reference_test_cost"}


def parameter_rows() -> dict:
    """The data row (:class:`compute.rows.Parameter`, of ``compute/data/economics.toml`` or
    ``netmodel/data/network_costs.toml``) holding the default of each numeric parameter, by
    parameter name: its ``unit`` is the unit the parameter's value is written in there.

    >>> rows = parameter_rows()
    >>> rows["electricity_price"].unit, rows["lifetime"].unit, rows["alpha"].name
    ('USD/kWh', 'year', 'clustering_alpha')
    """
    from compute.rows import economics

    table = {**economics(), **network_costs()}
    return {n: table[_ROW_OF.get(n, n)] for n in parameters(numeric=True)}


def parameters(numeric: bool = False) -> tuple[str, ...]:
    """Every keyword :func:`cost_summary` accepts to override a default (SI units);
    ``numeric=True``: only those that take a number (what a sweep can vary)."""
    names = _PACKAGE_ARGS + _POWER_ARGS + _TCO_ARGS + tuple(f.name for f in
                                                             fields(NetworkPrices))
    return tuple(n for n in names if n not in _NAMED_ARGS) if numeric else names


@dataclass(frozen=True)
class CostSummary:
    """Capex, power and cost per token of one scenario serving one model in one phase.
    USD, W, tokens/s; ``None`` where nothing is feasible under the SLO."""

    scenario: str
    gpu: str
    model: str
    phase: str
    clock: float
    gpus: int
    tp: int | None
    config: str | None             #: the instance's parallelism, "TP 4 x PP 2"
    batch: int | None
    instances: int
    tokens_per_s: float            #: whole cluster, averaged over utilization
    gpu_price: float
    gpu_package_cost: float
    gpu_price_basis: str           #: compute.yield_model.price_basis: where the price comes from
    capex_gpu: float
    capex_host: float
    capex_network: float
    power_gpu: float
    power_host: float
    power_network: float
    pue: float
    capex_per_year: float          #: amortized capex + maintenance
    energy_per_year: float         #: USD
    #: W of IT power the facility is provisioned (and rented) for: GPUs at their rated power,
    #: hosts at their max, the network
    power_provisioned: float
    colocation_per_year: float     #: USD: colocation_rent x power_provisioned
    network: NetworkBill = field(repr=False)
    #: False where the GPU has no price (no die data; :func:`cost_summary`'s
    #: ``without_price``): its power figures stand (tokens/s/W, tokens/J, the network's
    #: share of power), its capex and cost figures are None in :meth:`to_dict` and the
    #: per-token ones, and ``gpu_price_basis`` says why
    priced: bool = True
    #: the GPUs holding a scale-out NIC port, counted from the fabric graph
    #: (:func:`scale_out_nics`); the hosts are charged less the NIC they hold and these
    #: GPUs their NICs by their links' rate (:func:`nic_charge`)
    nics: int = 0
    #: NICs' worth a GPU of ``nics`` holds on average (1 for an H100 of h100-dgx, 0.25 for
    #: a Lite of lite-direct: four Lites share one 400G cable and its NIC; 0 without NICs)
    nic_share: float = 1.0
    #: ``(class rate in bit/s, NICs' worth)`` of the
    #: :data:`~netmodel.study.host_bill.NIC_CLASSES` the links are charged, slowest first
    nic_classes: tuple = ()
    #: USD of those NICs, inside ``capex_host`` (:func:`nic_charge`)
    capex_nics: float = 0.0
    #: W of those NICs on average, inside ``power_host`` (their class's power, x
    #: ``host_load_fraction`` as the host)
    power_nics: float = 0.0

    @property
    def feasible(self) -> bool:
        """Whether some configuration meets the SLO (else no tokens and no per-token
        figures)."""
        return self.tp is not None

    @property
    def capex_total(self) -> float:
        return self.capex_gpu + self.capex_host + self.capex_network

    @property
    def power_it(self) -> float:
        """W of GPUs, hosts and network."""
        return self.power_gpu + self.power_host + self.power_network

    @property
    def power_facility(self) -> float:
        """W at the meter (IT power x PUE)."""
        return self.power_it * self.pue

    @property
    def cost_per_year(self) -> float:
        """USD: amortized capex and maintenance, energy and the facility's rent."""
        return self.capex_per_year + self.energy_per_year + self.colocation_per_year

    @property
    def tokens_per_s_per_w(self) -> float | None:
        """Tokens/s per watt of IT power."""
        return self.tokens_per_s / self.power_it if self.tokens_per_s > 0 else None

    @property
    def tokens_per_j(self) -> float | None:
        """Tokens per joule at the meter (with PUE)."""
        return self.tokens_per_s / self.power_facility if self.tokens_per_s > 0 else None

    @property
    def usd_per_mtoken(self) -> float | None:
        """USD per million tokens (amortized capex, maintenance, energy and the facility's
        rent)."""
        if self.tokens_per_s <= 0 or not self.priced:
            return None
        return self.cost_per_year / (self.tokens_per_s * SECONDS_PER_YEAR) * 1e6

    @property
    def network_share_capex(self) -> float | None:
        return self.capex_network / self.capex_total if self.priced else None

    @property
    def network_share_power(self) -> float:
        return self.power_network / self.power_it

    def to_dict(self) -> dict:
        """JSON-ready dict (``netmodel cost --json``): units in the keys."""
        by = self.network.by_category()
        return {
            "scenario": self.scenario, "gpu": self.gpu, "model": self.model,
            "phase": self.phase, "clock": self.clock, "gpus": self.gpus, "tp": self.tp,
            "config": self.config,
            "batch": self.batch, "instances": self.instances,
            "tokens_per_s": self.tokens_per_s, "gpu_price_usd": self.gpu_price,
            "gpu_package_cost_usd": self.gpu_package_cost,
            "gpu_price_basis": self.gpu_price_basis,
            "capex_usd": {"gpu": self.capex_gpu, "host": self.capex_host,
                          "network": self.capex_network, "total": self.capex_total,
                          "network_by_category": {k: v["capex"] for k, v in by.items()}},
            "power_w": {"gpu": self.power_gpu, "host": self.power_host,
                        "network": self.power_network, "it": self.power_it,
                        "facility": self.power_facility,
                        "provisioned": self.power_provisioned,
                        "network_by_category": {k: v["power"] for k, v in by.items()}},
            "pue": self.pue, "capex_per_year_usd": self.capex_per_year,
            "energy_per_year_usd": self.energy_per_year,
            "colocation_per_year_usd": self.colocation_per_year,
            "cost_per_year_usd": self.cost_per_year,
            "tokens_per_s_per_w": self.tokens_per_s_per_w, "tokens_per_j": self.tokens_per_j,
            "usd_per_mtoken": self.usd_per_mtoken,
            "network_share_capex": self.network_share_capex,
            "network_share_power": self.network_share_power,
            "network_share": self.network.share, "network_fill": self.network.fill,
            # what the network bill estimated (a pluggable module of a rate no class has,
            # priced per bit of the nearest; an OCS fabric file's cabling inferred)
            "network_notes": list(self.network.notes),
            # count: the GPUs holding a NIC port; worth: the NICs they hold between them
            # (lite-direct: 128 Lites, 32 NICs, the count blast-radius fails)
            "nics": {"count": self.nics, "worth": self.nics * self.nic_share,
                     "capex_usd": self.capex_nics, "power_w": self.power_nics},
            "bill_of_materials": self.network.bill_of_materials(),
        } if self.priced else self._unpriced_dict()

    def table(self, latency_limit: float | None = None) -> str:
        """The summary as ``netmodel cost`` prints it, one row a line; the heading names
        the SLO searched under (``latency_limit``, seconds: ``TBT <= 50 ms``,
        :func:`compute.phases.slo_text`). The NICs' row says what of the hosts' figures
        they are (``nics``, ``capex_nics``, ``power_nics``); a ``notes`` row, a line a note,
        what the network bill estimated (its ``notes``: a pluggable module of a rate no
        class has, priced per bit of the nearest), none where it estimated nothing.

        >>> s = cost_summary("h100-dgx", "Llama-3-70B", "decode")
        >>> print(s.table(0.05).splitlines()[5])
        NICs                  32 GPUs with a NIC port, 32 NICs' worth (32 x 400G): $51.2k, 598 W (in the hosts' figures)
        """
        from compute.phases import slo_text
        from compute.units import counted
        from netmodel.study.summary_words import sig3

        def pct(x: float, total: float) -> str:
            return f"{x / total:.0%}" if total else "-"

        slo = "" if latency_limit is None else slo_text(self.phase, latency_limit)
        cfg = (f"{self.config} x batch {self.batch}, {counted(self.instances, 'instance')}"
               if self.tp else f"nothing feasible under {slo or 'the SLO'}")
        na = "-"
        rows = [
            (f"{self.scenario}, {self.model}, {self.phase}" + (f" ({slo})" if slo else ""),
             f"{self.gpus} x {self.gpu}; {cfg}"),
            ("tokens/s", f"{self.tokens_per_s:,.0f}"),
            ("GPU price", f"{_money(self.gpu_price)} ({self.gpu_price_basis}; package "
                          f"{_money(self.gpu_package_cost)})"),
            ("capex", f"{_money(self.capex_total)}: GPUs "
                      f"{pct(self.capex_gpu, self.capex_total)}, hosts "
                      f"{pct(self.capex_host, self.capex_total)}, network "
                      f"{pct(self.capex_network, self.capex_total)}"),
            ("power (IT)", f"{self.power_it / 1e3:,.2f} kW: GPUs "
                           f"{pct(self.power_gpu, self.power_it)}, hosts "
                           f"{pct(self.power_host, self.power_it)}, network "
                           f"{pct(self.power_network, self.power_it)} (x PUE {self.pue:g})"),
            ("NICs", f"{self.nics:,} GPUs with a NIC port, {self.nics * self.nic_share:,.4g} "
                     f"NICs' worth ({', '.join(f'{u:,.4g} x {r / 1e9:g}G' for r, u in self.nic_classes)}"
                     f"): {_money(self.capex_nics)}, {self.power_nics:,.0f} W (in "
                     f"the hosts' figures)" if self.nics else
                     "none (no GPU's network link is driven by a NIC)"),
            ("cost per year", f"{_money(self.cost_per_year)} (capex "
                              f"{_money(self.capex_per_year)}, energy "
                              f"{_money(self.energy_per_year)}, colocation "
                              f"{_money(self.colocation_per_year)})"),
            ("colocation", f"{_money(self.colocation_per_year)} a year: "
                           f"{self.power_provisioned / 1e3:,.2f} kW IT provisioned (GPUs at "
                           f"rated power, hosts at max, network)"),
            # the figures of merit as summary.md and cost_per_scenario.png print them (sig3)
            ("tokens/s/W", na if self.tokens_per_s_per_w is None
             else sig3(self.tokens_per_s_per_w)),
            ("tokens/J (facility)", na if self.tokens_per_j is None else sig3(self.tokens_per_j)),
            ("$ per M tokens", na if self.usd_per_mtoken is None
             else f"${sig3(self.usd_per_mtoken)}"),
        ]
        # what the network bill estimated, a line a note (none: no section)
        rows += [("notes" if i == 0 else "", f"network capex and power: {n}")
                 for i, n in enumerate(self.network.notes)]
        return "\n".join(f"{k:<21} {v}" for k, v in rows)

    def unpriced_note(self) -> str | None:
        """Why this summary's price-fed figures are missing and what stands, in one line
        (compare's and sweep's ``not_computed`` note); None when priced."""
        if self.priced:
            return None
        return (f"$/Mtok and the network's share of capex not computed: "
                f"{self.gpu_price_basis.removeprefix('not priced: ')}; tok/s/W and tok/J "
                f"count its power (GPUs at their TDP, hosts, network), which needs no price")

    def _unpriced_dict(self) -> dict:
        """:meth:`to_dict` of a summary without a GPU price: what the price feeds is None."""
        d = replace(self, priced=True).to_dict()
        d.update(gpu_price_usd=None, gpu_package_cost_usd=None, capex_per_year_usd=None,
                 cost_per_year_usd=None, usd_per_mtoken=None, network_share_capex=None)
        d["capex_usd"].update(gpu=None, total=None)
        return d


def _money(x: float) -> str:
    """USD as the cost table writes it: thousands above $10k ("$51.2k"), else whole."""
    return f"${x / 1e3:,.1f}k" if x >= 1e4 else f"${x:,.0f}"


def _split(params: dict) -> tuple[dict, dict, dict, dict]:
    unknown = sorted(set(params) - set(parameters()))
    if unknown:
        raise UserError(f"unknown cost parameter(s) {', '.join(unknown)}; known: "
                        f"{known(parameters())}")
    net = {k: v for k, v in params.items() if k in {f.name for f in fields(NetworkPrices)}}
    own = {v: k for k, v in _RENAMED.items()}
    return ({own.get(k, k): v for k, v in params.items()
             if k in _PACKAGE_ARGS},
            {k: v for k, v in params.items() if k in _POWER_ARGS},
            {k: v for k, v in params.items() if k in _TCO_ARGS}, net)


def _best(scenario, model, phase, clock, parallelism="auto", slo=None, max_batch=None):
    from compute.search import DEFAULT_MAX_BATCH
    from netmodel.study.fabric_search import fabric_search

    how = dict(parallelism=parallelism, slo=slo,
               max_batch=DEFAULT_MAX_BATCH if max_batch is None else max_batch)
    if clock == 1.0:
        return fabric_search(model, scenario, phase, **how).best
    from compute.power import gpu_at_clock
    from netmodel.study.scenario_collectives import ScenarioCollectives

    # the same search as at the nominal clock (compare's: expert and attention data
    # parallelism for a mixture of experts), the GPU's FLOP/s scaled; the fabric's
    # collectives are the nominal scenario's (a clock moves no link)
    coll = ScenarioCollectives(scenario)
    clocked = scenario.with_gpu(gpu_at_clock(scenario.gpu_spec, clock))
    return fabric_search(model, clocked, phase, collectives=coll, comm=coll, **how).best


def _prices(spec, reference_price: float | None, price_args: dict) -> tuple[float, float, str]:
    """``(gpu_price, package_cost total, price_basis)`` of ``spec`` (compute.yield_model), kept per GPU
    and parameters (:func:`_prices_cached`): a comparison prices the same few GPUs for
    every row (hundreds of rows)."""
    key = tuple(sorted(price_args.items()))
    try:
        return _prices_cached(spec, reference_price, key)
    except TypeError:   # a parameter that does not hash: priced afresh
        return _prices_uncached(spec, reference_price, key)


def _prices_uncached(spec, reference_price, key: tuple) -> tuple[float, float, str]:
    from compute.yield_model import gpu_dies, gpu_price, package_cost, parameter, price_basis

    args = dict(key)
    if "wafer_price" in args and gpu_dies(spec).process != parameter("reference_process"):
        # the parameter is economics.toml's wafer_price row, the reference (N4-class) node's:
        # a die of another process keeps its own row (wafer_price_n7), as at the defaults;
        # compute.yield_model's wafer_price, given, would price any process's wafers at it
        del args["wafer_price"]
    return (gpu_price(spec, reference_price=reference_price, **args),
            package_cost(spec, **args).total, price_basis(spec))


_prices_cached = lru_cache(maxsize=128)(_prices_uncached)


def warm_prices(gpus: Iterable[str | GpuSpec]) -> None:
    """Price each GPU of ``gpus`` at the default parameters (kept for :func:`cost_summary`)
    and skip those the yield model cannot price (no die data): run before forking worker
    processes, they then share the prices and the yield model's scipy import (about 0.5 s).

    >>> warm_prices(["H100-SXM", "Lite"])
    """
    from compute.hardware import get_gpu

    for g in gpus:
        try:
            _prices(get_gpu(g), None, {})
        except UserError:
            pass


#: :func:`_idle_power`'s draws by (GPU, keywords), at most 256
_IDLE = Memo(256)


def _idle_power(gpu, kw: dict) -> float:
    """``gpu_power(gpu, "idle", **kw)``, kept by GPU and keywords (a comparison asks it of
    every row, for the few GPUs it runs); a keyword that does not hash: worked out
    afresh."""
    from compute.power import gpu_power

    return _IDLE.get_or_make((gpu, tuple(sorted(kw.items()))),
                             lambda: gpu_power(gpu, "idle", **kw))


@lru_cache(maxsize=1)
def _default_net() -> NetworkPrices:
    """The shipped network prices (``NetworkPrices()``), made once: every row of a
    comparison prices its fabric at them."""
    return NetworkPrices()


def cost_summary(scenario: str | Scenario, model: str | ModelSpec, phase: str = "decode",
                 best: InferenceResult | None = None, *, clock: float = 1.0,
                 share: str = "ports-used", parallelism: str = "auto",
                 slo: Slo | None = None, max_batch: int | None = None,
                 without_price: bool = False, **params: float) -> CostSummary:
    """Capex and power split, tokens/s/W, tokens/J and USD per million tokens of
    ``scenario`` serving ``model`` in ``phase`` (see the module docstring).

    A GPU the yield model cannot price (a GPU file without a die table) is refused
    (UserError), or, with ``without_price``, costed in power only: tokens/s/W and tokens/J
    from its TDP (:func:`compute.power.gpu_power`), its host and network power, which need
    no price; ``priced`` False, the price's reason in ``gpu_price_basis``.

    ``best`` is the configuration it serves (a :class:`~compute.results.InferenceResult`,
    e.g. ``fabric_search(...).best``; None runs that search, at ``clock`` x the nominal SM
    clock, spreading the model by ``parallelism`` as compare's ``--parallelism``: ``tp``,
    ``auto`` or ``all``, under ``slo`` (default TTFT <= 1 s, TBT <= 50 ms) with batches up
    to ``max_batch`` (default 1024), as compare's). ``params`` override defaults by name
    (:func:`parameters`; SI units).

    The fabric is priced as built: a scenario on a degraded graph
    (:func:`~netmodel.study.scenarios.fabric_scenario` of what
    :func:`topologies.degrade.degrade` or
    :func:`netmodel.collectives.degraded.degrade` returned, marked by them) is refused
    (:func:`~netmodel.study.network_bill.check_not_degraded`), before any search: its
    failed parts were bought, and counting the graph would charge one cut NIC link a NIC,
    its optics and cable less.
    """
    without_price = flag("", "without_price", without_price)
    from compute.hardware import get_gpu
    from compute.phases import check_phase
    from compute.power import gpu_power, nominal_tdp
    from compute.yield_model import parameter

    scenario = get_scenario(scenario)
    if scenario.graph is not None:   # before the search: a degraded graph is not priced
        check_not_degraded(scenario.graph, f"the graph of scenario {scenario.name!r}")
    phase = check_phase(phase)
    # a number before the search compares it with 1 (an array raised ValueError there)
    clock = check_number("clock", clock)
    from compute.results import InferenceResult

    of_type("best", best, InferenceResult, "fabric_search(...).best")
    share = check_share(share)   # before the search, not after it
    pkg, pwr, tco, net = _split(params)
    tco = {k: check_number(k, tco[k]) if k in tco else parameter(k) for k in _TCO_ARGS}
    if tco["utilization"] > _RANGES["utilization"][1]:   # 0: an idle cluster (no tokens)
        raise UserError(f"utilization must be a share of the time serving, from 0 to at "
                        f"most 1 (100%), got {tco['utilization']!r}")
    if tco["host_load_fraction"] > _RANGES["host_load_fraction"][1]:
        raise UserError(f"host_load_fraction must be a fraction of the host's max power "
                        f"from 0 to 1, got {tco['host_load_fraction']!r}")
    if tco["pue"] < _RANGES["pue"][0]:
        raise UserError(f"pue must be >= {_RANGES['pue'][0]:g}, got {tco['pue']!r}")
    if tco["lifetime"] <= _RANGES["lifetime"][0]:
        raise UserError(f"lifetime must be a time above 0 (the capex is spread over it), "
                        f"got {tco['lifetime']!r} s")
    _check_nic_in_host(tco)
    if best is None:
        best = _best(scenario, model, phase, clock, parallelism, slo, max_batch)
    elif best.phase != phase:
        raise UserError(f"best is a {best.phase} configuration, not {phase}")
    graph = build_fabric(scenario)
    base = scenario.gpu_spec   # a GPU file's GPU is not in the catalog by name
    n = int(graph.graph["gpus"])
    spec = base  # a GPU at another clock keeps its package
    tp = best.tp if best is not None else None
    per_instance = best.gpus if best is not None else 0    # TP x PP
    instances = n // per_instance if per_instance else 0
    active = instances * per_instance
    u = tco["utilization"]
    kw = dict(clock=clock, **pwr)
    idle = _idle_power(base, kw)
    serving = gpu_power(base, phase, best, **kw) if best is not None else idle
    power_gpu = active * (u * serving + (1 - u) * idle) + (n - active) * idle
    tokens = instances * best.tokens_per_s * u if best is not None else 0.0

    price_args = {k: v for k, v in pkg.items() if k != "reference_price"}
    try:
        price, package, basis = _prices(spec, pkg.get("reference_price"), price_args)
        priced = True
    except UserError as exc:
        if not without_price:
            raise
        price, package, basis, priced = 0.0, 0.0, f"not priced: {exc}", False
    tdp_share = nominal_tdp(spec) / get_gpu("H100-SXM").tdp
    bill = network_bill_cached(graph, share, NetworkPrices(**net) if net else _default_net())
    capex_gpu = n * price
    # a host price and power hold one scale-out NIC a GPU: every host is charged without
    # it, and the GPUs' NICs by their links' rate (none for a GPU without one)
    nics = scale_out_nics(graph)
    own_usd, own_w = _host_nic(base, tco)
    per_host_w = host_power(base, tco["host_power_per_h100"])
    _check_own_nic(base, own_w, per_host_w, tco)
    nic_usd, nic_w, nic_units = nic_charge(graph, tco)
    if not per_host_w:   # a host that draws nothing (host_power_per_h100 = 0): its NICs too
        nic_w = 0.0
    capex_host = n * (tco["host_cost_per_h100"] - own_usd) * tdp_share + nic_usd
    capex = capex_gpu + capex_host + bill.capex
    max_host = n * (per_host_w - own_w) + nic_w
    power_host = max_host * tco["host_load_fraction"]
    power_it = power_gpu + power_host + bill.power
    energy = power_it * tco["pue"] * SECONDS_PER_YEAR * tco["electricity_price"]
    # the facility is rented for the IT power the cluster may draw, not its average: GPUs
    # at their rated power (at the clock they run at), hosts at their max, the network
    from compute.power import gpu_at_clock

    rated = base.tdp if clock == 1.0 else gpu_at_clock(
        base, clock, idle_fraction=pwr.get("idle_fraction")).tdp
    provisioned = n * (rated + per_host_w - own_w) + nic_w + bill.power
    colocation = provisioned * tco["colocation_rent"] * SECONDS_PER_YEAR
    years = tco["lifetime"] / SECONDS_PER_YEAR   # 0.0 for a lifetime of 1e-320 s: no
    per_year = (capex / years if years else math.inf) + capex * tco["maintenance_fraction"] \
        * SECONDS_PER_YEAR   # ZeroDivisionError, an overflow the check below names
    totals = {"capex": capex, "power": power_it, "energy cost per year": energy,
              "capex per year": per_year, "colocation rent per year": colocation}
    over = [k for k, v in totals.items() if not math.isfinite(v)]
    if over:   # each parameter is finite; their product overflowed a float
        given = ", ".join(f"{k}={v:g}" for k, v in params.items()) or "the defaults"
        raise UserError(f"cost parameters {given} (SI) make the {over[0]} of {scenario.label} "
                        f"overflow to infinity; give values nearer a real system's")
    return CostSummary(
        scenario=scenario.label, gpu=best.gpu if best is not None else base.name, model=getattr(best, "model", str(model)),
        phase=phase, clock=float(clock), gpus=n, tp=tp,
        config=Parallelism.of(best).label
        if best is not None else None,
        batch=best.batch if best is not None else None, instances=instances,
        tokens_per_s=tokens, gpu_price=price,
        gpu_package_cost=package, gpu_price_basis=basis, capex_gpu=capex_gpu,
        capex_host=capex_host, capex_network=bill.capex, power_gpu=power_gpu,
        power_host=power_host, power_network=bill.power, pue=tco["pue"],
        capex_per_year=per_year, energy_per_year=energy, power_provisioned=provisioned,
        colocation_per_year=colocation, network=bill, priced=priced, nics=nics,
        nic_share=sum(u for _, u in nic_units) / nics if nics else 0.0,
        nic_classes=nic_units, capex_nics=nic_usd,
        power_nics=nic_w * tco["host_load_fraction"])
