"""A plain function as the collective-cost model: what it returns is checked by name."""

from __future__ import annotations

import numpy as np
import pytest

from compute.comm import as_comm
from compute.errors import UserError


@pytest.mark.parametrize("returned", ["fast", {"a": 1}])
def test_a_comm_function_returning_no_number_is_a_user_error(returned):
    # it raised numpy's bare "ValueError: could not convert string to float: 'fast'"
    comm = as_comm(lambda op, n, p: returned)
    with pytest.raises(UserError, match=r"comm function '<lambda>' returned .* for all-reduce; it "
                                        r"must return seconds, one number per message size"):
        comm.collective_time("all-reduce", np.array([1e6]), 8)


def test_a_comm_function_returning_seconds_still_runs():
    comm = as_comm(lambda op, n, p: 1e-6 + 2 * (p - 1) / p * n / 100e9)
    t = comm.collective_time("all-reduce", np.array([1e9]), 8)
    assert t.tolist() == [pytest.approx(1e-6 + 1.75e9 / 100e9)]   # 17.501 ms
