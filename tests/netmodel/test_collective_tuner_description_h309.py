"""One description of a collective model's routing (h309): ``infer``'s ``collectives`` (a
scenario's or a fabric's) and ``collective``/``costs``' (CollectiveSetup.describe) are
built by one function, every routing key always present; infer's left ``tuner`` out unless
a tuner was set."""

from __future__ import annotations

import json

import pytest

from tests.netmodel.cli_helpers import run_cli

ROUTING = ("placement", "algorithm", "algorithms", "tuner", "instances")
INFER = ["--model", "Llama-3-8B", "--tp", "8", "--batch", "8", "--phase", "decode", "--json"]


@pytest.mark.parametrize("where, model", [
    (["--scenario", "lite-flat"], "scenario"),
    (["--fabric", "single-switch:n=8"], "fabric"),
])
def test_infer_and_collective_describe_routing_alike(where, model):
    r = run_cli(["infer", *where, *INFER])
    assert r.exit_code == 0, r.output
    desc = json.loads(r.output)["collectives"]
    assert desc["model"] == model
    # lite-flat and a fabric route contiguous, auto over every algorithm, NCCL's own
    # tuner, one instance alone
    assert {k: desc[k] for k in ROUTING} == {
        "placement": "contiguous", "algorithm": "auto", "algorithms": "all",
        "tuner": "none", "instances": "alone"}
    r = run_cli(["collective", "all-reduce", *where, "--group", "8", "--json"])
    assert r.exit_code == 0, r.output
    coll = json.loads(r.output)["collectives"]
    assert {k: coll[k] for k in ROUTING} == {k: desc[k] for k in ROUTING}
