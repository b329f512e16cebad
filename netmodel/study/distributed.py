"""Independent cells of a study run in-process or on a Dask cluster (``dask.distributed``).

A *cell* is a unit of work that is a pure function of what it carries (scenarios, models,
phases, options: all picklable), so it gives the same numbers wherever it runs.
:class:`Executor` maps a module-level function over cells: in this process, one after the
other (the default, needing nothing beyond netmodel), on a local cluster of ``workers``
processes, or on a running Dask cluster at ``scheduler``, which is how a sweep outgrows
one machine. Results come back in the cells' order whatever order they finish in, so
every output is byte-identical to the in-process run's. Dask is the optional extra
:data:`EXTRA` and is imported only when a cluster is asked for.

Tasks are sized by the caller (:meth:`Executor.chunks` cuts a list of points into about
:data:`TASKS_PER_SLOT` tasks per worker thread, each building its fabric once), and each
map records the time its cells computed against the time the workers were held
(:class:`MapStats`): the rest is scheduling and transfer overhead, printed by
:meth:`Executor.summary`.

>>> run_cells(abs, [-1, 2, -3])          # no workers, no scheduler: in-process
[1, 2, 3]
>>> with Executor() as ex:
...     ex.distributed, ex.slots, ex.chunks("abc")
(False, 1, [('a',), ('b',), ('c',)])
"""

from __future__ import annotations

import hashlib
import logging
import numbers
import os
import socket
import time
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from compute.errors import UserError
from compute.validate import describe, flag, is_flag, is_whole
from netmodel.study.progress import NO_PROGRESS

if TYPE_CHECKING:
    from netmodel.study.progress import ProgressLike

_C = TypeVar("_C")
_R = TypeVar("_R")

__all__ = ["CONNECT_TIMEOUT_S", "EXTRA", "TASKS_PER_SLOT", "Executor", "MapStats",
           "code_fingerprint", "executor_for", "run_cells"]

#: How to install Dask beside netmodel.
EXTRA = "pip install 'netmodel[distributed]'"
#: Seconds to wait for a scheduler to answer and for its first worker.
CONNECT_TIMEOUT_S = 10.0
#: Most bytes a Dask scheduler's handshake announces (its first message: a few hundred
#: bytes of versions and options); more, or nothing, is not a scheduler speaking.
MAX_HANDSHAKE_BYTES = 1 << 20
#: Tasks per worker thread that :meth:`Executor.chunks` aims at: enough for the load to
#: balance and the progress bar to move, few enough that each task's scheduling round
#: trip (milliseconds) stays small beside its work.
TASKS_PER_SLOT = 8
#: Local worker processes allowed per CPU core (more only adds memory).
WORKERS_PER_CPU = 4
#: The packages whose code and data decide every number (hashed by :func:`code_fingerprint`).
_PACKAGES = ("compute", "topologies", "netmodel")


#: Dask's own log level on a local cluster: CRITICAL, as a worker that misses a heartbeat
#: while the cluster shuts down logs a 30-line traceback at ERROR (2 of 4 valid `sweep
#: --workers 8` runs on 2 cores, exit 0, right results); a task's own failure still reaches
#: the caller as its exception.
SILENCE_LOGS = logging.CRITICAL


def _distributed():
    """The ``distributed`` module, or a :class:`UserError` saying how to install it."""
    try:
        import distributed
    except ImportError:
        raise UserError("running on Dask (workers or scheduler) needs dask.distributed, "
                        f"which is not installed; install the extra: {EXTRA}") from None
    return distributed


def _max_workers() -> int:
    return WORKERS_PER_CPU * (os.cpu_count() or 1)


@dataclass(frozen=True)
class MapStats:
    """One map over a cluster: ``tasks`` run on ``slots`` worker threads in ``wall_s``
    seconds, of which the cells computed ``busy_s`` (summed over tasks).

    >>> MapStats(tasks=16, slots=2, wall_s=10.0, busy_s=15.0).overhead   # 5 s of 20 idle
    0.25
    """

    tasks: int
    slots: int
    wall_s: float
    busy_s: float

    @property
    def overhead(self) -> float:
        """Share of the workers' held time not spent computing cells,
        ``1 - busy / (slots x wall)``: scheduling, transfers and the idle tail."""
        held = self.slots * self.wall_s
        return max(0.0, 1.0 - self.busy_s / held) if held > 0 else 0.0


class Executor:
    """Where cells run: in this process (neither argument), on a local Dask cluster of
    ``workers`` processes (one thread each), or on the Dask cluster whose scheduler is at
    ``scheduler`` (``tcp://HOST:8786``).

    Nothing starts until the first map (or :attr:`slots`); use it as a context manager so
    the cluster or connection is closed afterwards. A remote cluster's workers must run the
    same netmodel code and data as this process (checked: :func:`code_fingerprint`), or
    their numbers could differ.

    Parameters
    ----------
    workers : int, optional
        Worker processes of a local cluster, 1 to 4 per CPU core.
    scheduler : str, optional
        Address of a running scheduler.
    timeout : float, optional
        Seconds to wait for the scheduler and its first worker (default
        :data:`CONNECT_TIMEOUT_S`).
    processes : bool
        Local workers as processes (default) or threads of this process (tests).

    Examples
    --------
    >>> Executor(workers=0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    compute.errors.UserError: workers=0 is not allowed; a local cluster takes 1 to ... workers (4 per CPU core here; give scheduler=ADDRESS for a larger cluster)
    >>> Executor(workers=2, scheduler="tcp://127.0.0.1:8786")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: give workers=N (a local cluster) or scheduler=ADDRESS (a running one), not both
    """

    def __init__(self, workers: int | None = None, scheduler: str | None = None, *,
                 timeout: float | None = None, processes: bool = True):
        if workers is not None and scheduler is not None:
            raise UserError("give workers=N (a local cluster) or scheduler=ADDRESS (a running "
                            "one), not both")
        if workers is not None:
            top = _max_workers()
            # numpy's integers too (np.int64(1) was refused as 'workers=1 is not allowed')
            if not is_whole(workers) or not 1 <= workers <= top:
                raise UserError(f"workers={describe(workers)} is not allowed; a local cluster takes "
                                f"1 to {top} workers ({WORKERS_PER_CPU} per CPU core here; "
                                "give scheduler=ADDRESS for a larger cluster)")
            workers = int(workers)
        if scheduler is not None:
            # ASCII only (a host name as DNS carries it): '²' passed the plain connection as
            # host '2' and then failed in dask.Client, whose leftover hung 20 s at exit and
            # printed a traceback
            if not isinstance(scheduler, str) or not scheduler.strip() \
                    or not scheduler.isascii() \
                    or any(c.isspace() or not c.isprintable() for c in scheduler.strip()):
                raise UserError(f"scheduler={describe(scheduler)} is not an address; give "
                                "HOST:PORT or tcp://HOST:PORT (an ASCII host name)")
            scheduler = scheduler.strip()
        timeout = CONNECT_TIMEOUT_S if timeout is None else timeout
        # also NaN; 'abc' raised TypeError, np.True_ was a second
        if is_flag(timeout) or not isinstance(timeout, numbers.Real) or not timeout > 0:
            raise UserError(f"timeout={describe(timeout)} must be a positive number of seconds")
        processes = flag("", "processes", processes)
        self.workers = workers
        self.scheduler = scheduler
        self.timeout = float(timeout)
        self.processes = bool(processes)
        self.stats: list[MapStats] = []
        self.start_s = 0.0
        self._client = None
        self._cluster = None
        self._pinned: dict = {}       # affinity key -> worker address
        self._pin_weight: dict = {}   # affinity key -> weight sent with it so far

    def __repr__(self) -> str:
        where = (f"workers={self.workers}" if self.workers is not None else
                 f"scheduler={self.scheduler!r}" if self.scheduler is not None else "")
        return f"Executor({where})"

    @property
    def distributed(self) -> bool:
        """Whether cells run on a Dask cluster (else in this process)."""
        return self.workers is not None or self.scheduler is not None

    @property
    def slots(self) -> int:
        """Worker threads cells can run on at once (1 in-process; starts the cluster)."""
        if not self.distributed:
            return 1
        return max(1, sum(self._start().nthreads().values()))

    def chunks(self, items: Iterable[_C],
               key: Callable[[_C], object] | None = None) -> list[tuple[_C, ...]]:
        """``items`` cut into tasks, in order: one item each in-process (where caches are
        shared between cells anyway), else about :data:`TASKS_PER_SLOT` consecutive runs
        per worker thread, of nearly equal length. With ``key``, neighbours of equal
        ``key(item)`` stay in one task (they share work, e.g. one search priced at several
        cost values).

        >>> ex = Executor()
        >>> ex.chunks([1, 2, 3])
        [(1,), (2,), (3,)]
        >>> ex._chunked(list(range(7)), 3)
        [(0, 1, 2), (3, 4, 5), (6,)]
        >>> ex._chunked(list(range(7)), 3, key=lambda i: i // 4)
        [(0, 1, 2, 3), (4, 5, 6)]
        """
        items = list(items)
        if not self.distributed:
            return [(item,) for item in items]
        return self._chunked(items, TASKS_PER_SLOT * self.slots, key)

    @staticmethod
    def _chunked(items: list, n: int, key=None) -> list[tuple]:
        size = -(-len(items) // max(1, n))   # ceil: at most n chunks without a key
        keys = [key(item) for item in items] if key is not None else list(range(len(items)))
        out: list[list] = []
        for k, item in enumerate(items):
            if not out or (len(out[-1]) >= size and keys[k] != keys[k - 1]):
                out.append([])
            out[-1].append(item)
        return [tuple(c) for c in out]

    # ---------------------------------------------------------------- cluster

    def start(self) -> Executor:
        """Start the local cluster or connect to the scheduler now (else on first use),
        so that a failure shows before any work; nothing to do in-process."""
        if self.distributed:
            self._start()
        return self

    def _start(self):
        """The Dask client (started on first use)."""
        if self._client is not None:
            return self._client
        dd = _distributed()
        t0 = time.perf_counter()
        if self.workers is not None:
            try:
                self._cluster = dd.LocalCluster(
                    n_workers=self.workers, threads_per_worker=1, processes=self.processes,
                    dashboard_address="127.0.0.1:0", silence_logs=SILENCE_LOGS)
            except Exception as exc:  # e.g. spawned workers re-running an unguarded script
                raise UserError(f"cannot start a local Dask cluster of {self.workers} "
                                f"workers: {_first_line(exc)} (a script that asks for workers "
                                "must run under if __name__ == '__main__')") from None
            self._client = dd.Client(self._cluster, set_as_default=False)
        else:
            self._client = self._connect(dd)
        try:
            prints = self._client.run(_warm_up)
        except Exception as exc:  # a worker that cannot import netmodel
            self.close()
            raise UserError(f"the Dask workers cannot run netmodel: {_first_line(exc)}; "
                            "install netmodel where the workers run") from None
        mine = code_fingerprint()
        odd = sorted(w for w, fp in prints.items() if fp != mine)
        if odd:
            self.close()
            raise UserError(f"Dask worker {odd[0]} runs other netmodel code or data than "
                            "this process (its numbers could differ); install the same "
                            "netmodel there")
        self.start_s = time.perf_counter() - t0
        return self._client

    def _connect(self, dd):
        logging.getLogger("distributed").setLevel(logging.ERROR)
        where = f"cannot reach the Dask scheduler at {self.scheduler!r}"
        try:
            # a plain connection first: fails at once where nothing listens, and leaves no
            # half-started client behind to complain at exit
            scheme, loc = dd.comm.parse_address(self.scheduler)
            if scheme in ("tcp", "tls"):
                # no default port: dask.Client takes none, so an address the probe passed
                # with 8786 ('0x10', the IPv4 0.0.0.16) failed in the Client after it had
                # half-started, whose leftover hung 20 s at exit with a traceback
                host, port = dd.comm.addressing.parse_host_port(loc)
                if not 0 < port < 65536:
                    raise ValueError(f"port {port} is not 1 to 65535")
                with socket.create_connection((host, port), timeout=self.timeout) as probe:
                    if scheme == "tcp":
                        _check_handshake(probe, self.scheduler, self.timeout)
            if scheme != "tcp":   # tls, ws, wss, inproc, ucx, one Dask lacks: its connect
                _probe_comm(dd, self.scheduler, self.timeout)
            client = dd.Client(self.scheduler, timeout=self.timeout, set_as_default=False)
        except UserError:   # a ValueError, said as it is
            raise
        except OSError as exc:
            raise UserError(f"{where}: {exc.strerror or _first_line(exc)}") from None
        except (TimeoutError, ValueError, TypeError) as exc:
            raise UserError(f"{where}: {_first_line(exc)}") from None
        try:
            client.wait_for_workers(1, timeout=self.timeout)
        except (OSError, TimeoutError) as exc:
            client.close()
            raise UserError(f"the Dask scheduler at {self.scheduler!r} has no worker "
                            f"(waited {self.timeout:g} s); start some with: dask worker "
                            f"{self.scheduler}") from exc
        return client

    def close(self) -> None:
        """Close the client and the local cluster (if any)."""
        client, cluster = self._client, self._cluster
        self._client = self._cluster = None
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---------------------------------------------------------------- work

    def map(self, function: Callable[[_C], _R], cells: Iterable[_C], *,
            progress: ProgressLike = NO_PROGRESS, labels: Iterable[str] | None = None,
            weights: Iterable[int] | None = None,
            affinity: Sequence[Hashable] | None = None) -> list[_R]:
        """``[function(cell) for cell in cells]``, in this order wherever they ran.

        ``function`` must be a module-level function (picklable by reference) and the
        cells picklable. ``progress.advance(labels[i], weights[i])`` is called as each
        cell finishes (labels default to ``""``, weights to 1). A cell raising an error
        raises it here: the first in the cells' order, after every cell has finished, so
        the error does not depend on which worker was faster.

        ``affinity``: a key per cell; cells of one key go to one worker, in this map and
        every later one of this executor (so what that worker compiled for the key, e.g.
        a fabric's collective costs, serves them all), each new key to the worker with
        the least weight so far. A preference only: Dask may still move a cell.
        """
        cells = list(cells)
        labels = [""] * len(cells) if labels is None else list(labels)
        weights = [1] * len(cells) if weights is None else list(weights)
        if not self.distributed:
            out = []
            for cell, what, n in zip(cells, labels, weights, strict=True):
                out.append(function(cell))
                progress.advance(what, n)
            return out
        if not cells:
            return []
        dd = _distributed()
        client = self._start()
        slots = self.slots
        t0 = time.perf_counter()
        where = self._pin(affinity, weights, list(client.nthreads())) \
            if affinity is not None else [None] * len(cells)
        tag = os.urandom(6).hex()
        futures = [client.submit(_timed, function, cell, pure=False,
                                 key=f"netmodel-cell-{tag}-{k}",
                                 **({"workers": [w], "allow_other_workers": True} if w else {}))
                   for k, (cell, w) in enumerate(zip(cells, where, strict=True))]
        index = {f.key: i for i, f in enumerate(futures)}
        results: list = [None] * len(cells)
        failed: list[int] = []
        busy = 0.0
        try:
            for f in dd.as_completed(futures, loop=client.loop):
                i = index[f.key]
                if f.status == "error":
                    failed.append(i)
                else:
                    seconds, results[i] = f.result()
                    busy += seconds
                progress.advance(labels[i], weights[i])
            self.stats.append(MapStats(len(cells), slots, time.perf_counter() - t0, busy))
            if failed:
                first = min(failed)
                try:
                    futures[first].result()
                except dd.KilledWorker as exc:
                    raise UserError(f"a Dask worker died running {labels[first] or 'a cell'}"
                                    f" (out of memory?): {_first_line(exc)}") from None
        finally:
            client.cancel(futures)
        return results

    def _pin(self, affinity, weights, workers: list) -> list:
        """The worker of each cell's affinity key (pinned on first sight to the worker
        with the least weight pinned so far)."""
        affinity = list(affinity)
        if len(affinity) != len(weights):
            raise ValueError("affinity needs one key per cell")
        pinned, load = self._pinned, {w: 0.0 for w in workers}
        for key, w in list(pinned.items()):
            if w in load:
                load[w] += self._pin_weight[key]
            else:               # that worker left: pin its keys again
                del pinned[key]
        for key, n in zip(affinity, weights, strict=True):
            if key not in pinned:
                pinned[key] = min(workers, key=lambda w: (load[w], workers.index(w)))
                self._pin_weight[key] = 0.0
            self._pin_weight[key] += n
            load[pinned[key]] += n
        return [pinned[key] for key in affinity]

    def summary(self) -> str:
        """One line: where the cells ran, how long the cluster took to start, and the
        scheduling overhead of every map so far ("" in-process or before any map)."""
        if not (self.distributed and self.stats):
            return ""
        tasks = sum(s.tasks for s in self.stats)
        wall = sum(s.wall_s for s in self.stats)
        busy = sum(s.busy_s for s in self.stats)
        held = sum(s.slots * s.wall_s for s in self.stats)
        slots = max(s.slots for s in self.stats)
        where = (f"local cluster of {self.workers} worker processes"
                 if self.workers is not None else f"{slots} worker threads at {self.scheduler}")
        return (f"dask: {where} (ready in {self.start_s:.1f} s); {tasks} tasks in {wall:.1f} s,"
                f" {busy:.1f} s of work in the cells; scheduling overhead "
                f"{max(0.0, 1 - busy / held) if held else 0.0:.1%}")


def _probe_comm(dd, address: str, timeout: float) -> None:
    """Open and close one Dask connection to ``address`` (every scheme but tcp, which
    :meth:`Executor._connect` probes with a socket and the scheduler's handshake; tls after
    its socket probe), with the TLS settings of Dask's config as ``dask.Client`` takes
    them: where it fails, the Client fails too, but after it has half-started, whose
    leftover hung 20 s at exit with a traceback (``--scheduler http://host:80``: a scheme
    Dask lacks; ``inproc://x``: another process's; ``ucx://``: no UCX; ``tls://`` with no
    TLS settings). Raises ValueError saying why (OSError and TimeoutError as they come)."""
    import asyncio

    async def once() -> None:
        args = dd.Security().get_connection_args("client")
        comm = await dd.comm.connect(address, timeout=timeout, **args)
        await comm.close()

    scheme = address.split("://", 1)[0] if "://" in address else "tcp"
    try:
        asyncio.run(asyncio.wait_for(once(), timeout + 1))
    except (ValueError, TypeError) as exc:   # the scheme's own words are Dask's
        if scheme == "inproc":   # 'not enough values to unpack'
            raise ValueError("an inproc:// scheduler runs in the same process only; reach "
                             "one in another over tcp://, tls://, ws:// or wss://") from None
        if scheme == "ucx":      # 'Can't instantiate abstract class UCXConnector'
            raise ValueError("ucx:// needs Dask's UCX package (distributed-ucxx), which is "
                             "not installed; reach the scheduler over tcp://, tls://, ws:// "
                             "or wss://") from None
        if scheme in ("tls", "wss") and "ssl_context" in str(exc):   # no TLS settings
            raise ValueError(f"{scheme}:// needs TLS settings (Dask's config "
                             "distributed.comm.tls: ca-file, client cert and key), none set; "
                             "reach the scheduler over tcp://, or set them") from None
        raise
    except (OSError, TimeoutError):
        raise
    except Exception as exc:   # e.g. tornado's 'Non-websocket response' from a web server
        raise ValueError(_first_line(exc)) from None


def _check_handshake(sock: socket.socket, address: str, timeout: float) -> None:
    """Refuse a service at ``address`` that does not open as a Dask scheduler does: on a
    connection a scheduler writes its handshake at once, 8 bytes (little-endian) giving the
    length of what follows, then that. Another service (the dashboard's HTTP port 8787, a
    proxy) writes nothing or other bytes, which dask's client read as a length: it waited
    without end on an HTTP server, and where 8 bytes of text arrived it tried to allocate
    exabytes (numpy's MemoryError, a traceback). Read with ``timeout``; an ``OSError`` from
    the socket is the caller's to say."""
    sock.settimeout(timeout)
    head = b""
    try:
        while len(head) < 8:
            chunk = sock.recv(8 - len(head))
            if not chunk:
                break
            head += chunk
    except TimeoutError:
        pass
    hint = ("is it the scheduler's address (tcp://HOST:8786 by default; 8787 is its "
            "dashboard)?")
    if len(head) < 8:
        raise UserError(f"the service at {address!r} is not a Dask scheduler: it sent no "
                        f"handshake ({len(head)} of 8 bytes in {timeout:g} s); {hint}")
    n = int.from_bytes(head, "little")
    if not 0 < n <= MAX_HANDSHAKE_BYTES:
        raise UserError(f"the service at {address!r} is not a Dask scheduler: its first bytes "
                        f"{head!r} announce a message of {n:,} bytes (a handshake is at most "
                        f"{MAX_HANDSHAKE_BYTES:,}); {hint}")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def _timed(function, cell):
    """``(seconds, function(cell))``: what a worker runs for each cell."""
    t0 = time.perf_counter()
    out = function(cell)
    return time.perf_counter() - t0, out


def _warm_up() -> str:
    """Import the study's heavy modules (numpy, networkx, the collective engine) on a
    worker, so the first task does not pay for them, and return the worker's
    :func:`code_fingerprint`."""
    import netmodel.study.cost  # noqa: F401
    import netmodel.study.fabric_search  # noqa: F401

    return code_fingerprint()


_FINGERPRINT: list[str] = []


def code_fingerprint() -> str:
    """A SHA-256 of the code and data files of :data:`_PACKAGES` as installed here (names
    and contents), so two machines can tell whether they compute the same numbers.

    >>> len(code_fingerprint()), code_fingerprint() == code_fingerprint()
    (64, True)
    """
    if not _FINGERPRINT:
        import importlib

        h = hashlib.sha256()
        for name in _PACKAGES:
            root = Path(importlib.import_module(name).__file__).parent
            for path in sorted(root.rglob("*")):
                if path.suffix in (".py", ".toml", ".json", ".csv") and path.is_file() \
                        and "__pycache__" not in path.parts:
                    h.update(f"{name}/{path.relative_to(root).as_posix()}\0".encode())
                    h.update(path.read_bytes())
        _FINGERPRINT.append(h.hexdigest())
    return _FINGERPRINT[0]


@contextmanager
def executor_for(executor: Executor | None = None, workers: int | None = None,
                 scheduler: str | None = None) -> Iterator[Executor]:
    """``executor`` as is (left open), else a new :class:`Executor` of ``workers`` or
    ``scheduler`` closed on exit.

    >>> with executor_for() as ex:
    ...     ex.distributed
    False
    """
    if executor is not None:
        if workers is not None or scheduler is not None:
            raise UserError("give executor, or workers or scheduler, not both")
        yield executor
        return
    with Executor(workers, scheduler) as ex:
        yield ex


def run_cells(function: Callable[[_C], _R], cells: Iterable[_C], *, workers: int | None = None,
              scheduler: str | None = None, executor: Executor | None = None,
              progress: ProgressLike = NO_PROGRESS, labels: Iterable[str] | None = None,
              weights: Iterable[int] | None = None) -> list[_R]:
    """``[function(cell) for cell in cells]``, in-process when neither ``workers`` nor
    ``scheduler`` (nor an open ``executor``) is given, else on Dask
    (see :meth:`Executor.map`).

    >>> run_cells(len, ["ab", "cde"])
    [2, 3]
    """
    with executor_for(executor, workers, scheduler) as ex:
        return ex.map(function, cells, progress=progress, labels=labels, weights=weights)
