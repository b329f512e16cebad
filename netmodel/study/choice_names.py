"""The names some study settings choose among, said once here, with no imports: the
command line lists them in its ``--help`` (``netmodel.cli.options.registry_metavar``) without
loading numpy or networkx, which the modules that use them import."""

from __future__ import annotations

__all__ = ["LOAD_SOURCES", "REPAIRS", "SHARES", "SPARE_PLACEMENTS"]

#: Where a spare loads its weight shard from (:mod:`netmodel.study.reliability_catalog`).
LOAD_SOURCES = ("fabric", "storage")
#: Which repair time applies: a local pool of replacement parts, or the vendor's RMA.
REPAIRS = ("local", "vendor")
#: Where spares sit (:mod:`netmodel.study.reliability_spares`' module doc).
SPARE_PLACEMENTS = ("group", "pod", "global")
#: How the network of a scenario is charged (:mod:`netmodel.study.network_bill`).
SHARES = ("ports-used", "as-built")
