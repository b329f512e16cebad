"""A library refusal is said with the flag that gave the value, and only with a flag the
user typed (h451).

- The range of a --clock, --rate, --repair-time, --detection or --warmup value is checked
  once, by the library (compute.power.ClockPowerLaw.check, reliability_catalog's
  Catalog.with_); the CLI kept copies of those checks only to name the flag, worded apart
  from the library's. Now the CLI line is the library's refusal, with the flag and the text
  as typed in front (netmodel.cli.refusals.value_refused_as).
- availability's and blast-radius's ``_parameters_as_flags`` wrote a library refusal that
  starts with a parameter name as the command's flag of that name whether or not the user
  typed it: a run of ``--fabric`` whose scenario the library names ('scenario X: ...')
  read '--scenario X: ...', a flag never given. Now only typed options are named.
"""

from __future__ import annotations

import pytest

from compute.errors import UserError
from tests.netmodel.cli_helpers import one_line_error, run_cli

AVAIL = ["availability", "--scenario", "lite-flat", "--model", "Llama-3-8B", "-q"]


def _library_refusal(call) -> str:
    with pytest.raises(UserError) as refused:
        call()
    return str(refused.value)


def _seconds(text: str) -> float:
    from netmodel.study.reliability_catalog import parse_duration

    return parse_duration(text, "t", allow_zero=True)


def _catalog_refusal(**override) -> str:
    from netmodel.study.reliability_catalog import catalog

    return _library_refusal(lambda: catalog().with_(**override))


# (a time past the catalog's century is said in the unit typed, not the catalog's seconds,
# and --rate gpu=R's refusal names no gpu_rate_per_hour: tests/netmodel/test_cli_review_h457.py)
@pytest.mark.parametrize("args, flag, typed, refusal", [
    (["--rate", "nic=1e300"], "--rate", "nic=1e300",
     lambda: _catalog_refusal(rates={"nic": 1e300})),
])
def test_a_reliability_range_is_the_catalog_s_said_with_the_flag(args, flag, typed, refusal):
    line = one_line_error(run_cli([*AVAIL, *args]))
    assert line == f"error: {flag} {typed!r}: {refusal()}"


def test_the_rate_refused_is_the_one_typed_among_several():
    line = one_line_error(run_cli([*AVAIL, "--rate", "nic=1e-5", "--rate", "transceiver=2"]))
    assert line.startswith("error: --rate 'transceiver=2': rate of transceiver must be")


def test_a_clock_is_the_power_law_s_to_refuse():
    from compute.power import ClockPowerLaw

    line = one_line_error(run_cli(["cost", "--scenario", "lite-flat", "--model", "Llama-3-8B",
                                   "--clock", "2"]))
    assert line == f"error: --clock '2': {_library_refusal(lambda: ClockPowerLaw().check(2.0))}"


def test_values_in_range_still_run_as_before():
    """The checks moved, not the values taken: 1 per hour and a century are the bounds."""
    import click

    from netmodel.cli.main import cli
    from netmodel.cli.reliability_inputs import _catalog

    century = _seconds("100y")
    with click.Context(cli.get_command(click.Context(cli), "availability")):
        cat = _catalog(None, "local", ("nic=1",), ("gpu-die=100y",), century, 0.0, None, None)
    assert cat.classes["nic"].rate_per_hour == 1.0
    assert cat.classes["gpu-die"].repair_local_s == pytest.approx(100 * 365.25 * 86400)
    assert (cat.detection_s, cat.warmup_s) == (pytest.approx(100 * 365.25 * 86400), 0.0)


def _refused_in_run(monkeypatch, message: str, args: list[str]) -> str:
    """The line of availability run with ``args`` when its library call refuses with
    ``message``."""
    import netmodel.study.availability as study

    def refuse(*_, **__):
        raise UserError(message)

    monkeypatch.setattr(study, "availability", refuse)
    return one_line_error(run_cli(["availability", "--model", "Llama-3-8B", "-q", *args]))


def test_a_parameter_the_user_did_not_type_is_not_said_as_a_flag(monkeypatch):
    """--fabric typed: the library's 'scenario ...' is no --scenario (before: it was)."""
    line = _refused_in_run(monkeypatch, "scenario 'ring:n=8': an instance is cut apart",
                           ["--fabric", "ring:n=8"])
    assert line == "error: scenario 'ring:n=8': an instance is cut apart"
    line = _refused_in_run(monkeypatch, "seed 0 is not taken", ["--scenario", "lite-flat"])
    assert line == "error: seed 0 is not taken"   # --seed left at its default


def test_a_parameter_the_user_typed_is_said_as_its_flag(monkeypatch):
    line = _refused_in_run(monkeypatch, "seed 7 is not taken",
                           ["--scenario", "lite-flat", "--seed", "7"])
    assert line == "error: --seed 7 is not taken"
    line = _refused_in_run(monkeypatch, "gpus 1,000 is not a multiple",
                           ["--scenario", "lite-flat", "--gpus", "1000"])
    assert line == "error: --cluster-gpus 1,000 is not a multiple"   # the alias's option


# ------------------------------------------------- an option's parser, on its declaration only

def _option(command: str, name: str):
    import click

    from netmodel.cli.main import cli

    cmd = cli.get_command(click.Context(cli), command)
    return next(p for p in cmd.params if p.name == name)


@pytest.mark.parametrize("command, name, text, value", [
    ("search", "max_batch", "+6.4e1", 64),
    ("cost", "max_batch", "1e3", 1000),
    ("availability", "max_batch", "64", 64),
    ("serve", "tbt", "50ms", 0.05),
    ("compare", "ttft", "2s", 2.0),
    ("availability", "trials", "1e2", 100),
    ("availability", "seed", "+7", 7),
    ("availability", "threshold", "99%", 0.99),
    ("blast-radius", "detection", "2min", 120.0),
    ("availability", "warmup", "1h", 3600.0),
    ("availability", "load_bandwidth", "12.5GB/s", 12.5e9),
    # read by the run's own check (availability_mc.check_run); the command got the text
    # and passed it on, the declaration's reads= comparing repeats only
    ("availability", "horizon", "2d", 172800.0),
])
def test_the_command_gets_the_value_its_declaration_reads(command, name, text, value):
    """The parser is named on the declaration (netmodel.cli.options.ReadAs) and the command
    gets its value: before, the option was a string the command read again with a parser
    of its own choosing (the declaration's ``reads=`` only compared repeats)."""
    import click

    param = _option(command, name)
    assert param.type.convert(text, param, click.Context(click.Command(command))) == \
        pytest.approx(value)


def test_a_value_read_at_the_declaration_is_recorded_as_typed(tmp_path):
    """An output folder's manifest records options as typed, the read ones too."""
    import json

    r = run_cli([*AVAIL, "--trials", "1e1", "--seed", "+3", "--detection", "2min",
                 "--horizon", "2d", "--out", tmp_path / "o", "--no-plot"])
    assert r.exit_code == 0, r.output
    run = json.loads((tmp_path / "o" / "netmodel-manifest.json").read_text())["run"]
    assert (run["trials"], run["seed"], run["detection"], run["threshold"], run["tbt"],
            run["horizon"]) == ("1e1", "+3", "2min", "99%", "50ms", "2d")
