"""infer and search take an EP degree that does not divide the routed experts (redundant
copies, compute.parallel.expert_slots) and say how many copies it holds; the old code
refused it ('EP degree 144 does not divide the 256 experts of DeepSeek-V3')."""

from __future__ import annotations

import json

from click.testing import CliRunner

from netmodel.cli.main import cli


def _run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], prog_name="netmodel")


def test_infer_deepseek_decode_ep144_names_its_redundant_experts():
    args = ("infer", "--model", "DeepSeek-V3", "--gpu", "GB300-NVL72", "--tp", 144, "--ep", 144,
            "--attention-dp", 144, "--batch", 1024, "--phase", "decode")
    r = _run(*args)
    assert r.exit_code == 0, r.output
    assert r.output.startswith("DeepSeek-V3 on 144 x GB300-NVL72 (TP 144 x EP 144 (32 redundant "
                               "experts) x DP-attention 144), decode")
    # 2 slots of 3 x 7,168 x 2,048 fp8 weights a GPU in each of 58 MoE layers among the rest
    assert "weights 22.90 + " in r.output
    doc = json.loads(_run(*args, "--json").output)
    assert doc["redundant_experts"] == 32 and doc["ep"] == 144
    # a dividing EP says nothing new
    plain = json.loads(_run("infer", "--model", "DeepSeek-V3", "--gpu", "GB300-NVL72", "--tp", 128,
                            "--ep", 128, "--attention-dp", 128, "--batch", 1024, "--json").output)
    assert "redundant_experts" not in plain


def test_search_explicit_non_dividing_ep():
    r = _run("search", "--model", "Mixtral-8x7B", "--gpu", "H100-SXM", "--tp", "3,6", "--ep", 3,
             "--attention-dp", 3, "--max-batch", 64)
    assert r.exit_code == 0, r.output
    assert " x EP 3 (1 redundant expert) x DP-attention 3), decode" in r.output


def test_ep_not_dividing_tp_is_still_one_line():
    r = _run("infer", "--model", "Mixtral-8x7B", "--gpu", "H100-SXM", "--tp", 8, "--ep", 3,
             "--batch", 8)
    assert r.exit_code == 2
    assert r.output == ("error: --ep '3': EP degree 3 does not divide TP degree 8 (the experts "
                        "are placed on the 8 GPUs of each pipeline stage); allowed: 1, 2, 4, 8 "
                        "(the divisors of TP 8)\n")
