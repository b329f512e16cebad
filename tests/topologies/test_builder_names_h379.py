"""The builders' names are known without loading a builder (for help texts, which must not
import networkx and numpy), and they are the registry's, in its order."""

from __future__ import annotations

import subprocess
import sys

from topologies.builder_names import NAMES
from topologies.registry import builders


def test_the_names_read_without_loading_are_the_registrys_in_its_order():
    assert NAMES == tuple(b.name for b in builders())


def test_the_command_line_reads_them_without_the_package():
    # fabric_help (every --help naming builders) imported topologies.specs: networkx, numpy
    code = ("import sys\nfrom netmodel.cli.options import builder_names\n"
            "print(len(builder_names()), [m for m in ('topologies', 'numpy', 'networkx') "
            "if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == f"{len(builders())} []"


def test_the_command_line_reads_the_same_names_with_the_package_loaded():
    from netmodel.cli.options import builder_names

    assert builder_names() == NAMES
