"""Hostile round 22 (scripts/hostile_round22.py): options that contradict each other,
files valid in their format but absurd in what they say, values at the documented
limits, very large groups, library calls with numpy and bool values, and results that
must agree by symmetry.

Found wrong, each checked here:

(a) An in-network (NVLS/SHARP) all-reduce on one switch of many GPUs was planned in time
quadratic in the GPUs (the members each switch had reduced were joined one child at a
time, the set copied each time): ``collective all-reduce --fabric
single-switch:n=100000 --group 100000`` ran past two minutes; the plan of 50,000 GPUs took
19.9 s of CPU. Now each switch's members are joined once.
"""

from __future__ import annotations

import time

from netmodel.api import build_fabric


def test_an_in_network_plan_of_many_gpus_on_one_switch_is_linear():
    from netmodel.collectives.in_network import in_network_plan

    g = build_fabric("single-switch:n=50000")
    gpus = [n for n, d in g.nodes(data=True) if d.get("kind") == "gpu"]
    t0 = time.process_time()
    levels = in_network_plan(g, gpus)
    took = time.process_time() - t0
    assert [len(level) for level in levels] == [50000]   # one level: every GPU to nvs0
    assert {sw for _, sw, _, _ in levels[0]} == {"nvs0"}
    assert took < 4.0, took   # 0.25 s here; 19.9 s when the members were joined one by one
