"""Hostile input, round 17c (compute): the file cases of /tmp/h17_files.py run against the
loaders. A GPU file's sourced peak row ({value, unit, source, confidence}) took any
confidence (nan, -1, true, [], {}) and dropped it silently, while its source must be text;
now the tag, when given, must be text too (a free tag such as "guess" stays valid, as the
quant-format tests use it)."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from compute.hardware import load_gpu_file

GPU = """[gpu.X]
sms = 132
bf16_dense_TFLOPs = 989.4
hbm_capacity_GB = 80
hbm_bandwidth_TBps = 3.35
scaleup_GBps_per_direction = 450
scaleout_Gbps = 400
tdp_W = 700
max_instance = 8
source = "t"
"""


@pytest.mark.parametrize("tag, shown", [("nan", "nan"), ("-1", "-1"), ("1e308", "1e+308"),
                                        ("true", "True"), ("[]", "[]"), ("{}", "{}")])
def test_a_peak_rows_confidence_must_be_text(tmp_path, tag, shown):
    p = tmp_path / "g.toml"
    p.write_text(GPU + f'int8_dense_TOPs = {{value = 1979, unit = "TOPS", source = "s", '
                       f'confidence = {tag}}}\n')
    with pytest.raises(UserError) as e:
        load_gpu_file(p)
    msg = str(e.value)
    assert "\n" not in msg
    assert "int8_dense_TOPs must be a row {value, unit = 'TOPS', source, confidence} whose " \
           "confidence is text (a tag such as 'assumption'" in msg
    assert msg.endswith(f"got confidence {shown}")


@pytest.mark.parametrize("row, tops", [
    ('{value = 1979, unit = "TOPS", source = "s", confidence = "read-secondary"}', 1979e12),
    ('{value = 624, unit = "TOPS", source = "s", confidence = "vendor-claim"}', 624e12),
    ('{value = 7, unit = "TOPS", source = "s", confidence = "guess"}', 7e12),   # free text
    ('{value = 1979, unit = "TOPS", source = "s"}', 1979e12),   # the tag is optional
])
def test_valid_peak_rows_still_read(tmp_path, row, tops):
    p = tmp_path / "g.toml"
    p.write_text(GPU + f"int8_dense_TOPs = {row}\n")
    assert load_gpu_file(p)["X"].flops_int8 == tops
