"""The circuit options of an OCS instance are made one at a time (scenario_fabric)."""

from __future__ import annotations

import tracemalloc

from netmodel.study.circuit_planes import circuit_options


def test_options_are_every_copy_count_most_first():
    """A ring of 4 GPUs of 6 ports: 3, 2, 1 copies of its 4 circuits, each copy beside
    its pair (a pair of GPUs: one copy a port, 6..1)."""
    ring = list(circuit_options("ring", [["a", "b", "c", "d"]], 6))
    assert [len(o) for o in ring] == [12, 8, 4]
    assert ring[1] == [("a", "b")] * 2 + [("b", "c")] * 2 + [("c", "d")] * 2 + [("d", "a")] * 2
    assert [len(o) for o in circuit_options("ring", [["a", "b"]], 6)] == [6, 5, 4, 3, 2, 1]
    torus = list(circuit_options("torus", [list(range(4))], 8))
    assert [len(o) for o in torus[:2]] == [2 * len(torus[1]), len(torus[1])]
    # then the ring's, where a degraded cell refused every torus count
    assert torus[2:] == list(circuit_options("ring", [list(range(4))], 8))


def test_first_option_does_not_hold_the_others():
    """The first option of a pair of GPUs of 2,048 ports is 2,048 pairs (16 kB of
    references); every option at once is 2,048 x 2,049 / 2 = 2.1 M (17 MB): taking the
    first stays under 1 MB."""
    tracemalloc.start()
    try:
        first = next(iter(circuit_options("ring", [["gpu0", "gpu1"]], 2048)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(first) == 2048
    assert peak < 1e6
