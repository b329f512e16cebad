"""netmodel: models of AI-cluster fabrics and LLM inference on them, from first principles.

The package's own namespace is the Python API (:mod:`netmodel.api`), loaded on first use so
that ``import netmodel`` (and ``netmodel --help``) stays fast::

    import netmodel
    fabric = netmodel.build_fabric("fat-tree:k=8,gpu=Lite")
    seconds = netmodel.collective_time(fabric, "all-reduce", [1e6, 64e6], 32)
    best = netmodel.search("Llama-3-70B", "Lite", "decode", scenario="lite-flat")

Wings: :mod:`netmodel.collectives` (the collective engine), :mod:`netmodel.study`
(scenarios, fabric-aware search, compare, sweep, the Lite-GPU study), :mod:`netmodel.cli`
(the command line). See docs/api.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers see; at run time __getattr__ loads them
    from netmodel.api import build_fabric as build_fabric
    from netmodel.api import collective_time as collective_time
    from netmodel.api import compare as compare
    from netmodel.api import evaluate as evaluate
    from netmodel.api import get_scenario as get_scenario
    from netmodel.api import run_study as run_study
    from netmodel.api import search as search
    from netmodel.api import sweep as sweep

__version__ = "0.1.0"

#: The API's names (netmodel.api.__all__), resolved lazily.
_API = ("build_fabric", "collective_time", "compare", "evaluate", "get_scenario", "run_study",
        "search", "sweep")

__all__ = ["__version__", *_API]


def __getattr__(name: str) -> Any:
    if name in _API:
        from netmodel import api

        return getattr(api, name)
    raise AttributeError(f"module 'netmodel' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API))
