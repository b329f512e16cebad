"""NCCL's multi-node LL cap, which the model does not apply (issue 11).

NCCL 2.2x (src/graph/tuning.cc) caps ring and tree LL busbw at ``llMaxBws[row][nodes]``:
on one node the row is the GPU generation (Hopper 141 GB/s, what the model's LL factor is
derived from), across nodes the host CPU vendor (Intel or other: 39.0 GB/s on 2 nodes,
20.4 GB/s on 3 or more; AMD: 22.5, 19.0). The model keeps the one-node factor across nodes
(netmodel/data/collective_generations.toml, docs/collectives.md say so). These tests pin
the two facts that decision rests on: the model picks LL across nodes only below 8 MiB, above
NCCL's cap there, and at no size of any cited multi-node measurement, so the cap could not
change a compared point.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from netmodel.collectives.model import FabricCostModel
from tests.netmodel.test_collective_accuracy import cited_model
from topologies import build

PUBLISHED = Path(__file__).parent / "data" / "nccl_allreduce_published.csv"
MIB = 2 ** 20
#: NCCL llMaxBws, Intel-host row, 2 nodes and 3+ nodes (GB/s as 1e9 bytes/s)
NCCL_LL_CAP_INTEL = {2: 39.0e9, 4: 20.4e9}


def _multinode_curves():
    with open(PUBLISHED) as fh:
        rows = list(csv.DictReader(line for line in fh if not line.startswith("#")))
    curves = defaultdict(list)
    for r in rows:
        if int(r["gpus"]) > 8:
            curves[(r["case"], r["fabric"], int(r["gpus"]), r["model_algorithm"])].append(
                float(r["bytes"]))
    return sorted(curves.items())


@pytest.mark.parametrize(("key", "sizes"), _multinode_curves(), ids=lambda v: str(v[0])
                         if isinstance(v, tuple) else "")
def test_no_cited_multinode_point_uses_ll(key, sizes):
    """Capping LL only slows LL; where the fastest choice is not LL the cap changes nothing."""
    _, fabric, gpus, alg = key
    model, alg = cited_model(fabric, alg)
    sw = model.sweep("all-reduce", np.asarray(sizes), gpus, alg)
    assert "LL" not in sw.protocol, (key, list(zip(sizes, sw.protocol, strict=True)))


@pytest.mark.parametrize("nodes", [2, 4])
def test_dgx_h100_ll_range_and_gap_to_nccl_cap(nodes):
    """On 2 and 4 DGX H100 (8 x 400G rails) auto picks ring LL at 1-4 MiB, with busbw above
    NCCL's multi-node LL cap at 4 MiB (the gap the docs state), and never LL at 8-64 MiB."""
    model = FabricCostModel(build(f"rail-optimized:domains={nodes}"), algorithms="nccl",
                            validated=True)
    sizes = np.array([1, 2, 4, 8, 16, 32, 64], dtype=float) * MIB
    sw = model.sweep("all-reduce", sizes, 8 * nodes)
    assert list(sw.protocol[:3]) == ["LL"] * 3
    assert "LL" not in sw.protocol[3:]
    assert sw.busbw[2] > 1.5 * NCCL_LL_CAP_INTEL[nodes]
