"""A NIC dearer or hungrier than the host that holds it is refused whatever the fabric (h469).

``host_cost_per_h100`` ($4,001) and ``host_power_per_h100`` (535 W) hold one NIC a GPU
(``nic_price`` $1,599, ``nic_power`` 24.9 W; compute/data/economics.toml), so a host priced
below its NIC contradicts the inputs. The check ran only where a GPU of the fabric had no
NIC; since bd8e28b every Lite fabric on co-packaged optics has none, so
``netmodel sweep --scenarios h100-dgx,lite-flat --param cost.host_cost_per_h100=0,...``
was refused as a whole while the same sweep of h100-dgx alone ran, printing figures for a
DGX host cheaper than the ConnectX-7s its price includes. Now one rule for every scenario,
and the refusal says how to price cheaper hosts (lower nic_price with them).
"""

from __future__ import annotations

import pytest

from compute.errors import UserError
from netmodel.study.cost import cost_summary

MODEL = "Llama-3-70B"
SWEEP = ["sweep", "--models", MODEL, "--phase", "decode"]


@pytest.mark.parametrize("scenario", ["h100-dgx", "lite-direct", "lite-flat"])
def test_a_host_cheaper_than_its_nic_is_refused_on_every_fabric(scenario):
    # h100-dgx and lite-direct hold a NIC a GPU (nothing taken off): refused as lite-flat
    with pytest.raises(UserError, match=r"^nic_price \(1,599 USD\) must be at most "
                       r"host_cost_per_h100 \(1,000 USD\): .* lower nic_price with it"):
        cost_summary(scenario, MODEL, "decode", host_cost_per_h100=1000.0)
    with pytest.raises(UserError, match=r"^nic_power \(24.9 W\) must be at most "
                       r"host_power_per_h100 \(10 W\)"):
        cost_summary(scenario, MODEL, "decode", host_power_per_h100=10.0)


def test_the_bound_itself_and_the_remedy_run():
    # at host = NIC a NIC-less Lite's host is free of both: 128 x (1599 - 1599) x 0.25 = 0
    flat = cost_summary("lite-flat", MODEL, "decode", host_cost_per_h100=1599.0)
    assert flat.capex_host == 0.0
    dgx = cost_summary("h100-dgx", MODEL, "decode", host_cost_per_h100=1599.0)
    assert dgx.capex_host == pytest.approx(32 * 1599)
    # the remedy: a cheaper NIC with the cheaper host; nic_price 0 charges the whole host
    cheap = cost_summary("lite-flat", MODEL, "decode", host_cost_per_h100=1000.0, nic_price=0.0)
    assert cheap.capex_host == pytest.approx(128 * 1000 * 0.25)
    # no host power: nothing to take a NIC's power off, as before
    assert cost_summary("h100-dgx", MODEL, "decode", host_power_per_h100=0.0).power_host == 0


def test_a_sweep_is_refused_alike_whichever_scenarios_it_holds():
    # h482: a sweep leaves the contradicting points unpriced (noted) and runs on; refused
    # whole, in one line, where no point is priced; alike whichever scenarios it holds
    from tests.netmodel.cli_helpers import one_line_error, run_cli

    param = ["--param", "cost.host_cost_per_h100=0,1000USD"]
    alone = one_line_error(run_cli(SWEEP + ["--scenario", "h100-dgx"] + param),
                           "nic_price (1,599 USD) must be at most host_cost_per_h100 (0 USD)")
    both = one_line_error(run_cli(SWEEP + ["--scenario", "h100-dgx", "--scenario", "lite-flat"]
                                  + param), "must be at most host_cost_per_h100")
    assert alone == both
