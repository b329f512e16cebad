"""The closed form says when it took a fallback past the spare chain's limit.

A pool asked by a kind granted in part, or by one failure more than once, or pools one
failure asks together, are solved as a Markov chain; past ``MAX_SEQUENTIAL_STATES`` states
the closed form solves the chain with every repair time taken as one, past that takes the
asks as independent arrivals (Kaufman-Roberts), and pools asked together apart: each an
approximation, which the result did not show. ``Analytic.fallback`` names those taken,
``availability --json`` writes it, and the table says so in a note.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from click.testing import CliRunner

from netmodel.cli.main import cli
from netmodel.study import availability_busy as ab
from netmodel.study.availability_analytic import analytic
from netmodel.study.availability_kinds import Kind
from netmodel.study.reliability_spares import SparePools

H = 30 * 86400.0


def _kind(x, units, group=0, hold=H, **kw):
    """A kind offering ``x`` Erlangs (failures in progress) of ``units`` spares."""
    return Kind("host", "x", rate=x / hold, down=1, slow=0.0, units=units, restored=0.0,
                d_repair=hold, d_swap=600.0, hold=hold, d_slow=0.0, group=group, **kw)


def _asked_twice():
    # two failure kinds of different repair times, each asking a pool of 2 for 1 then 1:
    # the whole chain has 3 states (one per repair time and the empty pool), the chain
    # with one repair time 2 (the pool empty or full)
    return [_kind(0.3, 1), _kind(0.3, 1, follows=True),
            _kind(0.45, 1, hold=3 * H), _kind(0.45, 1, hold=3 * H, follows=True)]


@pytest.mark.parametrize(("limit", "said"), [
    (10_000, ()), (2, (ab.FALLBACK_ONE_HOLD,)), (1, (ab.FALLBACK_INDEPENDENT,))])
def test_a_pool_asked_twice_says_which_fallback(monkeypatch, limit, said):
    monkeypatch.setattr(ab, "MAX_SEQUENTIAL_STATES", limit)
    a = analytic(_asked_twice(), SparePools("group", 2, 1, (2,), 1), 100)
    assert a.fallback == said
    assert a.to_dict()["fallback"] == list(said)


def test_pools_asked_together_say_they_were_taken_apart(monkeypatch):
    # an instance spanning groups 0 and 1 asks both pools (of 2) at once
    kinds = [_kind(9.0, 1), replace(_kind(9.0, 1, group=1, follows=True, joint=True), down=0),
             _kind(0.3, 1, hold=2 * H), _kind(0.3, 1, group=1, hold=3 * H)]
    pools = SparePools("group", 4, 2, (2, 2), 2)
    assert analytic(kinds, pools, 100).fallback == ()
    monkeypatch.setattr(ab, "MAX_SEQUENTIAL_STATES", 1)
    monkeypatch.setattr(ab, "MAX_COUPLED_STATES", 1)   # its own limit, not one pool's
    a = analytic(kinds, pools, 100)
    assert a.fallback == (ab.FALLBACK_APART,)
    assert "limit (1 state of pools asked together)" in ab.fallback_words(a.fallback)


def test_no_spares_needs_no_chain():
    a = analytic(_asked_twice(), SparePools("group", 0, 1, (0,), 1), 100)
    assert a.fallback == () and a.to_dict()["fallback"] == []


def _run(*extra):
    return CliRunner().invoke(cli, ["availability", "--scenario", "lite-flat", "--model",
                                    "Llama-3-70B", "--spares", "16", "--trials", "20",
                                    "--no-plot", *extra])


def test_the_table_and_json_say_so(monkeypatch):
    # lite-flat's host asks the pod pool of 16 for 2 instances of 16 (granted in part: a
    # chain); within the limit nothing is said
    plain = _run()
    assert plain.exit_code == 0, plain.output
    assert "fell back" not in plain.output
    assert json.loads(_run("--json").output)["analytic"]["fallback"] == []
    monkeypatch.setattr(ab, "MAX_SEQUENTIAL_STATES", 1)
    r = _run()
    assert r.exit_code == 0, r.output
    note = [line for line in r.output.splitlines() if "fell back" in line]
    assert len(note) == 1 and "the spares busy alone" in note[0] and "30,000" not in note[0]
    assert "(1 state)" in note[0]   # the limit, counted in words as every count
    d = json.loads(_run("--json").output)
    assert d["analytic"]["fallback"] == ["the spares busy alone"]
    assert d["analytic_no_spares"]["fallback"] == []
