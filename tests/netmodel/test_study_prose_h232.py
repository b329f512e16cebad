"""docs/study.md's prose numbers outside generated blocks, recomputed (audit h232).

make_docs refreshes samples and generated blocks; the sentences around them quote figures
by hand and go stale when the model moves (the MTP paragraph, written in 21db010, still
said 23.2 tokens/s/SM and net% 44% for h100-dgx after later commits, PXN's 6ff745c among
them, moved them to 23.3 and 43%)."""

from __future__ import annotations

import re
from pathlib import Path

from compute.roofline_options import RooflineOptions
from netmodel.study.compare import run_compare

STUDY_MD = Path(__file__).resolve().parents[2] / "docs" / "study.md"


def _prose(start: str) -> str:
    """The paragraph of docs/study.md that holds ``start``, on one line."""
    text = STUDY_MD.read_text()
    i = text.index(start)
    j = text.find("\n\n", i)
    para = text[text.rfind("\n\n", 0, i) + 2: j]
    return re.sub(r"\s+", " ", para)


def _row(result, scenario: str):
    return next(r for r in result.rows if r.scenario == scenario)


def test_mtp_paragraph_quotes_the_deepseek_v3_decode_rows():
    para = _prose("With MTP, DeepSeek-V3 decode on")
    got = {}
    for mtp in (0, 1):
        for max_batch in (1024, 4096):
            res = run_compare(["DeepSeek-V3"], ["h100-dgx", "lite-flat"], ["decode"],
                              options=RooflineOptions(mtp_tokens=mtp), max_batch=max_batch)
            got[mtp, max_batch] = {s: _row(res, s) for s in ("h100-dgx", "lite-flat")}
    sm = {k: {s: r.tokens_per_s_per_sm for s, r in v.items()} for k, v in got.items()}
    h, f = "h100-dgx", "lite-flat"
    assert (f"on `h100-dgx` goes from {sm[0, 1024][h]:.1f} to {sm[1, 1024][h]:.1f} "
            f"tokens/s/SM and on `lite-flat` from {sm[0, 1024][f]:.1f} to "
            f"{sm[1, 1024][f]:.1f}") in para
    assert (f"`--max-batch 4096`, {sm[0, 4096][h]:.1f} to {sm[1, 4096][h]:.1f} and "
            f"{sm[0, 4096][f]:.1f} to {sm[1, 4096][f]:.1f}") in para
    assert (f"ratio {sm[0, 1024][f] / sm[0, 1024][h]:.2f}x -> "
            f"{sm[1, 1024][f] / sm[1, 1024][h]:.2f}x") in para
    share = [got[m, 1024][h].network_share for m in (0, 1)]
    assert f"net% {share[0]:.0%} -> {share[1]:.0%}" in para
    # the batch limit the sentence names
    assert all(got[m, 1024][s].batch == 1024 for m in (0, 1) for s in (h, f))


def test_two_batch_paragraph_quotes_the_deepseek_v3_prefill_rows():
    para = _prose("179.1 against 156.4")
    sm = {}
    for tbo in (False, True):
        res = run_compare(["DeepSeek-V3"], ["h100-dgx", "lite-flat"], ["prefill"],
                          options=RooflineOptions(two_batch_overlap=tbo))
        sm[tbo] = [_row(res, s).tokens_per_s_per_sm for s in ("h100-dgx", "lite-flat")]
    for tbo in (False, True):
        a, b = sm[tbo]
        assert f"{a:.1f} and {b:.1f} ({a / b:.2f}x" in para
