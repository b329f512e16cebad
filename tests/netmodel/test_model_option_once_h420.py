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


def _info(opt) -> dict:
    """The option's description, its help written from the registry (as --help shows it:
    an option whose help was shown already holds the text, one not yet shown None)."""
    return {**opt.to_info_dict(), "help": opt.help_from()}


def test_serve_takes_the_shared_model_option():
    cost = _model_option("cost")
    shared = _info(cost)
    for command in ("serve", "blast-radius", "availability"):
        opt = _model_option(command)
        assert opt.help_from is cost.help_from, command
        assert _info(opt) == shared, command
    assert shared["name"] == "model" and shared["required"] is True
