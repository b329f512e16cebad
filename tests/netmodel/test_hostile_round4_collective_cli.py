"""Hostile --algorithms lists (round 4): 'nccl' mixed with other names is refused naming the
whole value (it said "unknown algorithm 'nccl'", blaming the one name that is allowed)."""
import json

import pytest
from click.testing import CliRunner

from netmodel.cli.main import cli


@pytest.mark.parametrize("names", ["nccl,bogus", "ring,nccl", "nccl,ring,tree"])
def test_nccl_in_a_list_is_refused(names):
    r = CliRunner().invoke(cli, ["collective", "all-to-all", "--fabric", "single-switch:n=4",
                                 "--group", "4", "--algorithms", names])
    assert r.exit_code == 2, r.output
    assert f"--algorithms {names!r}: 'nccl'" in r.output and "stands alone" in r.output
    assert "Traceback" not in r.output


def test_nccl_alone_still_runs():
    # 4 H100 on one NVSwitch, 64 MiB all-to-all: each GPU sends 3/4 of its buffer at
    # 450 GB/s, so at least 3/4 x 64 MiB / 450 GB/s = 112 us
    r = CliRunner().invoke(cli, ["collective", "all-to-all", "--fabric", "single-switch:n=4",
                                 "--group", "4", "--algorithms", "nccl", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["time"] >= 0.75 * 2**26 / 450e9
