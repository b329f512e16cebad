"""The yield and cost of one logic die: dies per wafer, defect yield (Poisson, Murphy,
negative binomial) with harvesting, and the cost per good die and per good SM.

The model is :mod:`compute.yield_model`'s (its bullets **Gross dies per wafer**, **Defect
yield** and **Harvesting**); that module prices whole GPU packages from these dies and
re-exports the public names here. Units are SI inside: areas in m^2, lengths in m, defect
densities in defects per m^2, prices in USD.

>>> round(gross_dies_per_wafer(814e-6, 0.3), 2)
63.48
>>> round(die_yield(814e-6, 1000.0, "poisson"), 4)  # exp(-0.1 /cm^2 x 8.14 cm^2)
0.4431
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from compute.dies import MAX_SMS, MAX_WAFER_PRICE, MIN_DIE_AREA, check_yield_model
from compute.errors import UserError
from compute.limits import check
from compute.rows import check_number as _number
from compute.rows import parameter
from compute.validate import describe, holds_flag, is_flag, is_whole

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


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
#: Most die areas one :func:`yield_curve` takes (each about 80 us of harvested-yield
#: arithmetic, a Python call per area: a million is about 80 s), counted before any array
#: of them is made; ``NETMODEL_MAX_YIELD_AREAS`` raises it.
MAX_CURVE_AREAS = 1_000_000
_QUAD_NODES = 64


def or_default(value, name):
    """``value``, or the shipped default ``name`` (:func:`~compute.rows.parameter`) when
    it is None."""
    return parameter(name) if value is None else value


# ------------------------------------------------------------------ checks

def _array(name: str, value, *, low_open: bool = True) -> np.ndarray:
    if holds_flag(value):   # numpy read [True, 8e-4] as areas of 1 and 8e-4 m^2
        raise UserError(f"{name} must be {'a number' if is_flag(value) else 'numbers'}, got "
                        f"{describe(value)}")
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


def _check_alpha(alpha) -> float:
    return _number("alpha", alpha, low=MIN_ALPHA, high=MAX_ALPHA)


def _alpha_read(model: str, alpha) -> float:
    """``alpha`` (None: the shipped clustering) checked, and refused where given with a
    ``model`` that reads none (Poisson, Murphy): it was taken and changed nothing, where
    ``netmodel yield --alpha 3 --model poisson`` is refused (an input never read is refused
    rather than ignored).

    >>> _alpha_read("poisson", 3)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: alpha (the negative binomial's clustering) applies only with the 'negative-binomial' yield model, not 'poisson'
    """
    if alpha is not None and model != "negative-binomial":
        raise UserError(f"alpha (the negative binomial's clustering) applies only with the "
                        f"'negative-binomial' yield model, not {model!r}")
    return _check_alpha(or_default(alpha, "clustering_alpha"))


def _check_density(defect_density) -> float:
    d = _number("defect_density", or_default(defect_density, "defect_density"))
    if d > MAX_DEFECT_DENSITY:
        raise UserError(f"defect_density {d / 1e4:g} per cm^2 is above "
                        f"{MAX_DEFECT_DENSITY / 1e4:g} per cm^2 (a mature node has ~0.1)")
    return d


# ------------------------------------------------------------------ dies per wafer

def usable_diameter(wafer_diameter, edge_exclusion) -> float:
    """The wafer's usable diameter, ``wafer_diameter - 2 edge_exclusion`` (m; None takes the
    shipped default), both checked: UserError above :data:`MAX_WAFER_DIAMETER` or where the
    exclusion leaves nothing."""
    d = _number("wafer_diameter", or_default(wafer_diameter, "wafer_diameter"), low_open=True)
    if d > MAX_WAFER_DIAMETER:
        raise UserError(f"wafer_diameter {d * 1e3:g} mm is above {MAX_WAFER_DIAMETER * 1e3:g} mm "
                        f"(wafers are 300 mm)")
    e = _number("edge_exclusion", or_default(edge_exclusion, "edge_exclusion"))
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
    d = usable_diameter(wafer_diameter, edge_exclusion)
    a = _array("die area", area)
    if (a < MIN_DIE_AREA).any():
        raise UserError(f"die area {float(a.min()) * 1e6:.6g} mm^2 is below "
                        f"{MIN_DIE_AREA * 1e6:g} mm^2 (the smallest chips made, RFID "
                        f"'powder', are 0.05 x 0.05 mm); is the unit right?")
    wafer = math.pi * d * d / 4
    if (a > wafer).any():
        big = float(a.max())   # in m^2 where its mm^2 pass the largest float (1e305 m^2)
        shown = f"{big * 1e6:.6g} mm^2" if math.isfinite(big * 1e6) else f"{big:.6g} m^2"
        usable = f"{wafer * 1e6:.0f} mm^2"
        if usable == shown:   # 70686 is past 70685.83: said so, not 'larger than' itself
            usable = f"{wafer * 1e6:.2f} mm^2"
        raise UserError(f"die area {shown} is larger than the usable wafer "
                        f"({usable} on a {d * 1e3:g} mm wafer)")
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
    model = check_yield_model(or_default(model, "yield_model"))
    d = _check_density(defect_density)
    alpha = _alpha_read(model, alpha)
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
    model = check_yield_model(or_default(model, "yield_model"))
    d = _check_density(defect_density)
    alpha = _alpha_read(model, alpha)
    c = _number("critical_fraction", or_default(critical_fraction, "critical_fraction"), high=1.0)
    a = _array("die area", area)
    if a.size == 0:   # no die, no yield, as die_yield's (the nodes' maximum raised)
        return np.zeros(a.shape)
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
    return harvested_yield(area, sms_physical, sms_enabled, defect_density, model,
                           alpha if model == "negative-binomial" else None, critical_fraction)


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
    dies_per_wafer: int        #: whole gross dies (the floor): the dies a wafer yields
    defect_free_yield: float   #: the plain yield of the whole die
    sms_physical: int | None
    sms_enabled: int | None
    critical_fraction: float
    yield_: float              #: harvested yield (= defect-free without SM counts)
    good_dies: float           #: dies_per_wafer x yield_ (expected good dies per wafer)
    cost_per_good_die: float
    gpu: str | None = None     #: the GPU whose die this is (:func:`compute.yield_model.gpu_die_cost`), else None
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
        """JSON-ready dict with the units in the keys (``netmodel yield --json``); a cost is
        null where no die is good (the yield 0 to a float's precision: an infinite cost)."""
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
                "cost_per_good_die_usd": _finite_or_none(self.cost_per_good_die),
                "cost_per_good_sm_usd": _finite_or_none(self.cost_per_good_sm),
                "gpu": self.gpu, "process": self.process,
                "dies_per_package": self.dies_per_package,
                "good_dies_per_package_usd": _finite_or_none(self.good_dies_per_package_cost)}


def _finite_or_none(x: float | None) -> float | None:
    """A cost as JSON holds it: None where no die is good (an infinite cost, which
    ``json.dumps`` writes as ``Infinity``, not JSON)."""
    return None if x is None or not math.isfinite(x) else x


def die_cost(area: float, *, defect_density: float | None = None, model: str | None = None,
             alpha: float | None = None, wafer_diameter: float | None = None,
             edge_exclusion: float | None = None, wafer_price: float | None = None,
             sms_physical: int | None = None, sms_enabled: int | None = None,
             critical_fraction: float | None = None) -> DieCost:
    """Dies per wafer, yield and cost per good die of one die design (SI inputs; the
    defaults are :func:`compute.rows.economics`). With ``sms_physical`` and ``sms_enabled`` the yield is
    harvested (:func:`harvested_yield`), else defect-free. A wafer yields whole dies: the
    good dies are the whole gross dies (:func:`dies_per_wafer`, the floor) times the yield,
    and the cost per good die is the wafer price over them.

    >>> c = die_cost(814e-6, defect_density=1000.0, model="poisson", wafer_price=18000.0)
    >>> c.dies_per_wafer, round(c.yield_, 4), round(c.cost_per_good_die, 2)
    (63, 0.4431, 644.83)
    """
    area = _number("die area", area, low_open=True)
    model = check_yield_model(or_default(model, "yield_model"))
    d = _check_density(defect_density)
    alpha = _alpha_read(model, alpha)
    price = _number("wafer_price", or_default(wafer_price, "wafer_price"), high=MAX_WAFER_PRICE)
    c = _number("critical_fraction", or_default(critical_fraction, "critical_fraction"), high=1.0)
    diameter = or_default(wafer_diameter, "wafer_diameter")
    gross = gross_dies_per_wafer(area, diameter, edge_exclusion)
    whole = dies_per_wafer(area, diameter, edge_exclusion)
    plain = die_yield(area, d, model, alpha if model == "negative-binomial" else None)
    if (sms_physical is None) != (sms_enabled is None):
        raise UserError("give both sms_physical and sms_enabled, or neither")
    y = plain if sms_physical is None else _harvested(
        area, _whole("sms_physical", sms_physical), _whole("sms_enabled", sms_enabled), d,
        model, alpha, c)
    good = whole * y
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
    that share is exact (between them the rounded spare count makes a saw-tooth). The cost
    divides the wafer price over the whole dies (:func:`die_cost`'s rule). Returns
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
    try:   # counted before any array of them: 10^10 areas (a view of one) raised MemoryError
        count = np.size(areas)
    except (TypeError, ValueError):   # a ragged list: _array names it
        count = 0
    check("yield_curve", "die areas", count, MAX_CURVE_AREAS, "NETMODEL_MAX_YIELD_AREAS",
          "give fewer areas (each about 80 us)")
    areas = _array("die area", areas).ravel()
    n = np.maximum(1, np.round(areas / ref_area * ref_n)).astype(int)
    k = np.maximum(1, np.floor(n * ref_k / ref_n + 1e-9)).astype(int)
    price = _number("wafer_price", or_default(wafer_price, "wafer_price"), high=MAX_WAFER_PRICE)
    whole = np.atleast_1d(dies_per_wafer(areas, wafer_diameter, edge_exclusion))
    dies = np.atleast_1d(gross_dies_per_wafer(areas, wafer_diameter, edge_exclusion))
    plain = np.atleast_1d(die_yield(areas, defect_density, model, alpha))
    y = np.array([harvested_yield(a, int(ni), int(ki), defect_density, model, alpha,
                                  critical_fraction) for a, ni, ki in zip(areas, n, k,
                                                                          strict=True)])
    with np.errstate(divide="ignore"):
        per_sm = price / (whole * y) / k
    return {"area": areas, "sms_physical": n, "sms_enabled": k, "gross_dies": dies,
            "defect_free_yield": plain, "yield": y, "cost_per_good_sm": per_sm}
