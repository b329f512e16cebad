"""Unit parsing is exact: a quantity written with two prefixes is one float, the correctly
rounded exact value (h237, hostile-input pass E: ``1us`` and ``1000ns`` were two sweep columns
because 1000 x 1e-9 = 1.0000000000000002e-06 in floating point)."""

from fractions import Fraction

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from compute.errors import UserError
from compute.rows import UNITS, read_parameters
from compute.units import parse_bandwidth, parse_bytes, parse_in_unit, parse_time, scaled
from netmodel.cli.main import cli
from netmodel.study.sweep import parse_param

#: exact factor of each unit, by decade/binary power (written by hand, not read from the module)
TIME = {"s": Fraction(1), "ms": Fraction(1, 10**3), "us": Fraction(1, 10**6),
        "ns": Fraction(1, 10**9), "ps": Fraction(1, 10**12)}
RATE = {"B/s": Fraction(1), "kB/s": Fraction(10**3), "MB/s": Fraction(10**6),
        "GB/s": Fraction(10**9), "TB/s": Fraction(10**12), "Gb/s": Fraction(10**9, 8),
        "Mb/s": Fraction(10**6, 8), "Tb/s": Fraction(10**12, 8), "b/s": Fraction(1, 8)}


def test_equal_quantities_written_differently_are_one_float():
    # before: parse_time('1000ns') = 1000 * 1e-9 = 1.0000000000000002e-06 != 1e-06
    assert parse_time("1us") == parse_time("1000ns") == parse_time("0.001ms") \
        == parse_time("1e-6s") == parse_time("1e-6") == 1e-6
    assert parse_time("330ns") == parse_time("0.33us") == 3.3e-7
    assert parse_bandwidth("1GB/s") == parse_bandwidth("1000MB/s") == 1e9
    assert parse_bandwidth("400Gb/s") == parse_bandwidth("50GB/s") == 50e9
    assert parse_bytes("1GiB") == parse_bytes("1024MiB") == 2.0**30
    # 0.1 USD/kWh is 0.1 / 3.6e6 USD/J = 1/36,000,000 exactly, rounded once
    assert parse_in_unit("0.1USD/kWh", "USD/kWh", "p") == parse_in_unit("100USD/MWh", "USD/kWh",
                                                                         "p") \
        == float(Fraction(1, 36_000_000))
    assert parse_in_unit("1%/y", "1/year", "r") == float(Fraction(1, 100 * 31_557_600))


def _decimal(digits: int, exponent: int) -> str:
    return f"{digits}e{exponent}"


@given(digits=st.integers(1, 10**12), exponent=st.integers(-12, 6),
       a=st.sampled_from(sorted(TIME)), b=st.sampled_from(sorted(TIME)))
def test_time_in_two_prefixes_is_the_correctly_rounded_value(digits, exponent, a, b):
    exact = Fraction(digits) * Fraction(10) ** exponent * TIME[a]   # seconds
    in_b = exact / TIME[b]   # the same quantity written in unit b (a finite decimal)
    text_b = _as_decimal(in_b)
    want = float(exact)
    assert parse_time(f"{_decimal(digits, exponent)}{a}") == want
    assert parse_time(f"{text_b}{b}") == want


@given(digits=st.integers(1, 10**12), exponent=st.integers(-9, 6),
       a=st.sampled_from(sorted(RATE)), b=st.sampled_from(sorted(RATE)))
def test_rate_in_two_prefixes_is_the_correctly_rounded_value(digits, exponent, a, b):
    exact = Fraction(digits) * Fraction(10) ** exponent * RATE[a]   # bytes/s
    text_b = _as_decimal(exact / RATE[b])
    assert parse_bandwidth(f"{_decimal(digits, exponent)}{a}") == float(exact)
    assert parse_bandwidth(f"{text_b}{b}") == float(exact)


@given(mib=st.integers(1, 2**30))
def test_binary_sizes_agree(mib):
    assert parse_bytes(f"{mib}MiB") == parse_bytes(f"{mib * 1024}KiB") == mib * 2.0**20
    assert parse_bytes(f"{mib / 1024!r}GiB") == mib * 2.0**20   # a power-of-two fraction


def _as_decimal(q: Fraction) -> str:
    """A Fraction whose denominator is 2^a 5^b as an exact decimal string."""
    den, shift = q.denominator, 0
    while den != 1:
        q *= 10
        den, shift = q.denominator, shift + 1
    return f"{q.numerator}e-{shift}"


def test_scaled_falls_back_to_floats_where_it_cannot_be_exact():
    assert scaled("inf", 1e-9) == float("inf")
    assert scaled("1" * 5000, 1e-9) == float("1" * 5000) * 1e-9   # past int's digit limit
    assert scaled("0", 1e-9) == 0.0
    assert scaled(0.1, 1e-9) == 1e-10   # a float from a file reads as the decimal it wrote


def test_a_data_row_and_the_same_value_typed_are_one_float():
    # economics.toml rows convert as a sweep's typed value does: 0.12 USD/kWh is
    # 0.12 / 3.6e6 = 1/30,000,000 USD/J both ways (before: 0.12 * (1/3.6e6) was one ulp below,
    # 3.333333333333333e-08); 814 mm^2 is 0.000814 m^2 (before: 0.0008139999999999999)
    text = '[p]\nvalue = 0.12\nunit = "USD/kWh"\nsource = "s"\nref = ""\nconfidence = "derived"\n'
    got = read_parameters(text, "test")["p"]
    assert got.value == parse_in_unit("0.12USD/kWh", "USD/kWh", "p") \
        == float(Fraction(1, 30_000_000)) == 3.3333333333333334e-08
    area = read_parameters(text.replace("0.12", "814").replace("USD/kWh", "mm^2"), "t")["p"]
    assert area.value == 0.000814
    assert UNITS["USD/kWh"] == 1 / 3.6e6


def test_sweep_refuses_one_value_written_twice():
    # before: two columns both labelled 1 (us): 1e-06 and 1.0000000000000002e-06
    with pytest.raises(UserError, match=r"name 1 us twice \('1us' and '1000ns'\)"):
        parse_param("adjust.hop_latency=1us,1000ns", ["lite-flat"])
    with pytest.raises(UserError, match=r"name 50 GB/s twice \('400Gb/s' and '50GB/s'\)"):
        parse_param("fabric.bandwidth=400Gb/s,50GB/s", ["lite-flat"])
    out = CliRunner().invoke(cli, ["sweep", "--scenario", "lite-flat", "-q", "--param",
                                   "adjust.hop_latency=1us,0.001ms"])
    assert out.exit_code == 2 and "twice" in out.output and "Traceback" not in out.output
    # distinct values still sweep, in order, each its own exact float
    p = parse_param("adjust.hop_latency=2000ns,1us", ["lite-flat"])
    assert p.values == (1e-6, 2e-6)


def test_durations_are_exact_too():
    # the reliability catalog's durations take the same rule: 1.1 h is 66 min is 3,960 s
    # (before: 1.1 * 3600 = 3960.0000000000005); 0.1 y = 0.1 x 31,557,600 s = 3,155,760 s
    from netmodel.study.reliability_catalog import parse_duration

    assert parse_duration("1.1h") == parse_duration("66min") == parse_duration("3960s") == 3960.0
    assert parse_duration("0.1y") == 3_155_760.0


def test_scaled_edge_numbers():
    # an exponent past int's digit limit, a product rounding past the largest float, a
    # subnormal and a sign: each as the float product or the exact value, never a traceback
    huge_exp = "1e" + "0" * 5000 + "1"
    assert scaled(huge_exp, 1e-9) == float(huge_exp) * 1e-9
    assert scaled("1.7976931348623157e308", 1.0) == 1.7976931348623157e308
    assert scaled("-1000", 1e-9) == -1e-6
    assert scaled("1e-320", 2.0**10) == float(Fraction(1, 10**320) * 1024)


def test_a_gpu_file_reads_its_units_exactly():
    # gpus.toml's A100 HBM bandwidth, 2.039 TB/s, is 2.039e12 B/s as typed on the command
    # line (before: 2.039 * 1e12 = 2039000000000.0002)
    from compute.hardware import get_gpu

    assert get_gpu("A100-SXM-80GB").hbm_bandwidth == parse_bandwidth("2.039TB/s") == 2.039e12
