"""The layout an instance is costed as placed in is checked where it is given (h367).

:meth:`~netmodel.study.scenario_collectives.ScenarioCollectives.for_instance` takes the
instance's GPUs and a pipeline stage's (``tp``, which divides them); the stage boundary's
pairs are GPU ``i`` of a stage and GPU ``i`` of the next. A stage that does not divide
the instance has no such pairs: 16 GPUs in stages of 3 asked member 16 of 16 (IndexError),
stages of 0 a range of step 0 (ValueError), both when a send-recv was first costed, and
an instance of 0 GPUs or a stage of 2.5 were taken. Each is now one UserError naming the
parameter, at the call, on the search's comm and the re-scoring one (AdjustedComm).
"""

import numpy as np
import pytest

from compute.errors import UserError
from netmodel.study.adjusted_comm import AdjustedComm
from netmodel.study.scenario_collectives import ScenarioCollectives

BAD = [(16, 0, "stage"), (16, 3, "stage"), (16, -1, "stage"), (16, 2.5, "stage"),
       (16, 32, "stage"), (16, True, "stage"), (0, 1, "gpus"), (16.0, 8, "gpus")]


@pytest.fixture(scope="module")
def coll():
    return ScenarioCollectives("h100-dgx")


@pytest.mark.parametrize(("gpus", "stage", "name"), BAD)
def test_bad_layout_refused_naming_it(coll, gpus, stage, name):
    for comm in (coll, AdjustedComm(coll)):
        with pytest.raises(UserError, match=f"^{name} must be a whole number"):
            comm.for_instance(gpus, stage)


def test_good_layouts_cost_the_boundary_pairs(coll):
    """TP 8 x PP 2 on two DGX servers: the boundary pair is gpu k -> gpu 8 + k, over the
    network, slower than a pair inside server 0; one stage of all 16 (no boundary) costs a
    send-recv as the scenario's group of 2."""
    n = np.array([1e6])
    members, model = coll.group(16), coll.model(16)
    across = model.collective_time("send-recv", n, (members[0], members[8]))
    assert np.array_equal(coll.for_instance(16, 8).collective_time("send-recv", n, 2), across)
    assert np.array_equal(coll.for_instance(16, 16).collective_time("send-recv", n, 2),
                          coll.collective_time("send-recv", n, 2))
    assert np.all(across > coll.collective_time("send-recv", n, 2))
