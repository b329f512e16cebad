"""Hostile input, helper 265: ``--repair-time gpu=T`` after ``--rate gpu=R`` (61cbcbc).

``--rate gpu=R`` sets the GPU's whole rate, so a user tries the same class for its repair
time; that was refused by the library's check, "unknown component class 'gpu'; known: ..."
without the option it came from (the CLI's other refusals say '--rate: ...') nor the two
classes a GPU is repaired as. Now the line names --repair-time and, for 'gpu', gpu-die and
gpu-package; any other unknown class keeps the known list alone.
"""

from __future__ import annotations

import pytest

from tests.netmodel.cli_helpers import one_line_error, run_cli

LITE = ["--scenario", "lite-flat", "--model", "Llama-3-70B", "--no-plot"]


@pytest.mark.parametrize("command", [["blast-radius"], ["availability", "-q", "--trials", "3"]])
def test_a_gpu_repair_time_names_the_option_and_the_gpus_parts(command):
    line = one_line_error(run_cli([*command, *LITE, "--repair-time", "gpu=7d"]),
                          "--repair-time: unknown component class 'gpu'",
                          "--repair-time gpu-die=T, --repair-time gpu-package=T")
    assert "'gpu'," not in line.split("known:")[1]   # no class gpu among the known


def test_another_unknown_class_names_the_option_without_the_gpu_hint():
    line = one_line_error(run_cli(["blast-radius", *LITE, "--repair-time", "fan=1d"]),
                          "--repair-time: unknown component class 'fan'; known: 'copper-end'")
    assert "gpu-die=T" not in line
