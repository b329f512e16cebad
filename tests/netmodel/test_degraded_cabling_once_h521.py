"""A degraded OCS cell's fibres record is read once, not once per use (h521).

A degraded cell (``collectives.degraded.degrade``: a copy, not frozen) has no record kept
for it, so each ``optical.ocs_cabling`` lists every fibre again. Before,
``placed_graph.instance_circuits`` read it twice an instance (``members_cell``, then
``_whole_cabling`` again), and ``CollectiveSetup.circuits_after`` (``collective --scenario
--fail``) did so for each of the cell's instances: 2 x 8 reads for lite-ocs's 8 instances
of 16. Now ``_whole_cabling`` takes the record members_cell gave the cell, and the
degraded cell of circuits_after is frozen, so its record is read once for all.

Hand-derived: lite-ocs is 128 Lites x 4 ports (OCS ``ocs0``..``ocs3``), one fibre each of
10 m (its ``length``), 512 fibres; ``ocs0`` failed leaves 128 x 3 = 384. An instance of 16
on 3 ports: a 4 x 4 torus needs 4 ports, so a ring, ports // 2 = 1 copy: 16 circuits, 8
instances: 128.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest

import topologies.optical as optical
from netmodel.collectives.degraded import degrade
from netmodel.study.circuit_copies import alike_circuits, members_cell
from netmodel.study.collective_setup import collective_setup
from netmodel.study.placed_graph import instance_circuits
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_fabric import build_fabric
from topologies.optical import ocs, ocs_cabling, realize

GPUS = [f"gpu{i}" for i in range(16)]


@pytest.fixture()
def reads(monkeypatch):
    """How many times each graph's fibres were read from its links, by fibre count."""
    seen: Counter = Counter()
    read = optical._read_cabling

    def counted(graph, kind):
        out = read(graph, kind)
        seen[None if out is None else out["cables"]] += 1
        return out

    monkeypatch.setattr(optical, "_read_cabling", counted)
    return seen


def _degraded():
    s = get_scenario("lite-ocs")
    return s, degrade(build_fabric(s), nodes=["ocs0"])


def test_instance_circuits_reads_a_degraded_cells_record_once(reads):
    s, cell = _degraded()
    out = instance_circuits(replace(s, circuits="ring"), cell, GPUS)
    assert reads == Counter({384: 1})   # was {384: 2}
    record = out.graph["ocs_cabling"]
    assert record["cables"] == 384 and record["lanes"] == 384 * cell.edges["gpu0", "ocs1"]["lanes"]
    assert len(record["fibres"]["gpu"]) == 384 and set(record["fibres"]["length"]) == {10.0}
    assert "ocs0" not in record["fibres"]["ocs"]
    # the record realize on the whole degraded cell gives, to the value
    pairs = [(a, b) for a, b in zip(GPUS, GPUS[1:] + GPUS[:1], strict=True)]
    assert record == realize(cell, pairs).graph["ocs_cabling"]
    assert out.graph["circuits"] == 16


def test_best_circuits_read_it_once_too(reads):
    s, cell = _degraded()
    out = instance_circuits(s, cell, GPUS)   # circuits = "best": ring and torus tried
    assert reads == Counter({384: 1})
    assert out.graph["ocs_cabling"]["cables"] == 384 and out.graph["circuits"] == 16


def test_no_whole_record_leaves_none_on_the_circuits(reads):
    # two media: the whole cell has no record; the members' part has one (theirs alone),
    # which must not be left on the circuits as the cell's
    s, cell = _degraded()
    cell.edges["gpu100", "ocs1"]["medium"] = "pluggable-optics"
    assert ocs_cabling(cell) is None
    assert "ocs_cabling" not in members_cell(cell, GPUS).graph
    out = instance_circuits(replace(s, circuits="ring"), cell, GPUS)
    assert "ocs_cabling" not in out.graph and out.graph["circuits"] == 16


def test_circuits_after_reads_the_degraded_cell_once(reads):
    s = get_scenario("lite-ocs")
    setup = collective_setup(scenario=s)
    group = setup.model(16).group(16)
    reads.clear()
    out = setup.circuits_after(16, (), ["ocs0"])(group)
    assert reads == Counter({384: 1})   # was {384: 16}: 8 instances, 2 each
    assert out.graph["circuits"] == 8 * 16 and out.number_of_edges() == 128
    assert out.graph["ocs_cabling"]["cables"] == 384


def test_alike_circuits_on_a_cell_not_frozen_reads_it_once(reads):
    g = ocs(gpus=8, ports=4)   # a plain graph: nothing kept
    groups = [tuple(f"gpu{i}" for i in range(k, k + 4)) for k in (0, 4)]
    out = alike_circuits(g, groups, "ring", 4, 4)
    assert reads == Counter({32: 1})   # was {32: 2}
    pairs = [p for gr in groups for p in zip(gr, gr[1:] + gr[:1], strict=True)
             for _ in range(2)]
    assert out.graph == realize(g, pairs).graph and out.graph["ocs_cabling"]["cables"] == 32
