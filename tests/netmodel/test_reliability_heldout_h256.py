"""Held-out checks of the failure catalog: published figures not used to set it (h256).

Each compares what the shipped catalog predicts with a published production figure and
pins the error docs/reliability.md states ("Held-out checks"); none is fitted. The
catalog's plausible ranges (``range_per_hour``, which ``sensitivity`` sweeps) must hold
the held-out per-part rates: the transceiver range began at its default, 6.6e-7, which
its own note calls an upper bound for optics, and the packet switches had none.

* Alibaba HPN (Qian et al., SIGCOMM 2024, section 2.3): 0.057% of NIC-ToR links fail a
  month; about 0.051% of ToR switches have critical errors and crashes a month.
* Microsoft (Singh et al., "Surviving switch failures in cloud datacenters", SIGCOMM CCR
  51(2), 2021): of 180,000+ switches 98% run 3 months uninterrupted (every cause).
* Meta RSC-1/RSC-2 (Kokolis et al., HPCA 2025, via F12/F13): a 1,024-GPU A100 job fails
  about every 8 h, a 16,384-GPU one every 1.8 h (every cause, not only hardware).
"""

from __future__ import annotations

import json
import math

import pytest

from netmodel.study.reliability_catalog import catalog
from tests.netmodel.cli_helpers import run_cli

MONTH_H = 730.5            # 365.25 x 24 / 12
QUARTER_H = 3 * MONTH_H
HPN_LINK_MONTH = 5.7e-4    # share of NIC-ToR links failing a month
HPN_TOR_MONTH = 5.1e-4     # share of ToR switches with critical errors / crashes a month
MSFT_QUARTER = 0.02        # share of switches failing within 3 months, every cause


def _rates():
    return catalog().rates("H100-SXM")   # per second


def test_a_nic_tor_link_fails_2_1x_as_often_as_hpn_reports():
    r = {k: v * 3600 for k, v in _rates().items()}
    link = r["nic"] + 2 * r["transceiver"]          # a NIC and a transceiver at each end
    assert link == pytest.approx(1.65e-6, rel=1e-9)
    model = link * MONTH_H
    assert model == pytest.approx(1.2053e-3, rel=1e-4)
    assert model / HPN_LINK_MONTH == pytest.approx(2.115, abs=1e-3)


def test_a_tor_fails_4_8x_as_often_as_hpn_and_0_36x_as_microsoft_reports():
    leaf = _rates()["leaf"] * 3600
    assert leaf * MONTH_H / HPN_TOR_MONTH == pytest.approx(4.770, abs=1e-3)
    quarter = 1 - math.exp(-leaf * QUARTER_H)
    assert quarter == pytest.approx(7.271e-3, rel=1e-3)
    assert quarter / MSFT_QUARTER == pytest.approx(0.3636, abs=1e-3)


def test_the_plausible_ranges_hold_the_held_out_rates():
    cat = catalog()
    per_transceiver = (HPN_LINK_MONTH / MONTH_H - cat.classes["nic"].rate_per_hour) / 2
    assert per_transceiver == pytest.approx(2.25e-7, rel=1e-2)
    lo, hi = cat.classes["transceiver"].rate_range
    assert lo <= per_transceiver * 1.03 and hi >= 2.0e-5   # 2.3e-7 (two figures)
    tor = HPN_TOR_MONTH / MONTH_H
    every_cause = -math.log(1 - MSFT_QUARTER) / QUARTER_H
    assert (tor, every_cause) == pytest.approx((6.98e-7, 9.22e-6), rel=1e-3)
    for cls in ("leaf", "spine", "core"):
        lo, hi = cat.classes[cls].rate_range
        assert lo <= tor * 1.01 and hi >= every_cause * 0.99   # two figures in the file
        assert lo < cat.classes[cls].rate_per_hour < hi


@pytest.mark.parametrize("gpus, published_h, model_h", [(1024, 8.0, 55.9), (16384, 1.8, 3.49)])
def test_an_rsc_job_of_a100s_fails_less_often_in_the_model(gpus, published_h, model_h):
    # every failure of any part of the cluster stops a job on all of it
    r = run_cli(["blast-radius", "--scenario", "h100-dgx@A100-SXM-80GB", "--model",
                 "Llama-3-70B", "--cluster-gpus", str(gpus), "--json", "--no-plot"])
    assert r.exit_code == 0, r.output
    per_year = sum(row["events_per_year"] for row in json.loads(r.output)["rows"])
    mttf = 365.25 * 24 / per_year
    assert mttf == pytest.approx(model_h, rel=2e-3)
    assert mttf > published_h
