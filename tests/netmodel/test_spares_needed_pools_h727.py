"""The Monte Carlo spare search runs every pool size on one draw of the failures
(:class:`~netmodel.study.availability_mc_pools.PoolRuns`), where it ran a whole
simulation per size (lite-flat global at 1,024 GPUs: 65 of them, since the search tries
every size below its bound). The draws read the seed, never the spares, so each size's
time below is the per-size simulation's own float: checked here bit for bit against
:func:`~netmodel.study.availability_mc.simulate` on a shipped cluster and on kinds that
take every path of the loss system (followers and spanning instances asking one pool
twice, shared parts' sets, instances of different spares, several chunks of trials)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from netmodel.study import availability as av
from netmodel.study import availability_mc as amc
from netmodel.study import availability_mc_pools as amp
from netmodel.study.availability_kinds import Kind, event_kinds
from netmodel.study.availability_mc import simulate
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.reliability_spares import SparePools, spare_pools

H = 30 * 86400.0


def _kind(x, units, hold=H, **kw):
    """A host failure offering ``x`` failures in progress, asking ``units`` spares."""
    kw.setdefault("down", 1)
    return Kind("host", "x", rate=x / hold, slow=kw.pop("slow", 0.0), units=units,
                restored=kw.pop("restored", 0.1), d_repair=hold, d_swap=600.0, hold=hold,
                d_slow=kw.pop("d_slow", hold), **kw)


def _per_size(kinds, pools, instances, **run):
    return [simulate(kinds, p, instances, **run).below_threshold for p in pools]


@pytest.fixture(scope="module")
def flat():
    return build_cluster("lite-flat", "Llama-3-70B", "decode", gpus=1024)


def test_every_size_is_the_per_size_simulation_bit_for_bit(flat):
    kinds = event_kinds(flat, "global")
    pools = [spare_pools(flat, s, "global") for s in range(0, 70)]
    run = dict(horizon="1y", trials=40, seed=7, threshold=0.99)
    runs = amp.PoolRuns(kinds, flat.instances_total, pools=pools[0], **run)
    below = runs.below(pools)
    assert below == _per_size(kinds, pools, flat.instances_total, **run)
    # every ask comes in instances of 16 spares: 0-15, 16-31, ... 64-69 grant alike
    assert amp.ask_quantum(kinds) == 16
    assert runs.runs == 5
    assert below[0] > below[64]   # the spares count: no pool is the same as 64
    assert runs.below([pools[33]]) == [below[33]] and runs.runs == 5   # kept


def test_pod_pools_bit_for_bit(flat):
    per = spare_pools(flat, 0, "pod").pools
    kinds = event_kinds(flat, "pod")
    pools = [spare_pools(flat, s, "pod") for s in range(0, 9 * per, per)]
    run = dict(horizon="1y", trials=30, seed=2, threshold=0.995)
    runs = amp.PoolRuns(kinds, flat.instances_total, pools=pools[0], **run)
    assert runs.below(pools) == _per_size(kinds, pools, flat.instances_total, **run)


def _followers():   # a failure asking group 0's pool twice; an instance spanning groups
    kinds = [_kind(0.6, 2, group=0), _kind(0.6, 1, group=0, follows=True),
             _kind(0.4, 2, group=1, hold=2 * H),
             replace(_kind(0.4, 1, group=0, follows=True, joint=True, hold=2 * H), down=0),
             _kind(0.3, 3, group=1, per=1, down=3)]
    return kinds, [SparePools("group", 2 * s, 2, (s, s), 2) for s in range(12)], 0.97


def _sets():   # a shared part's failure asking each of its cells' pools
    kinds = [Kind("leaf", "a", 4e-6, 1, 0.5, 2, 0.1, 86400.0, 600.0, 86400.0, 86400.0,
                  cells=2, sets=2, slow_swapped=0.5),
             _kind(0.5, 4, down=2, per=2), _kind(0.2, 6, down=3, per=2, slow=1.0,
                                                  slow_swapped=1.0)]
    return kinds, [SparePools("pod", 4 * s, 4, (s,) * 4) for s in range(14)], 0.95


def _each():   # instances taking different numbers of spares
    kinds = [_kind(1.0, 21, down=2, slow=1.0, slow_swapped=1.0, each=(3, 16, 1, 1)),
             _kind(0.8, 4, down=2, per=2), _kind(0.5, 1)]
    return kinds, [SparePools("global", s, 1, (s,)) for s in range(30)], 0.9


@pytest.mark.parametrize("case", [_followers, _sets, _each])
def test_every_path_of_the_loss_system_bit_for_bit(case):
    kinds, pools, threshold = case()
    run = dict(horizon="1y", trials=60, seed=7, threshold=threshold)
    runs = amp.PoolRuns(kinds, 40, pools=pools[0], **run)
    below = runs.below(pools)
    assert below == _per_size(kinds, pools, 40, **run)
    assert len(set(below)) > 3   # the pools matter


def test_several_chunks_drawn_again_per_call_alike(monkeypatch):
    monkeypatch.setattr(amc, "CHUNK_EVENTS", 300)   # some 10 trials a chunk
    drawn = []
    monkeypatch.setattr(amp, "_draw", lambda *a: drawn.append(1) or amc._draw(*a))
    kinds = [_kind(2.0, 4, down=2, per=2), _kind(1.0, 3, down=3, per=1)]
    pools = [SparePools("global", s, 1, (s,)) for s in range(16)]
    run = dict(horizon="1y", trials=50, seed=3, threshold=0.93)
    runs = amp.PoolRuns(kinds, 40, pools=pools[0], **run)
    chunks = len(runs._plan.chunks)
    assert chunks > 3
    got = runs.below(pools[:8]) + runs.below(pools[8:])
    assert len(drawn) == 2 * chunks   # each chunk drawn once a call, not kept
    assert got == _per_size(kinds, pools, 40, **run)


def test_pools_of_another_shape_are_refused():
    kinds, pools, _ = _sets()
    runs = amp.PoolRuns(kinds, 40, horizon="1y", trials=5, seed=0, threshold=0.9,
                        pools=pools[0])
    with pytest.raises(ValueError, match="pools must be 4 pools of 1 group"):
        runs.below([SparePools("global", 4, 1, (4,))])


def test_spares_needed_draws_once_and_answers_as_the_scan_by_simulation(flat, monkeypatch):
    drawn = []
    monkeypatch.setattr(amp, "_draw", lambda *a: drawn.append(1) or amc._draw(*a))
    run = dict(horizon="1y", trials=60, seed=1)
    k = av.spares_needed(flat, "global", threshold=0.99, quantile=0.999, **run)
    assert drawn == [1]   # was a whole simulation per size tried (65 to answer 64)
    kinds = event_kinds(flat, "global")
    below = _per_size(kinds, [spare_pools(flat, s, "global") for s in range(k + 1)],
                      flat.instances_total, threshold=0.99, **run)
    assert below[k] <= 1e-3 and min(below[:k]) > 1e-3   # accepted, no smaller pool is
