"""Hostile-input round h287 on what this session changed in netmodel: the reliability
models' fabric intake split into netmodel/study/reliability_fabric.py (public:
cluster_cells, check_labels, with_devices), the colocation rent (cost.colocation_rent) and
the generation key in_network_channels.

Defects fixed: cluster_cells took its ``cell`` unchecked (0: ZeroDivisionError; -1: -16
cells; None or '8': TypeError; True: a one-GPU fabric); check_labels and with_devices
raised AttributeError on anything but a graph. The rent and the channel key were already
refused in one line for every odd value tried; their odd valid values are pinned here by
hand."""

import math

import pytest

from compute.errors import UserError
from netmodel.study.reliability_fabric import check_labels, cluster_cells, with_devices


@pytest.mark.parametrize("cell", [0, -1, None, "8", True, float("nan"), 8.5])
def test_cluster_cells_refuses_a_cell_that_is_not_a_count(cell):
    with pytest.raises(UserError, match=r"^cell must be a whole number of GPUs >= 1, got "):
        cluster_cells(16, cell)


def test_cluster_cells_counts_copies():
    import numpy as np

    assert cluster_cells(24, 8) == 3 == cluster_cells(np.int64(24), np.int64(8))
    assert cluster_cells(None, 8) == 1


@pytest.mark.parametrize("graph", [None, 5, "ring:n=8", {"nodes": []}])
def test_label_helpers_refuse_what_is_not_a_graph(graph):
    with pytest.raises(UserError, match=r"^graph must be a networkx\.classes\.graph\.Graph"):
        check_labels(graph, "fabric 'x'", 8)
    with pytest.raises(UserError, match=r"^graph must be a networkx\.classes\.graph\.Graph"):
        with_devices(graph)


# -- the colocation rent: odd values by hand ------------------------------------------------
# h100-dgx (32 H100, 700 W rated + 535 W host at max each, 2,777.6 W of network) is
# provisioned for 32 x 1,235 + 2,777.6 = 42,297.6 W; the rent is that x colocation_rent
# (USD per W a second) x a Julian year.
_PROVISIONED = 32 * (700 + 535) + 2777.6
_YEAR = 365.25 * 86400


@pytest.fixture(scope="module")
def best():
    from netmodel.study.cost import cost_summary

    return cost_summary("h100-dgx", "Llama-3-8B", "decode")


def test_rent_by_hand(best):
    from netmodel.study.cost import cost_summary

    assert best.power_provisioned == pytest.approx(_PROVISIONED, rel=1e-12)
    # the shipped 184.06 USD/kW/month: 42.2976 kW x 184.06 x 12 = 93,423.555 USD a year
    assert best.colocation_per_year == pytest.approx(42.2976 * 184.06 * 12, rel=1e-12)
    for rent, per_year in ((-0.0, 0.0), (0.0, 0.0), (5e-324, _PROVISIONED * 5e-324 * _YEAR)):
        s = cost_summary("h100-dgx", "Llama-3-8B", "decode", colocation_rent=rent)
        assert s.colocation_per_year == per_year
        assert math.copysign(1.0, s.colocation_per_year) == 1.0   # no -0 printed
        assert s.cost_per_year == pytest.approx(best.cost_per_year
                                                - best.colocation_per_year, rel=1e-12)


@pytest.mark.parametrize("bad,why", [(float("nan"), "must be a finite number >= 0"),
                                     (-1.0, "must be a finite number >= 0"),
                                     ("1e3", "must be a number"), (True, "must be a number"),
                                     (1e308, "overflow to infinity")])
def test_rent_refused_by_name(bad, why):
    from netmodel.study.cost import cost_summary

    with pytest.raises(UserError, match=rf"colocation_rent.*{why}"):
        cost_summary("h100-dgx", "Llama-3-8B", "decode", colocation_rent=bad)


# -- --cluster-gpus past the largest cluster ------------------------------------------------
# 131,073 to 10**18 reached the library, whose refusal named its parameter ('gpus 131,073
# exceeds ...'), not the option typed; 19 digits and more were already named by the option.
@pytest.mark.parametrize("command", ["blast-radius", "availability"])
@pytest.mark.parametrize("text", ["131073", "131,073", "999999999999999999"])
def test_cluster_gpus_past_the_limit_names_the_option(command, text):
    from tests.netmodel.cli_helpers import one_line_error, run_cli

    r = run_cli([command, "--fabric", "ring:n=8", "--model", "Llama-3-8B",
                 "--cluster-gpus", text])
    one_line_error(r, f"--cluster-gpus '{text}' exceeds the largest cluster modelled "
                      f"(131,072 GPUs)")


def test_rent_at_a_lower_clock_by_hand():
    # at clock 0.5 a GPU is rented for its rated power by the clock-power law, TDP x (idle +
    # (1 - idle) x (0.25 + 0.75 x 0.5 x 0.7**2)): with idle_fraction 0, 700 x 0.43375 =
    # 303.625 W; with 1, the whole 700 W whatever the clock
    from netmodel.study.cost import cost_summary

    s = cost_summary("h100-dgx", "Llama-3-8B", "decode", clock=0.5, idle_fraction=0)
    assert s.power_provisioned == pytest.approx(32 * (303.625 + 535) + 2777.6, rel=1e-12)
    s = cost_summary("h100-dgx", "Llama-3-8B", "decode", clock=0.5, idle_fraction=1)
    assert s.power_provisioned == pytest.approx(_PROVISIONED, rel=1e-12)
