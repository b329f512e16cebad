"""The torus algorithm numbers a GPU by its name in ASCII digits only: int() of 'gpu²'[3:]
raised ValueError out of the algorithm (str.isdigit() takes '²'), on a graph built in
Python (a fabric file's is refused by topologies.schema first)."""

from __future__ import annotations

import networkx as nx
import pytest

from netmodel.collectives.algo_torus import torus_all_reduce
from netmodel.collectives.steps import NotApplicable
from topologies.direct import torus


def test_torus_algorithm_names_a_gpu_it_cannot_number():
    # a graph built in Python, not validated: the torus algorithm read 'gpu²' with int()
    g = nx.relabel_nodes(torus("2x2"), {"gpu3": "gpu\u00b2"})
    with pytest.raises(NotApplicable, match="torus needs GPUs gpu0 to gpu3, got 'gpu\u00b2'"):
        torus_all_reduce(("gpu0", "gpu1", "gpu2", "gpu\u00b2"), g)
