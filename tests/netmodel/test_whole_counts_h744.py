"""A count given in code is a Python or numpy integer (test_whole_counts_h741's rule), for
the counts it had left: the batches of ``evaluate_grid``/``evaluate_many``
(:func:`compute.roofline.check_batches`), the MTP draft tokens (``mtp_tokens``,
``Workload.draft``: :func:`compute.phases.check_mtp_tokens`) and a sweep's ``points``.

Before: ``check_batches([1, 2.0])`` was ``[1, 2]`` (a numpy float array alike),
``RooflineOptions(mtp_tokens=1.0)`` and ``Workload('decode', draft=1.0)`` drafted 1 token,
and ``sweep(points=3.0)`` was refused without saying an int was wanted. Text (the command
line's ``--mtp-tokens 1``, ``--points 3``) keeps its own rule.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import netmodel
from compute.errors import UserError
from compute.evaluate_many import evaluate_many
from compute.phases import Workload, check_mtp_tokens
from compute.roofline import check_batches, evaluate_grid, make_workload
from compute.roofline_options import RooflineOptions

M, G = "Llama-3-8B", "H100-SXM"


@pytest.mark.parametrize("batches, shown", [
    ([1, 2.0], "2.0"),
    ([2.0, 8], "2.0"),
    ((np.float64(4),), "4.0"),
    (np.array([1.0, 2.0]), "1.0"),
    (np.array([1, 2], dtype=np.float32), "1.0"),
    (8.0, "8.0"),
])
def test_batches_refuse_a_whole_float(batches, shown):
    with pytest.raises(UserError, match="^" + re.escape(
            f"batches must be whole numbers >= 1 (an int), got {shown}") + "$"):
        check_batches(batches)


def test_grid_and_many_refuse_a_whole_float_batch():
    w = make_workload("decode")
    with pytest.raises(UserError, match=re.escape("batches must be whole numbers >= 1 "
                                                  "(an int), got 2.0")):
        evaluate_grid(M, G, [1], [1, 2.0], w)
    with pytest.raises(UserError, match=re.escape("(an int), got 8.0")):
        evaluate_many(M, G, [1, 2], np.array([8.0, 8.0]), "decode")


def test_batches_keep_their_other_refusals_and_take_integers():
    # a fractional float says what it said (no '(an int)': 2.5 is no whole number at all)
    with pytest.raises(UserError, match=r"^batches must be whole numbers >= 1, got 2\.5$"):
        check_batches([1, 2.5])
    # past the range: the range's words, as check_batch's 1e308
    with pytest.raises(UserError, match=r"^batches must be whole numbers from 1 to "
                                        r"1,000,000,000, got 1e\+300$"):
        check_batches([1e300])
    got = check_batches([1, np.int64(2), np.uint8(8)])
    assert got.tolist() == [1, 2, 8] and got.dtype == np.int64
    assert check_batches(np.arange(1, 4, dtype=np.int32)).tolist() == [1, 2, 3]


@pytest.mark.parametrize("k", [1.0, np.float64(1), np.float32(2), 0.0])
def test_mtp_tokens_refuse_a_whole_float(k):
    said = ("MTP draft tokens (mtp_tokens) must be a whole number from 0 (off) to 16 "
            f"(an int), got {float(k)!r}")
    with pytest.raises(UserError, match="^" + re.escape(said) + "$"):
        check_mtp_tokens(k)
    with pytest.raises(UserError, match=re.escape(said)):
        RooflineOptions(mtp_tokens=k)
    with pytest.raises(UserError, match=re.escape(said)):
        Workload("decode", draft=k)


def test_mtp_tokens_take_integers_and_keep_their_range():
    assert check_mtp_tokens(np.int64(2)) == 2 and type(check_mtp_tokens(np.int64(2))) is int
    assert RooflineOptions(mtp_tokens=np.int32(1)).mtp_tokens == 1
    assert Workload("decode", draft=np.int64(1)).tokens_per_sequence == 2
    with pytest.raises(UserError, match=r"to 16, got 1\.5$"):   # no '(an int)': not whole
        check_mtp_tokens(1.5)
    with pytest.raises(UserError, match=r"to 16, got 17$"):
        check_mtp_tokens(17)
    with pytest.raises(UserError, match=r"to 16, got True$"):
        check_mtp_tokens(True)


def test_sweep_points_say_an_int():
    with pytest.raises(UserError, match="^" + re.escape(
            "points must be a whole number >= 1 (an int: the values of a LO:HI range), "
            "got 3.0") + "$"):
        netmodel.sweep(["h100-dgx"], ["adjust.hop_latency=1us:2us"], points=3.0)
    with pytest.raises(UserError, match="^" + re.escape(
            "points must be a whole number >= 1 (the values of a LO:HI range), got 2.5")
            + "$"):
        netmodel.sweep(["h100-dgx"], ["adjust.hop_latency=1us:2us"], points=2.5)
