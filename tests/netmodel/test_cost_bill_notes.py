"""``netmodel cost`` says what the network bill estimated (the bill's ``notes``), as topology
compare does: a ``notes`` row in the text, ``network_notes`` in the JSON. lite-direct's
Lites reach their leaves by 100 Gb/s breakout ends, a module rate no class of
netmodel/data/network_costs.toml has (200G, 400G, 800G): priced and powered per bit of the
200G class, an estimate; h100-dgx's twin-port 800G modules are a class, and nothing is
noted."""

from __future__ import annotations

import json

from netmodel.study.cost import cost_summary
from netmodel.study.optic_classes import estimate_note
from tests.netmodel.cli_helpers import run_cli

NOTE = estimate_note("pluggable-optics", 100e9, "200G")
ARGS = ["cost", "--model", "Llama-3-70B", "--phase", "decode"]


def test_the_cost_summary_carries_the_bills_notes():
    s = cost_summary("lite-direct", "Llama-3-70B", "decode")
    assert s.network.notes == (NOTE,)
    assert s.to_dict()["network_notes"] == [NOTE]
    last = s.table().splitlines()[-1]
    assert last == f"{'notes':<21} network capex and power: {NOTE}"


def test_a_bill_that_estimated_nothing_has_no_notes_row():
    s = cost_summary("h100-dgx", "Llama-3-70B", "decode")
    assert s.to_dict()["network_notes"] == []
    assert not any(line.startswith("notes") for line in s.table().splitlines())
    assert s.table().splitlines()[-1].startswith("$ per M tokens")


def test_the_cli_prints_them_in_text_and_json():
    text = run_cli(ARGS + ["--scenario", "lite-direct"])
    assert text.exit_code == 0, text.output
    assert f"notes                 network capex and power: {NOTE}" in text.output
    js = run_cli(ARGS + ["--scenario", "lite-direct", "--json"])
    assert js.exit_code == 0, js.output
    assert json.loads(js.output)["summaries"][0]["network_notes"] == [NOTE]
