"""A profile's measurement takes only text as its source.

Before: ``row.get("source") or ""`` read a ``[[measurement]]`` table's source of 0, false,
[] or {} as no source (a profile read back without a word), while 1, true or [1] were
refused ('source must be text'). Now only text (or no source key, or "") is a source; any
other value is refused in one line naming the measurement.
"""

from __future__ import annotations

import json

import pytest

from compute.errors import UserError
from compute.measurements import read_measurements
from compute.profiles import read_profile
from tests.netmodel.cli_helpers import one_line_error, run_cli

PROFILE = """[profile]
name = "t"
[parameters.gemm_efficiency]
value = 0.5
source = "what-if: test"

[[measurement]]
model = "Llama-3-8B"
gpu = "H100-SXM"
tp = 1
phase = "decode"
batch = 1
context = 100
latency_s = 0.01
"""


@pytest.mark.parametrize("value", ["0", "false", "[]", "{}", "0.0", "1", "true", "[1]"])
def test_a_source_not_text_is_refused(tmp_path, value):
    path = tmp_path / "p.toml"
    path.write_text(PROFILE + f"source = {value}\n")
    with pytest.raises(UserError) as e:
        read_profile(path)
    assert str(e.value).startswith(f"{path}: measurement 1: source must be text of at most "
                                   f"2,000 characters, got ")


@pytest.mark.parametrize(("line", "source"), [("", ""), ('source = ""', ""),
                                              ('source = "run 7"', "run 7")])
def test_text_or_no_source_is_read(tmp_path, line, source):
    path = tmp_path / "p.toml"
    path.write_text(PROFILE + line + "\n")
    (m,) = read_profile(path).measurements
    assert (m.source, m.latency_s, m.context) == (source, 0.01, 100)


def test_a_json_profile_null_source_is_none(tmp_path):
    """JSON's null is no source, as absent is; JSON's 0 is refused as TOML's."""
    doc = {"profile": {"name": "t"},
           "parameters": {"gemm_efficiency": {"value": 0.5, "source": "what-if: test"}},
           "measurement": [{"model": "Llama-3-8B", "gpu": "H100-SXM", "tp": 1,
                            "phase": "decode", "batch": 1, "context": 100,
                            "latency_s": 0.01, "source": None}]}
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc))
    assert read_profile(path).measurements[0].source == ""
    doc["measurement"][0]["source"] = 0
    path.write_text(json.dumps(doc))
    with pytest.raises(UserError, match="measurement 1: source must be text"):
        read_profile(path)


def test_the_csv_reader_is_unchanged(tmp_path):
    """A CSV cell is text: '0' is the source '0'; an empty cell is none (or the note)."""
    path = tmp_path / "m.csv"
    path.write_text("model,gpu,tp,batch,phase,latency_s,context,source,note\n"
                    "Llama-3-8B,H100-SXM,1,1,decode,0.01,100,0,\n"
                    "Llama-3-8B,H100-SXM,1,2,decode,0.01,100,,seen\n"
                    "Llama-3-8B,H100-SXM,1,4,decode,0.01,100,,\n")
    assert [m.source for m in read_measurements(path)] == ["0", "seen", ""]


def test_the_cli_refuses_it_in_one_line(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(PROFILE + "source = false\n")
    one_line_error(run_cli(["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "1", "--batch", "1",
                            "--profile", path]),
                   f"{path}: measurement 1: source must be text")
