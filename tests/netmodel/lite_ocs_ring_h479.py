"""``lite-ocs`` with its circuits fixed as rings, for the tests that are about rings.

The shipped ``lite-ocs`` sets each instance's circuits as the faster of a ring and a 2D
torus (``circuits = "best"``: the torus at 4, 12, 16, 20, 24 and 32 Lites, the ring at 2, 3, 6, 8, 9 and 10);
a test of what a ring does (its copies, its re-setting on a degraded cell, its figures)
runs on this variant: the same file with ``circuits = "ring"``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import netmodel
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenarios import Scenario

#: The shipped scenario file.
SHIPPED = Path(netmodel.__file__).parent / "data/scenarios/lite-ocs.toml"


def ring_scenario(name: str = "lite-ocs") -> Scenario:
    """``lite-ocs`` with ``circuits = "ring"`` (named ``name``; by default its own name,
    so labels read ``lite-ocs@GPU``)."""
    return replace(get_scenario("lite-ocs"), circuits="ring", name=name)


def ring_text(name: str = "lite-ocs-ring") -> str:
    """The shipped ``lite-ocs.toml`` with ``circuits = "ring"`` and ``name``."""
    text = SHIPPED.read_text()
    lines = [ln for ln in text.splitlines() if not ln.startswith("circuits =")]
    lines.insert(lines.index("[collective]") + 1, 'circuits = "ring"')
    lines = [f'name = "{name}"' if ln.startswith("name =") else ln for ln in lines]
    return "\n".join(lines) + "\n"


def ring_file(folder: Path | str, name: str = "lite-ocs-ring") -> str:
    """The path of :func:`ring_text` written into ``folder`` as ``NAME.toml``."""
    path = Path(folder) / f"{name}.toml"
    path.write_text(ring_text(name))
    return str(path)
