"""A ``cost.*`` sweep with no priced point names what left each point unpriced
(netmodel.study.sweep_pricing).

Before, the refusal was the first NIC-in-host line of the sweep's notes whatever else left
the other points unpriced: a point that serves no tokens (``cost.utilization=0``), a
fabric the builder refuses, or a GPU with no price (no die data), which a ``cost.*`` sweep
refuses at any other point, were not named; a sweep of ``cost.utilization=0`` alone printed
a table of ``-`` with exit 0 and no word why.
"""

from __future__ import annotations

from dataclasses import replace

from netmodel.study.sweep_pricing import unpriced_refusal
from netmodel.study.sweep_result import SweepParam, _example
from tests.netmodel.cli_helpers import one_line_error, run_cli

SWEEP = ["sweep", "--models", "Llama-3-8B", "--phase", "decode", "--max-batch", "8", "-q",
         "--no-plot"]
NIC_0 = "nic_price (1,599 USD) must be at most host_cost_per_h100 (0 USD)"
IDLE = "cost.utilization=0 serves no tokens: no cost per token"
# the H100-SXM's figures without its price (no die table), as test_unpriced_power_h242's
COPY = '''[gpu."H100-copy"]
sms = 132
bf16_dense_TFLOPs = 989.4
fp8_dense_TFLOPs = 1978.9
hbm_capacity_GB = 85.520809984
hbm_bandwidth_TBps = 3.35
scaleup_GBps_per_direction = 450
scaleout_Gbps = 400
tdp_W = 700
max_instance = 8
nvlinks = 18
source = "test: compute/data/gpus.toml's H100-SXM figures, without its price"
'''


def test_a_nic_point_and_an_idle_point_are_each_named():
    line = one_line_error(run_cli([*SWEEP, "--scenarios", "h100-dgx", "--param",
                                   "cost.host_cost_per_h100=0,4001USD", "--param",
                                   "cost.utilization=0"]))
    assert line.startswith("error: no point of the sweep is priced (USD per million tokens): ")
    assert f"at cost.host_cost_per_h100=0USD, cost.utilization=0: {NIC_0}" in line
    # before: only the NIC line, though $4,001 holds the NIC and the point idles
    assert f"at cost.host_cost_per_h100=4001USD, cost.utilization=0: {IDLE}" in line


def test_a_nic_point_and_a_fabric_refused_point_are_each_named():
    line = one_line_error(run_cli([*SWEEP, "--scenarios", "lite-ocs", "--param",
                                   "fabric.gpus=8,1000", "--param",
                                   "cost.host_cost_per_h100=0"]))
    assert f"at fabric.gpus=8, cost.host_cost_per_h100=0USD: {NIC_0}" in line
    assert ("at fabric.gpus=1000, cost.host_cost_per_h100=0USD: lite-ocs@Lite: fabric "
            "refused: ocs: gpus 1000 exceeds ocs_ports 136") in line


def test_a_sweep_that_serves_no_tokens_is_refused_not_a_table_of_dashes():
    # before: exit 0, every point '-' and no note
    line = one_line_error(run_cli([*SWEEP, "--scenarios", "lite-flat", "--param",
                                   "cost.utilization=0"]))
    assert line.endswith(f"no point of the sweep is priced (USD per million tokens): at "
                         f"cost.utilization=0: {IDLE} (its power stands)")


def test_an_idle_point_beside_priced_ones_is_noted():
    r = run_cli([*SWEEP, "--scenarios", "lite-flat", "--param", "cost.utilization=0,50%"])
    assert r.exit_code == 0, r.output
    row = next(ln for ln in r.output.splitlines() if ln.startswith("lite-flat@Lite"))
    assert row.split()[1] == "-" and float(row.split()[2]) > 0
    assert f"note: cost not computed at cost.utilization=0: {IDLE} (its power stands)" \
        in r.output.splitlines()


def test_a_gpu_without_a_price_is_named_where_every_point_is_nic_refused(tmp_path):
    # a cost.* sweep refuses a GPU it cannot price (test_unpriced_power_h242); where the
    # NIC check left every point before the price, the NIC alone was named
    path = tmp_path / "copy.toml"
    path.write_text(COPY)
    line = one_line_error(run_cli([*SWEEP, "--scenarios", f"h100-dgx@{path}", "--param",
                                   "cost.host_cost_per_h100=0,1000USD"]),
                          "no die data for GPU 'H100-copy'")
    assert "nic_price" not in line


def test_a_search_infeasible_point_is_named_with_its_scenario_model_and_phase():
    r = _example([("a", [1.0, 2.0])], xs=(0.0, 1000.0))
    param = SweepParam("cost.host_cost_per_h100", (0.0, 1000.0))
    rows = (replace(r.rows[0], usd_per_mtoken=None),
            replace(r.rows[1], feasible=False, reason="TBT 0.06 s over the limit 0.05 s"))
    notes = {"cost not computed at cost.host_cost_per_h100=0": "NIC"}
    assert unpriced_refusal(rows, (param,), notes) == (
        "no point of the sweep is priced (USD per million tokens): "
        "at cost.host_cost_per_h100=0USD: NIC; "
        "at cost.host_cost_per_h100=1000USD: a, M decode: TBT 0.06 s over the limit 0.05 s")
    # a point priced, or nothing the cost model refused (every point infeasible): no refusal
    priced = (rows[0], replace(r.rows[1], usd_per_mtoken=0.5))
    assert unpriced_refusal(priced, (param,), notes) is None
    assert unpriced_refusal(rows, (param,), {}) is None
