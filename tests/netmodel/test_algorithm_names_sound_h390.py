"""The collective algorithms' one list, ``names.ALGORITHM_NAMES`` (read by help texts without
the engine), and the engine's steps cannot part: the engine's module held them equal by an
``assert``, which ``python -O`` drops, so a name listed in help with no steps behind it (or
steps no help names) loaded silently, and without -O the refusal said nothing (a bare
AssertionError). Now ALGORITHMS is built from the names, in their order, and a
disagreement is an ImportError naming both files, with or without -O."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from netmodel.collectives import names
from netmodel.collectives.algorithms import ALGORITHMS

ROOT = Path(__file__).resolve().parents[2]


def _load_with(algorithm_names: tuple[str, ...], *flags: str) -> list[str]:
    # the engine loaded against another names module (put in sys.modules first)
    code = ("import sys, types\nm = types.ModuleType('netmodel.collectives.names')\n"
            f"m.__dict__.update({{k: v for k, v in {_public()!r}.items()}})\n"
            f"m.ALGORITHM_NAMES = {algorithm_names!r}\n"
            "import netmodel.collectives\nsys.modules[m.__name__] = m\n"
            "import netmodel.collectives.algorithms as a\nprint(tuple(a.ALGORITHMS))\n")
    out = subprocess.run([sys.executable, *flags, "-c", code], capture_output=True, text=True,
                         cwd=ROOT)
    return (out.stdout + out.stderr).strip().splitlines()


def _public() -> dict:
    return {k: getattr(names, k) for k in names.__all__}


def test_the_engine_takes_the_names_order():
    assert tuple(ALGORITHMS) == names.ALGORITHM_NAMES


@pytest.mark.parametrize("flags", [(), ("-O",)], ids=["plain", "-O"])
def test_a_listed_name_without_steps_is_refused(flags):
    last = _load_with((*names.ALGORITHM_NAMES, "star"), *flags)[-1]
    assert last == ("ImportError: ALGORITHM_NAMES in netmodel/collectives/names.py and the "
                    "algorithms' steps in netmodel/collectives/algorithms.py disagree: "
                    "no steps for 'star'")


@pytest.mark.parametrize("flags", [(), ("-O",)], ids=["plain", "-O"])
def test_steps_no_name_lists_are_refused(flags):
    last = _load_with(names.ALGORITHM_NAMES[:-1], *flags)[-1]
    assert last.endswith("disagree: not in ALGORITHM_NAMES: 'collnet-chain'")


def test_the_order_is_the_names_own():
    reordered = names.ALGORITHM_NAMES[::-1]
    assert _load_with(reordered)[-1] == repr(reordered)
