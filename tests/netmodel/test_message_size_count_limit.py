"""The library refuses more message sizes in one call than model.MAX_SIZES (or
NETMODEL_MAX_MESSAGE_SIZES) in one line naming the argument, the count and the limit,
before costing any (h233 defect D: FabricCostModel.collective_time with 10**8 sizes raised
MemoryError; the CLI's costs capped its rows, the library nothing). The refusals fail on
the code before the limit (which costed the sizes and returned)."""

import numpy as np
import pytest

import netmodel
from compute.errors import UserError
from netmodel.collectives.concurrent import concurrent_cost
from netmodel.collectives.cost_table import cost_rows
from netmodel.collectives.model import MAX_SIZES, FabricCostModel
from topologies.registry import build

ENV = "NETMODEL_MAX_MESSAGE_SIZES"


@pytest.fixture(scope="module")
def model():
    return FabricCostModel(build("fat-tree:k=4"))


def _says(exc, param, count, limit):
    text = str(exc.value)
    assert "\n" not in text
    assert text.startswith(f"{param}: about {count:,} message sizes, over the limit of "
                           f"{limit:,}; ")
    assert ENV in text


def test_the_default_refuses_one_past_it_without_a_copy(model):
    """4,000,001 sizes (a broadcast view: no memory of its own) are refused; 10**8 too."""
    assert MAX_SIZES == 4_000_000
    for count in (MAX_SIZES + 1, 10 ** 8):
        with pytest.raises(UserError) as exc:
            model.collective_time("all-reduce", np.broadcast_to(1e6, (count,)), 8)
        _says(exc, "nbytes", count, MAX_SIZES)


@pytest.mark.parametrize("call, param", [
    (lambda m, n: m.collective_time("all-reduce", n, 8), "nbytes"),
    (lambda m, n: m.collective_time("all-reduce", list(n), 8), "nbytes"),
    (lambda m, n: m.moe_all_to_all_time(n, 8, 2, lambda u: np.minimum(u, 2)), "nbytes"),
    (lambda m, n: m.sweep("all-gather", n, 8), "sizes"),
    (lambda m, n: m.curves("all-gather", n, 8), "sizes"),
    (lambda m, n: m.fastest(m.choices("all-reduce", m.group(8), n[:1]), n), "n"),
    (lambda m, n: list(m.candidate_times(m.choices("all-reduce", m.group(8), n[:1]), n)),
     "n"),
    (lambda m, n: cost_rows(m, ["all-reduce"], n, [8]), "sizes"),
    (lambda m, n: concurrent_cost(m, 8, "all-reduce", n), "nbytes"),
    (lambda m, n: netmodel.collective_time("fat-tree:k=4", "all-reduce", n, 8), "sizes"),
])
def test_every_entry_point_refuses_one_past_the_setting(model, monkeypatch, call, param):
    """With NETMODEL_MAX_MESSAGE_SIZES=2000, 2,001 sizes are refused naming the argument;
    2,000 (the limit itself) still cost."""
    monkeypatch.setenv(ENV, "2e3")   # 2,000 by the one number grammar
    n = np.geomspace(1e3, 1e9, 2001)
    with pytest.raises(UserError) as exc:
        call(model, n)
    _says(exc, param, 2001, 2000)
    call(model, n[:2000])


def test_sizes_at_the_limit_cost_as_one_by_one(model, monkeypatch):
    """2,000 sizes at the limit give each size's own time, bit for bit."""
    monkeypatch.setenv(ENV, "2000")
    n = np.geomspace(1e3, 1e9, 2000)
    t = model.collective_time("all-reduce", n, 8)
    for i in (0, 999, 1999):
        assert t[i] == model.collective_time("all-reduce", float(n[i]), 8)


def test_a_bad_setting_is_one_line(model, monkeypatch):
    monkeypatch.setenv(ENV, "lots")
    with pytest.raises(UserError, match=f"^environment variable {ENV}='lots' must be a whole "
                                        "number from 1 to 1e30 \\(default 4,000,000\\)$"):
        model.collective_time("all-reduce", np.ones(5000), 8)
