"""failures.toml's ``range_per_hour`` is checked when read (h256): the loader refused a
bad rate but took any range (reversed, negative, a string, one end), which ``sensitivity``
then swept; a default outside its own range is refused as a defect of the file.
"""

from __future__ import annotations

import tomllib
from importlib import resources

import pytest

from compute.errors import UserError
from netmodel.study.reliability_catalog import _parse, catalog


def _data():
    return tomllib.loads(resources.files("netmodel").joinpath("data/failures.toml").read_text())


def test_the_shipped_ranges_hold_their_defaults():
    for name, c in catalog().classes.items():
        if c.rate_range is not None and c.rate_per_hour is not None:
            lo, hi = c.rate_range
            assert lo <= c.rate_per_hour <= hi, name


@pytest.mark.parametrize("rng, needle", [
    ([2.0e-5, 2.3e-7], "low <= high, got [2e-05, 2.3e-07]"),
    ([-1e-7, 2.0e-5], "range_per_hour must be a number from 0 to 1 per hour"),
    ([2.3e-7], "must be [low, high], got [2.3e-07]"),
    ("2.3e-7..2e-5", "must be [low, high]"),
    ([1e-6, 2.0e-5], "rate_per_hour 6.6e-07 lies outside its range_per_hour [1e-06, 2e-05]"),
])
def test_a_bad_range_is_refused_naming_the_class(rng, needle):
    data = _data()
    data["class"]["transceiver"]["range_per_hour"] = rng
    with pytest.raises(UserError) as e:
        _parse(data, "f.toml")
    assert "f.toml [class.transceiver] " in str(e.value) and needle in str(e.value)
