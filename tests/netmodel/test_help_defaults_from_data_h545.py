"""A default an option's help states is the one its data file holds: the help is written
from the file when shown, where it once typed the number (``--detection`` 'default 30s',
``--warmup`` 60s, ``--load-bandwidth`` 100GB/s, ``--area-share`` 0.638 and its range,
``--load-from`` fabric: netmodel/data/failures.toml; the yield command's defaults:
compute/data/economics.toml; ``--mtp-acceptance``: compute/data/mtp.toml;
``--nccl-buffsize``: netmodel/data/collective_defaults.toml).

Each check reads the printed ``--help``, reads the number back with the parser the option
itself takes (a time, a bandwidth, a size), and compares it with the data file parsed here
as TOML; nothing is changed."""

from __future__ import annotations

import re
import tomllib

import pytest

from compute.units import parse_bandwidth, parse_bytes, parse_time
from tests.netmodel.cli_helpers import ROOT, run_cli

FAILURES = tomllib.loads((ROOT / "netmodel/data/failures.toml").read_text())
ECONOMICS = tomllib.loads((ROOT / "compute/data/economics.toml").read_text())
MTP = tomllib.loads((ROOT / "compute/data/mtp.toml").read_text())["acceptance"]
COLLECTIVE = tomllib.loads((ROOT / "netmodel/data/collective_defaults.toml").read_text())


def _help(command: str, option: str) -> str:
    """The help of ``option`` as ``netmodel COMMAND --help`` prints it, its wrapped lines
    joined by one space."""
    out = run_cli([*command.split(), "--help"])
    assert out.exit_code == 0, out.output
    block = re.search(rf"^  {re.escape(option)}\b.*?(?=^  -)", out.output, re.S | re.M)
    assert block, out.output
    return " ".join(block.group(0).split())


def _said(text: str, pattern: str) -> tuple[str, ...]:
    found = re.search(pattern, text)
    assert found, (pattern, text)
    return found.groups()


@pytest.mark.parametrize("command", ["blast-radius", "availability"])
def test_recovery_defaults_are_the_catalogs(command):
    recovery, gpu = FAILURES["recovery"], FAILURES["gpu"]
    (detection,) = _said(_help(command, "--detection"), r"\(default (\S+)\)")
    assert parse_time(detection) == recovery["detection_s"]
    (warmup,) = _said(_help(command, "--warmup"), r"\(default (\S+)\)")
    assert parse_time(warmup) == recovery["warmup_s"]
    (bandwidth,) = _said(_help(command, "--load-bandwidth"), r"\(default (\S+)\)")
    assert parse_bandwidth(bandwidth) == recovery["storage_GBps_per_host"] * 1e9
    (source,) = _said(_help(command, "--load-from"), r"default (\w+)\)")
    assert source == recovery["load_from"]
    share, low, high = _said(_help(command, "--area-share"),
                             r"\(default ([\d.]+); plausible ([\d.]+)-\s*([\d.]+)\)")
    assert (float(share), float(low), float(high)) == (
        gpu["area_share"], gpu["area_share_low"], gpu["area_share_high"])


def test_yield_defaults_are_the_economics_files():
    def value(name):
        return ECONOMICS[name]["value"]

    (area,) = _said(_help("yield", "--area"), r"\((\S+) for an H100")
    assert float(area) == value("reference_die_area")
    assert ECONOMICS["reference_die_area"]["unit"] == "mm^2"     # the option's bare unit
    (density,) = _said(_help("yield", "--defect-density"), r"\(default ([\d.]+):")
    assert float(density) == value("defect_density")
    assert ECONOMICS["defect_density"]["unit"] == "1/cm^2"
    (model,) = _said(_help("yield", "--model"), r"\(default ([\w-]+),")
    assert model == value("yield_model")
    (alpha,) = _said(_help("yield", "--alpha"), r"\(default ([\d.]+)\)")
    assert float(alpha) == value("clustering_alpha")
    (diameter,) = _said(_help("yield", "--wafer-diameter"), r"\(default ([\d.]+)mm\)")
    assert float(diameter) == value("wafer_diameter")
    assert ECONOMICS["wafer_diameter"]["unit"] == "mm"
    (price,) = _said(_help("yield", "--wafer-price"), r"\(default ([\d.]+):")
    assert float(price) == value("wafer_price")
    physical, enabled = _said(_help("yield", "--sms"), r"\((\d+)/(\d+) for an H100\)")
    assert (int(physical), int(enabled)) == (value("reference_sms_physical"),
                                             value("reference_sms_enabled"))
    (critical,) = _said(_help("yield", "--critical-fraction"), r"\(default ([\d.]+)\)")
    assert float(critical) == value("critical_fraction")


@pytest.mark.parametrize("command", ["infer", "search", "serve", "compare", "sweep"])
def test_mtp_acceptance_default_and_range_are_mtp_toml(command):
    default, low, high = _said(_help(command, "--mtp-acceptance"),
                               r"default ([\d.]+), the top of .*?(\d+)%-(\d+)%")
    assert float(default) == MTP["default"] == MTP["high"]     # "the top of" the range
    assert (int(low) / 100, int(high) / 100) == (MTP["low"], MTP["high"])


@pytest.mark.parametrize("command", ["collective", "costs"])
def test_nccl_buffsize_default_is_the_collective_defaults(command):
    (size,) = _said(_help(command, "--nccl-buffsize"), r"default NCCL's ([\d.]+ ?\w+),")
    assert parse_bytes(size) == COLLECTIVE["pipeline"]["simple_buffer"]
