"""A realized OCS fabric's fibres record keeps an edge's bandwidth bounds
(``VALUE_RANGES['bandwidth']``): the columns' all-at-once check (plain floats, finite,
> 0) must not skip the bounds the value-by-value check was followed by."""

import re

import pytest

from compute.errors import UserError
from topologies.limits import VALUE_RANGES
from topologies.optical import ocs, realize
from topologies.schema import validate

RING = [("gpu0", "gpu1"), ("gpu1", "gpu2"), ("gpu2", "gpu3"), ("gpu3", "gpu0")]
LEAST, MOST = VALUE_RANGES["bandwidth"][:2]


def _with_rates(rate: float, kind: type):
    g = realize(ocs(gpus=4, ports=2), RING)
    cabling = g.graph["ocs_cabling"]
    fibres = {**cabling["fibres"]}
    fibres["bandwidth"] = kind([rate] * len(fibres["bandwidth"]))
    g.graph["ocs_cabling"] = {**cabling, "fibres": fibres}
    return g


@pytest.mark.parametrize("kind", [tuple, list])
@pytest.mark.parametrize("rate, bound", [(MOST * 10, f"at most {MOST:g}"),
                                         (LEAST / 10, f"at least {LEAST:g}")])
def test_fibre_bandwidth_out_of_range_refused(rate, bound, kind):
    with pytest.raises(UserError, match=re.escape(f"fibre bandwidth must be {bound}")):
        validate(_with_rates(rate, kind))


@pytest.mark.parametrize("kind", [tuple, list])
def test_fibre_bandwidth_at_bounds_accepted(kind):
    for rate in (LEAST, MOST):
        validate(_with_rates(rate, kind))
