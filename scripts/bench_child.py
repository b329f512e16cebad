"""A benchmark case in a Python process of its own, so that the memory it reports is its own:
:func:`run_child` runs a program's text and reads back the JSON it prints last; the program
reads its memory with :func:`peak_rss_gb` or :func:`status_gb`, imported by
:data:`IMPORT_LINE` (this folder's copy, whichever checkout the program measures)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

#: The line a child program's text starts with to read its memory as the benchmarks do.
IMPORT_LINE = (f"import sys; sys.path.append({str(HERE)!r}); "
               "from bench_child import peak_rss_bytes, peak_rss_gb, status_gb\n")


def status_gb(key: str) -> float | None:
    """This process's line ``key`` of /proc/self/status in GB (1e9 bytes): ``"VmHWM:"`` its
    peak resident set, ``"VmRSS:"`` its resident set now; None without that line."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) * 1024 / 1e9
    return None


def peak_rss_bytes() -> int:
    """This process's own peak resident set in bytes: VmHWM (ru_maxrss survives exec on
    Linux and would report the parent's peak when that is larger); without /proc,
    ru_maxrss (KiB on Linux, bytes on macOS)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource

    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss if sys.platform == "darwin" else rss * 1024


def peak_rss_gb() -> float:
    """:func:`peak_rss_bytes` in GB (1e9 bytes)."""
    return peak_rss_bytes() / 1e9


def run_child(code: str, **kwargs: Any) -> Any:
    """Run the program text ``code`` in a fresh ``python -c``, checked to succeed (``kwargs``
    to :func:`subprocess.run`, e.g. ``cwd``); the JSON its last line of output holds."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, **kwargs)
    return json.loads(out.stdout.strip().splitlines()[-1])
