"""A GPU priced by a margin keeps the margin its anchor was published at: the anchor's price
over its package cost at the shipped defaults, not at swept inputs (compute.yield_model.margin,
gpu_price). Hand-derived prices at twice the wafer price, from the data files' figures."""

from __future__ import annotations

import math

import pytest
from scipy import integrate, stats

from compute import yield_model
from compute.hardware import load_gpu_file
from compute.yield_model import gpu_price, package_cost, parameter, price_basis

MM2 = 1e-6


def _gross(area: float, diameter: float = 0.3) -> int:
    """Whole dies per wafer: the floor of Hennessy & Patterson's gross dies (economics.toml:
    300 mm, no edge exclusion); a wafer yields whole dies (H100 63, Lite 300)."""
    return math.floor(math.pi * diameter ** 2 / 4 / area
                      - math.pi * diameter / math.sqrt(2 * area))


def _harvested(area: float, n: int, k: int, d: float = 0.1e4, alpha: float = 2.0,
               critical: float = 0.1) -> float:
    """Harvested yield integrated directly (scipy quad over the gamma density of the local
    defect density, binomial tail by scipy.stats), not by the model's Gauss-Laguerre nodes:
    E[exp(-x A c) P(Bin(n, exp(-x A (1 - c) / n)) >= k)], x ~ gamma(alpha, d / alpha)."""
    def f(x):
        p = math.exp(-x * area * (1 - critical) / n)
        return (stats.gamma.pdf(x, alpha, scale=d / alpha) * math.exp(-x * area * critical)
                * stats.binom.sf(k - 1, n, p))
    return integrate.quad(f, 0, math.inf, epsabs=0, epsrel=1e-13, limit=200)[0]


def _h100_package(wafer: float) -> float:
    """economics.toml: GH100 814 mm^2, 132 of 144 SMs; HBM $1,400, packaging $750, test $920."""
    die = wafer / (_gross(814 * MM2) * _harvested(814 * MM2, 144, 132))
    return die + 1400 + 750 + 920


def _lite_package(wafer: float) -> float:
    """A quarter GH100: 203.5 mm^2, 33 of 36 SMs; a quarter of the H100's HBM; packaging
    $100 fixed + the H100's other $650 pro rata interposer area (1.25 x (die + 6 x 110 mm^2
    x HBM share), the 1.25 cancels); test $920 x (0.25 fixed + 0.75 x area share)."""
    die = wafer / (_gross(203.5 * MM2) * _harvested(203.5 * MM2, 36, 33))
    packaging = 100 + 650 * (203.5 + 6 * 110 / 4) / (814 + 6 * 110)
    test = 920 * (0.25 + 0.75 * 203.5 / 814)
    return die + 1400 / 4 + packaging + test


def test_lite_price_at_twice_the_wafer_price_by_hand():
    """At a $36,000 wafer the Lite's package costs $1,137.48 (its good die $61.24 -> $122.48)
    and it sells at that times the H100's published margin, $27,500 / $3,379.44 (the H100's
    cost at the published $18,000 wafer): $9,256.15. The old code took the margin at the
    swept wafer, $27,500 / $3,684.22, and priced it at $8,488.52, below its $8,762.83 at the
    published wafer: a dearer wafer made the Lite cheaper."""
    assert parameter("wafer_price") == 18000 and parameter("reference_price") == 27500
    h100 = _h100_package(18000.0)
    lite2 = _lite_package(36000.0)
    assert h100 == pytest.approx(3379.44, abs=0.005)
    assert lite2 == pytest.approx(1137.48, abs=0.005)
    want = lite2 * 27500 / h100
    assert want == pytest.approx(9256.15, abs=0.005)
    assert gpu_price("Lite", wafer_price=36000.0) == pytest.approx(want, rel=1e-12)
    assert gpu_price("Lite", wafer_price=36000.0) > gpu_price("Lite")


def test_the_h100_moves_with_its_own_cost_by_the_same_rule():
    """The reference itself: $27,500 at the published inputs; at twice the wafer price its
    own package, $3,379.44 + $309.44 for the dearer die, times the same margin: $30,018.09
    (the old code kept it at $27,500 whatever its cost)."""
    assert gpu_price("H100-SXM") == pytest.approx(27500, rel=1e-12)
    assert price_basis("H100-SXM") == "reference price"
    want = _h100_package(36000.0) * 27500 / _h100_package(18000.0)
    assert want == pytest.approx(30018.09, abs=0.005)
    assert gpu_price("H100-SXM", wafer_price=36000.0) == pytest.approx(want, rel=1e-12)
    # the ratio of a Lite's price to the H100's is the ratio of their package costs: like
    # with like, at any input
    for kw in ({}, {"wafer_price": 36000.0}, {"hbm_cost": 2800.0}, {"defect_density": 0.2e4}):
        assert gpu_price("Lite", **kw) / gpu_price("H100-SXM", **kw) == pytest.approx(
            package_cost("Lite", **kw).total / package_cost("H100-SXM", **kw).total, rel=1e-12)


def test_the_margin_is_the_published_price_over_the_cost_at_the_defaults():
    m = 27500 / _h100_package(18000.0)
    assert m == pytest.approx(8.1374, abs=5e-5)
    for name in ("H100-SXM", "H200-SXM", "Lite", "Lite+BW"):
        assert yield_model.margin(name) == pytest.approx(m, rel=1e-12)
    # reference_price is the H100's price at the published inputs: it sets the margin
    assert yield_model.margin("Lite", reference_price=30000.0) == pytest.approx(
        30000 / _h100_package(18000.0), rel=1e-12)


def test_list_prices_do_not_follow_a_sweep():
    """A published list price is a fact, not a function of the model's inputs (passes on the
    old code too: a guard of the rule the docs state)."""
    for kw in ({"wafer_price": 36000.0}, {"hbm_cost": 2800.0}, {"defect_density": 0.3e4},
               {"reference_price": 40000.0}):
        assert gpu_price("B200-HGX", **kw) == 35000
        assert gpu_price("A100-SXM-80GB", **kw) == 12500


def test_a_list_priced_anchors_margin_is_taken_at_the_defaults(tmp_path):
    """A GPU file's half B200 sells at the B200's margin: $35,000 over the B200's package at
    the published inputs, whatever the swept wafer price (the old code took the B200's cost at
    the swept wafer, so its half got cheaper as wafers got dearer)."""
    path = tmp_path / "half.toml"
    path.write_text('[gpu."Half-B200"]\nderive_from = "B200-HGX"\nfraction = 0.5\n'
                    'source = "what-if"\n')
    half = load_gpu_file(path)["Half-B200"]
    assert price_basis(half) == "margin of B200-HGX"
    m = 35000 / package_cost("B200-HGX").total
    for w in (18000.0, 36000.0):
        assert gpu_price(half, wafer_price=w) == pytest.approx(
            package_cost(half, wafer_price=w).total * m, rel=1e-12)
    assert gpu_price(half, wafer_price=36000.0) > gpu_price(half)


def test_the_h100s_packaging_and_test_costs_are_parameters():
    """packaging_cost and test_cost (the H100's $750 and $920, read-estimates) are swept as
    hbm_cost is: at $1,500 and $1,840 a Lite pays $100 + $1,400 x 368.5 / 1,474 = $450 of
    packaging and $1,840 x (0.25 + 0.75 / 4) = $805 of test; its price is its package times
    the H100's margin at the published inputs, the H100's own price its $5,049.44 package
    times the same margin."""
    kw = dict(packaging_cost=1500.0, test_cost=1840.0)
    lite = package_cost("Lite", **kw)
    assert (lite.packaging, lite.test) == (pytest.approx(450, rel=1e-12),
                                          pytest.approx(805, rel=1e-12))
    h100 = package_cost("H100-SXM", **kw)
    assert (h100.packaging, h100.test) == (pytest.approx(1500, rel=1e-12),
                                          pytest.approx(1840, rel=1e-12))
    m = 27500 / _h100_package(18000.0)
    lite_total = _lite_package(18000.0) + (450 - 262.5) + (805 - 402.5)
    assert lite.total == pytest.approx(lite_total, rel=1e-12)
    assert gpu_price("Lite", **kw) == pytest.approx(lite_total * m, rel=1e-12)
    assert gpu_price("H100-SXM", **kw) == pytest.approx((_h100_package(18000.0) + 750 + 920) * m,
                                                        rel=1e-12)


def test_a_gpu_file_entry_deriving_from_another_of_the_same_file_is_priced(tmp_path):
    """A GPU file's B1 derive_from A1 of the same file (A1 half an H100, B1 half of A1) was
    refused as 'unknown GPU A1' by every pricing function: the base was looked up in the
    catalog only. A quarter of an H100's silicon, HBM and SMs is the catalog's Lite."""
    from compute.hardware import load_gpu_file
    from compute.yield_model import gpu_dies, gpu_price, margin, package_cost

    path = tmp_path / "g.toml"
    path.write_text('[gpu.A1]\nderive_from = "H100-SXM"\nsource = "test"\nfraction = 0.5\n'
                    '[gpu.B1]\nderive_from = "A1"\nsource = "test"\nfraction = 0.5\n')
    b1 = load_gpu_file(path)["B1"]
    assert gpu_dies(b1).basis == "0.5 of A1's dies"
    assert package_cost(b1).total == pytest.approx(package_cost("Lite").total, rel=1e-12)
    assert gpu_price(b1) == pytest.approx(gpu_price("Lite"), rel=1e-12)
    assert margin(b1) == pytest.approx(margin("Lite"), rel=1e-12)
