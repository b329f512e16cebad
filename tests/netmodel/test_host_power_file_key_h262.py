"""A GPU file may give its system's host power per GPU (h262): host_power_W, a sourced row
in W, the per-system figure a catalog GPU has in economics.toml [host_power_per_gpu]. Before,
a file GPU could only take the DGX H100's 534 W x TDP / 700 W (now capped at 716 W)."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from compute.hardware import _parse_gpu_table, catalog, load_gpu_file
from netmodel.study.host_bill import host_power, host_power_row

_ENTRY = '''[gpu."B200-Liquid"]
derive_from = "B200-HGX"
source = "test"
'''
_ROW = ('host_power_W = {{value = {v}, unit = "W", source = "GB200 NVL72 rack, as '
        'economics.toml", confidence = "derived"}}\n')


def _file(tmp_path, extra=""):
    path = tmp_path / "g.toml"
    path.write_text(_ENTRY + extra)
    return load_gpu_file(path)["B200-Liquid"]


def test_the_files_row_is_the_hosts_power(tmp_path):
    # 395 W: the GB200 NVL72 row's derivation as it stood at 21.25 pJ/bit (120 kW - 72 x
    # 1,200 W - 4,562 W - 72 x 8.5 W) / 72 = 394.8, for a B200 in a liquid-cooled rack
    g = _file(tmp_path, _ROW.format(v=395))
    assert host_power(g) == 395.0
    assert host_power(g, 2000) == 395.0   # the DGX H100's figure does not move it
    assert host_power_row(g).source.startswith("GB200 NVL72 rack")


def test_without_the_key_the_tdp_rule_applies(tmp_path):
    # a B200 derivative (1,000 W) with no row: 534 x 1,000 / 700 = 762.9, capped at 716
    assert host_power(_file(tmp_path)) == 716.0


@pytest.mark.parametrize("row, message", [
    ('host_power_W = 395\n', "host_power_W must be a table"),
    (_ROW.format(v=-1), "host_power_W must be a finite number >= 0 and <= 100000, got -1"),
    ('host_power_W = {value = 0.4, unit = "kW", source = "s"}\n', "got unit 'kW'"),
])
def test_a_bad_row_is_refused_by_name(tmp_path, row, message):
    with pytest.raises(UserError, match=message):
        _file(tmp_path, row)


def test_the_catalog_keeps_its_rows_in_economics():
    entry = {"derive_from": "B200-HGX", "source": "s",
             "host_power_W": {"value": 1, "unit": "W", "source": "s"}}
    with pytest.raises(UserError, match=r"host_power_W is for a GPU file; a catalog GPU's "
                                        r"host power is a row of compute/data/economics\.toml"):
        _parse_gpu_table({"gpu": {"X": entry}}, "gpus.toml", catalog(), {}, {})
