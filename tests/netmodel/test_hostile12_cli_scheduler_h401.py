"""Hostile round 12 on the command line (h401): ``--scheduler`` naming a service that is not
a Dask scheduler (its dashboard's HTTP port 8787, an SSH server, a proxy). Dask's client
read that service's first 8 bytes as a message length: on an HTTP server it waited without
end (a compare run was still waiting after 45 s), and where text arrived ('SSH-2.0-', a
proxy's bytes) it tried to allocate exabytes (numpy's MemoryError: a traceback, exit 1).
Now the address is refused in one line, exit 2, within the connect timeout."""

from __future__ import annotations

import socket
import threading
import time

import pytest
from click.testing import CliRunner

import netmodel.study.distributed as nd
from compute.errors import UserError
from netmodel.cli.main import cli
from netmodel.study.distributed import Executor


def _serve(greeting: bytes | None):
    """A TCP server on a free local port that answers each connection with ``greeting``
    (None: says nothing until the peer closes, as an HTTP server waits for a request)."""
    pytest.importorskip("distributed")
    srv = socket.create_server(("127.0.0.1", 0))

    def loop():
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            with conn:
                if greeting is not None:
                    conn.sendall(greeting)
                else:
                    conn.settimeout(30)
                    try:
                        while conn.recv(4096):
                            pass
                    except OSError:
                        pass

    threading.Thread(target=loop, daemon=True).start()
    return srv, f"127.0.0.1:{srv.getsockname()[1]}"


def test_a_service_that_says_nothing_is_not_a_scheduler():
    srv, address = _serve(None)
    try:
        t0 = time.perf_counter()
        with pytest.raises(UserError) as err:
            Executor(scheduler=address, timeout=1).start()
        assert time.perf_counter() - t0 < 10
    finally:
        srv.close()
    assert str(err.value) == (
        f"the service at '{address}' is not a Dask scheduler: it sent no handshake (0 of 8 "
        "bytes in 1 s); is it the scheduler's address (tcp://HOST:8786 by default; 8787 is "
        "its dashboard)?")


def test_a_service_that_says_other_bytes_is_not_a_scheduler(monkeypatch):
    srv, address = _serve(b"SSH-2.0-OpenSSH_9.6\r\n")
    monkeypatch.setattr(nd, "CONNECT_TIMEOUT_S", 2.0)
    try:
        r = CliRunner().invoke(cli, ["sweep", "--scenario", "lite-flat", "--param",
                                     "adjust.hop_latency=1us,2us", "--models", "Llama-3-8B",
                                     "--scheduler", address])
    finally:
        srv.close()
    assert r.exit_code == 2, r.output
    # 'SSH-2.0-' read as a little-endian length: 3,256,153,323,631,825,747 bytes
    n = int.from_bytes(b"SSH-2.0-", "little")
    assert r.output == (
        f"error: the service at '{address}' is not a Dask scheduler: its first bytes "
        f"b'SSH-2.0-' announce a message of {n:,} bytes (a handshake is at most 1,048,576); "
        "is it the scheduler's address (tcp://HOST:8786 by default; 8787 is its "
        "dashboard)?\n")
