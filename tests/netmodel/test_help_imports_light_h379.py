"""Every command's --help is written without numpy and networkx (nor scipy, matplotlib,
dask): ``topology show --help`` loaded both through ``topologies/__init__`` (0.29 s against
0.04 s for ``netmodel --help``), as did ``topology compare/export/plot`` and ``calibrate``.

The commands walked are the command line's own (a new command is checked by itself). The
last eight to load numpy (collective, costs, compare, infer, search, serve, sweep, yield)
read their help from the roofline's options, the die yield models and the collective
engine's names, which now live in modules of their own without numpy
(compute.roofline_options, compute.parallel_rules, compute.dies, netmodel.collectives.names).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from netmodel.cli.help_format import command_paths
from netmodel.cli.main import cli

HEAVY = ("numpy", "networkx", "scipy", "matplotlib", "dask")


PATHS = command_paths(cli)


#: One process imports the command line as ``netmodel`` does, checks that this loaded none of
#: HEAVY, then forks a child per command path that writes the help (its stdout a file of its
#: own) and the HEAVY modules it then holds: each help starts from the state a fresh
#: ``netmodel ... --help`` reaches, without an interpreter start and import per path.
_WALK = """\
import json, os, sys, tempfile
from netmodel.cli.main import main
heavy = {heavy!r}
assert [m for m in heavy if m in sys.modules] == [], 'importing the command line'
found = {{}}
for path in {paths!r}:
    with tempfile.TemporaryFile() as out:
        pid = os.fork()
        if pid == 0:
            os.dup2(out.fileno(), 1)
            try:
                main(list(path) + ['--help'])
            except SystemExit:
                pass
            sys.stdout.flush()
            print('HEAVY=' + ','.join(m for m in heavy if m in sys.modules), flush=True)
            os._exit(0)
        assert os.waitpid(pid, 0)[1] == 0
        out.seek(0)
        found[' '.join(path)] = out.read().decode()
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def helps() -> dict[str, str]:
    """Each command path's (``'topology show'``) help output and HEAVY line."""
    code = _WALK.format(heavy=HEAVY, paths=[tuple(p) for p in PATHS])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _heavy_after_help(output: str) -> list[str]:
    assert "Usage: netmodel" in output          # the help was written
    return [m for m in output.strip().splitlines()[-1].removeprefix("HEAVY=").split(",") if m]


def test_every_group_and_command_is_walked():
    walked = {" ".join(p) for p in PATHS}
    assert {"", "topology", "topology show", "topology compare", "study",
            "study lite-gpu"} <= walked
    assert {"collective", "costs", "compare", "infer", "search", "serve", "sweep",
            "yield"} <= walked


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "netmodel")
def test_help_imports_no_numerical_library(helps, path):
    assert _heavy_after_help(helps[" ".join(path)]) == []
