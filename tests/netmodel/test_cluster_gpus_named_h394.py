"""A cluster size the library refuses is told as the command line's flag (h394).

``blast-radius`` and ``availability`` pass ``--cluster-gpus`` to the study as its parameter
``gpus``; :func:`netmodel.study.reliability_fabric.cluster_cells` refuses a size that is not
a multiple of the fabric naming that parameter, and the line reached the user as
``error: gpus 1,000 is not a multiple ...``, an option no command has. The CLI now says
``--cluster-gpus``, as it rewords ``name=value`` (``keywords_as_flags``)."""

from __future__ import annotations

import pytest

from tests.netmodel.cli_helpers import one_line_error, run_cli

COMMANDS = {"blast-radius": [], "availability": ["-q", "--trials", "10"]}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize(("where", "size", "cell"), [
    (["--scenario", "lite-direct"], "1e3", 128),   # 1,000 = 7 x 128 + 104
    (["--fabric", "ring:n=8"], "12", 8),
])
def test_a_size_off_the_fabric_names_cluster_gpus(command, where, size, cell):
    r = run_cli([command, *where, "--model", "Llama-3-8B", "--no-plot",
                 *COMMANDS[command], "--cluster-gpus", size])
    n = int(float(size))
    lo = n // cell * cell
    line = one_line_error(r)
    assert line == (f"error: --cluster-gpus {n:,} is not a multiple of the scenario's fabric "
                    f"of {cell} GPUs (the cluster is copies of it); use {lo:,} or "
                    f"{lo + cell:,}")


def test_the_old_alias_is_told_as_the_option_too():
    r = run_cli(["blast-radius", "--scenario", "lite-direct", "--model", "Llama-3-8B",
                 "--gpus", "200"])
    assert one_line_error(r) == ("error: --cluster-gpus 200 is not a multiple of the "
                                 "scenario's fabric of 128 GPUs (the cluster is copies of "
                                 "it); use 128 or 256")
