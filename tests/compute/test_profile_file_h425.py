"""Engine profile files: a blank source is refused as a missing one is, and what
EngineProfile.to_toml writes read_profile reads back equal (hypothesis)."""

from __future__ import annotations

import math
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compute.errors import UserError
from compute.measurements import Measurement
from compute.profiles import PARAMETERS, EngineProfile, read_profile
from compute.validate import SMALLEST_NUMBER

GOOD = """[profile]
name = "t"
[parameters.gemm_efficiency]
value = 0.5
source = "s"
"""


@pytest.mark.parametrize("blank", ['""', '"   "'])
def test_a_blank_source_is_refused_as_a_missing_one_is(tmp_path, blank):
    """Before: read, the value without a word of where it came from (a GPU, model or
    scenario file's blank source was refused already)."""
    f = tmp_path / "p.toml"
    f.write_text(GOOD.replace('"s"', blank))
    with pytest.raises(UserError) as err:
        read_profile(f)
    assert str(err.value) == (f"{f}: [parameters.gemm_efficiency]: source is blank; say where "
                              "the value comes from (a fit, a measurement, a paper, or "
                              "'what-if: ...' for a value of your own)")


def test_a_blank_source_is_written_as_not_given(tmp_path):
    p = EngineProfile("t", gemm_efficiency=0.5, sources=(("gemm_efficiency", "  "),))
    f = tmp_path / "p.toml"
    f.write_text(p.to_toml())
    assert read_profile(f).source("gemm_efficiency") == "not given"


@pytest.mark.parametrize("value", [5e-324, 1e-320, SMALLEST_NUMBER / 2])
def test_an_overhead_below_the_smallest_number_read_is_refused_where_made(value):
    """Before: made, and written as 1e-320, which read_profile refused ('holds the number
    1e-320, below the smallest number netmodel reads'): a profile that could not be read
    back."""
    with pytest.raises(UserError) as err:
        EngineProfile("t", layer_overhead_s=value)
    assert str(err.value) == (f"profile 't': layer_overhead_s {value!r} s is below the "
                              "smallest number netmodel reads (2.225e-308); layer_overhead_s "
                              "must be a number from 0 to 1 s")   # its range (PARAMETERS)


def test_a_fitted_time_of_a_sliver_above_zero_is_zero():
    """The fit's step for a time (ms for layer_overhead_s) of 1e-307 is 1e-310 s: a profile
    made of it was refused; the fit gives 0 (its bound), the next number up stays."""
    from compute.profile_fit import _decode

    assert _decode("layer_overhead_s", 1e-307) == 0.0
    assert _decode("layer_overhead_s", 1e-300) == 1e-300 * 1e-3
    assert _decode("gemm_efficiency", -800.0) == PARAMETERS["gemm_efficiency"].minimum


def test_the_smallest_number_read_is_still_made_and_read_back(tmp_path):
    p = EngineProfile("t", layer_overhead_s=SMALLEST_NUMBER)
    f = tmp_path / "p.toml"
    f.write_text(p.to_toml())
    assert read_profile(f).layer_overhead_s == SMALLEST_NUMBER


# --- round trip -------------------------------------------------------------------------

#: One line of printable text, as a profile's texts are (no control or format character).
TEXT = st.text(st.characters(categories=("L", "N", "P", "S", "Zs")), max_size=30)
#: A name as a name is written: composed (NFC; compute.validate.name), no blank at either end.
NAME = TEXT.map(lambda s: unicodedata.normalize("NFC", s).strip()).filter(
    lambda s: s and "$" not in s)


def _value(p):
    """A parameter's value anywhere in its range, ends included (a float, or 0)."""
    return st.one_of(st.sampled_from([p.minimum, p.maximum, p.neutral]),
                     st.floats(p.minimum, p.maximum, allow_subnormal=False))


@st.composite
def profiles(draw):
    values = {n: draw(_value(p)) for n, p in PARAMETERS.items()}
    curve = ()
    if draw(st.booleans()):
        xs = sorted(set(draw(st.lists(st.floats(1e-6, 1e9), min_size=2, max_size=6))))
        if len(xs) >= 2:
            curve = tuple((x, draw(_value(PARAMETERS["gemm_efficiency"]))) for x in xs)
    sources = {n: draw(TEXT.filter(str.strip)) for n in PARAMETERS if draw(st.booleans())}
    decode = draw(st.booleans())
    ms = tuple(Measurement(draw(NAME), draw(NAME), draw(st.integers(1, 64)),
                           "decode" if decode else "prefill", draw(st.integers(1, 512)),
                           draw(st.floats(1e-9, 1e6)),
                           prompt=None if decode else draw(st.integers(1, 10**6)),
                           context=draw(st.integers(1, 10**6)) if decode else None,
                           source=draw(TEXT))
               for _ in range(draw(st.integers(0, 3))))
    fit = ()
    if draw(st.booleans()):
        names = draw(st.lists(st.sampled_from(list(PARAMETERS)), min_size=1, unique=True))
        # errors of a fit: differences of floats near 1, never below 2.2e-16 but 0
        rms = draw(st.floats(0, 1e6, allow_subnormal=False))
        fit = (tuple(names), len(ms) or draw(st.integers(1, 10_000)), rms,
               draw(st.floats(rms, 1e6, allow_subnormal=False)))
    texts = {k: draw(TEXT) for k in ("engine", "system", "collectives", "fitted_on")}
    # the GPU label names the measurements' GPUs where it names any and lists some (the
    # reader's rule, compute.profiles._check_fitted_gpus), as calibrate writes it
    gpus = list(dict.fromkeys(m.gpu for m in ms))
    texts["gpu"] = draw(TEXT) if not ms else "" if any("," in g for g in gpus) else \
        draw(st.sampled_from(["", ", ".join(gpus)]))
    return EngineProfile(draw(NAME), **values, gemm_curve=curve,
                         sources=tuple(sorted(sources.items())), measurements=ms, fit=fit,
                         **texts)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(profiles())
def test_a_profile_written_reads_back_equal(tmp_path, p):
    f = tmp_path / "p.toml"
    f.write_text(p.to_toml(), encoding="utf-8")
    back = read_profile(f)
    given_sources = dict(p.sources)
    ignored = {"gemm_efficiency"} if p.gemm_curve else set()   # the curve in its place
    mine = {n: v for n, v in p.values().items() if n not in ignored}
    assert {n: v for n, v in back.values().items() if n not in ignored} == mine
    assert all(math.copysign(1, back.values()[n]) == math.copysign(1, v) for n, v in mine.items())
    assert back.gemm_curve == p.gemm_curve
    assert back.measurements == p.measurements
    assert back.fit == p.fit
    assert (back.name, back.engine, back.system, back.gpu, back.collectives, back.fitted_on) == \
        (p.name, p.engine, p.system, p.gpu, p.collectives, p.fitted_on)
    assert dict(back.sources) == {n: given_sources.get(n, "not given") for n in PARAMETERS}
