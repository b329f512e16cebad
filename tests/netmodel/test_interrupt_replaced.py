"""A signal whose Interrupted a library replaced by an error of its own, not chained (numpy
comparing two structured arrays, as np.unique(..., axis=0) does, writes ``TypeError: Cannot
compare structured arrays unless they have a common dtype`` over whatever the comparison
raised): still the command's line and status, not that error's traceback. Found once in
hostile round 20 ('stop availability SIGINT at 50% over an earlier output'); here made
deterministic: the process signals itself and the stand-in replaces the Interrupted."""

from __future__ import annotations

import os
import signal

import pytest

from netmodel.cli import main as cli_main
from netmodel.cli.interrupt import Interrupted, interruption, stop_on_signals


@pytest.fixture
def ctrl_c_default():
    given = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, given)


def _replaced() -> None:
    """The Interrupted dropped and a TypeError raised in its place with no link to it (as
    numpy's C code sets its error: no __cause__, no __context__)."""
    try:
        os.kill(os.getpid(), signal.SIGINT)
    except Interrupted:
        pass
    raise TypeError("Cannot compare structured arrays unless they have a common dtype.")


def test_an_interruption_replaced_by_a_librarys_error_is_said_as_one(monkeypatch, capsys,
                                                                     ctrl_c_default):
    monkeypatch.setattr(cli_main, "matplotlib_folder", _replaced)
    with pytest.raises(SystemExit) as stopped:
        cli_main.main(["--help"])
    assert stopped.value.code == 130
    said = capsys.readouterr()
    assert said.err == "interrupted by SIGINT: stopped, nothing half-written (exit status 130)\n"
    assert said.out == ""


def test_an_error_with_no_signal_is_no_interruption(ctrl_c_default):
    """The fallback is only the signal raised during the command now guarded: a command
    after one that was stopped starts with none (its own TypeError is a TypeError)."""
    with pytest.raises(Interrupted), stop_on_signals():
        os.kill(os.getpid(), signal.SIGINT)
    assert interruption(TypeError("x")).name == "SIGINT"   # that command's signal
    with stop_on_signals():
        pass
    assert interruption(TypeError("x")) is None
