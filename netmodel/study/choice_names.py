"""The names some study settings choose among, and the failure catalog's data file as
plain TOML, held here with the standard library alone: the command line lists the names in
its ``--help`` (``netmodel.cli.options.registry_metavar``) and states the catalog's defaults
(:func:`failure_data`) without loading numpy or networkx, which the modules that use them
import.

>>> failure_data()["recovery"]["load_from"] in LOAD_SOURCES
True
"""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["LOAD_SOURCES", "REPAIRS", "SHARES", "SPARE_PLACEMENTS", "failure_data"]

#: Where a spare loads its weight shard from (:mod:`netmodel.study.reliability_catalog`).
LOAD_SOURCES = ("fabric", "storage")
#: Which repair time applies: a local pool of replacement parts, or the vendor's RMA.
REPAIRS = ("local", "vendor")
#: Where spares sit (:mod:`netmodel.study.reliability_spares`' module doc).
SPARE_PLACEMENTS = ("group", "pod", "global")
#: How the network of a scenario is charged (:mod:`netmodel.study.network_bill`).
SHARES = ("ports-used", "as-built")


@cache
def failure_data() -> dict[str, Any]:
    """``netmodel/data/failures.toml`` as the TOML it is, unchecked (read once): what
    ``--help`` says of its defaults (``[gpu]`` area_share and its range, ``[recovery]``).
    :func:`netmodel.study.reliability_catalog.catalog` reads the same file into the checked
    catalog the commands run on."""
    return tomllib.loads(resources.files("netmodel").joinpath("data/failures.toml")
                         .read_text(encoding="utf-8"))
