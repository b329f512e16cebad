"""The cost and price of a GPU package: its logic dies (the catalog's die tables), HBM,
packaging and test, and its price; with the model of die yield and cost behind them.

The dies' own yield and cost (dies per wafer, defect yield with harvesting, cost per good
die and per good SM) are computed in :mod:`compute.die_yield` and re-exported here.

Units are SI inside: areas in m^2, lengths in m, defect densities in defects per m^2,
prices in USD. The defaults are rows of ``compute/data/economics.toml`` (each with its
source and confidence tag; :func:`economics`); every function takes them as parameters so a
study can sweep them.

The model
---------
* **Gross dies per wafer** (Hennessy & Patterson): ``pi (d/2)^2 / A - pi d / sqrt(2 A)``
  with ``d`` the usable diameter (wafer less twice the edge exclusion) and ``A`` the die
  area; the second term is the edge loss. A wafer yields whole dies: the floor of that. The
  good dies per wafer are the whole dies times the yield, and the cost per good die (and
  per good SM, and a package's logic) divides the wafer price by them: a staircase in
  area, as real dies come.
* **Defect yield** of an area ``A`` at mean defect density ``D``, as the chance that a
  Poisson count of defects is zero when the local density itself varies from die to die:
  ``poisson`` (no variation) ``exp(-D A)``; ``murphy`` (triangular density on [0, 2D])
  ``((1 - exp(-D A)) / (D A))^2``; ``negative-binomial`` (gamma density with shape
  ``alpha``, clustering) ``(1 + D A / alpha)^-alpha``, Patterson & Hennessy's formula at
  ``alpha = 2``.
* **Harvesting**: a die of ``N`` physical SMs ships with ``k`` enabled (H100: 132 of 144).
  The die is split into a critical part (``critical_fraction`` of the area: a defect there
  kills it) and ``N`` equal SM regions. For a given local density ``x`` defects fall
  independently (Poisson), each SM region is good with ``p = exp(-x a)`` and the die is
  good when the critical part is clean and at least ``k`` of ``N`` regions are: ``exp(-x
  A_c) P[Binomial(N, p) >= k]``. The yield is that averaged over the model's density
  distribution (exact for Poisson; Gauss quadrature for Murphy and the negative binomial).
  With ``k = N`` it equals the plain yield of the whole die.
* **Package**: logic dies (wafer price of their process / good dies per wafer, times the
  dies per package: each die is tested good before assembly, so a two-die package pays for
  two good dies; drawn untested both would be good with the square of the die yield) +
  HBM + packaging + test and assembly. HBM costs the H100's HBM scaled by the larger of
  capacity and bandwidth ratios (pro rata: real stacks come whole); a die table whose
  ``memory`` row names a board memory (GDDR6, GDDR7: no stacks, ``hbm_sites`` 0) costs
  its capacity at that memory's ``memory_price_<kind>`` per GB instead (the package cost's
  ``hbm`` term holds it; ``hbm_cost`` does not move it). Packaging is a fixed
  part per package plus a part proportional to the interposer area ``overhead x (logic
  dies + HBM stack footprints)``, calibrated so the H100 costs its published figure; a die
  table's HBM sites count as they are (dummies included), the reference die and its slices
  count the H100's six sites times the HBM share. CoWoS-L is priced per mm^2 as CoWoS-S
  (no published per-area figure read). Test and assembly: a fixed share per package plus
  the rest in proportion to logic area.
* **Dies of the catalog's GPUs**: a GPU's ``die`` table in ``compute/data/gpus.toml`` (or
  its GPU file) gives die area, dies per package, physical and enabled SMs per die,
  process (its wafer price: the row whose ``processes_of_<row>`` list names it,
  ``wafer_price`` for the N4/N5 family, else ``wafer_price_<process>``), HBM sites, package class and optionally a published
  list price (published for the A100 and B200; the GB200, B300 and GB300 rows are
  estimates, priced as ``estimated price``); every row is checked when the catalog or the file is read
  (``compute/dies.py``: a bad table is refused there, not when the GPU is first priced,
  save whether the die fits the wafer, which depends on the wafer asked for). The
  rows' reader and the economics defaults are ``compute/rows.py`` (names re-exported here).
  The H100 and H200 are the GH100 reference die
  (``economics.toml``); a GPU derived from another with ``fraction = f`` (the catalog's
  Lite family, or a GPU file's ``derive_from``) is a slice of each of its base's dies: ``f`` of the area, ``round(f x N)``
  physical SMs of which its own SMs are enabled.
* **Price**: a GPU's list price where its die table gives one (fixed: a published price
  does not follow a swept input); else its package cost times the price / cost ratio (its
  *margin*) of the GPU it derives from if that has a list price, else of the H100
  (``reference_price``). The margin is that GPU's price over its package cost at the
  shipped defaults, a published fact that a sweep does not move; the GPU's own package cost
  follows the swept inputs, so no price falls when what the GPU is made of gets dearer. The
  H100 (the reference) follows the same rule: ``reference_price`` at the defaults, its own
  cost times the margin under a sweep.

>>> round(gross_dies_per_wafer(814e-6, 0.3), 2)
63.48
>>> round(die_yield(814e-6, 1000.0, "poisson"), 4)  # exp(-0.1 /cm^2 x 8.14 cm^2)
0.4431
>>> h100, lite = package_cost("H100-SXM"), package_cost("Lite")
>>> h100.die.dies_per_wafer, lite.die.dies_per_wafer, lite.die.sms_physical
(63, 300, 36)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from compute.die_yield import (
    DieCost,
    die_cost,
    die_yield,
    dies_per_wafer,
    gross_dies_per_wafer,
    harvested_yield,
    or_default,
    usable_diameter,
    yield_curve,
)
from compute.dies import (
    DIE_ROWS,
    MAX_DIES,
    MAX_HBM_SITES,
    MAX_SMS,
    MAX_WAFER_PRICE,
    MIN_DIE_AREA,
    YIELD_MODELS,
    LogicDies,
    memory_price_of,
)
from compute.errors import UserError, known
from compute.rows import (
    CONFIDENCE,
    UNITS,
    Parameter,
    economics,
    parameter,
    read_parameters,
)
from compute.rows import check_number as _number
from compute.validate import describe

if TYPE_CHECKING:
    from compute.hardware import GpuSpec

__all__ = ["CONFIDENCE", "DIE_ROWS", "MAX_DIES", "MAX_HBM_SITES", "MAX_SMS", "MAX_WAFER_PRICE",
           "MIN_DIE_AREA", "UNITS", "YIELD_MODELS", "DieCost", "LogicDies", "PackageCost",
           "Parameter", "die_cost", "die_yield", "dies_per_wafer", "economics", "gpu_die",
           "gpu_die_cost", "gpu_dies", "gpu_price", "gross_dies_per_wafer", "harvested_yield", "package_cost",
           "margin", "parameter", "price_basis", "read_parameters", "replacement", "yield_curve"]


# ------------------------------------------------------------------ GPU dies and packages

#: GPUs built on the reference die (GH100).
REFERENCE_GPUS = ("H100-SXM", "H200-SXM")


def _base_of(spec: GpuSpec) -> GpuSpec | None:
    """The GPU ``spec`` is derived from (the Lite family: H100-SXM; a GPU file's
    ``derive_from``, a catalog GPU or another of the same file), or None."""
    from compute.gpu_facts import base_gpu

    return base_gpu(spec.name.split("@", 1)[0])


def gpu_dies(gpu: str | GpuSpec) -> LogicDies:
    """The logic dies of ``gpu``'s package, from (in this order) its own ``die`` table
    (compute/data/gpus.toml or its GPU file); the reference die (economics.toml's
    ``reference_*`` rows) for the H100 and H200; a ``fraction`` of its base's dies for a GPU
    derived from another (the Lite family, a GPU file's ``derive_from``: ``f`` of each die's area,
    ``round(f x N)`` physical SMs of which its own share is enabled). A GPU at another
    clock keeps its dies. Else a UserError listing the GPUs with die data.

    >>> b = gpu_dies("B200-HGX")
    >>> round(b.area * 1e6), b.dies, b.sms_physical, b.sms_enabled, b.process, b.packaging
    (800, 2, 80, 74, 'N4', 'CoWoS-L')
    >>> a = gpu_dies("A100-SXM-80GB")
    >>> round(a.area * 1e6), a.sms_physical, a.sms_enabled, a.wafer_price, a.list_price
    (826, 128, 108, 9346.0, 12500.0)
    """
    from compute.gpu_facts import derivation, logic_dies
    from compute.hardware import get_gpu

    spec = get_gpu(gpu)
    name = spec.name.split("@", 1)[0]  # a GPU at another clock keeps its die
    found = logic_dies(name)  # checked when its file was read (compute.dies)
    if found is not None:
        return replace(found, gpu=spec.name)
    if name in REFERENCE_GPUS:
        return LogicDies(gpu=spec.name, area=parameter("reference_die_area"), dies=1,
                         sms_physical=int(parameter("reference_sms_physical")),
                         sms_enabled=int(parameter("reference_sms_enabled")),
                         process=parameter("reference_process"),
                         wafer_price=parameter("wafer_price"), hbm_sites=None,
                         packaging=parameter("reference_packaging"), list_price=None,
                         basis="reference die (compute/data/economics.toml)")
    base_spec = _base_of(spec)
    if base_spec is not None:
        base_name = base_spec.name
        base = gpu_dies(base_spec)
        f = derivation(name)[1]
        n = max(1, round(f * base.sms_physical))
        sites = None if base.hbm_sites is None else \
            base.hbm_sites * _hbm_share(spec) / _hbm_share(base_spec)
        return replace(base, gpu=spec.name, area=base.area * f, sms_physical=n,
                       sms_enabled=min(-(-spec.sms // base.dies), n), hbm_sites=sites,
                       list_price=None, basis=f"{f:g} of {base_name}'s dies")
    raise UserError(f"no die data for GPU {spec.name!r}; dies are known for: "
                    f"{known(_with_dies())} (a GPU file may give a die table)")


def _with_dies() -> list[str]:
    """Names of the catalog GPUs (and GPU-file GPUs read so far) with die data."""
    from compute.gpu_facts import die_table
    from compute.hardware import catalog

    out = []
    for name, spec in catalog().items():
        base = _base_of(spec)
        base = None if base is None else base.name
        if die_table(name) is not None or name in REFERENCE_GPUS or (
                base is not None and (die_table(base) is not None or base in REFERENCE_GPUS)):
            out.append(name)
    return out


def gpu_die(gpu: str | GpuSpec) -> tuple[float, int, int]:
    """``(area m^2, physical SMs, enabled SMs)`` of one of a GPU's logic dies
    (:func:`gpu_dies`; the B200 has two such dies).

    >>> a, n, k = gpu_die("Lite+BW")
    >>> round(a * 1e6, 1), n, k
    (203.5, 36, 33)
    """
    d = gpu_dies(gpu)
    return d.area, d.sms_physical, d.sms_enabled


@dataclass(frozen=True)
class PackageCost:
    """The manufacturing cost of one GPU package (USD): logic dies, HBM, packaging, test."""

    gpu: str
    die: DieCost               #: one logic die
    hbm: float
    packaging: float
    test: float
    interposer_area: float     #: m^2
    dies: int = 1              #: logic dies in the package, each a known-good die
    process: str = ""
    packaging_class: str = ""

    @property
    def logic(self) -> float:
        """USD of the package's logic dies: ``dies`` good dies."""
        return self.die.cost_per_good_die * self.dies

    @property
    def logic_yield(self) -> float:
        """Chance that ``dies`` dies drawn untested are all good: the die yield to the
        power ``dies`` (with the known-good-die test assumed, the cost pays for good dies
        only, :attr:`logic`)."""
        return self.die.yield_ ** self.dies

    @property
    def total(self) -> float:
        """USD per package."""
        return self.logic + self.hbm + self.packaging + self.test

    @property
    def sms_enabled(self) -> int:
        """Enabled SMs of the package."""
        return self.die.sms_enabled * self.dies

    @property
    def per_sm(self) -> float:
        """USD per enabled SM."""
        return self.total / self.sms_enabled

    def to_dict(self) -> dict:
        """JSON-ready dict (USD, mm^2)."""
        return {"gpu": self.gpu, "die": self.die.to_dict(), "dies": self.dies,
                "process": self.process, "packaging_class": self.packaging_class,
                "logic_yield": self.logic_yield,
                "logic_usd": self.logic, "hbm_usd": self.hbm,
                "packaging_usd": self.packaging, "test_usd": self.test,
                "interposer_area_mm2": self.interposer_area * 1e6, "total_usd": self.total,
                "per_sm_usd": self.per_sm}


def _hbm_share(spec) -> float:
    """The GPU's HBM as a multiple of the H100's: the larger of capacity and bandwidth."""
    from compute.hardware import get_gpu

    ref = get_gpu(REFERENCE_GPUS[0])
    return max(spec.hbm_capacity / ref.hbm_capacity, spec.hbm_bandwidth / ref.hbm_bandwidth)


def _interposer(die_area: float, hbm_share: float, overhead: float, footprint: float) -> float:
    sites = parameter("reference_hbm_sites")
    return overhead * (die_area + sites * hbm_share * footprint)


def gpu_die_cost(gpu: str | GpuSpec, *, defect_density: float | None = None,
                 model: str | None = None, alpha: float | None = None,
                 wafer_price: float | None = None, wafer_diameter: float | None = None,
                 critical_fraction: float | None = None) -> DieCost:
    """:func:`die_cost` of one of ``gpu``'s logic dies (:func:`gpu_dies`: its area, its
    physical and enabled SMs, its process's wafer price unless ``wafer_price`` is given).

    >>> c = gpu_die_cost("B200-HGX")
    >>> round(c.area * 1e6), c.sms_physical, c.sms_enabled, c.wafer_price, c.dies_per_wafer
    (800, 80, 74, 18000.0, 64)
    >>> c.gpu, c.dies_per_package, round(c.good_dies_per_package_cost, 2)
    ('B200-HGX', 2, 608.63)
    """
    logic = gpu_dies(gpu)
    price = logic.wafer_price if wafer_price is None else wafer_price
    usable_diameter(wafer_diameter, None)  # the wafer checked first: what follows is the die's
    try:  # a die that does not fit the wafer: said with where its area was read
        dies_per_wafer(logic.area, wafer_diameter)
    except UserError as exc:
        raise UserError(f"{logic.basis}: {exc}") from None
    c = die_cost(logic.area, defect_density=defect_density, model=model, alpha=alpha,
                 wafer_price=price, wafer_diameter=wafer_diameter,
                 sms_physical=logic.sms_physical, sms_enabled=logic.sms_enabled,
                 critical_fraction=critical_fraction)
    return replace(c, gpu=logic.gpu, process=logic.process, dies_per_package=logic.dies)


def package_cost(gpu: str | GpuSpec, *, defect_density: float | None = None,
                 model: str | None = None, alpha: float | None = None,
                 wafer_price: float | None = None, wafer_diameter: float | None = None,
                 critical_fraction: float | None = None, hbm_cost: float | None = None,
                 packaging_cost: float | None = None, test_cost: float | None = None,
                 packaging_fixed: float | None = None, test_fixed_fraction: float | None = None,
                 interposer_overhead: float | None = None) -> PackageCost:
    """The manufacturing cost of ``gpu``'s package (see the module docstring). ``hbm_cost``,
    ``packaging_cost`` and ``test_cost`` are the H100's HBM, packaging and test and assembly
    (USD; defaults: the ``reference_*`` rows) that the GPU's shares are taken of; the
    packaging and test calibration to those H100 figures is kept whatever the other
    parameters (``packaging_fixed``, ``test_fixed_fraction`` and ``interposer_overhead``
    only split them). ``wafer_price``, when
    given, is the price of the GPU's own wafers whatever its process (default: its
    process's, :func:`gpu_dies`).

    >>> p = package_cost("H100-SXM")
    >>> round(p.hbm), round(p.packaging), round(p.test)
    (1400, 750, 920)
    >>> q = package_cost("Lite")
    >>> round(q.hbm), round(q.test)
    (350, 402)
    >>> b = package_cost("B200-HGX")
    >>> b.dies, round(b.logic) == round(2 * b.die.cost_per_good_die), b.packaging_class
    (2, True, 'CoWoS-L')
    """
    given = {k: v for k, v in locals().items() if k not in ("gpu", "model")}  # the inputs
    from compute.hardware import get_gpu

    spec = get_gpu(gpu)
    logic = gpu_dies(spec)
    area = logic.total_area
    ref_area = parameter("reference_die_area")
    die = gpu_die_cost(spec, defect_density=defect_density, model=model, alpha=alpha,
                       wafer_price=wafer_price, wafer_diameter=wafer_diameter,
                       critical_fraction=critical_fraction)
    share = _hbm_share(spec)
    hbm = _number("hbm_cost", or_default(hbm_cost, "reference_hbm_cost")) * share
    per_byte = memory_price_of(logic.memory, logic.basis)
    if per_byte is not None:   # a board memory (GDDR): its price per GB x the capacity
        hbm = per_byte * spec.hbm_capacity
    overhead = _number("interposer_overhead",
                       or_default(interposer_overhead, "interposer_overhead"), low=1.0)
    footprint = parameter("hbm_stack_footprint")
    fixed = _number("packaging_fixed", or_default(packaging_fixed, "packaging_fixed"))
    ref_pack = _number("packaging_cost", or_default(packaging_cost, "reference_packaging_cost"))
    if fixed > ref_pack:
        raise UserError(f"packaging_fixed {fixed:g} USD exceeds the H100's whole packaging "
                        f"cost (packaging_cost {ref_pack:g} USD), of which it is the fixed "
                        f"part: give packaging_cost >= packaging_fixed")
    per_area = (ref_pack - fixed) / _interposer(ref_area, 1.0, overhead, footprint)
    if logic.hbm_sites is None:   # the reference die and its slices: H100 sites x HBM share
        interposer = _interposer(area, share, overhead, footprint)
    else:
        interposer = overhead * (area + logic.hbm_sites * footprint)
    tf = _number("test_fixed_fraction", or_default(test_fixed_fraction, "test_fixed_fraction"),
                 high=1.0)
    ref_test = _number("test_cost", or_default(test_cost, "reference_test_cost"))
    test = ref_test * (tf + (1 - tf) * area / ref_area)
    out = PackageCost(gpu=spec.name, die=die, hbm=hbm, packaging=fixed + per_area * interposer,
                      test=test, interposer_area=interposer, dies=logic.dies,
                      process=logic.process, packaging_class=logic.packaging)
    _finite(out.total, f"the package cost of {spec.name}", given)
    return out


def _finite(value: float, what: str, given: dict) -> float:
    """``value`` if finite, else a UserError: each input is finite, their sum or product
    overflowed a float (packaging_cost = 1e308 USD made a price of inf)."""
    if math.isfinite(value):
        return value
    shown = ", ".join(f"{k}={describe(v)}" for k, v in given.items() if v is not None)
    raise UserError(f"{what} overflows to infinity at {shown or 'the defaults'}; give values "
                    f"nearer a real system's")


def price_basis(gpu: str | GpuSpec) -> str:
    """How :func:`gpu_price` prices ``gpu``: ``"list price"`` (its die data gives a
    published price), ``"estimated price"`` (its die data gives a price its source calls an
    estimate: :data:`compute.dies.ESTIMATED`; NVIDIA publishes none for the B300),
    ``"reference price"`` (the H100 itself: ``reference_price`` at the
    shipped defaults, its own package cost times that margin under a sweep),
    ``"margin of NAME"`` (its package cost times the price / cost ratio of NAME: the
    nearest GPU it derives from with a list price, else the H100).

    >>> price_basis("B200-HGX"), price_basis("Lite"), price_basis("H100-SXM")
    ('list price', 'margin of H100-SXM', 'reference price')
    >>> price_basis("B300-HGX")
    'estimated price'
    """
    from compute.hardware import get_gpu

    basis, _, anchor = _price_anchor(gpu)
    if anchor is None and get_gpu(gpu).name.split("@", 1)[0] == REFERENCE_GPUS[0]:
        return "reference price"
    return basis


def _price_anchor(gpu: str | GpuSpec) -> tuple[str, LogicDies | None, GpuSpec | None]:
    """``(basis, dies of the GPU itself, the GPU whose margin is taken)``."""
    from compute.hardware import get_gpu

    spec = get_gpu(gpu)
    dies = gpu_dies(spec)
    if dies.list_price is not None:
        return ("estimated price" if dies.price_estimated else "list price"), dies, None
    base = _base_of(spec)
    while base is not None:
        if gpu_dies(base).list_price is not None:
            return f"margin of {base.name}", dies, base
        base = _base_of(base)
    return f"margin of {REFERENCE_GPUS[0]}", dies, None


def margin(gpu: str | GpuSpec, *, reference_price: float | None = None) -> float:
    """The price / package-cost ratio that prices ``gpu`` when it has no list price
    (:func:`gpu_price`): the list price of the nearest GPU it derives from that has one,
    else ``reference_price`` (the H100's), over that GPU's package cost *at the shipped
    defaults* (``compute/data/economics.toml``). A margin is a published price over the
    cost at the inputs it was published under, so it does not move when a package
    parameter is swept: the GPU's own cost does. For a list-priced GPU, its own list price
    over its own cost (informative: its price does not use it).

    >>> round(margin("Lite"), 4), round(27500 / package_cost("H100-SXM").total, 4)
    (8.1374, 8.1374)
    """
    ref = _number("reference_price", or_default(reference_price, "reference_price"))
    _, dies, anchor = _price_anchor(gpu)
    if dies.list_price is not None:
        return dies.list_price / package_cost(gpu).total
    if anchor is not None:
        return gpu_dies(anchor).list_price / package_cost(anchor).total
    return ref / package_cost(REFERENCE_GPUS[0]).total


def gpu_price(gpu: str | GpuSpec, *, reference_price: float | None = None,
              **package_args: Any) -> float:
    """Purchase price of ``gpu`` (USD): its published list price where its die data gives
    one (A100, B200; B300 and GB300 an estimate), whatever ``package_args`` say (a
    published price is a fact, not a function of the model's inputs); else its package cost
    at ``package_args`` times its :func:`margin`, the price / package cost ratio of the GPU
    it derives from if that has a list price, else of the H100 (``reference_price`` is the
    H100's price), that ratio taken at the shipped defaults. :func:`price_basis` says which.

    The H100 itself follows the same rule: at the defaults it costs ``reference_price``;
    with a package parameter swept its price moves with its own package cost (a dearer
    wafer makes the H100 dearer as it makes a Lite dearer), so the two stay priced alike.
    So no GPU's price falls when what it is made of gets dearer.

    >>> round(gpu_price("H100-SXM")), round(gpu_price("B200-HGX"))
    (27500, 35000)
    >>> # twice the wafer price: the H100's good die, $309 of its $3,379, costs $619
    >>> round(gpu_price("H100-SXM", wafer_price=36000.0))  # 27,500 x 3,689 / 3,379
    30018
    """
    from compute.hardware import get_gpu

    ref = _number("reference_price", or_default(reference_price, "reference_price"))
    listed = gpu_dies(gpu).list_price
    if listed is not None:
        return listed
    return _finite(package_cost(gpu, **package_args).total * margin(gpu, reference_price=ref),
                   f"the price of {get_gpu(gpu).name}",
                   dict(reference_price=reference_price, **package_args))


def replacement(big: str | GpuSpec = "H100-SXM", small: str | GpuSpec = "Lite",
                **package_args: Any) -> dict:
    """The package cost of ``big`` against the ``small`` GPUs with as many enabled SMs
    (``big.sms / small.sms`` of them): totals, per SM, and each term.

    >>> r = replacement()
    >>> r["count"], r["small_total_usd"] > r["big_total_usd"]
    (4.0, True)
    """
    from compute.hardware import get_gpu

    b, s = package_cost(big, **package_args), package_cost(small, **package_args)
    count = get_gpu(big).sms / get_gpu(small).sms
    terms = ("logic", "hbm", "packaging", "test")
    bd, sd = b.to_dict(), s.to_dict()
    return {"big": b.gpu, "small": s.gpu, "count": count,
            "big_total_usd": b.total, "small_total_usd": count * s.total,
            "big_per_sm_usd": b.per_sm, "small_per_sm_usd": s.per_sm,
            "big_per_good_sm_logic_usd": b.die.cost_per_good_sm,
            "small_per_good_sm_logic_usd": s.die.cost_per_good_sm,
            **{f"big_{t}_usd": bd[f"{t}_usd"] for t in terms},
            **{f"small_{t}_usd": count * sd[f"{t}_usd"] for t in terms}}
