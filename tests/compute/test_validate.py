"""The validation layer: documents (size, depth, digits) and values (types, ranges)."""

import math

import pytest

from compute import validate
from compute.config_files import document_depth, parse_table, read_table, read_text
from compute.errors import UserError
from compute.hardware import load_gpu_file


@pytest.mark.parametrize("text, fmt", [
    ("[" * 10_000 + "]" * 10_000, "json"),
    ('{"a":' * 10_000 + "1" + "}" * 10_000, "json"),
    ("a = " + "[" * 10_000 + "]" * 10_000, "toml"),
    ("a = " + "{b = " * 2_000 + "1" + "}" * 2_000, "toml"),
    (".".join(["a"] * 2_000) + " = 1", "toml"),          # dotted keys nest without brackets
    ("[" + ".".join(["t"] * 500) + "]\nx = 1", "toml"),   # so do table headers
])
def test_deep_documents_are_user_errors_not_recursion_errors(text, fmt):
    with pytest.raises(UserError, match="nests deeper than 32 levels"):
        parse_table(text, fmt, "deep")


def test_depth_limit_is_settable_and_brackets_in_strings_do_not_count():
    doc = '{"a": [[[1]]], "s": "[[[[[[[[[[[[", "t": "\\"[[[["}'
    assert parse_table(doc, "json", "x", max_depth=4)["s"] == "[" * 12   # {} and [[[ ]]]
    with pytest.raises(UserError, match="deeper than 3 levels"):
        parse_table(doc, "json", "x", max_depth=3)
    toml = "s = '[[[[[[[[[[[['\nt = \"\"\"[[[[[[\n[[[[[[\"\"\"  # [[[[[[[[[[\n"
    assert parse_table(toml, "toml", "x", max_depth=1)["s"] == "[" * 12
    assert document_depth({"a": [1, {"b": [[]]}]}) == 5


@pytest.mark.parametrize("text, fmt", [("x = " + "7" * 5000, "toml"),
                                       ('{"x": ' + "7" * 5000 + "}", "json"),
                                       ('{"x": -' + "7" * 100_000 + "}", "json")])
def test_numbers_beyond_the_digit_limit_are_user_errors(text, fmt):
    with pytest.raises(UserError, match="more than 4300 digits"):
        parse_table(text, fmt, "big")


def test_size_limit_reads_at_most_the_limit(tmp_path):
    p = tmp_path / "big.json"
    p.write_text('{"a": "' + "x" * 2000 + '"}')
    assert read_table(p)["a"] == "x" * 2000
    with pytest.raises(UserError, match="larger than the 1,000-byte limit"):
        read_table(p, "GPU file", max_bytes=1000)
    with pytest.raises(UserError, match="larger than the 10-byte limit"):
        parse_table("a = 12345678901", "toml", "x", max_bytes=10)


def test_unreadable_binary_and_bom_files(tmp_path):
    (tmp_path / "bin.toml").write_bytes(b"\xff\xfe\x00a = 1")
    with pytest.raises(UserError, match="not a UTF-8 text file"):
        read_text(tmp_path / "bin.toml")
    (tmp_path / "bom.json").write_bytes(b'\xef\xbb\xbf{"a": 1}')
    assert read_table(tmp_path / "bom.json") == {"a": 1}
    with pytest.raises(UserError, match="cannot read"):
        read_text(tmp_path)      # a folder


@pytest.mark.parametrize("value, needle", [
    (True, "got True"), ("12", "got '12'"), ([1], "got [1]"),
    ({"a": 1}, "got {'a': 1}"), ({"a": "x" * 80}, "got a table of 1 key"), (None, "got None"), (float("nan"), "got nan"),
    (float("inf"), "got inf"), pytest.param(10**5000, "got an integer of 5001 digits", id="5001-digits"),
    (-(10**30), "got a negative integer of 31 digits"), (0, "got 0"), (100_001, "got 100001"),
    (1.5, "got 1.5"),
])
def test_number_refuses_with_one_line_naming_key_value_and_range(value, needle):
    with pytest.raises(UserError) as exc:
        validate.number("f.toml: GPU 'X'", "sms", value, minimum=1, maximum=100_000,
                        integer=True)
    msg = str(exc.value)
    assert msg.startswith("f.toml: GPU 'X': sms must be a whole number from 1 to 100,000, got")
    assert needle in msg and "\n" not in msg and len(msg) < 200


def test_number_accepts_in_range_and_returns_the_type():
    assert validate.number("", "x", 3, minimum=1, maximum=5) == 3.0
    assert isinstance(validate.number("", "x", 3, minimum=1, maximum=5), float)
    assert validate.number("", "x", 3, minimum=1, maximum=5, integer=True) == 3
    assert validate.number("", "x", 0, minimum=1, maximum=5, or_zero=True) == 0.0
    with pytest.raises(UserError, match="0 or from 1 to 5"):
        validate.number("", "x", 0.5, minimum=1, maximum=5, or_zero=True)


def test_limits_file_has_a_reason_and_a_sane_range_for_every_key():
    for section in ("gpu", "model"):
        for key, r in validate.limits(section).items():
            assert r.why, key
            assert 0 <= r.minimum < r.maximum and math.isfinite(r.maximum), key
            if r.integer:
                assert float(r.minimum).is_integer() and float(r.maximum).is_integer(), key


GPU = {"sms": "132", "bf16_dense_TFLOPs": "989.4", "hbm_capacity_GB": "80",
       "hbm_bandwidth_TBps": "3.35", "scaleup_GBps_per_direction": "450",
       "scaleout_Gbps": "400", "tdp_W": "700", "max_instance": "8",
       "source": '"test"'}


def gpu_toml(**changes) -> str:
    return "[gpu.x]\n" + "".join(f"{k} = {v}\n" for k, v in {**GPU, **changes}.items())


@pytest.mark.parametrize("body, match", [
    (gpu_toml(sms="1e30"), "sms must be a whole number from 1 to 100,000, got 1e\\+30"),
    (gpu_toml(sms="9" * 500), "sms must be .* got an integer of 500 digits"),
    (gpu_toml(bf16_dense_TFLOPs="1e12"),
     "bf16_dense_TFLOPs must be a number from 0.001 to 1,000,000 TFLOP/s, got 1000000000000.0"),
    (gpu_toml(hbm_capacity_GB='"80"'), "hbm_capacity_GB must be a number .* got '80'"),
    (gpu_toml(tdp_W="nan"), "tdp_W must be a number from 0.1 to 1,000,000 W, got nan"),
    (gpu_toml(max_instance="[8]"), "max_instance must be .* got \\[8\\]"),
    (gpu_toml(fp8_dense_TFLOPs="1e-9"), "fp8_dense_TFLOPs must be a number 0 or from 0.001"),
    ("gpu = [1, 2]\n", "top-level table 'gpu'"),
    ("[gpu]\nx = [1]\n", "GPU 'x' must be a table of keys, got \\[1\\]"),
    ('[gpu."a\\nb"]\nderive_from = "H100-SXM"\n', "GPU name 'a\\\\nb' must be"),
    ('[gpu.x]\nderive_from = "H100-SXM"\nflops_multiplier = 1e9\n',
     "flops_multiplier must be a number from 0.001 to 1,000"),
    ("[gpu]\n", "the 'gpu' table is empty"),
])
def test_gpu_file_values_are_checked(tmp_path, body, match):
    p = tmp_path / "g.toml"
    p.write_text(body)
    with pytest.raises(UserError, match=match):
        load_gpu_file(p)


def test_gpu_file_base_is_valid(tmp_path):
    (tmp_path / "g.toml").write_text(gpu_toml())
    assert load_gpu_file(tmp_path / "g.toml")["x"].hbm_bandwidth == 3.35e12


def test_user_error_messages_are_one_line():
    e = UserError("bad name 'a\nb\r\tc\x00\u2028'")
    assert str(e) == "bad name 'a\\nb\\r\\tc\\x00\\u2028'"
