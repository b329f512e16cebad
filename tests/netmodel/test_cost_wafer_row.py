"""``cost.wafer_price`` (netmodel.study.cost) is economics.toml's ``wafer_price`` row, the
reference (N4-class) node's; a die of another process keeps its own row."""

from __future__ import annotations

from compute.yield_model import package_cost, parameter
from netmodel.study.cost import cost_summary
from netmodel.study.fabric_search import fabric_search


def test_wafer_price_is_the_reference_nodes_row(tmp_path):
    """cost.wafer_price is economics.toml's wafer_price, the N4-class node's: a die of another
    process keeps its own row (the A100's N7 at $9,346), so the default value given explicitly
    changes nothing. The old code priced every process's wafers at it: a margin-priced N7 GPU
    (a GPU file's four-die 'Quad', 46,634 USD) jumped to 49,940 USD at the default value."""
    from tests.compute.test_die_catalog import _SPEC, _die_toml

    path = tmp_path / "quad.toml"
    path.write_text('[gpu."Quad"]\n' + _SPEC.format(sms=144)   # _SPEC gives its source
                    + _die_toml("Quad"))
    for scenario in ("h100-dgx@A100-SXM-80GB", f"h100-dgx@{path}"):
        best = fabric_search("Llama-3-70B", scenario, "decode").best
        base = cost_summary(scenario, "Llama-3-70B", "decode", best)
        for w in (parameter("wafer_price"), 2 * parameter("wafer_price")):
            s = cost_summary(scenario, "Llama-3-70B", "decode", best, wafer_price=w)
            assert (s.gpu_price, s.gpu_package_cost) == (base.gpu_price, base.gpu_package_cost)
    # an N4 die follows it
    lite = cost_summary("lite-flat", "Llama-3-70B", "decode", wafer_price=2 * 18000.0)
    assert lite.gpu_package_cost == package_cost("Lite", wafer_price=36000.0).total
