"""Hostile input, helper 265: one Monte Carlo trial past what memory holds.

The run's work guard (MAX_EVENTS, 2e7 events) bounds trials x events, and trials are drawn in
chunks of about CHUNK_EVENTS (1e6) events, but a chunk is at least one trial: one trial of
1.86e7 events (lite-flat, --rate gpu=1, --horizon 1e9s, --trials 1: under the guard) was
drawn whole, at some 350 bytes an event, past 5.5 GB of memory (a numpy MemoryError and a
traceback under a 6 GB limit, after 32 s). Now a trial is held to MAX_TRIAL_EVENTS (4e6,
about 1.4 GB; a 131,072-GPU cluster at the catalog's rates draws some 1.4e6 over a century),
refused in one line before anything is drawn, naming what helps (not fewer trials).
"""

from __future__ import annotations

import pytest

from compute.errors import UserError
from netmodel.study.availability_mc import MAX_EVENTS, MAX_TRIAL_EVENTS
from tests.netmodel.cli_helpers import one_line_error, run_cli

RUN = ["availability", "--scenario", "lite-flat", "--model", "Llama-3-70B", "--no-plot", "-q",
       "--trials", "1"]


def test_the_trial_limit_is_under_the_run_limit():
    assert MAX_TRIAL_EVENTS == 4e6 < MAX_EVENTS


def test_one_long_trial_is_refused_before_it_is_drawn(tmp_path):
    out = tmp_path / "out"
    one_line_error(run_cli([*RUN, "--horizon", "1e9s", "--rate", "gpu=1", "--out", out]),
                   "1.85e+07 failure events in one trial; at most 4e+06",
                   "give a shorter --horizon or lower --rate")   # flags (h502)
    assert not out.exists()


def test_a_long_warm_up_names_the_repair_time():
    """1 h of horizon (the shortest allowed) after a warm-up of one repair time, 100 years
    of host repairs."""
    one_line_error(run_cli([*RUN, "--horizon", "1h", "--rate", "host=1", "--rate", "gpu=0.1",
                            "--repair-time", "host=100y"]),
                   "9.36e+06 failure events in one trial",
                   "give shorter --repair-time (the draws start one repair time, 100 y")


def test_a_trial_under_the_limit_runs():
    """1.86e5 events (a tenth of a tenth of the refused one's horizon): drawn."""
    r = run_cli([*RUN, "--horizon", "1e7s", "--rate", "gpu=1"])
    assert r.exit_code == 0, r.output


def test_the_library_refuses_it_too():
    from netmodel.study.availability import availability
    from netmodel.study.reliability_catalog import catalog

    with pytest.raises(UserError, match="failure events in one trial"):
        availability("lite-flat", "Llama-3-70B", trials=1, horizon="1e9s",
                     catalog_=catalog().with_(gpu_rate_per_hour=1.0))
