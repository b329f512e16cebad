"""compare's circuit-reconfiguration line says a time and its circuits once for every
OCS row that shares them: under the study's five Lites it repeated 'lite-ocs@X 10 ms
(circuits: ring at 8 GPUs, torus at 16, 24, 32 GPUs)' five times over, twice (the fabric
comparison and the paper's assumption), about 500 characters a line."""

from __future__ import annotations

LITES = ["Lite", "Lite+NetBW", "Lite+MemBW", "Lite+BW", "Lite+BW+FLOPS"]


def _line(models, phases):
    from netmodel.study.compare import run_compare

    r = run_compare(models, ["lite-ocs"], phases, gpus=LITES, baseline=None)
    return next(x for x in r.table().splitlines() if x.startswith("circuit reconfiguration"))


def test_one_text_for_every_lite_that_shares_it():
    # Llama-3-70B decode: every Lite at TP 16 (the study's table), 16 = 4 x 4 a torus
    # (docs/study.md: circuits = "best", the faster of a ring and a torus), set in the
    # OCS's 10 ms (netmodel/data/scenarios/lite-ocs.toml)
    assert _line(["Llama-3-70B"], ["decode"]) == (
        "circuit reconfiguration (once per re-provisioning, not per token): lite-ocs@Lite, "
        "lite-ocs@Lite+NetBW, lite-ocs@Lite+MemBW, lite-ocs@Lite+BW and "
        "lite-ocs@Lite+BW+FLOPS 10 ms each (circuits: torus at 16 GPUs)")


def test_a_lone_row_keeps_its_plain_text():
    from netmodel.study.compare import run_compare

    r = run_compare(["Llama-3-70B"], ["lite-ocs"], ["decode"], gpus=["Lite"], baseline=None)
    line = next(x for x in r.table().splitlines() if x.startswith("circuit reconfiguration"))
    assert line.endswith(": lite-ocs@Lite 10 ms (circuits: torus at 16 GPUs)")
