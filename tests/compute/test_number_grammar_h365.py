"""One grammar for a number typed by a person, at every parser of the boundary.

compute.validate.NUMBER_PATTERN: ASCII digits, an optional sign ('+' or '-'), an optional
fraction ('.5', '5.'), an optional exponent ('1e3'); a whole-number parser takes a spelling
whose value is whole ('1.6e1' is 16), refuses one that is not ('16.5'); no '_' and no space
inside a number. Each parser below reads the same spellings of sixteen as 16 and refuses the
same others, a refusal being one UserError line naming the value.

Before this grammar (HEAD 85ecd80) the parsers disagreed: 'ring:n=1_6' built 16 GPUs,
'--batch 1_0' and '+1e1' were 10, '--group +16' was refused as 'not a size >= 1',
'--group 1e1' was read as a node's name, '--size 1_000MiB' had an 'unknown unit
'_000MiB'', NETMODEL_JOBS=1_0 was refused while NETMODEL_MAX_FABRIC_NODES=1_0 was 10.
"""

from __future__ import annotations

import click
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compute.errors import UserError
from compute.units import parse_bandwidth, parse_bytes, parse_time
from compute.validate import NUMBER_PATTERN, read_number

SIXTEEN = ["16", "+16", "16.0", "16.", "1.6e1", "1.6E+1", "160e-1", " 16 ", "016"]
NOT_A_NUMBER = ["1_6", "16_", "_16", "1 6", "\uff11\uff16", "\u0661\u0666", "0x10", "16e",
                "e16", "--16", "+-16", "", "sixteen", "1.6e1_0", "1__6", ". 5"]


def _env(monkeypatch, name, fn):
    def read(text):
        monkeypatch.setenv(name, text)
        return fn()
    return read


def _parsers(monkeypatch):
    """(name, parser of a text, value it gives for 16): every reader of a number typed."""
    from compute import limits as climits
    from compute.measurements import _cell
    from compute.units import check_finite_positive
    from compute.workers import jobs
    from netmodel.cli.collective import _parse_group
    from netmodel.cli.compute import _skew
    from netmodel.cli.economics import _sms
    from netmodel.cli.options import REAL, WHOLE
    from netmodel.cli.reliability_inputs import _per_hour, _seed
    from netmodel.cli.resolve import whole_option
    from netmodel.cli.serving import _rate
    from netmodel.study.availability import parse_spares
    from netmodel.study.scenario_catalog import get_scenario
    from netmodel.study.serving import with_rate
    from netmodel.study.sweep import _value
    from topologies import build
    from topologies.direct import parse_dims
    from topologies.limits import max_nodes

    lite = get_scenario("lite-flat")
    return [
        ("read_number(whole)", lambda t: read_number("n", t, whole=True), 16),
        ("read_number", lambda t: read_number("x", t), 16.0),
        ("spec ring:n=", lambda t: build(f"ring:n={t}").graph["gpus"], 16),
        ("spec torus:dims=", lambda t: parse_dims(f"{t}x2"), (16, 2)),
        ("--batch (whole_option)", lambda t: whole_option("--batch", t), 16),
        ("--group", _parse_group, 16),
        ("click WHOLE", lambda t: WHOLE.convert(t, None, None), 16),
        ("click REAL", lambda t: REAL.convert(t, None, None), 16.0),
        ("--seed", _seed, 16),
        ("--sms", lambda t: _sms(f"{t}/8"), (16, 8)),
        # --rate reads the number; the workload refuses what is not one (d9bc9a9)
        ("--rate", lambda t: with_rate("coding", _rate(t)).rate, 16.0),
        ("--expert-skew", _skew, 16.0),
        ("--rate CLASS=R", lambda t: _per_hour(t, "--rate"), 16.0),
        ("spares", lambda t: parse_spares(t, 100), 16),
        ("CSV cell", lambda t: _cell("m.csv: row 2", "tp", t), 16),
        ("NETMODEL_JOBS", _env(monkeypatch, "NETMODEL_JOBS", jobs), 16),
        ("NETMODEL_MAX_FABRIC_NODES", _env(monkeypatch, "NETMODEL_MAX_FABRIC_NODES", max_nodes), 16),
        ("NETMODEL_MAX_SWEEP_POINTS",
         _env(monkeypatch, "NETMODEL_MAX_SWEEP_POINTS",
              lambda: climits.setting("NETMODEL_MAX_SWEEP_POINTS", 1)), 16),
        ("sweep value", lambda t: _value(t, None, "fabric.n"), 16.0),
        ("scenario adjust", lambda t: lite.with_param("adjust.latency_scale", t).adjust.latency_scale,
         16.0),
        ("check_finite_positive", lambda t: check_finite_positive("x", t), 16.0),
        ("--size", lambda t: parse_bytes(f"{t}MiB"), 16 * 2**20),
        ("bandwidth", lambda t: parse_bandwidth(f"{t}GB/s"), 16e9),
        ("time", lambda t: parse_time(f"{t}us"), 16e-6),
    ]


def test_every_parser_reads_the_spellings_of_sixteen_as_16(monkeypatch):
    for name, parse, sixteen in _parsers(monkeypatch):
        for text in SIXTEEN:
            if name == "spec torus:dims=" and text == " 16 ":
                continue   # a spec's value is the text between its separators
            got = parse(text)
            assert got == pytest.approx(sixteen, rel=1e-15), (name, text, got)


def test_every_parser_refuses_the_same_spellings_in_one_line(monkeypatch):
    for name, parse, _ in _parsers(monkeypatch):
        for text in NOT_A_NUMBER:
            if not text.strip() and name in ("CSV cell", "NETMODEL_JOBS",
                                             "NETMODEL_MAX_FABRIC_NODES",
                                             "NETMODEL_MAX_SWEEP_POINTS"):
                continue   # an empty cell or variable is one not given
            if name.startswith("read_number"):
                try:
                    assert parse(text) is None, (name, text)
                except UserError:
                    pass
                continue
            with pytest.raises((UserError, click.BadParameter)) as info:
                got = parse(text)
                if name == "--group" and isinstance(got, list | tuple):
                    raise UserError("GPU names")   # not a number: 'sixteen', '0x10' are nodes
                pytest.fail(f"{name} read {text!r} as {got!r}")
            message = str(info.value)
            assert "\n" not in message, (name, text, message)


@pytest.mark.parametrize("text", ["1_6", "16_", "1.6e1_0", "1__6"])
def test_an_underscore_names_the_value_and_its_spelling_without_one(text, monkeypatch):
    for name, parse, _ in _parsers(monkeypatch):
        with pytest.raises(UserError, match="groups its digits with '_'; write ") as info:
            parse(text)
        assert repr(text.strip()) in str(info.value) or text in str(info.value), name


def test_the_reviewers_cases():
    from netmodel.cli.collective import _parse_group
    from netmodel.cli.compute import _fraction
    from netmodel.cli.resolve import whole_option
    from topologies import build

    with pytest.raises(UserError, match=r"^ring: n '1_6' groups its digits with '_'; write 16, "
                                        r"not 1_6 \(a number is ASCII digits"):
        build("ring:n=1_6")   # built 16 GPUs
    with pytest.raises(UserError, match="write 10, not 1_0"):
        whole_option("--batch", "1_0")   # ran batch 10
    with pytest.raises(UserError, match="write 10e1, not 1_0e1"):
        whole_option("--batch", "1_0e1")   # 100
    assert whole_option("--batch", "+1e1") == 10   # as --group, the spec and every parser
    assert _parse_group("+16") == 16   # 'must be a size >= 1'
    assert _parse_group("1e1") == 10   # "group member '1e1' is not a node"
    assert _parse_group("gpu_1,gpu_2") == ["gpu_1", "gpu_2"]   # names keep their "_"
    with pytest.raises(UserError, match="must be a size >= 1"):
        _parse_group("1.5")
    with pytest.raises(UserError, match="write 05e-1, not 0_5e-1"):
        _fraction("--flops-efficiency", "0_5e-1")   # read 0.5
    with pytest.raises(UserError, match=r"^size '1_000MiB' groups its digits with '_'; "
                                        r"write 1000MiB, not 1_000MiB"):
        parse_bytes("1_000MiB")   # "unknown unit '_000MiB'"
    with pytest.raises(UserError, match=r"^size '1 000MiB' has a space inside its number"):
        parse_bytes("1 000MiB")   # "unknown unit '000MiB'"


def test_a_fraction_takes_the_spellings_of_a_half_alike():
    from netmodel.cli.compute import _fraction

    for text in ("0.5", "+0.5", ".5", "5e-1", "50E-2", " 0.5 ", "0.50"):
        assert _fraction("--flops-efficiency", text) == 0.5, text
    for text in ("0_5e-1", "0 .5", "\uff10.5", "0,5", "1/2", "half"):
        with pytest.raises(UserError, match="--flops-efficiency"):
            _fraction("--flops-efficiency", text)


def test_environment_limits_refuse_underscores_alike(monkeypatch):
    from compute.workers import jobs
    from topologies.limits import max_nodes

    monkeypatch.setenv("NETMODEL_JOBS", "1_0")
    with pytest.raises(UserError, match="NETMODEL_JOBS '1_0' groups its digits"):
        jobs()
    monkeypatch.setenv("NETMODEL_MAX_FABRIC_NODES", "1_0")   # was 10
    with pytest.raises(UserError, match="NETMODEL_MAX_FABRIC_NODES '1_0' groups its digits"):
        max_nodes()
    monkeypatch.setenv("NETMODEL_MAX_FABRIC_NODES", "1e7")
    assert max_nodes() == 10**7


def test_whole_parsers_take_only_whole_values():
    from netmodel.cli.resolve import whole_option

    assert read_number("n", "16.5", whole=True) is None
    assert read_number("n", "1e-400", whole=True) is None   # not a float rounded to 0
    assert read_number("n", "2.0000000000000001", whole=True) is None   # nor to 2
    assert read_number("n", "-0", whole=True) == 0
    assert read_number("n", "9" * 4301, whole=True) is None   # past int()'s limit
    assert read_number("n", "1e400", whole=True) == 10**400
    for text in ("16.5", "1e-400", "2.0000000000000001"):
        with pytest.raises(UserError, match="must be a whole number from 1 to 1,000,000,000"):
            whole_option("--batch", text)


@settings(max_examples=200, deadline=None)
@given(sign=st.sampled_from(["", "+", "-"]), whole=st.text("0123456789", max_size=4),
       point=st.booleans(), frac=st.text("0123456789", max_size=3),
       exp=st.one_of(st.none(), st.integers(-5, 5)))
def test_the_unit_reader_and_the_plain_reader_agree(sign, whole, point, frac, exp):
    """A spelling is a number to read_number exactly when split_number reads it whole
    before a unit, and both read the same float."""
    import re

    from compute.units import split_number

    text = sign + whole + ("." if point else "") + (frac if point else "") + \
        ("" if exp is None else f"e{exp}")
    plain = read_number("x", text)
    split = split_number(text + "GB", "x")
    assert (plain is not None) == bool(re.fullmatch(NUMBER_PATTERN, text))
    if plain is None:
        assert split is None or split[1] != "GB"
    else:
        assert split == (text, "GB") and float(split[0]) == plain
