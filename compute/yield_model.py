"""Die yield and the cost of a GPU package: dies per wafer, defect yield with harvesting,
cost per good die and per good SM, and the HBM, packaging and test terms.

Units are SI inside: areas in m^2, lengths in m, defect densities in defects per m^2,
prices in USD. The defaults are rows of ``compute/data/economics.toml`` (each with its
source and confidence tag; :func:`economics`); every function takes them as parameters so a
study can sweep them.

The model
---------
* **Gross dies per wafer** (Hennessy & Patterson): ``pi (d/2)^2 / A - pi d / sqrt(2 A)``
  with ``d`` the usable diameter (wafer less twice the edge exclusion) and ``A`` the die
  area; the second term is the edge loss. Whole dies: the floor. The cost per good die
  divides the wafer price by the formula's own value times the yield (an average over die
  placements, so that cost is smooth in area rather than a staircase).
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
  capacity and bandwidth ratios (pro rata: real stacks come whole). Packaging is a fixed
  part per package plus a part proportional to the interposer area ``overhead x (logic
  dies + HBM stack footprints)``, calibrated so the H100 costs its published figure; a die
  table's HBM sites count as they are (dummies included), the reference die and its slices
  count the H100's six sites times the HBM share. CoWoS-L is priced per mm^2 as CoWoS-S
  (no published per-area figure read). Test and assembly: a fixed share per package plus
  the rest in proportion to logic area.
* **Dies of the catalog's GPUs**: a GPU's ``die`` table in ``compute/data/gpus.toml`` (or
  its GPU file) gives die area, dies per package, physical and enabled SMs per die,
  process (its wafer price: ``wafer_price`` for the reference N4-class node,
  ``wafer_price_<process>`` else), HBM sites, package class and optionally a published
  list price (A100, B200; B300 and GB300 an estimate); every row is checked when the catalog or the file is read
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
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from compute.dies import (
    DIE_ROWS,
    MAX_DIES,
    MAX_HBM_SITES,
    MAX_SMS,
    MAX_WAFER_PRICE,
    MIN_DIE_AREA,
    LogicDies,
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
from compute.validate import describe, is_whole

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from compute.hardware import GpuSpec

__all__ = ["CONFIDENCE", "DIE_ROWS", "MAX_DIES", "MAX_HBM_SITES", "MAX_SMS", "MAX_WAFER_PRICE",
           "MIN_DIE_AREA", "UNITS", "YIELD_MODELS", "DieCost", "LogicDies", "PackageCost",
           "Parameter", "die_cost", "die_yield", "dies_per_wafer", "economics", "gpu_die",
           "gpu_die_cost", "gpu_dies", "gpu_price", "gross_dies_per_wafer", "harvested_yield", "package_cost",
           "margin", "parameter", "price_basis", "read_parameters", "replacement", "yield_curve"]

#: Defect-yield models (see the module docstring).
YIELD_MODELS = ("poisson", "murphy", "negative-binomial")
#: Largest clustering alpha the harvested negative binomial integrates (its quadrature
#: weights overflow past ~170); larger clustering parameters are Poisson in all but name.
MAX_ALPHA = 100.0
#: Smallest clustering alpha taken: published clustering parameters are of order 0.5-5;
#: below 0.01 every die is clean in all but name.
MIN_ALPHA = 0.01
#: Largest defect density taken (per m^2): 100 /cm^2, 1000x a mature node's ~0.1 /cm^2
#: (every die larger than 1 mm^2 is dead long before).
MAX_DEFECT_DENSITY = 1e6
#: Largest wafer diameter taken (m): 1 m, twice the 450 mm wafer never put in production.
MAX_WAFER_DIAMETER = 1.0
_QUAD_NODES = 64


def _or(value, name):
    return parameter(name) if value is None else value


# ------------------------------------------------------------------ checks

def _array(name: str, value, *, low_open: bool = True) -> np.ndarray:
    if isinstance(value, bool):
        raise UserError(f"{name} must be a number, got {describe(value)}")
    try:
        kind = np.asarray(value).dtype.kind
        # numbers only: numpy casts text ('750') and durations (5 s) to floats
        if kind not in "iufO":
            raise TypeError(kind)
        with np.errstate(over="ignore"):   # a long double past a float's range: inf, refused
            a = np.asarray(value, dtype=float)
    except OverflowError:   # an integer past a float's range
        a = np.array(math.inf)
    except (TypeError, ValueError):
        raise UserError(f"{name} must be numbers, got {describe(value)}") from None
    bad = (a <= 0) if low_open else (a < 0)
    if not np.isfinite(a).all() or bad.any():
        raise UserError(f"{name} must be finite and {'> 0' if low_open else '>= 0'}, "
                        f"got {describe(value)}")
    return a


def check_model(model: str) -> str:
    """``model`` if it is one of :data:`YIELD_MODELS`, else a UserError."""
    if not isinstance(model, str) or model not in YIELD_MODELS:   # an array: no truth
        raise UserError(f"unknown yield model {describe(model)}; known: {known(YIELD_MODELS)}")
    return model


def _check_alpha(alpha) -> float:
    return _number("alpha", alpha, low=MIN_ALPHA, high=MAX_ALPHA)


def _check_density(defect_density) -> float:
    d = _number("defect_density", _or(defect_density, "defect_density"))
    if d > MAX_DEFECT_DENSITY:
        raise UserError(f"defect_density {d / 1e4:g} per cm^2 is above "
                        f"{MAX_DEFECT_DENSITY / 1e4:g} per cm^2 (a mature node has ~0.1)")
    return d


# ------------------------------------------------------------------ dies per wafer

def _usable_diameter(wafer_diameter, edge_exclusion) -> float:
    d = _number("wafer_diameter", _or(wafer_diameter, "wafer_diameter"), low_open=True)
    if d > MAX_WAFER_DIAMETER:
        raise UserError(f"wafer_diameter {d * 1e3:g} mm is above {MAX_WAFER_DIAMETER * 1e3:g} mm "
                        f"(wafers are 300 mm)")
    e = _number("edge_exclusion", _or(edge_exclusion, "edge_exclusion"))
    if 2 * e >= d:
        raise UserError(f"edge_exclusion {e * 1e3:g} mm leaves nothing of a "
                        f"{d * 1e3:g} mm wafer")
    return d - 2 * e


def gross_dies_per_wafer(area: ArrayLike, wafer_diameter: float | None = None,
                         edge_exclusion: float | None = None) -> float | np.ndarray:
    """Hennessy & Patterson's gross dies per wafer (not rounded): ``pi (d/2)^2 / A -
    pi d / sqrt(2 A)``, ``d`` the diameter less twice the edge exclusion (m), ``A`` the die
    area (m^2, scalar or array). An area above the usable wafer area is a UserError.

    >>> round(gross_dies_per_wafer(814e-6), 2)   # 86.84 - 23.36
    63.48
    >>> gross_dies_per_wafer(0.08)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: die area 80000 mm^2 is larger than the usable wafer (70686 mm^2 on a 300 mm wafer)
    """
    d = _usable_diameter(wafer_diameter, edge_exclusion)
    a = _array("die area", area)
    if (a < MIN_DIE_AREA).any():
        raise UserError(f"die area {float(a.min()) * 1e6:.6g} mm^2 is below "
                        f"{MIN_DIE_AREA * 1e6:g} mm^2 (the smallest chips made, RFID "
                        f"'powder', are 0.05 x 0.05 mm); is the unit right?")
    wafer = math.pi * d * d / 4
    if (a > wafer).any():
        raise UserError(f"die area {float(a.max()) * 1e6:.6g} mm^2 is larger than the usable "
                        f"wafer ({wafer * 1e6:.0f} mm^2 on a {d * 1e3:g} mm wafer)")
    out = wafer / a - math.pi * d / np.sqrt(2 * a)
    return float(out) if out.ndim == 0 else out


def dies_per_wafer(area: ArrayLike, wafer_diameter: float | None = None,
                   edge_exclusion: float | None = None) -> int | np.ndarray:
    """Whole gross dies per wafer: the floor of :func:`gross_dies_per_wafer`. A die so
    large that not one fits (the edge loss exceeds the area term) is a UserError.

    >>> dies_per_wafer(814e-6), dies_per_wafer(814e-6 / 4)
    (63, 300)
    """
    g = np.floor(np.asarray(gross_dies_per_wafer(area, wafer_diameter, edge_exclusion)))
    if (g < 1).any():
        a = float(np.asarray(area, dtype=float).max())
        raise UserError(f"die area {a * 1e6:.6g} mm^2: not one whole die fits on the wafer "
                        f"(Hennessy & Patterson edge loss)")
    return int(g) if g.ndim == 0 else g.astype(int)


# ------------------------------------------------------------------ yield

def _plain_yield(da: np.ndarray, model: str, alpha: float) -> np.ndarray:
    """Yield of an area with ``D x A = da`` (defects expected on it)."""
    if model == "poisson":
        return np.exp(-da)
    if model == "murphy":
        with np.errstate(invalid="ignore", divide="ignore"):
            y = (-np.expm1(-da) / da) ** 2
        return np.where(da > 0, y, 1.0)
    return (1 + da / alpha) ** -alpha


def die_yield(area: ArrayLike, defect_density: float | None = None, model: str | None = None,
              alpha: float | None = None) -> float | np.ndarray:
    """Chance that a die of ``area`` (m^2) has no defect, at mean ``defect_density`` (per
    m^2) under ``model`` (``alpha``: negative-binomial clustering). Scalar or array.

    >>> round(die_yield(814e-6, 1000.0, "negative-binomial", 2), 4)  # 1/(1 + 0.407)^2
    0.5051
    >>> round(die_yield(814e-6, 1000.0, "murphy"), 4)
    0.4681
    """
    model = check_model(_or(model, "yield_model"))
    d = _check_density(defect_density)
    alpha = _check_alpha(_or(alpha, "clustering_alpha"))
    a = _array("die area", area)
    with np.errstate(over="ignore"):   # an area of 1e308 m^2: D x A is inf, its yield 0
        out = _plain_yield(d * a, model, alpha)
    return float(out) if out.ndim == 0 else out


@lru_cache(maxsize=64)
def _laguerre(n: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Generalized Gauss-Laguerre nodes and weights, computed once per (n, alpha)."""
    from scipy.special import roots_genlaguerre

    u, w = roots_genlaguerre(n, alpha)
    u.setflags(write=False)
    w.setflags(write=False)
    return u, w


def _tilted_nodes(d: float, a: np.ndarray, model: str, alpha: float
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Quadrature nodes and weights (summing to 1 over axis 0, one column per area) of
    the local defect density ``x`` weighted by ``exp(-x A)`` (the chance the whole die is
    clean): the distribution of ``x`` among defect-free dies. Integrating against it
    rather than the density itself keeps the quadrature accurate however many defects a
    die expects (the integrand left is smooth and of order one)."""
    shape = (-1,) + (1,) * a.ndim
    if model == "poisson" or d * float(a.max()) < 1e-12:  # below that the models agree
        return np.full((1,) + a.shape, d), np.ones((1,) + a.shape)
    if model == "murphy":
        # triangular density on [0, 2d]: composite Gauss-Legendre on pieces that shrink
        # geometrically towards 0, where exp(-x A) puts its weight when d A is large
        t, w = np.polynomial.legendre.leggauss(16)
        edges = np.unique(np.concatenate([[0.0], d * 2.0 ** -np.arange(40, 0, -1), [d],
                                          d + d * (1 - 2.0 ** -np.arange(1, 6)), [2 * d]]))
        lo, hi = edges[:-1, None], edges[1:, None]
        x = (lo + (t + 1) / 2 * (hi - lo)).ravel()
        wx = ((hi - lo) / 2 * w).ravel() * np.where(x <= d, x, 2 * d - x)
        wt = wx.reshape(shape) * np.exp(-x.reshape(shape) * a)
        return np.broadcast_to(x.reshape(shape), wt.shape), wt / wt.sum(axis=0)
    # gamma(alpha, scale d/alpha) tilted by exp(-x A) is gamma(alpha, scale s) with
    # s = (d/alpha) / (1 + d A / alpha)
    u, w = _laguerre(_QUAD_NODES, float(alpha) - 1)  # weight u^(alpha-1) e^-u
    scale = (d / alpha) / (1 + d * a / alpha)
    x = u.reshape(shape) * scale
    return x, np.broadcast_to((w / w.sum()).reshape(shape), x.shape)


def harvested_yield(area: ArrayLike, sms_physical: int, sms_enabled: int,
                    defect_density: float | None = None, model: str | None = None,
                    alpha: float | None = None, critical_fraction: float | None = None,
                    ) -> float | np.ndarray:
    """Chance that a die of ``area`` (m^2) with ``sms_physical`` SMs has at least
    ``sms_enabled`` good ones and a clean critical part (see the module docstring).

    >>> y = harvested_yield(814e-6, 144, 132, 1000.0, "poisson", critical_fraction=0.0)
    >>> round(y, 6)  # P[Binomial(144, exp(-0.1 x 8.14 / 144)) >= 132]
    1.0
    >>> round(harvested_yield(814e-6, 144, 144, 1000.0, "poisson", critical_fraction=0.1), 4)
    0.4431
    """
    from scipy.special import betainc

    n = _whole("sms_physical", sms_physical)
    k = _whole("sms_enabled", sms_enabled)
    if k > n:
        raise UserError(f"sms_enabled {k} exceeds sms_physical {n}")
    model = check_model(_or(model, "yield_model"))
    d = _check_density(defect_density)
    alpha = _check_alpha(_or(alpha, "clustering_alpha"))
    c = _number("critical_fraction", _or(critical_fraction, "critical_fraction"), high=1.0)
    a = _array("die area", area)
    # E[exp(-x A_c) P(Bin(n, p) >= k)] = Y(A) E'[P(Bin(n, p) >= k) / p^n], E' over the
    # density tilted by exp(-x A) (see _tilted_nodes); the ratio is 1 when k = n
    x, w = _tilted_nodes(d, a, model, alpha)
    log_p = -x * a * (1 - c) / n                          # one SM region clean
    sms_ok = betainc(k, n - k + 1, np.exp(log_p))         # P[Bin(n, p) >= k]
    with np.errstate(divide="ignore", over="ignore"):
        ratio = np.where(sms_ok > 0, np.exp(np.log(sms_ok) - n * log_p), 0.0)
    out = _plain_yield(d * a, model, alpha) * (w * ratio).sum(axis=0)
    return float(out) if out.ndim == 0 else out


@lru_cache(maxsize=256)
def _harvested(area: float, sms_physical: int, sms_enabled: int, defect_density: float,
               model: str, alpha: float, critical_fraction: float) -> float:
    """:func:`harvested_yield` of one die, kept: a study prices the same few dies for
    every row (hundreds of calls, a few designs)."""
    return harvested_yield(area, sms_physical, sms_enabled, defect_density, model, alpha,
                           critical_fraction)


def _whole(name: str, v) -> int:
    if isinstance(v, bool) or not is_whole(v) or not 1 <= v <= MAX_SMS:
        raise UserError(f"{name} must be a whole number from 1 to {MAX_SMS:,}, got "
                        f"{describe(v)}")
    return int(v)


# ------------------------------------------------------------------ cost per good die

@dataclass(frozen=True)
class DieCost:
    """One die on one wafer: counts, yields and costs (area m^2, prices USD)."""

    area: float
    wafer_diameter: float
    wafer_price: float
    defect_density: float
    model: str
    alpha: float
    gross_dies: float          #: Hennessy & Patterson, not rounded
    dies_per_wafer: int        #: whole gross dies
    defect_free_yield: float   #: the plain yield of the whole die
    sms_physical: int | None
    sms_enabled: int | None
    critical_fraction: float
    yield_: float              #: harvested yield (= defect-free without SM counts)
    good_dies: float           #: gross_dies x yield_ (expected good dies per wafer)
    cost_per_good_die: float
    gpu: str | None = None     #: the GPU whose die this is (:func:`gpu_die_cost`), else None
    process: str | None = None           #: its process node (with ``gpu``)
    dies_per_package: int | None = None  #: its logic dies per package (with ``gpu``)

    @property
    def good_dies_per_package_cost(self) -> float | None:
        """USD of known-good logic dies one package of ``gpu`` holds (None without a GPU)."""
        return None if self.dies_per_package is None else \
            self.cost_per_good_die * self.dies_per_package

    @property
    def cost_per_good_sm(self) -> float | None:
        """USD per enabled SM of a good die (None without SM counts)."""
        return self.cost_per_good_die / self.sms_enabled if self.sms_enabled else None

    def to_dict(self) -> dict:
        """JSON-ready dict with the units in the keys (``netmodel yield --json``)."""
        # mm^2 and mm as given (826 mm^2 is stored as 826 x 1e-6 m^2, which x 1e6 prints as
        # 825.9999999999999): rounded to 1e-9 of the unit, far below any input's precision
        return {"area_mm2": round(self.area * 1e6, 9),
                "wafer_diameter_mm": round(self.wafer_diameter * 1e3, 9),
                "wafer_price_usd": self.wafer_price,
                "defect_density_per_cm2": self.defect_density / 1e4, "model": self.model,
                "alpha": self.alpha if self.model == "negative-binomial" else None,
                "gross_dies": self.gross_dies, "dies_per_wafer": self.dies_per_wafer,
                "defect_free_yield": self.defect_free_yield,
                "sms_physical": self.sms_physical, "sms_enabled": self.sms_enabled,
                "critical_fraction": self.critical_fraction if self.sms_enabled else None,
                "yield": self.yield_, "good_dies_per_wafer": self.good_dies,
                "cost_per_good_die_usd": self.cost_per_good_die,
                "cost_per_good_sm_usd": self.cost_per_good_sm,
                "gpu": self.gpu, "process": self.process,
                "dies_per_package": self.dies_per_package,
                "good_dies_per_package_usd": self.good_dies_per_package_cost}


def die_cost(area: float, *, defect_density: float | None = None, model: str | None = None,
             alpha: float | None = None, wafer_diameter: float | None = None,
             edge_exclusion: float | None = None, wafer_price: float | None = None,
             sms_physical: int | None = None, sms_enabled: int | None = None,
             critical_fraction: float | None = None) -> DieCost:
    """Dies per wafer, yield and cost per good die of one die design (SI inputs; the
    defaults are :func:`economics`). With ``sms_physical`` and ``sms_enabled`` the yield is
    harvested (:func:`harvested_yield`), else defect-free.

    >>> c = die_cost(814e-6, defect_density=1000.0, model="poisson", wafer_price=18000.0)
    >>> c.dies_per_wafer, round(c.yield_, 4), round(c.cost_per_good_die, 2)
    (63, 0.4431, 639.97)
    """
    area = _number("die area", area, low_open=True)
    model = check_model(_or(model, "yield_model"))
    d = _check_density(defect_density)
    alpha = _check_alpha(_or(alpha, "clustering_alpha"))
    price = _number("wafer_price", _or(wafer_price, "wafer_price"), high=MAX_WAFER_PRICE)
    c = _number("critical_fraction", _or(critical_fraction, "critical_fraction"), high=1.0)
    diameter = _or(wafer_diameter, "wafer_diameter")
    gross = gross_dies_per_wafer(area, diameter, edge_exclusion)
    whole = dies_per_wafer(area, diameter, edge_exclusion)
    plain = die_yield(area, d, model, alpha)
    if (sms_physical is None) != (sms_enabled is None):
        raise UserError("give both sms_physical and sms_enabled, or neither")
    y = plain if sms_physical is None else _harvested(
        area, _whole("sms_physical", sms_physical), _whole("sms_enabled", sms_enabled), d,
        model, alpha, c)
    good = gross * y
    cost = price / good if good > 0 else math.inf
    return DieCost(area=area, wafer_diameter=float(diameter), wafer_price=price,
                   defect_density=d, model=model, alpha=alpha, gross_dies=gross,
                   dies_per_wafer=whole, defect_free_yield=plain,
                   sms_physical=None if sms_physical is None else int(sms_physical),
                   sms_enabled=None if sms_enabled is None else int(sms_enabled),
                   critical_fraction=c, yield_=y, good_dies=good, cost_per_good_die=cost)


def yield_curve(areas: ArrayLike | None = None, *, defect_density: float | None = None,
                model: str | None = None, alpha: float | None = None,
                wafer_diameter: float | None = None, edge_exclusion: float | None = None,
                wafer_price: float | None = None, critical_fraction: float | None = None
               ) -> dict[str, np.ndarray]:
    """Yield and cost per good SM against die area (m^2, array) for dies cut from the
    reference design: ``round(A / A_ref x 144)`` physical SMs, ``floor`` of the same share
    (132/144) enabled. The default areas are those of 12, 24, ..., 144 physical SMs, where
    that share is exact (between them the rounded spare count makes a saw-tooth). Returns
    arrays ``area``, ``sms_physical``, ``sms_enabled``,
    ``gross_dies``, ``defect_free_yield``, ``yield`` and ``cost_per_good_sm``.

    >>> c = yield_curve([814e-6, 203.5e-6])
    >>> c["sms_physical"].tolist(), c["sms_enabled"].tolist()
    ([144, 36], [132, 33])
    """
    ref_area = parameter("reference_die_area")
    ref_n, ref_k = parameter("reference_sms_physical"), parameter("reference_sms_enabled")
    if areas is None:
        step = int(ref_n - ref_k)
        areas = ref_area * np.arange(step, int(ref_n) + 1, step) / ref_n
    areas = _array("die area", areas).ravel()
    n = np.maximum(1, np.round(areas / ref_area * ref_n)).astype(int)
    k = np.maximum(1, np.floor(n * ref_k / ref_n + 1e-9)).astype(int)
    price = _number("wafer_price", _or(wafer_price, "wafer_price"), high=MAX_WAFER_PRICE)
    dies_per_wafer(areas, wafer_diameter, edge_exclusion)  # refuses dies that do not fit
    dies = np.atleast_1d(gross_dies_per_wafer(areas, wafer_diameter, edge_exclusion))
    plain = np.atleast_1d(die_yield(areas, defect_density, model, alpha))
    y = np.array([harvested_yield(a, int(ni), int(ki), defect_density, model, alpha,
                                  critical_fraction) for a, ni, ki in zip(areas, n, k,
                                                                          strict=True)])
    with np.errstate(divide="ignore"):
        per_sm = price / (dies * y) / k
    return {"area": areas, "sms_physical": n, "sms_enabled": k, "gross_dies": dies,
            "defect_free_yield": plain, "yield": y, "cost_per_good_sm": per_sm}


# ------------------------------------------------------------------ GPU dies and packages

#: GPUs built on the reference die (GH100).
REFERENCE_GPUS = ("H100-SXM", "H200-SXM")


def _base_of(spec: GpuSpec) -> GpuSpec | None:
    """The GPU ``spec`` is derived from (the Lite family: H100-SXM; a GPU file's
    ``derive_from``, a catalog GPU or another of the same file), or None."""
    from compute.hardware import base_gpu

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
    from compute.hardware import derivation, get_gpu, logic_dies

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
    from compute.hardware import catalog, die_table

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
    ('B200-HGX', 2, 601.16)
    """
    logic = gpu_dies(gpu)
    price = logic.wafer_price if wafer_price is None else wafer_price
    _usable_diameter(wafer_diameter, None)  # the wafer checked first: what follows is the die's
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
    hbm = _number("hbm_cost", _or(hbm_cost, "reference_hbm_cost")) * share
    overhead = _number("interposer_overhead", _or(interposer_overhead, "interposer_overhead"),
                       low=1.0)
    footprint = parameter("hbm_stack_footprint")
    fixed = _number("packaging_fixed", _or(packaging_fixed, "packaging_fixed"))
    ref_pack = _number("packaging_cost", _or(packaging_cost, "reference_packaging_cost"))
    if fixed > ref_pack:
        raise UserError(f"packaging_fixed {fixed:g} USD exceeds the H100's whole packaging "
                        f"cost (packaging_cost {ref_pack:g} USD), of which it is the fixed "
                        f"part: give packaging_cost >= packaging_fixed")
    per_area = (ref_pack - fixed) / _interposer(ref_area, 1.0, overhead, footprint)
    if logic.hbm_sites is None:   # the reference die and its slices: H100 sites x HBM share
        interposer = _interposer(area, share, overhead, footprint)
    else:
        interposer = overhead * (area + logic.hbm_sites * footprint)
    tf = _number("test_fixed_fraction", _or(test_fixed_fraction, "test_fixed_fraction"),
                 high=1.0)
    ref_test = _number("test_cost", _or(test_cost, "reference_test_cost"))
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
    published price), ``"reference price"`` (the H100 itself: ``reference_price`` at the
    shipped defaults, its own package cost times that margin under a sweep),
    ``"margin of NAME"`` (its package cost times the price / cost ratio of NAME: the
    nearest GPU it derives from with a list price, else the H100).

    >>> price_basis("B200-HGX"), price_basis("Lite"), price_basis("H100-SXM")
    ('list price', 'margin of H100-SXM', 'reference price')
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
        return "list price", dies, None
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
    (8.1431, 8.1431)
    """
    ref = _number("reference_price", _or(reference_price, "reference_price"))
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
    >>> # twice the wafer price: the H100's good die, $307 of its $3,377, costs $614
    >>> round(gpu_price("H100-SXM", wafer_price=36000.0))  # 27,500 x 3,684 / 3,377
    30001
    """
    from compute.hardware import get_gpu

    ref = _number("reference_price", _or(reference_price, "reference_price"))
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
