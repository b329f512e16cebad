"""``netmodel cost --json``'s ``nics`` says the NICs bought, not only the GPUs with a NIC
port: on lite-direct its ``count`` was 128 (the Lites, a quarter of a 400G NIC each) while
``blast-radius --json`` counts 32 NICs for the same cluster, and the JSON had no figure
that said 32."""

from __future__ import annotations

import pytest

from netmodel.study.cost import cost_summary
from netmodel.study.scenario_fabric import build_fabric
from topologies.failure_domains import components

MODEL = "Llama-3-70B"


def test_lite_direct_nics_worth_is_the_blast_radius_count():
    # by hand: 4 H100 servers x 8 = 32 ConnectX-7 (400G) ports, each broken out to the 4
    # Lites of its H100: 128 Lites x 1/4 = 32 NICs, 32 x $1,599 = $51,168, 32 x 24.9 W x
    # 0.75 (host load) = 597.6 W (compute/data/economics.toml)
    d = cost_summary("lite-direct", MODEL, "decode").to_dict()["nics"]
    assert d["count"] == 128
    assert d["worth"] == pytest.approx(32)
    assert d["capex_usd"] == pytest.approx(32 * 1599)
    assert d["power_w"] == pytest.approx(32 * 24.9 * 0.75)
    nics = components(build_fabric("lite-direct"), classes=["nic"])["nic"]
    assert len(nics) == pytest.approx(d["worth"])


def test_one_nic_a_gpu_and_none():
    assert cost_summary("h100-dgx", MODEL, "decode").to_dict()["nics"]["worth"] == 32
    assert cost_summary("lite-flat", MODEL, "decode").to_dict()["nics"]["worth"] == 0
