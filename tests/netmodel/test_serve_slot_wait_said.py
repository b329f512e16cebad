"""How serve's decode slot wait was found, said in its table and JSON: 0 with nothing
simulated where no hold can bring more than the slots, a simulation whose warm-up the
budget cut (its standard error an underestimate), and a TTFT at the sized pools' loads
over the SLO the configuration met at the stated load (exit status 3)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import netmodel.study.serving_queue as serving_queue
from netmodel.cli.main import NOTHING_FEASIBLE, LazyGroup
from netmodel.cli.serving import serve as serve_command
from netmodel.study.serving import serve, with_load, with_rate
from netmodel.study.serving_sim import SlotWait

CLI = LazyGroup(name="netmodel", commands={"serve": serve_command})


def _run(*args):
    return CliRunner().invoke(CLI, ["serve", "--model", "Llama-3-8B", "--scenario", "h100-dgx",
                                    *args])


def test_no_hold_brings_more_than_the_slots_is_said_not_simulated():
    """2 requests/s at 0.3: one prefill instance (batch 44) feeds one decode instance of 306
    slots, which a hold cannot overfill: 0 exactly, nothing simulated (the table said
    '0.00 ms for a decode slot (simulated, standard error 0.00 ms)')."""
    c = _run("--load", "0.3", "--rate", "2")
    assert c.exit_code == 0, c.output
    assert ("+ 0 ms for a decode slot (no hold can bring more than its 306 slots) + "
            in c.output)
    assert "simulated" not in c.output
    d = json.loads(_run("--load", "0.3", "--rate", "2", "--json").output)
    assert (d["decode_wait_s"], d["decode_wait_se_s"], d["decode_wait_model"]) == (
        0.0, None, "none waits")
    assert d["ttft_within_slo"] is True


def test_a_warm_up_cut_by_the_budget_is_said():
    """134.5 requests/s at 0.99, batches up to 4: one prefill instance at 0.566 feeds two
    decode instances near their capacity; 16 relaxation times of the decode queue pass the
    budget, so less than four are dropped and the standard error understates the error."""
    args = ("--load", "0.99", "--rate", "134.5", "--max-batch", "4")
    d = json.loads(_run(*args, "--json").output)
    assert d["decode_wait_model"] == "simulated, cut by the budget"
    assert (d["prefill_instances"], d["decode_instances"]) == (1, 2)
    assert d["decode_wait_s"] > 20 * d["decode_wait_se_s"] > 0
    c = _run(*args)
    assert c.exit_code == 0, c.output
    assert (f"{d['decode_wait_s'] * 1e3:.2f} ms for a decode slot (simulated, standard error "
            f"{d['decode_wait_se_s'] * 1e3:.2f} ms, cut by the budget: an underestimate)"
            in c.output)


def test_a_ttft_over_the_slo_at_the_sized_pools_is_said(monkeypatch):
    """No case measured has the simulated wait at the sized pools' loads push the TTFT past
    the SLO the configuration met at the stated load (M^X/D/c there waited more), so a
    simulation made to answer 1 s stands in: Llama-3-8B at 20 requests/s at 0.3, one
    prefill and one decode instance, a TTFT 1 s more than the steps and the prefill wait,
    over 1000 ms."""
    monkeypatch.setattr(serving_queue, "pools_slot_wait", lambda *a: SlotWait(1.0, 1e-3))
    r = serve("Llama-3-8B", "h100-dgx", with_load(with_rate("coding", 20.0), 0.3))
    assert r.feasible and r.decode_wait_s == 1.0 and r.ttft_s > 1.0
    assert r.ttft_within_slo is False
    assert json.loads(r.to_json())["ttft_within_slo"] is False
    assert ("(SLO 1000 ms: NOT met, the configuration was chosen to meet it at load 0.3; "
            "this is the sized pools' TTFT at their loads, the decode slot's wait simulated)"
            in r.table())
    c = _run("--load", "0.3", "--rate", "20")
    assert c.exit_code == NOTHING_FEASIBLE, c.output
    assert (f"TTFT SLO not met: {r.ttft_s * 1e3:.2f} ms > 1000 ms; the configuration was "
            f"chosen to meet it at load 0.3" in c.stderr)
    assert "NOT met" in c.stdout   # the table is still printed


@pytest.mark.parametrize("load", ["0.3", None])
def test_a_ttft_within_the_slo_is_said_so(load):
    d = json.loads(_run(*(() if load is None else ("--load", load)), "--json").output)
    assert d["ttft_within_slo"] is True and d["ttft_s"] <= d["ttft_limit_s"]
    assert d["decode_wait_model"] == (None if load is None else "M^X/D/c")
