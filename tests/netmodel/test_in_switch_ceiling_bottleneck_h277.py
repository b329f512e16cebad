"""Where the in-switch reduction ceiling binds, the cost names it, not a link, as the
bottleneck (h277; as h264 did for NCCL's tree cap).

A GB200 NVL72 rack, all-reduce in the switch (NVLS) on its 72 GPUs: the two in-switch phases
pipeline, and together they load a GPU's NVLink (900 GB/s a direction) with ``(1 + 1/72) n``
each way, at the scale-up efficiency 0.802 and NVLS's factor 0.74
(collective_generations.toml, Blackwell): ``(73/72) / (900e9 x 0.802 x 0.74)`` s/B of ``n``.
The ceiling (0.933 x 900 GB/s = 839.7 GB/s of busbw, the published 840 GB/s on 72 GPUs)
holds each phase to ``(71/72) / 839.7e9``, both to twice that. The ceiling binds, by
``2 (71/72) x 0.802 x 0.74 / ((73/72) x 0.933)`` = 1.2373x.

8 H100 on one NVSwitch: links ``(9/8) / (450e9 x 0.824 x 0.85)``, ceiling ``2 (7/8) /
(1.067 x 450e9)``: it binds by ``1.75 x 0.824 x 0.85 / (1.125 x 1.067)`` = 1.0211x.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from netmodel.cli.main import cli
from netmodel.collectives.model import FabricCostModel
from topologies import build

AR = "all-reduce"
RACK = "nvl72:gpu=GB200-NVL72"
SLOW_72 = 2 * (71 / 72) * 0.802 * 0.74 / ((73 / 72) * 0.933)
SLOW_8 = 1.75 * 0.824 * 0.85 / (1.125 * 1.067)


def test_the_nvl72_rack_names_the_ceiling_not_a_link():
    r = FabricCostModel(build(RACK)).cost(AR, 2.0 ** 33, 72, algorithm="in-network")
    top = r.in_switch_ceiling
    assert (top.ceiling, top.link_rate) == (0.933, pytest.approx(900e9, rel=1e-12))
    assert top.busbw == pytest.approx(839.7e9, rel=1e-12)
    assert top.slowdown == pytest.approx(SLOW_72, rel=1e-9)             # 1.2373
    assert r.bottleneck == () and r.tree_cap is None
    for s in r.steps:
        assert s.in_switch_ceiling == top and s.bottleneck == ()
    d = r.as_dict()
    assert d["bottleneck"] == [] and d["in_switch_ceiling"]["ceiling"] == 0.933
    # the steady busbw sits at the ceiling, less the start-up's share at 8 GiB
    assert 0.98 * 839.7e9 < r.busbw < 839.7e9


def test_eight_h100_name_the_ceiling_with_its_figure():
    out = CliRunner().invoke(cli, ["collective", AR, "--fabric",
                                   "single-switch:n=8,gpu=H100-SXM", "--size", "4GiB",
                                   "--algorithm", "in-network"])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    heads = [x for x in lines if x.startswith("bottleneck:")]
    # the ceiling sets the time the 4 GiB stream in: 2 (7/8) x 4 GiB at 480.15 GB/s
    assert 2 ** 32 * 1.75 / (1.067 * 450e9) == pytest.approx(15.654e-3, rel=1e-4)
    assert len(heads) == 1 and heads[0].startswith(
        "bottleneck: the in-switch reduction ceiling, busbw at most 1.067 x 450 GB/s (a GPU's "
        "NVLink rate) = 480.1 GB/s (the highest published NVLS busbw of the generation) "
        "while the in-switch phases stream, 15.65 ms of the ")
    assert f"(the links alone: {SLOW_8:.3g}x as fast); the other " in heads[0]
    steps = [x for x in lines if x.lstrip().startswith("in-switch ")]
    assert len(steps) == 2 and all(x.endswith("in-switch ceiling 480.1 GB/s") for x in steps)
    js = CliRunner().invoke(cli, ["collective", AR, "--fabric",
                                  "single-switch:n=8,gpu=H100-SXM", "--size", "4GiB",
                                  "--algorithm", "in-network", "--json"])
    d = json.loads(js.output)
    assert d["bottleneck"] == []
    assert d["in_switch_ceiling"]["slowdown"] == pytest.approx(SLOW_8, rel=1e-9)


def test_where_the_links_bind_no_ceiling_is_named():
    # ring all-reduce reduces in no switch: its link is named, no ceiling
    r = FabricCostModel(build(RACK)).cost(AR, 2.0 ** 33, 72, algorithm="ring")
    assert r.in_switch_ceiling is None and r.bottleneck
    assert all(s.in_switch_ceiling is None for s in r.steps)
