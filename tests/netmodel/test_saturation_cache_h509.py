"""The closed form's saturation term is solved once per distinct set of losses.

``_saturation`` (the share of the capacity by which the losses in progress run past the
whole cluster) runs a Panjer recursion over 8,192 lattice points where its bound does not
rule it out; the spare search asks for it with the same losses at many pool sizes (study
lite-gpu: 277 calls, 69 distinct, 45 recursions of 11 distinct). It is now cached by the
losses as floats, the instances and the lattice's constants: the cached answer is the
uncached one to the bit, and a second ask runs no recursion.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

import netmodel.study.availability_loss as loss

streams_st = st.lists(st.tuples(st.floats(1e-4, 5.0), st.one_of(st.integers(1, 40),
                                                                   st.floats(0.05, 40.0))),
                      min_size=1, max_size=6)


@settings(max_examples=40, deadline=None)
@given(streams_st, st.integers(1, 16))
def test_cached_equals_uncached(streams, instances):
    loss._saturation_of.cache_clear()
    uncached = loss._saturation_of.__wrapped__(
        tuple((float(m), float(x)) for m, x in streams), instances, loss.SATURATION_STEPS,
        loss.SATURATION_NEGLIGIBLE)
    first = loss._saturation(streams, instances)
    again = loss._saturation([list(s) for s in streams], instances)   # lists, a hit
    assert first.hex() == uncached.hex() == again.hex()


def test_poisson_closed_form_and_one_recursion(monkeypatch):
    # N ~ Poisson(2) instances down of 1: E[(N - 1)^+] = E[N] - P(N >= 1) = 1 + e^-2
    loss._saturation_of.cache_clear()
    runs = []
    real = loss._panjer
    monkeypatch.setattr(loss, "_panjer", lambda *a, **k: runs.append(a) or real(*a, **k))
    first = loss._saturation([(2.0, 1.0)], 1)
    assert math.isclose(first, 1 + math.exp(-2), rel_tol=1e-6)
    assert loss._saturation([(2.0, 1)], 1) == first   # the same losses, an int loss
    assert len(runs) == 1   # HEAD: a recursion per call


def test_constants_are_part_of_the_key(monkeypatch):
    loss._saturation_of.cache_clear()
    fine = loss._saturation([(2.0, 0.37)], 1)   # off both lattices
    monkeypatch.setattr(loss, "SATURATION_STEPS", 16)   # a coarse lattice: another answer
    assert loss._saturation([(2.0, 0.37)], 1) != fine
