"""A collective among one GPU does not run: at TP 1 (and in an attention group of one GPU)
no stage moves collective bytes or is network-bound, and evaluate, the grid and
`netmodel infer --json` agree."""

import json

from click.testing import CliRunner

from compute.evaluate_one import evaluate
from compute.roofline import evaluate_grid
from netmodel.cli.main import cli

# Llama-3-8B: hidden 4096, bf16 activations (2 B); decode batch 8 carries 8 tokens
_AR_BYTES = 8 * 4096 * 2   # 65,536 B: one all-reduce of n x hidden at TP > 1


def _stages(r):
    return [(s.name, s.collective, s.collective_bytes, s.bound) for s in r.stages]


def test_tp1_lists_no_collective_evaluate_and_grid():
    one = evaluate("Llama-3-8B", "H100-SXM", tp=1, batch=8, phase="decode")
    names = [s.name for s in one.stages]
    assert names == ["embedding", "qkv", "attention", "out_proj", "mlp_up", "mlp_down",
                     "lm_head"]
    assert all(s.collective_bytes == 0.0 and s.collective == "" and s.bound != "network"
               for s in one.stages)
    g = evaluate_grid("Llama-3-8B", "H100-SXM", [1, 2], [8], "decode")
    assert _stages(g.result(0, 0)) == _stages(one)
    assert g.result(0, 0).latency == one.latency


def test_tp2_keeps_its_all_reduces():
    two = evaluate("Llama-3-8B", "H100-SXM", tp=2, batch=8, phase="decode")
    by = {s.name: s for s in two.stages}
    assert by["allreduce_attn"].count == by["allreduce_mlp"].count == 32
    assert by["allreduce_mlp"].collective_bytes == _AR_BYTES
    assert by["embedding"].collective_bytes == _AR_BYTES
    assert by["allreduce_attn"].bound == "network"
    # lm_head: an all-gather of the batch's logits, 8 x 128,256 vocabulary x 2 B
    assert by["lm_head"].collective_bytes == 8 * 128256 * 2


def test_attention_group_of_one_gpu_moves_no_embedding_bytes():
    # TP 8 x attention DP 8: each attention group is one GPU, so the embedding's all-reduce
    # and the LM head's all-gather do not run; the expert all-to-alls among 8 do
    r = evaluate("Mixtral-8x7B", "H100-SXM", tp=8, ep=8, attention_dp=8, batch=8,
                 phase="decode")
    by = {s.name: s for s in r.stages}
    assert by["embedding"].collective_bytes == by["lm_head"].collective_bytes == 0.0
    assert by["embedding"].collective == by["lm_head"].collective == ""
    assert by["moe_dispatch"].collective_bytes > 0 and by["moe_dispatch"].bound == "network"


def test_infer_json_tp1():
    r = CliRunner().invoke(cli, ["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM",
                                 "--tp", "1", "--batch", "8", "--json"])
    assert r.exit_code == 0, r.output
    stages = json.loads(r.output)["stages"]
    assert [s["stage"] for s in stages if s["collective"]] == []
    assert sum(s["collective_bytes"] for s in stages) == 0.0
    assert "network" not in {s["bound"] for s in stages}
    text = CliRunner().invoke(cli, ["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM",
                                    "--tp", "1", "--batch", "8"]).output
    assert "allreduce" not in text and "network\n" not in text
