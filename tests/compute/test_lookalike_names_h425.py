"""A GPU or model name that is a known one but for characters that look alike (a non-breaking
hyphen, a fullwidth letter, a no-break space: text copied from a paper or a web page) is
told which character, not refused with a 'known' list that shows the same name."""

from __future__ import annotations

import pytest

from compute.errors import UserError, lookalike
from compute.hardware import get_gpu
from compute.measurements import read_measurements
from compute.models import get_model


def _said(call, name) -> str:
    with pytest.raises(UserError) as err:
        call(name)
    return str(err.value)


@pytest.mark.parametrize(("name", "match", "char", "what"), [
    ("H100\u2011SXM", "H100-SXM", "\u2011", "U+2011 NON-BREAKING HYPHEN"),
    ("H100\u2013SXM", "H100-SXM", "\u2013", "U+2013 EN DASH"),
    ("\uff28100-SXM", "H100-SXM", "\uff28", "U+FF28 FULLWIDTH LATIN CAPITAL LETTER H"),
])
def test_a_gpu_name_of_lookalike_characters_is_told_which(name, match, char, what):
    """Before: "unknown GPU 'H100‑SXM'; known: ..., 'H100-SXM', ..." (the two look the same)."""
    said = _said(get_gpu, name)
    assert said.startswith(f"unknown GPU {name!r}; did you mean {match!r}? (it has {char!r}, "
                           f"{what}); known: 'A100-SXM-80GB'")


def test_a_model_name_of_lookalike_characters_is_told_which():
    said = _said(get_model, "Llama\u20113\u20118B")
    assert said.startswith("unknown model 'Llama‑3‑8B'; did you mean 'Llama-3-8B'? (it has "
                           "'‑', U+2011 NON-BREAKING HYPHEN); known: ")


def test_a_measurements_row_names_it_too(tmp_path):
    f = tmp_path / "m.csv"
    f.write_text("model,gpu,tp,batch,phase,context,latency_s\n"
                 "Llama-3-8B,H100\u2011SXM,1,1,decode,1000,0.008\n")
    ms = read_measurements(f)   # names are checked where a row is fitted
    from compute.profile_fit import gpu_of

    with pytest.raises(UserError) as err:
        gpu_of(ms[0])
    assert str(err.value).startswith(f"{f}: row 2: gpu: unknown GPU 'H100‑SXM'; did you mean "
                                     "'H100-SXM'?")


@pytest.mark.parametrize("name", ["H100-SMX", "MI300X", "Lite\u2011Plus"])
def test_other_unknown_names_say_no_more(name):
    assert "did you mean" not in _said(get_gpu, name)
    assert lookalike(name, ["H100-SXM", "Lite"]) == ""


@pytest.mark.parametrize(("name", "char", "what"), [
    ("H100\u2212SXM", "\u2212", "U+2212 MINUS SIGN"),
    ("H100\u02d7SXM", "\u02d7", "U+02D7 MODIFIER LETTER MINUS SIGN"),
    ("H100-\u00adSXM", "\u00ad", "U+00AD SOFT HYPHEN"),
    ("H100-SXM\u200b", "\u200b", "U+200B ZERO WIDTH SPACE"),
])
def test_a_minus_sign_or_an_invisible_character_is_told(name, char, what):
    """A minus sign is no dash to Unicode (category Sm), a soft hyphen or a zero-width
    space no character to see (Cf): each was refused with the known list alone."""
    assert lookalike(name, ["H100-SXM"]) == \
        f"; did you mean 'H100-SXM'? (it has {char!r}, {what})"
