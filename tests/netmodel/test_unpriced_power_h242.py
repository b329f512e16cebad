"""A GPU without a price still has its power (h242, item 5): compare and sweep left
tokens/s/W and tokens/J blank ('-') for a GPU file without a die table, though neither
needs a price: the GPUs' draw (from their TDP and load), the hosts' and the network's.
Now they are computed; $/Mtok and the network's share of capex stay None, and the
not_computed note says why and what stands.

The check: a GPU file entry with the H100-SXM's figures but no die table serves as the
H100 does (same roofline, collectives, TDP, host power), so its power figures must equal
the catalog H100's to the bit, while its price-fed ones are None."""

from __future__ import annotations

import json

from netmodel.study.compare import run_compare
from netmodel.study.sweep import run_sweep
from tests.netmodel.cli_helpers import run_cli

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
POWER = ("tokens_per_s_per_w", "tokens_per_j", "network_share_power")
PRICED = ("usd_per_mtoken", "network_share_capex")


def _copy(tmp_path):
    path = tmp_path / "copy.toml"
    path.write_text(COPY)
    return str(path)


def test_compare_gives_an_unpriced_gpu_its_power(tmp_path):
    r = run_compare(["Llama-3-8B"], ["h100-dgx"], ["decode"], gpus=["H100-SXM", _copy(tmp_path)],
                    max_batch=64)
    h100, copy = (next(x for x in r.rows if x.gpu == g) for g in ("H100-SXM", "H100-copy"))
    assert (copy.tp, copy.batch, copy.tokens_per_s) == (h100.tp, h100.batch, h100.tokens_per_s)
    for k in POWER:
        assert getattr(copy, k) == getattr(h100, k) and getattr(h100, k) > 0, k
    assert all(getattr(copy, k) is None and getattr(h100, k) > 0 for k in PRICED)
    note = r.settings["not_computed"]["cost of h100-dgx@H100-copy"]
    assert note.startswith("$/Mtok and the network's share of capex not computed: no die data "
                           "for GPU 'H100-copy'")
    assert note.endswith("tok/s/W and tok/J count its power (GPUs at their TDP, hosts, "
                         "network), which needs no price")
    line = next(x for x in r.table().splitlines() if x.startswith("  h100-dgx@H100-copy"))
    assert line.split()[-2:] == [f"{h100.tokens_per_s_per_w:.3f}", "-"]


def test_sweep_gives_an_unpriced_gpu_its_power(tmp_path):
    r = run_sweep(["h100-dgx"], ["adjust.hop_latency=1us"], ["Llama-3-8B"], ["decode"],
                  gpus=["H100-SXM", _copy(tmp_path)], max_batch=64)
    h100, copy = (next(x for x in r.rows if x.gpu == g) for g in ("H100-SXM", "H100-copy"))
    assert copy.tokens_per_s_per_w == h100.tokens_per_s_per_w > 0
    assert copy.tokens_per_j == h100.tokens_per_j and copy.usd_per_mtoken is None
    assert "cost of h100-dgx@H100-copy" in r.settings["not_computed"]


def test_a_cost_sweep_still_refuses_an_unpriced_gpu(tmp_path):
    # the swept cost value prices the GPU: without a die table there is nothing to sweep
    out = run_cli(["sweep", "--scenarios", f"h100-dgx@{_copy(tmp_path)}", "--models",
                   "Llama-3-8B", "--param", "cost.pue=1.1,1.5", "--max-batch", "8", "-q"])
    assert out.exit_code == 2 and "no die data for GPU 'H100-copy'" in out.output


def test_the_cost_command_still_refuses_an_unpriced_gpu(tmp_path):
    out = run_cli(["cost", "--scenario", f"h100-dgx@{_copy(tmp_path)}", "--model", "Llama-3-8B",
                   "--phase", "decode", "--max-batch", "8", "--json"])
    assert out.exit_code == 2 and "no die data for GPU 'H100-copy'" in out.output
    priced = json.loads(run_cli(["cost", "--scenario", "h100-dgx", "--model", "Llama-3-8B",
                                 "--phase", "decode", "--max-batch", "8", "--json"]).output)
    assert priced["summaries"][0]["usd_per_mtoken"] > 0
