"""Hostile input, helper 265: NCCL's per-channel tree caps (d334122, 5f519ea) take any
positive float, so a calibration or a user's generations file (``load_calibration(path,
generations=FILE)``, the layout of ``netmodel/data/collective_generations.toml``) with a
denormal cap gives an infinite collective time, exit 0, with numpy warnings:
``tree_channel_bandwidth = (5e-324,) * 3`` -> an H100 32-GPU tree all-reduce of 1 GB in
``inf`` s ('divide by zero encountered in divide'), ``1e-300`` -> ``inf`` ('overflow
encountered in multiply', netmodel/collectives/cost.py), where a link's bandwidth below 1
byte/s is refused (topologies.limits.PHYSICAL_MIN, 'bandwidth'). Now bounded in
netmodel/collectives/calibration.py (_tree_caps) by the same floor (NVLSTree's key also
takes 0, no cap).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import replace

import pytest

from compute.errors import UserError
from netmodel.collectives.calibration_files import default_calibration, load_generations
from netmodel.collectives.model import FabricCostModel
from netmodel.study.fabric_ref import resolve_fabric


@pytest.mark.parametrize("key", ["tree_channel_bandwidth", "tree_ll128_channel_bandwidth"])
@pytest.mark.parametrize("cap", [5e-324, 1e-300, 0.5])
def test_a_cap_below_a_byte_a_second_is_refused_naming_it(key, cap):
    cal = default_calibration().for_gpu("H100-SXM")   # generations resolved: its own caps
    with pytest.raises(UserError, match=key):
        replace(cal, **{key: (cap, cap, cap)})


def test_a_generations_file_with_a_denormal_cap_is_refused(tmp_path):
    path = tmp_path / "gens.toml"
    path.write_text('default = "g"\n[generation.g]\n'
                    "tree_channel_bandwidth = [1e-300, 1e-300, 1e-300]\n")
    with pytest.raises(UserError, match=r"gens.toml.*tree_channel_bandwidth"):
        load_generations(path)


def test_no_accepted_cap_makes_a_time_infinite():
    """Whatever a calibration takes, a 1 GB tree all-reduce over 32 H100 is finite and
    warns of nothing: accepted (5e-324 now) or refused (after the fix)."""
    cal = default_calibration().for_gpu("H100-SXM")
    graph = resolve_fabric("h100-dgx").graph
    try:
        low = replace(cal, tree_channel_bandwidth=(5e-324,) * 3)
    except UserError:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = FabricCostModel(graph, calibration=low, algorithm="tree").collective_time(
            "all-reduce", 1e9, 32)
    assert math.isfinite(float(t))
