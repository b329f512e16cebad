"""Every to_dict of the blast-radius, availability, reliability-summary and cost results
holds only Python types (str, int, float, bool, None, list, dict): a strict JSON encoder
or ``type(x) is float`` works on them. Before, Analytic.to_dict gave numpy.float64 for
lost_per_year and waits_for_repair_per_year, and tuples for blocking and slowed."""

from __future__ import annotations

import json

import pytest

from netmodel.study.availability import availability
from netmodel.study.blast_radius import blast_radius
from netmodel.study.cost import cost_summary
from netmodel.study.reliability_summary import reliability_summary

_PLAIN = (str, int, float, bool, type(None))


def _not_plain(x, path="$") -> list[str]:
    if type(x) in _PLAIN:
        return []
    if type(x) is list:
        return [p for i, v in enumerate(x) for p in _not_plain(v, f"{path}[{i}]")]
    if type(x) is dict:
        bad = [f"{path} key {k!r}: {type(k).__name__}" for k in x if type(k) is not str]
        return bad + [p for k, v in x.items() for p in _not_plain(v, f"{path}.{k}")]
    return [f"{path}: {type(x).__module__}.{type(x).__name__}"]


def _strict(d: dict) -> None:
    assert _not_plain(d) == []
    json.dumps(d, allow_nan=False, default=lambda o: pytest.fail(f"not JSON: {o!r}"))


@pytest.mark.parametrize("scenario", ["lite-flat", "lite-ocs"])
def test_availability_to_dict_is_plain(scenario):
    a = availability(scenario, "Llama-3-8B", spares=2, trials=20)
    d = a.to_dict()
    _strict(d)
    assert type(d["analytic"]["waits_for_repair_per_year"]) is float
    assert all(type(v) is float for v in d["analytic"]["lost_per_year"].values())
    assert type(a.analytic.waits_for_repair_per_year) is float
    for part in (a.analytic, a.no_spares, a.mc, a.pools, *a.kinds):
        _strict(part.to_dict())


@pytest.mark.parametrize("scenario", ["lite-flat", "h100-dgx"])
def test_blast_radius_to_dict_is_plain(scenario):
    b = blast_radius(scenario, "Llama-3-8B")
    _strict(b.to_dict())
    for r in b.rows:
        _strict(r.to_dict())


def test_reliability_summary_and_cost_to_dict_are_plain():
    _strict(reliability_summary("lite-flat", "Llama-3-8B").to_dict())
    c = cost_summary("lite-flat", "Llama-3-8B")
    _strict(c.to_dict())
