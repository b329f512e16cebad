"""Hostile round 29 (scripts/hostile_round29.py): module_ports, saved fabrics edited by
hand, serve/availability/blast-radius/yield/cost options at their ends, and the library
called with bad objects.

Found wrong, each checked here:

(a) ``compute.die_yield.yield_curve`` of 10^10 die areas (a numpy view of one number, no
memory of its own) raised MemoryError ('Unable to allocate 74.5 GiB') after 58 s of
trying; its areas run a Python call each (about 80 us), so a million is already 80 s. Now
counted before any array is made and refused past NETMODEL_MAX_YIELD_AREAS (1,000,000).

(b) A builder's ``module_ports`` given as 2.0 (a scenario file's ``module_ports = 2.0``,
``build_fabric("superpod", {"module_ports": 2.0})``) or numpy's 2 was refused as 'must be 1
or 2 (...), got 2.0' (and 'got 2'), where every other count of the builder
(``domain_size = 8.0``) and the spec ``superpod:module_ports=2.0`` read it as the whole
number. Now read as 2 (an int in the graph attribute); 2.5, True and NaN still refused.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import netmodel
from compute.die_yield import MAX_CURVE_AREAS, yield_curve
from compute.errors import UserError
from tests.netmodel.cli_helpers import ROOT
from topologies.inventory import bill_of_materials

SCENARIO = (ROOT / "netmodel/data/scenarios/h100-dgx.toml").read_text().replace(
    'name = "h100-dgx"', 'name = "mine"')
PORTS_RULE = "1 or 2 (the optical cable ends one pluggable module serves)"


def test_yield_curve_counts_its_areas_before_any_array():
    view = np.broadcast_to(814e-6, (10**5, 10**5))   # 10^10 areas in no memory
    with pytest.raises(UserError, match=r"^yield_curve: about 10,000,000,000 die areas, "
                                        r"over the limit of 1,000,000; give fewer areas "
                                        r"\(each about 80 us\), or raise "
                                        r"NETMODEL_MAX_YIELD_AREAS$"):
        yield_curve(view)
    assert MAX_CURVE_AREAS == 1_000_000


def test_yield_curve_limit_is_settable(monkeypatch):
    monkeypatch.setenv("NETMODEL_MAX_YIELD_AREAS", "1")
    assert yield_curve([814e-6])["sms_physical"].tolist() == [144]   # 144 SMs, as an H100
    with pytest.raises(UserError, match="about 2 die areas, over the limit of 1"):
        yield_curve([814e-6, 203.5e-6])
    with pytest.raises(UserError, match=r"^die area must be numbers"):   # ragged: named
        yield_curve([[1e-4], [2e-4, 3e-4]])


@pytest.mark.parametrize("ports", [2.0, np.int64(2), np.float64(2.0)])
def test_module_ports_a_whole_number_is_read_as_it(ports):
    g = netmodel.build_fabric("superpod", {"sus": 1, "module_ports": ports})
    assert g.graph["module_ports"] == 2 and type(g.graph["module_ports"]) is int
    # one SU: 1,008 optical cable ends in 508 twin-port modules (a leaf's 31st GPU port alone)
    b = bill_of_materials(g)
    assert (b.pluggable_transceivers, b.pluggable_ends, b.module_ports) == (508, 1008, 2)
    single = netmodel.build_fabric("superpod", {"sus": 1, "module_ports": 1.0})
    assert "module_ports" not in single.graph
    assert bill_of_materials(single).pluggable_transceivers == 1008


@pytest.mark.parametrize("ports, shown", [(2.5, "2.5"), (True, "True"), (math.nan, "nan"),
                                          (0, "0"), (3.0, "3.0"), ("two", "'two'")])
def test_module_ports_other_values_still_refused(ports, shown):
    with pytest.raises(UserError, match=r"^superpod: module_ports must be "):
        netmodel.build_fabric("superpod", {"sus": 1, "module_ports": ports})
    try:
        netmodel.build_fabric("superpod", {"sus": 1, "module_ports": ports})
    except UserError as exc:
        assert str(exc).endswith(f"got {shown}")


def test_a_scenario_files_module_ports_2_0_is_2(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO.replace("module_ports = 2 ", "module_ports = 2.0 "))
    assert netmodel.build_fabric(path).graph["module_ports"] == 2
    path.write_text(SCENARIO.replace("module_ports = 2 ", "module_ports = 2.5 "))
    with pytest.raises(UserError, match=rf"\[fabric\]: rail-optimized: module_ports must be "
                                        rf"{PORTS_RULE.replace('(', '.').replace(')', '.')}, "
                                        rf"got 2.5"):
        netmodel.build_fabric(path)
