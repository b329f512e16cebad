"""The study's summary names where a user's scenario file was read from.

``netmodel study lite-gpu --scenarios mine.toml,lite-flat`` wrote "Scenarios
(netmodel/data/scenarios/*.toml, sources in each file): mine: ...", sending a reader to a
folder that does not hold ``mine.toml``; it now names the file beside the shipped folder.
"""

from types import SimpleNamespace

from netmodel import get_scenario
from netmodel.study.summary import _notes

_SCENARIO = """name = "half-dgx"
description = "8 half-H100s per NVSwitch domain"
gpu = "H100-SXM"

[fabric]
builder = "single-switch"
n = 8
gpu = "$gpu"

[collective]
placement = "contiguous"
algorithm = "auto"
links = "as-built"
calibration = "default"

[sources]
bandwidth = "what-if"
latency = "what-if"
"""


def _study(*scenarios):
    part = SimpleNamespace(settings={}, networks=("ring", "ideal"))
    return SimpleNamespace(ideal=part, fabric=SimpleNamespace(scenarios=list(scenarios)),
                           packed=None)


def _line(study):
    (line,) = [ln for ln in _notes(study) if ln.startswith("- Scenarios")]
    return line


def test_a_user_scenario_file_is_named(tmp_path):
    path = tmp_path / "half.toml"
    path.write_text(_SCENARIO)
    line = _line(_study(get_scenario("h100-dgx"), get_scenario(str(path))))
    assert line.startswith(f"- Scenarios (netmodel/data/scenarios/*.toml; half-dgx: {path}, "
                           "sources in each file): h100-dgx: ")
    assert "; half-dgx: 8 half-H100s per NVSwitch domain." in line


def test_shipped_scenarios_alone_read_as_before():
    line = _line(_study(get_scenario("h100-dgx"), get_scenario("lite-flat@Lite+BW")))
    assert line.startswith("- Scenarios (netmodel/data/scenarios/*.toml, sources in each "
                           "file): h100-dgx: ")
