"""A GPU file's die table may say its memory is a board memory (h262): GDDR parts (L40S,
RTX PRO 6000) were priced as HBM, a share of the H100's $1,400 of stacks ($16.37 a GB of its
85.5 GB), while GDDR6 sold at $3.364 a GiB (an 8 Gb chip, 2^33 bits; DRAMeXchange spot, June
2023, economics.toml memory_price_gddr6)
and GDDR7 at a 20-30% premium (TrendForce 2024: x 1.25, memory_price_gddr7)."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from compute.hardware import get_gpu, load_gpu_file
from compute.yield_model import gpu_dies, package_cost

_SPEC = """[gpu."{name}"]
sms = 142
bf16_dense_TFLOPs = 362.05
fp8_dense_TFLOPs = 733
hbm_capacity_GB = {gb}
hbm_bandwidth_TBps = 0.864
scaleup_GBps_per_direction = 32
scaleout_Gbps = 200
tdp_W = 350
max_instance = 8
scaleup_reduction = false
source = "test"

[gpu."{name}".die]
area = {{value = 608.5, unit = "mm^2", source = "AD102", ref = "", confidence = "read-secondary"}}
dies = {{value = 1, unit = "1", source = "s", ref = "", confidence = "read-secondary"}}
sms_physical = {{value = 144, unit = "1", source = "s", ref = "", confidence = "read-secondary"}}
sms_enabled = {{value = 142, unit = "1", source = "s", ref = "", confidence = "read-secondary"}}
process = {{value = "N4", unit = "name", source = "s", ref = "", confidence = "read-secondary"}}
hbm_sites = {{value = {sites}, unit = "1", source = "s", ref = "", confidence = "read-secondary"}}
packaging = {{value = "FCBGA", unit = "name", source = "s", ref = "", confidence = "assumption"}}
"""
_MEMORY = ('memory = {{value = "{kind}", unit = "name", source = "s", ref = "", '
           'confidence = "read-secondary"}}\n')


def _file(tmp_path, name, gb, kind=None, sites=0):
    path = tmp_path / f"{name}.toml"
    path.write_text(_SPEC.format(name=name, gb=gb, sites=sites)
                    + (_MEMORY.format(kind=kind) if kind else ""))
    return str(path)


@pytest.mark.parametrize("kind, gb, usd", [
    # the chips' prices are per GiB (an 8 Gb chip is 2^30 bytes), the file's GB decimal (h269)
    ("GDDR6", 48, 48e9 / 2**30 * 3.364),          # L40S: 44.70 GiB x $3.364 = $150.38
    ("GDDR7", 96, 96e9 / 2**30 * 3.364 * 1.25)])  # RTX PRO 6000: 89.41 GiB x $4.205 = $375.96
def test_board_memory_is_priced_per_gb(tmp_path, kind, gb, usd):
    path = _file(tmp_path, f"G-{kind}", gb, kind)
    assert gpu_dies(path).memory == kind
    assert package_cost(path).hbm == pytest.approx(usd, rel=1e-4)


def test_hbm_is_the_default_and_unchanged(tmp_path):
    # no memory row and memory = "HBM" price the same stacks: the H100's $1,400 x the share
    # (48 GB over the H100's capacity; 0.864 TB/s over its 3.35 is smaller)
    a = package_cost(_file(tmp_path, "A", 48))
    b = package_cost(_file(tmp_path, "B", 48, "HBM"))
    share = 48e9 / get_gpu("H100-SXM").hbm_capacity
    assert a.hbm == b.hbm == pytest.approx(1400 * share)


def test_board_memory_on_the_interposer_is_refused(tmp_path):
    with pytest.raises(UserError, match=r"memory GDDR6 sits on the board, not on the "
                                        r"interposer: \[hbm_sites\] must be 0, got 2"):
        load_gpu_file(_file(tmp_path, "C", 48, "GDDR6", sites=2))


def test_unknown_memory_names_the_row_to_add(tmp_path):
    with pytest.raises(UserError, match=r"memory 'LPDDR5X' has no price; known: 'GDDR6', "
                                        r"'GDDR7', 'HBM' \(give one of them, or add a sourced "
                                        r"row \[memory_price_lpddr5x\]"):
        load_gpu_file(_file(tmp_path, "D", 48, "LPDDR5X"))


@pytest.mark.parametrize("typed, kind", [("hbm", "HBM"), ("gddr6", "GDDR6"), ("Gddr7", "GDDR7")])
def test_a_memory_kind_is_read_in_any_case(tmp_path, typed, kind):
    """'hbm' was refused ('memory 'hbm' has no price; known: GDDR6, GDDR7, HBM') while
    'gddr6' was priced (h269's left item): a kind is a name, read in any case; the price is
    the upper-case kind's."""
    sites = 2 if kind == "HBM" else 0
    path = _file(tmp_path, f"C-{typed}", 48, typed, sites)
    same = _file(tmp_path, f"U-{typed}", 48, kind, sites)
    assert gpu_dies(path).memory == kind
    assert package_cost(path).hbm == package_cost(same).hbm
