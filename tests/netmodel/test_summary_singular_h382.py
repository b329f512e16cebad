"""summary.md counts its cases in the singular when there is one: a one-model, one-phase
study (``study lite-gpu --models Llama-3-70B --phases decode``) read 'falls short in 1 of 1
model x phase cases', 'median of 1 cases', 'in 1 of 1 model x GPU x phase cases', 'the same
in all 1 cases' and '1 cases leave'. Hand-made rows."""

from __future__ import annotations

from types import SimpleNamespace

from netmodel.study.summary_claims import _claim_custom, _claim_fabric, _claim_plain
from netmodel.study.summary_fabrics import packed_section
from tests.netmodel.test_summary_options import _Fab, _row


def test_claims_of_one_case_are_singular():
    one = _Fab([_row("base@H"), _row("a@Lite", v=0.5), _row("b@Lite", v=0.6),
                _row("a@Lite+BW", v=1.2)])
    assert "falls short in 1 of 1 model x phase case and reaches" in _claim_plain(one, "Lite")
    assert "beats the baseline in 1 of 1 model x phase case (" in _claim_custom(one, "Lite")
    assert "(median of 1 case; up to 1.20x)" in _claim_fabric(one, "Lite")
    two = _Fab([_row("base@H"), _row("base@H", model="n"), _row("a@Lite", v=0.5),
                _row("a@Lite", v=0.5, model="n"), _row("b@Lite", v=0.6),
                _row("b@Lite", v=0.6, model="n")])
    assert "falls short in 2 of 2 model x phase cases and" in _claim_plain(two, "Lite")
    assert "(median of 2 cases;" in _claim_fabric(two, "Lite")


def test_packed_section_of_one_case_is_singular():
    alone = SimpleNamespace(rows=[_row("a@Lite")])
    p = _row("a@Lite", tp=8)
    p.packed_fraction, p.vs_baseline = 0.75, None
    packed = SimpleNamespace(rows=[p], scenarios=[], baseline="base@H", phases=("decode",))
    text = "\n".join(packed_section(alone, packed))
    assert "- The best configuration changes in 1 of 1 case: " in text
    assert "- Stranded GPUs: 1 case leaves part of the cluster idle" in text
    p.tp = 4
    assert "- The best configuration is the same in the one case." in "\n".join(
        packed_section(alone, packed))
