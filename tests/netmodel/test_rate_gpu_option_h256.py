"""``--rate gpu=R`` sets the reference GPU's whole failure rate (h256).

Every class's rate could be set with ``--rate CLASS=R`` but the GPU's: ``gpu-die`` and
``gpu-package`` come from the die/package split of one GPU rate, so ``--rate gpu-die=0``
was refused ("set --area-share instead"), and no area share turns GPU failures off (it
only moves the rate between the two). A user could not switch every failure class off,
nor ask what a GPU twice as reliable does, though the library took it
(``Catalog.with_(gpu_rate_per_hour=...)``). Now ``--rate gpu=R`` sets that rate and the
split turns it into the two classes as before.
"""

from __future__ import annotations

import json

import pytest

from tests.netmodel.cli_helpers import one_line_error, run_cli

LITE = ["--scenario", "lite-flat", "--model", "Llama-3-70B", "--no-plot"]


def _rates(*extra):
    r = run_cli(["blast-radius", *LITE, "--json", *extra])
    assert r.exit_code == 0, r.output
    return {row["cls"]: row["rate_per_hour"] for row in json.loads(r.output)["rows"]}


def test_gpu_rate_is_split_into_die_and_package_by_hand():
    # Lite: a quarter of the H100's SMs and HBM, so the die's share (0.638 of the rate)
    # scales by 1/4 and the package's (0.362) stays: 2.52e-5 x 0.638 / 4 and x 0.362
    r = _rates("--rate", "gpu=2.52e-5")
    assert r["gpu-die"] == pytest.approx(2.52e-5 * 0.638 / 4, rel=1e-4)
    assert r["gpu-package"] == pytest.approx(2.52e-5 * 0.362, rel=1e-4)
    default = _rates()
    assert r["gpu-die"] == pytest.approx(2 * default["gpu-die"], rel=1e-4)
    assert r["host"] == default["host"]


def test_every_failure_class_off_reads_full_capacity():
    # lite-flat's classes: gpu-die, gpu-package (from gpu), host, cpo-engine, leaf
    r = run_cli(["availability", *LITE, "-q", "--trials", "50", "--rate", "gpu=0",
                 "--rate", "host=0", "--rate", "cpo-engine=0", "--rate", "leaf=0"])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    mean = next(x for x in lines if x.startswith("mean capacity")).split()
    assert mean[2:] == ["1.000000", "±0.0e+00", "1.000000", "1.000000"]
    events = next(x for x in lines if x.startswith("instance-down events")).split()
    assert events[-2:] == ["0", "0"]
    assert not any(x.startswith("note:") for x in lines)   # gpu is no absent class


def test_the_split_classes_point_at_the_gpu_rate():
    one_line_error(run_cli(["blast-radius", *LITE, "--rate", "gpu-die=0"]),
                   "--rate gpu-die: its rate comes from the GPU's split",
                   "--rate gpu=R (0 turns GPU failures off)", "--area-share")
    one_line_error(run_cli(["blast-radius", *LITE, "--rate", "gpux=0"]),
                   "unknown component class 'gpux'", "'gpu', 'gpu-die'")
    # a repair time stays per class: gpu is no class there
    one_line_error(run_cli(["blast-radius", *LITE, "--repair-time", "gpu=1h"]),
                   "unknown component class 'gpu'")
