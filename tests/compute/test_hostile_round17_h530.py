"""Library refusals scripts/hostile_round17.py found wrong (h530).

``get_profile`` of a name over the file system's limit (300 characters) raised OSError
from ``Path.is_dir`` (a traceback through every ``--profile``); now it is an unknown
profile. ``parse_quantity`` of a number finite as typed but past the largest float in SI
units (``1e308`` defects per cm^2 is 1e312 per m^2) said 'must be a finite number >= 0,
got '1e308'', which 1e308 is; now it says the value is too large and why. A die area
finite in m^2 but past the largest float in mm^2 was said as 'inf mm^2'; now in m^2.
"""

from __future__ import annotations

import sys

import pytest

from compute.die_yield import gross_dies_per_wafer
from compute.errors import UserError
from compute.profiles import get_profile
from compute.units import parse_quantity


@pytest.mark.parametrize("name", ["x" * 300, "9" * 100_000, "a/" + "b" * 300])
def test_a_profile_name_too_long_for_a_file_is_unknown(name):
    with pytest.raises(UserError) as err:
        get_profile(name)
    said = str(err.value)
    assert said.startswith(f"unknown profile '{name[:20]}")
    assert said.endswith("known: 'vllm-dgx-h100', 'vllm-h100-2024' (or a path to a .toml profile)")


def test_a_folder_is_still_said_as_a_folder(tmp_path):
    with pytest.raises(UserError, match="is a folder; give a shipped profile"):
        get_profile(str(tmp_path))


@pytest.mark.parametrize("text, factor", [("1e308", "10000"), ("1e308/mm2", "1e+06"),
                                          ("2e304/cm2", "10000")])
def test_a_number_past_the_largest_float_in_si_is_too_large(text, factor):
    units = {"": 1e4, "/cm2": 1e4, "/mm2": 1e6}
    with pytest.raises(UserError) as err:
        parse_quantity(text, units, "density", allow_zero=True)
    number = text.split("/")[0]
    assert str(err.value) == (f"density {text!r} is too large: {number} x {factor} (in SI "
                              f"units) passes the largest number, "
                              f"{sys.float_info.max:.1e}")


def test_the_largest_that_fits_is_taken_and_nan_is_not_finite():
    # 1.7e304 x 1e4 = 1.7e308, below the largest float (1.797e308): taken as it is
    assert parse_quantity("1.7e304", {"": 1e4}, "d") == pytest.approx(1.7e308)
    with pytest.raises(UserError, match=r"must be a finite number >= 0, got 'nan'"):
        parse_quantity("nan", {"": 1e4}, "d", allow_zero=True)
    with pytest.raises(UserError, match=r"must be a finite number > 0, got 'inf'"):
        parse_quantity("inf", {"": 1.0}, "d")


def test_a_die_area_past_the_largest_float_in_mm2_is_said_in_m2():
    # yield --area 1e308cm2 is 1e304 m^2, finite, but 1e310 mm^2: it said 'inf mm^2'
    with pytest.raises(UserError) as err:
        gross_dies_per_wafer(1e304)
    assert str(err.value) == ("die area 1e+304 m^2 is larger than the usable wafer (70686 "
                              "mm^2 on a 300 mm wafer)")
    with pytest.raises(UserError, match=r"^die area 80000 mm\^2 is larger"):
        gross_dies_per_wafer(0.08)
