"""The whole-number environment settings (compute.limits' NETMODEL_MAX_*, topologies.limits'
NETMODEL_MAX_FABRIC_*, NETMODEL_JOBS) are read by one reader, compute.limits.setting, and
refused in one wording: 'environment variable NAME='text' must be a whole number from 1 to
1e30 (default N)' (or 'from 1 to MOST' where there is a most). Three copies said '> 0',
'>= 1 (default N)' and 'NETMODEL_JOBS=... from 1 to 999,999'; '>= 1' was said of 31 nines
too, past the 30 digits read."""

import os
import re

import pytest

from compute import limits as climits
from compute.errors import UserError
from compute.workers import jobs
from topologies.limits import DEFAULTS, ENV, max_edges, max_nodes


def _default_jobs():
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(4, cpus or 1))


READERS = [
    ("NETMODEL_MAX_SWEEP_POINTS", lambda: climits.setting("NETMODEL_MAX_SWEEP_POINTS", 5000),
     "from 1 to 1e30 (default 5,000)"),
    (ENV["nodes"], max_nodes, f"from 1 to 1e30 (default {DEFAULTS['nodes']:,})"),
    (ENV["edges"], max_edges, f"from 1 to 1e30 (default {DEFAULTS['edges']:,})"),
    ("NETMODEL_JOBS", jobs, f"from 1 to 999,999 (default {_default_jobs()})"),
]


@pytest.mark.parametrize("name, read, bound", READERS)
@pytest.mark.parametrize("text", ["0", "-3", "abc", "1.5", "nan", "1e-400", "9" * 31])
def test_one_wording(monkeypatch, name, read, bound, text):
    monkeypatch.setenv(name, text)
    with pytest.raises(UserError) as err:
        read()
    shown = repr(text)
    assert str(err.value) == (f"environment variable {name}={shown} must be a whole number "
                              f"{bound}"), str(err.value)


@pytest.mark.parametrize("name, read, bound", READERS)
def test_the_same_spellings_are_read(monkeypatch, name, read, bound):
    for text, value in (("7", 7), (" +7 ", 7), ("7e0", 7), ("7.0", 7)):
        monkeypatch.setenv(name, text)
        assert read() == value
    monkeypatch.setenv(name, "1_0")
    with pytest.raises(UserError, match=re.escape(f"{name} '1_0' groups its digits with '_'")):
        read()
    monkeypatch.setenv(name, "  ")
    assert read() == {"NETMODEL_JOBS": _default_jobs(), ENV["nodes"]: DEFAULTS["nodes"],
                      ENV["edges"]: DEFAULTS["edges"]}.get(name, 5000)


def test_jobs_has_a_most(monkeypatch):
    monkeypatch.setenv("NETMODEL_JOBS", "1e6")
    with pytest.raises(UserError, match=r"from 1 to 999,999 \(default \d+\)$"):
        jobs()
    monkeypatch.setenv("NETMODEL_MAX_SWEEP_POINTS", "1e6")
    assert climits.setting("NETMODEL_MAX_SWEEP_POINTS", 5000) == 10**6
