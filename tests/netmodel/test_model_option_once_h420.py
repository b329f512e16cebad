"""serve's --model is the one declaration cost, blast-radius and availability share
(netmodel.cli.options.model_option), not a copy of it under another parameter name."""

from __future__ import annotations

import importlib

from netmodel.cli.main import _COMMANDS


def _model_option(command: str):
    module, attr, _ = _COMMANDS[command]
    cmd = getattr(importlib.import_module(module), attr)
    (opt,) = [p for p in cmd.params if "--model" in getattr(p, "opts", ())]
    return opt


def test_serve_takes_the_shared_model_option():
    shared = _model_option("cost").to_info_dict()
    for command in ("serve", "blast-radius", "availability"):
        assert _model_option(command).to_info_dict() == shared, command
    assert shared["name"] == "model" and shared["required"] is True
