"""The in-switch reduction ceiling is named where it sets time, and said on what it bounds.

lite-groups (8 H100-SXM on one NVSwitch, each as 4 Lite GPUs: 32 Lite of 112.5 GB/s a
direction), all-reduce in the switch (NVLS) on 16 of them. Each phase's links: a GPU sends
its whole buffer up (reduce-scatter) and gets the whole result down (all-gather), at the
scale-up efficiency 0.824 and NVLS's factor 0.85 (Hopper, collective_generations.toml):
``1 / (112.5e9 x 0.824 x 0.85)`` s/B each. The ceiling (1.067 x 112.5 GB/s = 120 GB/s of
busbw) holds a phase to ``(15/16) / 120.04e9`` s/B, below its links' time: alone, the
links set each phase. Pipelined, the two phases share the links and the switch, and the
ceiling holds both to ``2 (15/16) / 120.04e9`` s/B, above the links' (the slowdown 1.16x).

Below the pipeline's slice the phases run one after the other and nothing of the ceiling
sets their time; it was named as the bottleneck there anyway (32 MiB). At 64 MiB it sets
the streamed part, 1.048 ms of 1.401 ms: the headline said 'busbw at most 120 GB/s' beside
'busbw 89.81 GB/s' without saying the rest is start-up latency and pipeline fill.
"""

import pytest
from click.testing import CliRunner

from netmodel.cli.main import cli
from netmodel.study.fabric_ref import fabric_collectives

AR = "all-reduce"
LINK = 1 / (112.5e9 * 0.824 * 0.85)          # s/B of a phase on its links
CEIL = 2 * (15 / 16) / (1.067 * 112.5e9)     # s/B of both phases at the ceiling


@pytest.fixture(scope="module")
def model():
    return fabric_collectives("lite-groups").model


def test_below_the_slice_the_links_are_named(model):
    r = model.cost(AR, 2.0 ** 25, 16, algorithm="in-network")
    # the phases one after the other, each at its links' rate
    assert [s.serialization for s in r.steps] == pytest.approx([2 ** 25 * LINK] * 2, rel=1e-9)
    assert r.time == pytest.approx(sum(s.time for s in r.steps), rel=1e-12)
    assert r.in_switch_ceiling is None and all(s.in_switch_ceiling is None for s in r.steps)
    assert r.bottleneck                       # a GPU's link into the switch
    out = CliRunner().invoke(cli, ["collective", AR, "--fabric", "lite-groups", "--group", "16",
                                   "--size", "32MiB"]).output
    assert "ceiling" not in out


def test_where_it_binds_it_says_what_it_bounds(model):
    n = 2.0 ** 26
    r = model.cost(AR, n, 16, algorithm="in-network")
    top = r.in_switch_ceiling
    assert top is not None and top.per_byte == pytest.approx(CEIL, rel=1e-12)
    streamed = top.per_byte * n
    assert streamed == pytest.approx(1.0483e-3, rel=1e-4)
    # the busbw over the streamed part is the ceiling's: the two numbers reconcile
    assert r.busbw * r.time / streamed == pytest.approx(top.busbw, rel=1e-9)
    assert top.slowdown > 1
    # (auto there splits the Lites' pairs over cable and switch: netmodel.collectives.
    # route_policies; the in-switch reduction is named)
    out = CliRunner().invoke(cli, ["collective", AR, "--fabric", "lite-groups", "--group", "16",
                                   "--size", "64MiB", "--algorithm", "in-network"]).output
    head = [x for x in out.splitlines() if x.startswith("bottleneck:")]
    assert len(head) == 1 and "= 120 GB/s" in head[0]
    assert (f"while the in-switch phases stream, {streamed * 1e3:.4g} ms of the "
            f"{r.time * 1e3:.4g} ms") in head[0]
    assert (f"the other {(r.time - streamed) * 1e6:.4g} us (start-up latency, pipeline fill "
            f"and any step run apart from those phases) it does not set: busbw above is over "
            f"the whole time") in head[0]
