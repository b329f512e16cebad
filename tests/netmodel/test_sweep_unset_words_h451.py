"""``netmodel sweep --param fabric.nics_per_server=auto,4``: the builder takes ``auto``
(one NIC per GPU, worked out from gpus_per_server) but a sweep's values lie on a numeric
axis, where crossovers are interpolated between neighbouring values: ``auto`` has no place
there. It was refused as "value 'auto' is not a number", as if the parameter took no
such word; now the refusal says why (h451). A parameter that takes no such word is refused
as before, and numbers sweep as before."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from netmodel.study.sweep import _unset_word, parse_param
from tests.netmodel.cli_helpers import one_line_error, run_cli

SWEEP = ["sweep", "--scenarios", "h100-dgx", "--model", "Llama-3-8B", "--param"]


def test_the_word_is_the_builder_s():
    from topologies.registry import unset_word

    assert _unset_word("fabric.nics_per_server", ["h100-dgx"]) == \
        unset_word("rail-optimized", "nics_per_server") == "auto"
    assert _unset_word("fabric.domains", ["h100-dgx"]) == ""   # takes no word
    assert _unset_word("adjust.hop_latency", ["h100-dgx"]) == ""


@pytest.mark.parametrize("values, typed", [("auto,4", "auto"), ("4,AUTO", "AUTO"),
                                           ("auto:8", "auto")])
def test_auto_is_refused_with_why(values, typed):
    line = one_line_error(run_cli([*SWEEP, f"fabric.nics_per_server={values}"]))
    # said with --param since h502
    assert line == (f"error: --param 'fabric.nics_per_server={values}': sweep parameter "
                    f"fabric.nics_per_server value {typed!r} is auto "
                    "(the builder works the value out, as if not given), not a number: a "
                    "sweep puts its values on a numeric axis and interpolates crossovers "
                    "between them; give numbers, e.g. fabric.nics_per_server=V1,V2")


def test_a_parameter_without_the_word_is_refused_as_before():
    line = one_line_error(run_cli([*SWEEP, "fabric.domains=auto,4"]))
    assert line == ("error: --param 'fabric.domains=auto,4': fabric.domains value 'auto' is "
                    "not a number")


def test_numbers_still_sweep():
    p = parse_param("fabric.nics_per_server=8,4", ["h100-dgx"])
    assert (p.path, p.values) == ("fabric.nics_per_server", (4.0, 8.0))
    with pytest.raises(UserError, match="is auto"):
        parse_param("fabric.nics_per_server=auto", ["h100-dgx"])
