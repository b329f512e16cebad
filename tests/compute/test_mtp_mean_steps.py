"""compute.mtp.mean_steps: the mean decode steps of a request with ``n`` tokens left, a step
emitting no more than are left: ``S(n) = 1 + sum_j P(j) S(n - j)``, ``S(m <= 0) = 0``,
against closed forms at acceptance 0, 1 and 1/2, a hand recursion, and past the exact
count (4096 tokens), where it goes on at ``1 / E`` steps a token."""

from __future__ import annotations

import math
import time

import pytest

from compute.mtp import expected_tokens, mean_steps


@pytest.mark.parametrize("n", [1, 2, 3, 10, 4096, 4097, 10_000, 10_001])
def test_one_draft_at_half_is_its_closed_form(n):
    # S(n) = 1 + S(n - 1) / 2 + S(n - 2) / 2 solves to 2n/3 + 2/9 (1 - (-1/2)^n)
    assert mean_steps(1, 0.5, n) == pytest.approx(2 * n / 3 + 2 / 9 * (1 - (-0.5) ** n),
                                                  rel=1e-12)


@pytest.mark.parametrize("k", [1, 3, 7])
@pytest.mark.parametrize("n", [1, 2, 5, 4095, 10_001, 1_000_003])
def test_every_draft_accepted_takes_ceil_n_over_k_plus_1_steps(k, n):
    assert mean_steps(k, 1.0, n) == math.ceil(n / (k + 1))


@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("n", [1, 7, 10_001])
def test_no_draft_accepted_takes_a_step_a_token(k, n):
    assert mean_steps(k, 0.0, n) == n


def test_two_drafts_at_70_percent_by_hand():
    # P(1) = 0.3, P(2) = 0.21, P(3) = 0.49: S1 = 1, S2 = 1.3, S3 = 1 + 0.39 + 0.21 = 1.6,
    # S4 = 1 + 0.48 + 0.273 + 0.49 = 2.243, S5 = 1 + 0.6729 + 0.336 + 0.637 = 2.6459
    got = [mean_steps(2, 0.7, n) for n in range(1, 6)]
    assert got == pytest.approx([1.0, 1.3, 1.6, 2.243, 2.6459], rel=1e-12)


def test_long_outputs_go_on_at_the_expected_tokens_and_stay_fast():
    # past the exact count, each k + 1 tokens more take (k + 1) / E steps more
    e = expected_tokens(3, 0.8)
    assert mean_steps(3, 0.8, 1_000_004) - mean_steps(3, 0.8, 10_004) == pytest.approx(
        990_000 / e, rel=1e-12)
    t = time.process_time()
    mean_steps(7, 0.9, 10**7)
    assert time.process_time() - t < 1.0   # a loop of 4096 at most, not of n
