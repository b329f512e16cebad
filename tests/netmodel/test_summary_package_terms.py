"""The study's part-5 bullet on the package per good SM names what makes a Lite package
dearer per SM, from the package's own terms: it said '(per-package HBM, packaging and
test)', a fixed string, while the HBM is priced pro rata (a quarter of the H100's $1,400
for a quarter of its capacity and bandwidth) and costs the same per SM."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from compute.yield_model import package_cost
from netmodel.study.summary_costs import _package_terms, cost_section


def test_package_terms_per_sm_by_hand():
    # H100 (132 SMs): HBM $1,400, packaging $750, test $920 (economics.toml, P21). A Lite
    # (33 SMs, a quarter of GH100): HBM 1,400 / 4 = $350; packaging $100 fixed + $650 x the
    # interposer's share, 1.25 (203.5 + 6 x 110 / 4) / 1.25 (814 + 6 x 110) = 1/4: $262.5;
    # test 25% per package + 75% by logic area: 230 + 690 / 4 = $402.5
    h, lite = package_cost("H100-SXM"), package_cost("Lite")
    assert (lite.hbm, lite.packaging, lite.test) == pytest.approx((350.0, 262.5, 402.5))
    assert (h.hbm, h.packaging, h.test) == pytest.approx((1400.0, 750.0, 920.0))
    # per SM, Lite / H100: 350/33 : 1400/132 = 1.00; 262.5 x 4 / 750 = 1.40; 402.5 x 4 / 920
    # = 1.75
    assert _package_terms(lite, h) == "HBM 1.00x, packaging 1.40x, test and assembly 1.75x"


def test_bullet_names_the_terms_not_per_package_hbm():
    def row(scenario, gpu):
        return SimpleNamespace(scenario=scenario, gpu=gpu, model="m", phase="decode",
                               tokens_per_s_per_w=1.0, usd_per_mtoken=1.0,
                               network_share_capex=0.3, network_share_power=0.1)

    marks = {g: package_cost(g) for g in ("H100-SXM", "Lite")}
    cost = SimpleNamespace(summaries=[row("base@H100-SXM", "H100-SXM"), row("a@Lite", "Lite")],
                           marks=marks, notes={})
    fab = SimpleNamespace(scenarios=[], baseline="base@H100-SXM")
    text = "\n".join(cost_section(cost, fab))
    # 1,076.24 / 33 over 3,379.44 / 132 = 1.27; the logic 1.856 / 2.344 = 0.79
    assert ("- **Per good SM**, a Lite die costs 0.79x an H100 die (yield falls with area) "
            "and a Lite package 1.27x an H100 package (per SM: HBM 1.00x, packaging 1.40x, "
            "test and assembly 1.75x).") in text
    assert "per-package HBM" not in text
