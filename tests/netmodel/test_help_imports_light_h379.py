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

import subprocess
import sys

import pytest

from netmodel.cli.help_format import command_paths
from netmodel.cli.main import cli

HEAVY = ("numpy", "networkx", "scipy", "matplotlib", "dask")


PATHS = command_paths(cli)


def _heavy_after_help(path: tuple[str, ...]) -> list[str]:
    code = ("import sys\nfrom netmodel.cli.main import main\n"
            "try:\n    main(sys.argv[1:] + ['--help'])\nexcept SystemExit:\n    pass\n"
            f"print('HEAVY=' + ','.join(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code, *path], capture_output=True, text=True,
                         check=True)
    assert "Usage: netmodel" in out.stdout          # the help was written
    return [m for m in out.stdout.strip().splitlines()[-1].removeprefix("HEAVY=").split(",") if m]


def test_every_group_and_command_is_walked():
    walked = {" ".join(p) for p in PATHS}
    assert {"", "topology", "topology show", "topology compare", "study",
            "study lite-gpu"} <= walked
    assert {"collective", "costs", "compare", "infer", "search", "serve", "sweep",
            "yield"} <= walked


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "netmodel")
def test_help_imports_no_numerical_library(path):
    assert _heavy_after_help(path) == []
