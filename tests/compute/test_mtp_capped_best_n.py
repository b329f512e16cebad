"""compute.mtp.capped_best with ``n`` tokens to decode: one token is one step (1 token a
step, whatever the drafts), and no token, a negative or a fractional count is refused in
one line naming ``n`` (it divided by zero: ``0 / mean_steps(k, a, 0) = 0 / 0``)."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from compute.mtp import capped_best
from compute.phases import Workload
from compute.roofline_options import RooflineOptions
from compute.search import search

MTP1 = RooflineOptions(mtp_tokens=1, mtp_acceptance=0.8)


def _decode(options=None):
    return search("DeepSeek-V3", "H200-SXM", Workload("decode", prompt=1500, context=1513),
                  options=options, tp=8, max_batch=64)


def test_one_token_left_is_one_token_a_step():
    res = _decode(MTP1)
    assert res.best.mtp_expected == pytest.approx(1.8, rel=1e-12)   # 1 + 0.8
    best, why = capped_best(res, 1)
    assert why == "" and best.mtp_expected == 1.0


@pytest.mark.parametrize("n, got", [(0, "0"), (-3, "-3"), (2.5, "2.5"), (True, "True")])
@pytest.mark.parametrize("options", [MTP1, None])
def test_no_token_to_decode_is_refused_in_one_line(n, got, options):
    with pytest.raises(UserError) as e:
        capped_best(_decode(options), n)
    msg = str(e.value)
    assert msg.startswith("capped_best: n (the tokens to decode a request) must be a whole "
                          "number of at least 1, got ") and "\n" not in msg
    assert "no decode step" in msg and got in msg
