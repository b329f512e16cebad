"""A misspelt phase on a command that also takes 'both' lists 'both' among the allowed values
(h328): ``cost --phase bot`` said "known: 'decode', 'prefill'", though ``--phase both`` is
cost's default, and so did ``compare``/``sweep``/``study lite-gpu --phases decod``. Where
'both' is not taken (``blast-radius``, ``infer``; an item of a comma list, where 'both'
does not stand alone) the message lists the two phases alone, as before."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from compute.phases import check_phase
from tests.netmodel.cli_helpers import one_line_error, run_cli

BOTH_LISTED = "; known: 'decode', 'prefill' or 'both'"
TWO_LISTED = "; known: 'decode', 'prefill'"


@pytest.mark.parametrize("args,bad", [
    (["cost", "--scenario", "lite-flat", "--model", "Llama-3-70B", "--phase", "bot"], "bot"),
    (["compare", "--models", "Llama-3-70B", "--scenarios", "h100-dgx", "--phases", "decod"],
     "decod"),
    (["sweep", "--scenarios", "lite-flat", "--param", "adjust.hop_latency=1us",
      "--phases", "bth"], "bth"),
    (["study", "lite-gpu", "--out", "never", "--phases", "prefil"], "prefil"),
])
def test_commands_taking_both_list_it(args, bad, tmp_path):
    line = one_line_error(run_cli(args, cwd=tmp_path), f"unknown phase '{bad}'{BOTH_LISTED}")
    assert line.endswith("'both'"), line
    assert not (tmp_path / "never").exists()


@pytest.mark.parametrize("args,bad", [
    (["blast-radius", "--scenario", "lite-flat", "--model", "Llama-3-70B", "--phase", "both"],
     "both"),
    (["infer", "--model", "Llama-3-70B", "--gpu", "H100-SXM", "--tp", "4", "--batch", "8",
      "--phase", "dec"], "dec"),
    (["compare", "--models", "Llama-3-70B", "--scenarios", "h100-dgx", "--phases",
      "prefill,both"], "both"),
])
def test_commands_not_taking_both_do_not_list_it(args, bad):
    line = one_line_error(run_cli(args), f"unknown phase '{bad}'{TWO_LISTED}")
    assert line.endswith(TWO_LISTED), line


def test_library_check_names_both_only_when_asked():
    with pytest.raises(UserError, match=r"^unknown phase 'x'; known: 'decode', 'prefill'$"):
        check_phase("x")
    with pytest.raises(UserError, match=r"known: 'decode', 'prefill' or 'both'$"):
        check_phase("x", both=True)
    assert check_phase("decode", both=True) == "decode"
