"""Die yield and package cost: hand-derived values, textbook formulas, published figures
(../shared/reference/power_cost_yield.csv) and invariants."""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compute.errors import UserError
from compute.yield_model import (
    CONFIDENCE,
    YIELD_MODELS,
    die_cost,
    die_yield,
    dies_per_wafer,
    economics,
    gpu_die,
    gpu_price,
    gross_dies_per_wafer,
    harvested_yield,
    package_cost,
    parameter,
    read_parameters,
    replacement,
    yield_curve,
)

REFERENCE = Path(__file__).resolve().parents[2] / ".." / "shared" / "reference"
CSV = REFERENCE / "power_cost_yield.csv"
MM2 = 1e-6           # m^2 per mm^2
PER_CM2 = 1e4        # defects per m^2 for 1 defect per cm^2


def _reference_rows() -> dict[str, dict]:
    if not CSV.exists():
        pytest.skip(f"reference data absent: {CSV}")
    with CSV.open() as fh:
        return {r["id"]: r for r in csv.DictReader(line for line in fh
                                                   if not line.startswith("#"))}


# ------------------------------------------------------------------ hand-derived values

def test_gross_dies_814mm2_on_300mm_by_hand():
    # pi * 150^2 / 814 = 86.8376; pi * 300 / sqrt(2 * 814) = 23.3584
    first = math.pi * 150**2 / 814
    edge = math.pi * 300 / math.sqrt(1628)
    assert first == pytest.approx(86.8376, abs=1e-4)
    assert edge == pytest.approx(23.3584, abs=1e-4)
    assert gross_dies_per_wafer(814 * MM2, 0.3) == pytest.approx(63.4792, abs=1e-4)
    assert dies_per_wafer(814 * MM2, 0.3) == 63


def test_gross_dies_matches_reference_note():
    # P06's note: "for d=300 mm, A=814 mm^2 => ~63.5 gross dies": the wafer, die and count
    # read from it, the model's count of that die on that wafer to the note's digits
    note = _reference_rows()["P06"]["note"]
    d, a, gross = re.search(r"d=([\d.]+) mm, A=([\d.]+) mm\^2 => ~([\d.]+) gross", note).groups()
    assert round(gross_dies_per_wafer(float(a) * MM2, float(d) * 1e-3), 1) == float(gross)


def test_edge_exclusion_shrinks_the_wafer():
    # 3 mm exclusion: usable diameter 294 mm
    expected = math.pi * 147**2 / 100 - math.pi * 294 / math.sqrt(200)
    assert gross_dies_per_wafer(100 * MM2, 0.3, 0.003) == pytest.approx(expected)


def test_poisson_yield_at_0p1_per_cm2():
    assert die_yield(814 * MM2, 0.1 * PER_CM2, "poisson") == pytest.approx(math.exp(-0.814))
    assert die_yield(814 * MM2, 0.1 * PER_CM2, "poisson") == pytest.approx(0.44308, abs=1e-5)
    # reference P08's note, "Poisson exp(-0.1*8.14)=44% (derived) is consistent": its density
    # (/cm^2), area (cm^2) and yield read from it; the model's Poisson yield of that die at
    # that density to the note's whole percent, inside P08's published band (30-50%)
    row = _reference_rows()["P08"]
    density, area, pct = re.search(r"exp\(-([\d.]+)\*([\d.]+)\)=(\d+)%", row["note"]).groups()
    y = die_yield(float(area) * 1e-4, float(density) * PER_CM2, "poisson")
    assert round(100 * y) == int(pct)
    low, high = (float(v) for v in row["value"].split("-"))
    assert low <= 100 * y <= high


def test_negative_binomial_alpha_2_is_the_textbook_formula():
    # Patterson & Hennessy: 1 / (1 + D A / 2)^2, D in /cm^2, A in cm^2 (reference P05)
    assert _reference_rows()["P05"]["value"] == "1/(1+D*A/2)^2"
    for area_mm2, d in ((814, 0.1), (203.5, 0.1), (100, 0.5), (600, 0.03)):
        textbook = 1 / (1 + d * area_mm2 / 100 / 2) ** 2
        assert die_yield(area_mm2 * MM2, d * PER_CM2, "negative-binomial", 2) == \
            pytest.approx(textbook, rel=1e-12)
    assert die_yield(814 * MM2, 1000.0, "negative-binomial", 2) == pytest.approx(0.505140,
                                                                                  abs=1e-6)


def test_murphy_formula():
    da = 0.814
    assert die_yield(814 * MM2, 1000.0, "murphy") == pytest.approx(((1 - math.exp(-da)) / da)
                                                                   ** 2)
    assert die_yield(814 * MM2, 0.0, "murphy") == 1.0


def test_harvested_poisson_small_case_by_hand():
    # 4 SM regions of 1 cm^2 each (no critical part), 3 needed, D = 0.2 /cm^2
    p = math.exp(-0.2)
    expected = p**4 + 4 * p**3 * (1 - p)
    got = harvested_yield(4e-4, 4, 3, 0.2 * PER_CM2, "poisson", critical_fraction=0.0)
    assert got == pytest.approx(expected, rel=1e-12)
    # with a critical tenth: the critical part must be clean too
    p = math.exp(-0.2 * 0.9)
    expected = math.exp(-0.2 * 0.4) * (p**4 + 4 * p**3 * (1 - p))
    got = harvested_yield(4e-4, 4, 3, 0.2 * PER_CM2, "poisson", critical_fraction=0.1)
    assert got == pytest.approx(expected, rel=1e-12)


def test_harvested_negative_binomial_against_direct_integration():
    from scipy import integrate, stats

    area, n, k, d, alpha, c = 814 * MM2, 144, 132, 0.3 * PER_CM2, 1.5, 0.2
    dist = stats.gamma(a=alpha, scale=d / alpha)

    def integrand(x):
        p = math.exp(-x * area * (1 - c) / n)
        return math.exp(-x * area * c) * stats.binom.sf(k - 1, n, p) * dist.pdf(x)

    direct, _ = integrate.quad(integrand, 0, 40 * d, limit=200)
    assert harvested_yield(area, n, k, d, "negative-binomial", alpha, c) == \
        pytest.approx(direct, rel=1e-7)


def test_harvested_murphy_against_direct_integration():
    from scipy import integrate, stats

    area, n, k, d, c = 814 * MM2, 144, 132, 0.3 * PER_CM2, 0.2

    def integrand(x):
        pdf = x / d**2 if x <= d else (2 * d - x) / d**2
        p = math.exp(-x * area * (1 - c) / n)
        return math.exp(-x * area * c) * stats.binom.sf(k - 1, n, p) * pdf

    direct, _ = integrate.quad(integrand, 0, 2 * d, points=[d])
    assert harvested_yield(area, n, k, d, "murphy", critical_fraction=c) == \
        pytest.approx(direct, rel=1e-9)


def test_h100_logic_cost_near_published_split():
    # Silicon Analysts: H100 logic ~$300 of ~$3.3K (reference P21, an estimate)
    h100 = package_cost("H100-SXM")
    assert 250 < h100.die.cost_per_good_die < 360
    assert h100.hbm == pytest.approx(1400) and h100.packaging == pytest.approx(750)
    assert h100.test == pytest.approx(920)
    assert h100.total == pytest.approx(3370, rel=0.05)  # Raymond James $3,320 (P20)


def test_lite_package_by_hand():
    lite = package_cost("Lite")
    assert gpu_die("Lite")[1:] == (36, 33)
    assert lite.die.area == pytest.approx(203.5 * MM2)
    assert lite.hbm == pytest.approx(1400 / 4)                 # a quarter of capacity and bw
    assert lite.test == pytest.approx(920 * (0.25 + 0.75 / 4))  # fixed quarter + area share
    per_mm2 = 650 / (1.25 * (814 + 6 * 110))                    # calibrated on the H100
    assert lite.packaging == pytest.approx(100 + per_mm2 * 1.25 * (203.5 + 6 * 110 / 4))
    mem = package_cost("Lite+MemBW")
    assert mem.hbm == pytest.approx(1400 / 2)                   # 2x bandwidth: half an H100's


def test_replacement_and_price():
    r = replacement("H100-SXM", "Lite")
    assert r["count"] == 4
    assert r["small_total_usd"] == pytest.approx(4 * package_cost("Lite").total)
    assert gpu_price("H100-SXM") == pytest.approx(27500)
    assert gpu_price("Lite") == pytest.approx(27500 * package_cost("Lite").total
                                              / package_cost("H100-SXM").total)


def test_yield_curve_marks_reference_dies():
    c = yield_curve(np.array([814, 203.5]) * MM2)
    assert c["sms_enabled"].tolist() == [132, 33]
    h100, lite = package_cost("H100-SXM").die, package_cost("Lite").die
    assert c["cost_per_good_sm"][0] == pytest.approx(h100.cost_per_good_sm)
    assert c["cost_per_good_sm"][1] == pytest.approx(lite.cost_per_good_sm)


# ------------------------------------------------------------------ invariants

areas = st.floats(min_value=1.0, max_value=5000.0).map(lambda a: a * MM2)
densities = st.floats(min_value=0.0, max_value=2.0).map(lambda d: d * PER_CM2)
models = st.sampled_from(YIELD_MODELS)
alphas = st.floats(min_value=0.2, max_value=50.0)


def _read(model: str, alpha: float) -> float | None:
    """``alpha`` where ``model`` reads it (the negative binomial), else None: given with
    another model it is refused."""
    return alpha if model == "negative-binomial" else None


@settings(max_examples=60, deadline=None)
@given(areas, densities, densities, models, alphas)
def test_higher_defect_density_never_raises_yield(area, d1, d2, model, alpha):
    lo, hi = sorted((d1, d2))
    alpha = _read(model, alpha)
    assert die_yield(area, hi, model, alpha) <= die_yield(area, lo, model, alpha) + 1e-15
    y_hi = harvested_yield(area, 144, 132, hi, model, alpha, 0.1)
    y_lo = harvested_yield(area, 144, 132, lo, model, alpha, 0.1)
    assert y_hi <= y_lo + 1e-12


@settings(max_examples=60, deadline=None)
@given(areas, areas, st.floats(min_value=0.001, max_value=2.0).map(lambda d: d * PER_CM2),
       models, alphas)
def test_cost_per_good_die_grows_faster_than_area(a1, a2, d, model, alpha):
    small, big = sorted((a1, a2))
    if big / small < 1.001:
        return
    alpha = _read(model, alpha)
    s = die_cost(small, defect_density=d, model=model, alpha=alpha)
    b = die_cost(big, defect_density=d, model=model, alpha=alpha)
    c_small, c_big = s.cost_per_good_die, b.cost_per_good_die
    # gross dies x area x yield falls with area (edge loss, defects), so with the fractional
    # count the cost would grow faster than the area; a wafer yields whole dies (floor of the
    # gross count), which can hold the count flat over a step: the bound loses the small
    # die's rounding, c_big / c_small > big / small x floor(N_small) / N_small
    assert c_big / c_small > big / small * s.dies_per_wafer / s.gross_dies
    assert c_big > c_small


@settings(max_examples=40, deadline=None)
@given(areas, densities, models, alphas, st.floats(min_value=0.0, max_value=1.0))
def test_harvesting_helps_and_all_needed_is_the_plain_yield(area, d, model, alpha, c):
    alpha = _read(model, alpha)
    plain = die_yield(area, d, model, alpha)
    assert harvested_yield(area, 36, 36, d, model, alpha, c) == pytest.approx(plain, rel=1e-9,
                                                                               abs=1e-12)
    assert harvested_yield(area, 36, 33, d, model, alpha, c) >= plain - 1e-12
    assert harvested_yield(area, 36, 30, d, model, alpha, c) >= \
        harvested_yield(area, 36, 33, d, model, alpha, c) - 1e-12


# ------------------------------------------------------------------ data file

def test_every_default_has_a_source_and_tag():
    table = economics()
    assert len(table) >= 30
    for p in table.values():
        assert p.source.strip() and p.confidence in CONFIDENCE
        if p.confidence in ("read-estimate", "vendor-claim", "assumption"):
            assert p.name  # estimates are parameters: every one is read through parameter()


def test_defaults_refer_to_reference_rows():
    rows = _reference_rows()
    for p in economics().values():
        if p.ref:
            assert p.ref in rows, f"{p.name}: reference row {p.ref} not in {CSV.name}"
    # the shipped density is P01's published band's low end (TSMC N5, 0.10-0.11 /cm^2)
    low = float(rows["P01"]["value"].split("-")[0])
    assert parameter("defect_density") == pytest.approx(low * PER_CM2)
    assert parameter("reference_die_area") == pytest.approx(float(rows["P03"]["value"]) * MM2)


@pytest.mark.parametrize("text, fragment", [
    ('[x]\nvalue = 1\nunit = "mm"\nsource = "s"\nref = ""\n', "exactly the keys"),
    ('[x]\nvalue = -1\nunit = "mm"\nsource = "s"\nref = ""\nconfidence = "derived"\n',
     "finite number >= 0"),
    ('[x]\nvalue = nan\nunit = "mm"\nsource = "s"\nref = ""\nconfidence = "derived"\n',
     "finite number >= 0"),
    ('[x]\nvalue = 1\nunit = "mm"\nsource = "s"\nref = ""\nconfidence = "rumour"\n',
     "confidence 'rumour'"),
    ('[x]\nvalue = 1\nunit = "mm"\nsource = " "\nref = ""\nconfidence = "derived"\n',
     "non-empty source"),
    ("[x\n", "not valid TOML"),
])
def test_malformed_parameter_files(text, fragment):
    with pytest.raises(UserError, match=fragment):
        read_parameters(text, "x.toml")


# ------------------------------------------------------------------ bad input

@pytest.mark.parametrize("call, fragment", [
    (lambda: gross_dies_per_wafer(0.08), "larger than the usable wafer"),
    (lambda: dies_per_wafer(0.06), "not one whole die fits"),
    (lambda: die_yield(814 * MM2, -1.0, "poisson"), "defect_density must be a finite"),
    (lambda: die_yield(814 * MM2, float("nan"), "poisson"), "defect_density must be a finite"),
    (lambda: die_yield(float("nan"), 1000.0, "poisson"), "die area must be finite"),
    (lambda: die_yield(-1.0, 1000.0, "poisson"), "die area must be finite"),
    (lambda: die_yield(814 * MM2, 1000.0, "seeds"), "unknown yield model 'seeds'"),
    (lambda: die_yield(814 * MM2, 1000.0, "negative-binomial", 0), "alpha must be"),
    (lambda: die_yield(814 * MM2, 1000.0, "negative-binomial", 1e6), "alpha must be"),
    (lambda: die_cost(814 * MM2, wafer_price=-5.0), "wafer_price must be"),
    (lambda: die_cost(814 * MM2, wafer_price=float("inf")), "wafer_price must be"),
    (lambda: die_cost(814 * MM2, edge_exclusion=0.2), "leaves nothing"),
    (lambda: die_cost(814 * MM2, sms_physical=144), "give both"),
    (lambda: harvested_yield(814 * MM2, 4, 5), "exceeds sms_physical"),
    (lambda: harvested_yield(814 * MM2, 144, 132, critical_fraction=1.5), "critical_fraction"),
    (lambda: parameter("nope"), "unknown economics parameter"),
])
def test_bad_input_is_one_clear_line(call, fragment):
    with pytest.raises(UserError, match=fragment) as info:
        call()
    assert "\n" not in str(info.value)


_NO_DIE_GPU = """[gpu."Bare"]
sms = 100
bf16_dense_TFLOPs = 500
hbm_capacity_GB = 80
hbm_bandwidth_TBps = 2
scaleup_GBps_per_direction = 300
scaleout_Gbps = 400
tdp_W = 500
max_instance = 8
source = "test"
"""


def test_a_gpu_without_die_data_is_one_clear_line(tmp_path):
    # a GPU file without a die table: no die, so no package cost or price
    path = tmp_path / "bare.toml"
    path.write_text(_NO_DIE_GPU)
    for call in (gpu_die, package_cost, gpu_price):
        with pytest.raises(UserError, match="no die data for GPU 'Bare'") as info:
            call(str(path))
        message = str(info.value)
        assert "\n" not in message
        for name in ("A100-SXM-80GB", "B200-HGX", "H100-SXM", "Lite"):  # what is known
            assert repr(name) in message
