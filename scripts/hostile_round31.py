"""Hostile-input round 31, on what rounds 15-30 (scripts/hostile_round15.py .. 30.py) left
least tried: the ``topology`` subcommands (``show``, ``compare``, ``plot``, ``export``) given
odd specs (a key twice, an empty value, a key of no builder's, a fractional, zero or
negative size, blanks and upper case, a trailing or doubled comma, ``==``, a graph past the
node and edge limits, estimated and refused before it is built: a ring of 1e12 GPUs, a
fat tree of k=1,000,000, a full mesh of a million); ``topology compare`` given one fabric
spelled two ways (a default written out: ``ring`` and ``ring:n=8``, ``ring:n=4`` and
``ring:n=4,gpu=H100-SXM``; a number written another way: ``n=4.0``, ``n=+4``; a GPU's name
in another case; a bandwidth in bits and in bytes), a ``--group`` too large, 0 or twice;
``topology show --pair`` naming a switch, a GPU twice, one not there, in upper case;
``--output``/``-o``/``--plot`` of every drawing and export command at a folder, a path
ending in a slash, a missing parent, a suffix alone, a suffix of another format or one
that disagrees with ``--format``, given twice (``--output=x`` and ``--output y``); a saved
fabric read back under an upper-case suffix and a file of another kind given as a SPEC;
``costs --sizes`` ranges with an empty end, reversed, of 62 million sizes, one size twice,
``--format`` disagreeing with ``-o``; ``collective --size`` at and past its ends (``0B``, ``1e30B``, ``-1MB``, ``1.5B``, ``MiB``
alone, ``mb``, ``Mb`` in bits, ``0x10``, just past 1 PiB), ``--group`` naming a switch or a
GPU twice, ``--placement`` that the fabric cannot take (``rail-aligned`` on a fabric with
no rails, through ``collective`` and ``costs``); ``blast-radius`` failure classes in upper
case, plural, twice, empty, in a comma list, for a repair of a whole GPU; ``yield`` areas of
0 and past the wafer; and the library: :func:`compare_topologies` of one fabric spelled two
ways, and the placement refusal's parameter.

What each gets (the project's promise, docs/units-and-errors.md): a refusal is exit status
2, one line ``error: ...`` holding the words listed (the flag or file, the value, what is
allowed), no traceback, nothing written in the case's folder; a value taken is exit 0 (or
3, an unmet target); a library refusal is a UserError naming the parameter.

Usage: ``python scripts/hostile_round31.py [-k SUBSTRING] [-v]``; prints each failure
(FAIL), the counts, and exit status 1 if any failed. In process (click's CliRunner); about
a minute on two cores.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hostile_round29 import library_case, library_taken_case  # noqa: E402
from hostile_tally import (  # noqa: E402
    Case,
    Made,
    refusal_case,
    run_round,
    taken_case,
)

SHOW = ["topology", "show"]
TCMP = ["topology", "compare"]
EXPORT = ["topology", "export", "ring:n=4"]
PLOT = ["topology", "plot", "ring:n=4"]
COLL = ["collective", "all-reduce", "--fabric", "ring:n=4", "--group", "2", "--size"]
BLAST = ["blast-radius", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--max-batch", "8"]
LIMIT = "over the limit of"
SIZE_RANGE = "from 1 B to 1 PiB"
TWICE = "more than once"
A_FOLDER: dict[str, Made] = {"adir/.keep": ""}
NOTES: dict[str, Made] = {"notes.txt": "my notes\n"}


def _spec(spec: str, *words: str) -> tuple[list[str], dict[str, Made], tuple[str, ...]]:
    return [*SHOW, spec], {}, (f"fabric {spec!r}", *words)


def _same(a: str, b: str) -> tuple[list[str], dict[str, Made], tuple[str, ...]]:
    return [*TCMP, a, b], {}, (TWICE, repr(a), repr(b))


#: Command lines refused: name -> (argv, files, words the line holds).
REFUSALS: dict[str, tuple[list[str], dict[str, Made], tuple[str, ...]]] = {
    # -- topology show: odd specs --------------------------------------------------------
    "show ring:n=4,n=5 (a key twice)": _spec("ring:n=4,n=5", "'n' is given twice"),
    "show ring:n= (an empty value)": _spec("ring:n=", "n must be an integer", "''"),
    "show ring:nn=4 (a key of no builder's)": _spec("ring:nn=4", "unknown key 'nn'", "'n'"),
    "show ring:n=4, (a trailing comma)": _spec("ring:n=4,", "must be KEY=VALUE"),
    "show ring:n=4,,gpu=Lite (a doubled comma)": _spec("ring:n=4,,gpu=Lite",
                                                        "must be KEY=VALUE"),
    "show ring:=4 (no key)": _spec("ring:=4", "'=4' must be KEY=VALUE"),
    "show ring:n==4": _spec("ring:n==4", "n must be an integer", "'=4'"),
    "show ring:n=0": _spec("ring:n=0", "n must be an integer >= 2", "got 0"),
    "show ring:n=-4": _spec("ring:n=-4", "n must be an integer >= 2", "got -4"),
    "show ring:n=1": _spec("ring:n=1", "n must be an integer >= 2", "got 1"),
    "show ring:n=4.5": _spec("ring:n=4.5", "n must be an integer", "'4.5'"),
    # -- graphs past the limits, refused before they are built (estimated) -----------------
    "show ring:n=1e12": _spec("ring:n=1e12", "1,000,000,000,000 nodes", LIMIT),
    "show fat-tree:k=1000000": _spec("fat-tree:k=1000000", LIMIT),
    "show full-mesh:n=1000000": _spec("full-mesh:n=1000000", "499,999,500,000 edges", LIMIT),
    "show torus:dims=1000000x1000000": _spec("torus:dims=1000000x1000000", LIMIT),
    "show leaf-spine:leaves=1000000": _spec("leaf-spine:leaves=1000000", "radix 8 is too small"),
    "show superpod:su=2 (a key close to 'sus')": _spec("superpod:su=2", "unknown key 'su'",
                                                       "'sus'"),
    # -- topology show --pair ------------------------------------------------------------
    "show --pair gpu0 gpu0": ([*SHOW, "ring:n=4", "--pair", "gpu0", "gpu0"], {},
                              ("--pair", "'gpu0' twice")),
    "show --pair gpu0 gpu9 (not there)": ([*SHOW, "ring:n=4", "--pair", "gpu0", "gpu9"], {},
                                          ("--pair", "'gpu9' is not a GPU")),
    "show --pair gpu0 GPU1 (upper case)": ([*SHOW, "ring:n=4", "--pair", "gpu0", "GPU1"], {},
                                           ("--pair", "'GPU1' is not a GPU")),
    "show --pair gpu0 nvs0 (a switch)": ([*SHOW, "single-switch:n=4", "--pair", "gpu0",
                                          "nvs0"], {}, ("--pair", "'nvs0' is not a GPU")),
    "show --pair twice": ([*SHOW, "ring:n=4", "--pair", "gpu0", "gpu1", "--pair", "gpu1",
                           "gpu2"], {}, ("--pair is given twice",)),
    "show notes.txt (a file of another kind)": ([*SHOW, "notes.txt"], NOTES,
                                                ("'notes.txt'", ".json/.graphml")),
    # -- topology compare: one fabric spelled two ways (taken before: two equal columns) --
    "compare ring ring:n=8 (a default written out)": _same("ring", "ring:n=8"),
    "compare ring:n=4 ring:n=4,gpu=H100-SXM (the default GPU written out)": _same(
        "ring:n=4", "ring:n=4,gpu=H100-SXM"),
    "compare ring:n=4 ring:n=4.0": _same("ring:n=4", "ring:n=4.0"),
    "compare ring:n=4 ring:n=+4": _same("ring:n=4", "ring:n=+4"),
    "compare ring:gpu=lite ring:gpu=Lite": _same("ring:gpu=lite", "ring:gpu=Lite"),
    "compare a bandwidth in bits and in bytes": _same("ring:bandwidth=3600Gb/s",
                                                      "ring:bandwidth=450GB/s"),
    "compare fat-tree:k=4 fat-tree:k=4,oversubscription=1": _same(
        "fat-tree:k=4", "fat-tree:k=4,oversubscription=1"),
    # already refused: the spelling of the same text
    "compare ring:n=4 RING:n=4": _same("ring:n=4", "RING:n=4"),
    "compare h100-dgx h100-dgx@H100-SXM": _same("h100-dgx", "h100-dgx@H100-SXM"),
    "compare --group 16 past a fabric": ([*TCMP, "ring:n=4", "ring:n=8", "--group", "16"], {},
                                         ("--group '16'", "4 GPUs")),
    "compare --group 0": ([*TCMP, "ring:n=4", "ring:n=8", "--group", "0"], {},
                          ("--group '0'", ">= 2")),
    "compare --group=2 --group 4": ([*TCMP, "ring:n=4", "ring:n=8", "--group=2", "--group",
                                     "4"], {}, ("--group is given twice",)),
    "compare --plot q.jpg": ([*TCMP, "ring:n=4", "ring:n=8", "--plot", "q.jpg"], {},
                             ("--plot 'q.jpg'", ".png, .svg, .pdf")),
    "compare --plot adir/": ([*TCMP, "ring:n=4", "ring:n=8", "--plot", "adir/"], A_FOLDER,
                             ("--plot 'adir/'", "names a folder")),
    "compare --plot missing/q.png": ([*TCMP, "ring:n=4", "ring:n=8", "--plot",
                                      "missing/q.png"], {}, ("--plot", "does not exist")),
    # -- export/plot outputs -------------------------------------------------------------
    "export .json with --format graphml": ([*EXPORT, "-o", "out.json", "--format", "graphml"],
                                           {}, ("--output 'out.json'", ".graphml")),
    "export .yml with --format json": ([*EXPORT, "-o", "out.yml", "--format", "json"], {},
                                       ("--output 'out.yml'", "astra-sim")),
    "export onto notes.txt --format json": ([*EXPORT, "-o", "notes.txt", "--format", "json"],
                                            NOTES, ("--output 'notes.txt'", ".json")),
    "export -o out/ (a slash)": ([*EXPORT, "-o", "out/"], {}, ("--output 'out/'", "folder")),
    "export -o adir (a folder)": ([*EXPORT, "-o", "adir"], A_FOLDER,
                                  ("--output 'adir'", "existing folder")),
    "export -o missing/x.json": ([*EXPORT, "-o", "missing/x.json"], {},
                                 ("--output", "'missing'", "does not exist")),
    "export -o x.txt": ([*EXPORT, "-o", "x.txt"], {}, ("--output 'x.txt'", ".graphml")),
    "export -o x (no suffix)": ([*EXPORT, "-o", "x"], {}, ("--output 'x'", ".json")),
    "export -o .json (a suffix alone)": ([*EXPORT, "-o", ".json"], {},
                                         ("--output '.json'", "suffix alone")),
    "export -o x.json -o y.json": ([*EXPORT, "-o", "x.json", "-o", "y.json"], {},
                                   ("given twice", "'x.json'", "'y.json'")),
    "export --output=x.json --output y.json": ([*EXPORT, "--output=x.json", "--output",
                                                "y.json"], {}, ("--output is given twice",)),
    "export --format JSONS": ([*EXPORT, "--format", "JSONS", "-o", "z.json"], {},
                              ("--format", "'JSONS'", "'json'")),
    "plot -o p.jpg": ([*PLOT, "-o", "p.jpg"], {}, ("--output 'p.jpg'", ".png, .svg, .pdf")),
    "plot -o adir/": ([*PLOT, "-o", "adir/"], A_FOLDER, ("--output 'adir/'", "folder")),
    "plot -o p (no suffix)": ([*PLOT, "-o", "p"], {}, ("--output 'p'", ".png")),
    "plot -o .png (a suffix alone)": ([*PLOT, "-o", ".png"], {}, ("--output '.png'",
                                                                  "suffix alone")),
    # -- collective: sizes at their ends, groups and placements beyond the fabric --------
    **{f"collective --size {s!r}": ([*COLL, s], {}, ("--size", repr(s), *w)) for s, w in {
        "0B": (SIZE_RANGE,), "1e30B": (SIZE_RANGE,), "-1MB": (SIZE_RANGE,),
        "1.5B": (SIZE_RANGE,), "1.0000001PiB": (SIZE_RANGE,), "1125899906842625": (SIZE_RANGE,),
        "MiB": ("not a number with a unit",), "mb": ("not a number with a unit",),
        "1mb": ("unknown unit 'mb'",), "1Mb": ("in bits",), "0x10": ("unknown unit",),
        "8MiB/s": ("unknown unit",), "8m": ("unknown unit 'm'",)}.items()},
    "collective --group 8 on 4 GPUs": (["collective", "all-reduce", "--fabric", "ring:n=4",
                                        "--group", "8"], {}, ("--group '8'", "4 GPUs")),
    "collective --group gpu0,gpu0": (["collective", "all-reduce", "--fabric", "ring:n=4",
                                      "--group", "gpu0,gpu0"], {}, ("--group", TWICE)),
    "collective --group gpu0,nvs0": (["collective", "all-reduce", "--fabric", "ring:n=4",
                                      "--group", "gpu0,nvs0"], {}, ("--group", "'nvs0'")),
    # said 'rail-aligned placement needs ...' with no flag
    "collective --placement rail-aligned on a ring": (
        ["collective", "all-reduce", "--fabric", "ring:n=4", "--group", "4", "--placement",
         "rail-aligned"], {}, ("--placement 'rail-aligned'", "contiguous, spread or random")),
    "collective --placement=rail-aligned --all-groups on a ring": (
        ["collective", "all-reduce", "--fabric", "ring:n=4", "--group", "4",
         "--placement=rail-aligned", "--all-groups"], {}, ("--placement 'rail-aligned'",)),
    "costs --placement rail-aligned on a ring": (
        ["costs", "--fabric", "ring:n=8", "--placement", "rail-aligned"], {},
        ("--placement 'rail-aligned'", "contiguous, spread or random")),
    "collective --placement spread on named GPUs": (
        ["collective", "all-reduce", "--fabric", "ring:n=4", "--group", "gpu0,gpu1",
         "--placement", "spread"], {}, ("--placement", "--group 'gpu0,gpu1'")),
    # said "--sizes '' is not a number with a unit": the empty part, not the range typed
    **{f"costs --sizes {s!r}": (["costs", "--fabric", "ring:n=8", "--sizes", s], {},
                                (f"--sizes {s!r}", f"has no {w}", "'LO:HI'"))
       for s, w in {"1M:": "HI", ":8M": "LO", "1M:8M:": "FACTOR"}.items()},
    "costs --sizes 8M:1M (reversed)": (["costs", "--fabric", "ring:n=8", "--sizes", "8M:1M"],
                                       {}, ("--sizes '8M:1M'", "HI 1 MiB is below LO 8 MiB")),
    "costs --sizes 1M:8M:1": (["costs", "--fabric", "ring:n=8", "--sizes", "1M:8M:1"], {},
                              ("--sizes factor", "> 1")),
    "costs --sizes 1M:8M:1.0000001 (62 million rows)": (
        ["costs", "--fabric", "ring:n=8", "--sizes", "1M:8M:1.0000001"], {},
        ("--sizes '1M:8M:1.0000001'", "--max-rows")),
    "costs --sizes 1M,1MiB (one size twice)": (
        ["costs", "--fabric", "ring:n=8", "--sizes", "1M,1MiB"], {}, ("--sizes", "twice")),
    "costs --groups 2,02": (["costs", "--fabric", "ring:n=8", "--groups", "2,02"], {},
                            ("--groups '2,02'", TWICE)),
    "costs --format nccl -o t.csv": (["costs", "--fabric", "ring:n=8", "--format", "nccl",
                                      "-o", "t.csv"], {}, ("--output 't.csv'", ".txt")),
    "costs --format vidur -o vd.csv": (["costs", "--fabric", "ring:n=8", "--format", "vidur",
                                        "-o", "vd.csv"], {}, ("--output 'vd.csv'", "folder")),
    # -- blast-radius failure classes ------------------------------------------------------
    "blast-radius --rate GPU=1e-5": ([*BLAST, "--rate", "GPU=1e-5"], {},
                                     ("--rate", "'GPU'", "'gpu'")),
    "blast-radius --rate gpus=1e-5": ([*BLAST, "--rate", "gpus=1e-5"], {},
                                      ("--rate", "'gpus'")),
    "blast-radius --rate gpu twice": ([*BLAST, "--rate", "gpu=1e-5", "--rate", "gpu=2e-5"], {},
                                      ("--rate", "twice", "'gpu=1e-5'", "'gpu=2e-5'")),
    "blast-radius --rate gpu=1e-5,nic=1e-6": ([*BLAST, "--rate", "gpu=1e-5,nic=1e-6"], {},
                                              ("--rate", "'1e-5,nic=1e-6'")),
    "blast-radius --rate gpu=": ([*BLAST, "--rate", "gpu="], {}, ("--rate 'gpu='",
                                                                 "CLASS=VALUE")),
    "blast-radius --rate =1e-5": ([*BLAST, "--rate", "=1e-5"], {}, ("--rate '=1e-5'",)),
    "blast-radius --repair-time gpu=4h": ([*BLAST, "--repair-time", "gpu=4h"], {},
                                          ("--repair-time", "'gpu'", "gpu-die")),
    "blast-radius --repair-time optics=4h": ([*BLAST, "--repair-time", "optics=4h"], {},
                                             ("--repair-time", "'optics'")),
    "blast-radius --scenario and --fabric": ([*BLAST, "--fabric", "ring:n=8"], {},
                                             ("--scenario", "--fabric")),
    # -- yield ---------------------------------------------------------------------------
    "yield --area 0": (["yield", "--area", "0"], {}, ("--area", "'0'", "> 0")),
    "yield --area 1e9": (["yield", "--area", "1e9"], {}, ("--area '1e9'", "wafer")),
}

#: Command lines taken: name -> (argv, files).
TAKEN: dict[str, tuple[list[str], dict[str, Made]]] = {
    "show ring: n=4 (a blank)": ([*SHOW, "ring: n=4"], {}),
    "show RING:n=4 (upper case)": ([*SHOW, "RING:n=4"], {}),
    "show ' ring:n=4 ' (blanks around)": ([*SHOW, " ring:n=4 "], {}),
    "show ring: (no parameters)": ([*SHOW, "ring:"], {}),
    "show ring:n=2 (the smallest)": ([*SHOW, "ring:n=2"], {}),
    "compare ring:n=4 ring:n=8 --group 3": ([*TCMP, "ring:n=4", "ring:n=8", "--group", "3"], {}),
    "compare two fabrics re-typed --gpu lite": ([*TCMP, "ring:n=4", "ring:n=8", "--gpu",
                                                 "lite"], {}),
    "export -o x.JSON (an upper-case suffix)": ([*EXPORT, "-o", "x.JSON"], {}),
    "export -o x.yaml": ([*EXPORT, "-o", "x.yaml"], {}),
    # a choice is read with case aside (compute.errors.chosen): refused before 01b00252's rule
    "export --format JSON": ([*EXPORT, "--format", "JSON", "-o", "z.json"], {}),
    "plot -o p.PNG (an upper-case suffix)": ([*PLOT, "-o", "p.PNG"], {}),
    "collective --size 8M --size=8MiB (one size twice)": ([*COLL, "8M", "--size=8MiB"], {}),
    "collective --group 2 --group=2": (["collective", "all-reduce", "--fabric", "ring:n=4",
                                        "--group", "2", "--group=2"], {}),
    "blast-radius --rate gpu=1e-5/h": ([*BLAST, "--rate", "gpu=1e-5/h"], {}),
    "blast-radius --rate ocs=1e-5 (no part of the class: a note)": (
        [*BLAST, "--rate", "ocs=1e-5"], {}),
}


def _compare(*fabrics: str) -> Callable[[], object]:
    def call() -> object:
        from netmodel.study.topology_compare import compare_topologies

        return compare_topologies(list(fabrics), group=2)
    return call


def _placed() -> object:
    from netmodel.collectives.placement import partition
    from topologies.specs import build

    return partition(build("ring", {"n": "8"}), 4, policy="rail-aligned")


def _parameter(call: Callable[[], object], parameter: str) -> Callable[[], object]:
    """``call``, whose refusal must be marked with ``parameter`` (UserError.parameter)."""
    def run() -> object:
        from compute.errors import UserError

        try:
            return call()
        except UserError as exc:
            got = getattr(exc, "parameter", None)
            raise UserError(f"{exc} [parameter {got}]") from None
    return run


#: Library calls refused: name -> (call, words the UserError holds).
LIBRARY: dict[str, tuple[Callable[[], object], tuple[str, ...]]] = {
    "compare_topologies(['ring', 'ring:n=8'])": (_compare("ring", "ring:n=8"),
                                                 (TWICE, "'ring'", "'ring:n=8'")),
    "compare_topologies(['ring:n=4', 'ring:n=4.0'])": (_compare("ring:n=4", "ring:n=4.0"),
                                                       (TWICE,)),
    "partition(ring, policy='rail-aligned') marks its parameter": (
        _parameter(_placed, "placement"), ("rail-aligned placement", "[parameter placement]")),
}

#: Library calls taken: name -> (call, what the result shows).
LIBRARY_TAKEN: dict[str, tuple[Callable[[], object], Callable[[object], bool]]] = {
    "compare_topologies(['ring:n=4', 'ring:n=8']) (two fabrics)": (
        _compare("ring:n=4", "ring:n=8"), lambda r: [row.gpus for row in r.rows] == [4, 8]),
}


def cases() -> Iterator[Case]:
    yield from (refusal_case(n, a, f, w) for n, (a, f, w) in REFUSALS.items())
    yield from (taken_case(n, a, f) for n, (a, f) in TAKEN.items())
    yield from (library_case(n, c, w) for n, (c, w) in LIBRARY.items())
    yield from (library_taken_case(n, c, h) for n, (c, h) in LIBRARY_TAKEN.items())


def main() -> int:
    return run_round(cases(), "hostile31-")


if __name__ == "__main__":
    sys.exit(main())
