"""compute.workers: a function run in a forked child gives what it gives here."""

from __future__ import annotations

import os

import numpy as np
import pytest

from compute.errors import UserError
from compute.workers import forks, in_background, jobs

needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")


@needs_fork
def test_the_child_starts_with_the_parents_state_and_sends_back_its_result(monkeypatch):
    monkeypatch.setenv("NETMODEL_JOBS", "2")
    assert forks()
    cache = {"routes": np.arange(5.0)}          # computed before: the child has it

    def work():
        return os.getpid(), cache["routes"].sum() * 2, {"nested": [1, (2, 3)]}

    job = in_background(work)
    pid, total, nested = job.result()
    assert pid != os.getpid()                   # it ran elsewhere
    assert total == 20.0 and nested == {"nested": [1, (2, 3)]}
    assert job.result()[1] == 20.0              # asking again gives the same


@needs_fork
def test_what_exists_at_the_fork_is_frozen_until_the_result_is_taken(monkeypatch):
    import gc

    monkeypatch.setenv("NETMODEL_JOBS", "2")
    gc.unfreeze()
    job = in_background(lambda: gc.get_freeze_count() > 0)  # the child sees them frozen
    assert gc.get_freeze_count() > 0           # and so does the parent, while it runs
    assert job.result() is True
    assert gc.get_freeze_count() == 0          # collected again once the result is in
    job = in_background(lambda: 1)
    job.cancel()
    assert gc.get_freeze_count() == 0


def test_one_job_runs_it_here_at_once(monkeypatch):
    monkeypatch.setenv("NETMODEL_JOBS", "1")
    assert jobs() == 1 and not forks()
    seen = []
    job = in_background(lambda: seen.append(os.getpid()) or "done")
    assert seen == [os.getpid()]                # already ran, in this process
    assert job.result() == "done"


@needs_fork
@pytest.mark.parametrize("n", ["1", "2"])
def test_errors_come_back_as_they_were(monkeypatch, n):
    monkeypatch.setenv("NETMODEL_JOBS", n)

    def user_error():
        raise UserError("scenario 'x' is unknown")

    def bug():
        return {}["missing"]

    with pytest.raises(UserError, match="scenario 'x' is unknown"):
        in_background(user_error).result()
    with pytest.raises((RuntimeError, KeyError), match="missing"):
        in_background(bug).result()


@pytest.mark.parametrize("value", ["0", "two", "-1"])
def test_bad_job_counts_are_refused(monkeypatch, value):
    monkeypatch.setenv("NETMODEL_JOBS", value)
    with pytest.raises(UserError, match="NETMODEL_JOBS"):
        jobs()


@needs_fork
def test_a_result_never_asked_for_leaves_no_child(monkeypatch):
    import time

    monkeypatch.setenv("NETMODEL_JOBS", "2")
    job = in_background(lambda: time.sleep(30))
    pid = job._pid
    job.cancel()
    with pytest.raises(ChildProcessError):   # killed and reaped: no such child any more
        os.waitpid(pid, os.WNOHANG)
    del job                                  # and dropping a cancelled one is harmless


def _ended(pid: int, seconds: float = 60.0) -> bool:
    """Whether child ``pid`` ends within ``seconds``, left unreaped (``WNOWAIT``)."""
    import time

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            return True
        time.sleep(0.01)
    return False


@needs_fork
@pytest.mark.skipif(not hasattr(os, "waitid"), reason="no os.waitid on this platform")
def test_a_child_ends_once_done_before_its_result_is_asked_for(monkeypatch):
    # 8 MB of result, past a pipe's 64 KiB: the child writes it and ends without waiting
    # for the parent to read (a pipe alone held it, and its memory, until result())
    monkeypatch.setenv("NETMODEL_JOBS", "2")
    job = in_background(lambda: np.arange(1 << 20, dtype=np.float64))
    assert _ended(job._pid)
    got = job.result()
    assert got.shape == (1 << 20,) and got[-1] == (1 << 20) - 1


@needs_fork
def test_a_result_the_file_cannot_take_comes_through_the_pipe(monkeypatch):
    # the child's files limited to 4 KiB (Python ignores SIGXFSZ: a write past it fails
    # with EFBIG): 8 MB of result comes back whole through the pipe
    import resource

    monkeypatch.setenv("NETMODEL_JOBS", "2")

    def work():
        hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, hard))
        return np.arange(1 << 20, dtype=np.float64)

    got = in_background(work).result()
    assert got.shape == (1 << 20,) and float(got.sum()) == (1 << 20) * ((1 << 20) - 1) / 2
