"""`infer` and `search` with `--fabric` on an optical-circuit-switch fabric without circuits
(`--fabric lite-ocs`, which `--help` offers: a scenario's fabric; or an `ocs` spec without
`logical=`) refuse it up front, saying how to set the circuits.

Found by the audit of helper 220: `infer --model Llama-3-70B --tp 16 --batch 165 --fabric
lite-ocs` said "collective model returned a negative or non-finite time for all-gather
among 16 GPUs (inf s); it must give seconds >= 0 (...)", naming the LM head's all-gather
and a model's contract instead of the fabric: every group on such a fabric is cut apart
(`collective --fabric lite-ocs` prints CUT and the logical= advice). `--scenario lite-ocs`
sets each instance's circuits, as compare does (TBT 45.92 ms at that configuration).
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from netmodel.cli.main import cli


def _run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], prog_name="netmodel")


@pytest.mark.parametrize("command, fabric, says", [
    (("infer", "--tp", 8, "--batch", 8), "lite-ocs", "give --scenario lite-ocs"),
    (("search", "--max-batch", 8), "lite-ocs", "give --scenario lite-ocs"),
    (("infer", "--tp", 8, "--batch", 8), "ocs:gpus=16,gpu=Lite",
     "set them in the spec: ocs:gpus=16,gpu=Lite,logical=ring"),
])
def test_refused_in_one_line_with_the_way_out(command, fabric, says):
    r = _run(command[0], "--model", "Llama-3-8B", *command[1:], "--fabric", fabric)
    assert r.exit_code == 2, r.output
    assert len(r.output.strip().splitlines()) == 1
    assert "is an OCS fabric with no circuits set" in r.output and says in r.output
    assert "non-finite" not in r.output


def test_the_ways_out_run():
    spec = _run("infer", "--model", "Llama-3-8B", "--tp", 8, "--batch", 8, "--fabric",
                "ocs:gpus=16,gpu=Lite,logical=ring", "--json")
    assert spec.exit_code == 0, spec.output
    scen = _run("infer", "--model", "Llama-3-70B", "--tp", 16, "--batch", 165,
                "--scenario", "lite-ocs", "--json")
    assert scen.exit_code == 0, scen.output
    # the roofline at that configuration under the scenario's own collective model (the
    # circuits set for each group size), as compare charges it (45.92 ms when written;
    # h356: was that pin)
    from compute.evaluate_one import evaluate
    from netmodel.study.scenario_collectives import ScenarioCollectives

    want = evaluate("Llama-3-70B", "Lite", 16, 165, "decode",
                    comm=ScenarioCollectives("lite-ocs")).latency
    assert 0 < want < float("inf")
    assert json.loads(scen.output)["latency_s"] == pytest.approx(want, rel=1e-12)
