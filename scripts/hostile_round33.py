"""Hostile-input round 33, on what rounds 15-32 (scripts/hostile_round15.py .. 32.py) left
undecided and on ground they tried least: a choice typed in another case (``--phase
Decode``, ``--algorithm RING``, ``--format CSV``, a builder's ``medium=COPPER``) where
catalog names were already read regardless of case; a list naming one choice twice in two
cases; a spec's text values written back as typed (``gpu=lite``, ``medium=COPPER``); a
fabric no router could index (``full-mesh:n=4000``: 8M edges, within the fabric limits but
16M directed links, built for two minutes and 3 GB before the router refused it);
Decimals and Fractions given as durations and rates; the advice of a refusal that must be
runnable (``ocs,logical=ring``); hostile fabric files (entity expansion, an external
entity, nesting 100,000 deep, a NUL byte, a key twice, a FIFO or a device in a file's
place); and every number-taking option of the commands that answer in a second, derived
from the CLI's registry, at the limits (-0.0, a subnormal, 1e308, inf).

What each gets (the project's promise, docs/units-and-errors.md): a refusal is exit status
2, one line ``error: ...`` holding the words listed, no traceback, nothing written in the
case's folder; a value taken is exit 0 (or 3, an unmet target), its output holding the
words listed where some are; a library refusal is a UserError naming the parameter; a
library value taken gives the result it shows.

Usage: ``python scripts/hostile_round33.py [-k SUBSTRING] [-v]``; prints each failure
(FAIL), the counts, and exit status 1 if any failed. In process (click's CliRunner); about
two minutes on two cores.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hostile_round29 import library_case, library_taken_case  # noqa: E402
from hostile_round32 import CALIBRATE, CSV, CSV_HEAD, env_case  # noqa: E402
from hostile_tally import (  # noqa: E402
    Case,
    Made,
    invoke_in,
    one_line_refusal,
    refusal_case,
    run_round,
    taken_case,
)

INFER = ["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "1", "--batch", "8"]
COMPARE = ["compare", "--models", "Llama-3-8B", "--scenarios", "h100-dgx", "--max-batch", "8",
           "-q", "--no-plot"]
COSTS = ["costs", "--fabric", "ring:n=8", "--sizes", "8M", "--groups", "8"]
COLLECTIVE = ["collective", "all-reduce", "--fabric", "ring:n=8", "--size", "8M"]


def _ring_file(suffix: str, edit: Callable[[str], str | bytes]) -> Made:
    """A saved ring of 4 GPUs (``f.json`` or ``f.graphml``), its text edited by ``edit``."""
    def made(d: Path) -> None:
        from topologies.io import write_graph
        from topologies.specs import build

        path = d / f"f.{suffix}"
        write_graph(build("ring:n=4"), path)
        text = edit(path.read_text())
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)
    return made


def _graphml_doctype(entity: str, use: str) -> Callable[[str], str]:
    def edit(text: str) -> str:
        body = text.split("?>", 1)[1]
        return (f'<?xml version="1.0"?>\n<!DOCTYPE graphml [{entity}]>\n'
                + body.replace("<graph ", f'<graph x="{use}" ', 1))
    return edit


_LOL = '<!ENTITY a "aaaaaaaaaa">' + "".join(
    f'<!ENTITY {c} "{("&" + p + ";") * 10}">' for p, c in zip("abcdefgh", "bcdefghi", strict=True))


def _node(kind: str) -> Made:
    """``f.json`` made a FIFO (``fifo``) or a link to /dev/zero (``zero``)."""
    def made(d: Path) -> None:
        if kind == "fifo":
            os.mkfifo(d / "f.json")
        else:
            os.symlink("/dev/zero", d / "f.json")
    return made


#: Command lines refused: name -> (argv, files, words the line holds).
REFUSALS: dict[str, tuple[list[str], dict[str, Made], tuple[str, ...]]] = {
    # -- a fabric no router indexes: refused before it is built (117 s and 3.2 GB before) --
    "collective --fabric full-mesh:n=4000": (
        ["collective", "all-reduce", "--fabric", "full-mesh:n=4000", "--size", "8M"], {},
        ("--fabric", "full-mesh:n=4000", "7,998,000 edges", "NETMODEL_MAX_ROUTER_LINKS")),
    "costs --fabric full-mesh:n=4000": (
        ["costs", "--fabric", "full-mesh:n=4000", "--sizes", "8M", "--groups", "8"], {},
        ("full-mesh:n=4000", "NETMODEL_MAX_ROUTER_LINKS")),
    "compare on a scenario file of full-mesh n=4000": (
        ["compare", "--models", "Llama-3-8B", "--phases", "decode", "--max-batch", "8", "-q",
         "--no-plot", "--scenarios", "s.toml"],
        {"s.toml": 'name = "fm"\ndescription = "a full mesh of 4,000"\ngpu = "H100-SXM"\n'
                   '[fabric]\nbuilder = "full-mesh"\nn = 4000\ngpu = "$gpu"\n'
                   '[collective]\nplacement = "contiguous"\nalgorithm = "auto"\n'
                   'links = "as-built"\ncalibration = "default"\n'
                   '[sources]\nbandwidth = "x"\nlatency = "x"\n'},
        ("s.toml", "[fabric]", "7,998,000 edges", "NETMODEL_MAX_ROUTER_LINKS")),
    # -- one choice twice, in two cases -------------------------------------------------------
    "compare --phases decode,Decode": ([*COMPARE, "--phases", "decode,Decode"], {},
                                       ("--phases", "'decode' and 'Decode'", "more than once")),
    "costs --algorithms ring,RING": ([*COSTS, "--algorithms", "ring,RING"], {},
                                     ("--algorithms", "more than once")),
    "costs --ops all-reduce,ALL-REDUCE": ([*COSTS, "--ops", "all-reduce,ALL-REDUCE"], {},
                                          ("--ops", "more than once")),
    "topology compare ring:n=4,medium=COPPER ring:n=4": (
        ["topology", "compare", "ring:n=4,medium=COPPER", "ring:n=4"], {},
        ("more than once",)),
    # -- a choice not matched but for case is still refused with the list ------------------
    "--algorithm Two_Shot (spelt otherwise)": ([*COLLECTIVE, "--algorithm", "Two_Shot"], {},
                                               ("--algorithm", "netmodel spells it 'two-shot'")),
    # -- a default refused is said to be one (it read as typed) -----------------------------
    "collective on 4 GPUs (default --group 8)": (
        ["collective", "all-reduce", "--fabric", "ring:n=4", "--size", "8M"], {},
        ("--group '8' (its default): group size 8 is larger than the fabric's 4 GPUs",)),
    "costs on 4 GPUs (default --groups 2,4,8)": (
        ["costs", "--fabric", "ring:n=4", "--sizes", "8M"], {},
        ("--groups '2,4,8' (its default): group size 8",)),
    "collective on 4 GPUs --group 8 (typed)": (
        ["collective", "all-reduce", "--fabric", "ring:n=4", "--size", "8M", "--group", "8"],
        {}, ("--group '8': group size 8",)),
    # -- a measurements CSV's number refused as typed (it said 'got 0', 'got 10000000') ------
    "calibrate context '-0.0'": (CALIBRATE, {"m.csv": CSV + "Llama-3-8B,H100-SXM,1,16,decode,,"
                                             "-0.0,0.01\n"},
                                 ("m.csv: row 6: context must be a whole number from 1 to "
                                  "10,000,000, got '-0.0'",)),
    "calibrate tp '1e7'": (CALIBRATE, {"m.csv": CSV + "Llama-3-8B,H100-SXM,1e7,16,decode,,96,"
                                       "0.01\n"}, ("m.csv: row 6: tp", "got '1e7'")),
    "calibrate tp '-0'": (CALIBRATE, {"m.csv": CSV + "Llama-3-8B,H100-SXM,-0,16,decode,,96,"
                                      "0.01\n"}, ("m.csv: row 6: tp", "got '-0'")),
    # -- hostile measurements files (refused before, as now) ---------------------------------
    "calibrate a NUL byte": (CALIBRATE, {"m.csv": CSV + "Llama-3-8B,H100-SXM,1,16,decode,,96,"
                                         "0.0\x0078\n"}, ("m.csv", "NUL")),
    "calibrate a cell of 200,000 characters": (
        CALIBRATE, {"m.csv": CSV + '"' + "x" * 200_000 + '",H100-SXM,1,16,decode,,96,0.01\n'},
        ("m.csv", "131,072 characters")),
    "calibrate 100 MB": (CALIBRATE, {"m.csv": CSV_HEAD + CSV[len(CSV_HEAD):] * 600_000},
                         ("m.csv", "limit")),
    "calibrate a quote not closed": (CALIBRATE, {"m.csv": CSV + '"Llama-3-8B,H100-SXM,1,16,'
                                                 'decode,,96,0.01\n'}, ("m.csv", "not closed")),
    "calibrate Latin-1": (CALIBRATE, {"m.csv": (CSV + "Llama-3-8B,H100-SXM,1,16,decode,,96,"
                                                "0.01,\xe9\n").encode("latin-1")},
                          ("m.csv", "UTF-8")),
    # -- advice that runs as given ---------------------------------------------------------
    "blast-radius --fabric ocs (no circuits)": (
        ["blast-radius", "--fabric", "ocs", "--model", "Llama-3-8B", "--max-batch", "8"], {},
        ("ocs:logical=ring",)),
    # -- hostile fabric files --------------------------------------------------------------
    "graphml entity expansion": (["topology", "show", "f.graphml"],
                                 {".keep": _ring_file("graphml", _graphml_doctype(_LOL, "&i;"))},
                                 ("f.graphml", "DOCTYPE")),
    "graphml external entity": (
        ["topology", "show", "f.graphml"],
        {".keep": _ring_file("graphml", _graphml_doctype(
            '<!ENTITY e SYSTEM "file:///etc/hostname">', "&e;"))}, ("f.graphml", "DOCTYPE")),
    "graphml nested 100,000 deep": (
        ["topology", "show", "f.graphml"],
        {"f.graphml": '<?xml version="1.0"?><graphml xmlns="http://graphml.graphdrawing.org/'
                      'xmlns">' + "<a>" * 100_000 + "</a>" * 100_000 + "</graphml>"},
        ("f.graphml", "nested")),
    "graphml a NUL byte": (["topology", "show", "f.graphml"],
                           {".keep": _ring_file("graphml",
                                                lambda t: t.replace("</graphml>", "\0</graphml>"))},
                           ("f.graphml",)),
    "json fabric a key twice": (["topology", "show", "f.json"],
                                {".keep": _ring_file("json", lambda t: t.replace(
                                    '"directed": false', '"directed": false, "directed": true',
                                    1))}, ("f.json", "'directed'", "twice")),
    "json fabric a NUL byte": (["topology", "show", "f.json"],
                               {".keep": _ring_file("json", lambda t: t[:50] + "\0" + t[50:])},
                               ("f.json",)),
    "json fabric a FIFO": (["topology", "show", "f.json"], {".keep": _node("fifo")},
                           ("f.json", "not a file")),
    "json fabric /dev/zero": (["topology", "show", "f.json"], {".keep": _node("zero")},
                              ("f.json", "not a file")),
    "json fabric empty": (["topology", "show", "f.json"], {"f.json": ""}, ("f.json",)),
    "json fabric a list": (["topology", "show", "f.json"], {"f.json": "[1, 2, 3]"},
                           ("f.json",)),
}

#: Command lines taken: name -> (argv, files).
TAKEN: dict[str, tuple[list[str], dict[str, Made]]] = {
    "json fabric with a BOM": (["topology", "show", "f.json"],
                               {".keep": _ring_file("json", lambda t: ("\ufeff" + t).encode())}),
    "json fabric in UTF-16": (["topology", "show", "f.json"],
                              {".keep": _ring_file("json", lambda t: t.encode("utf-16"))}),
    "graphml fabric with a BOM": (["topology", "show", "f.graphml"],
                                  {".keep": _ring_file("graphml",
                                                       lambda t: ("\ufeff" + t).encode())}),
}

#: Command lines taken whose output holds words: name -> (argv, words).
SHOWN: dict[str, tuple[list[str], tuple[str, ...]]] = {
    # a choice in another case is that choice (compute.errors.chosen), as a catalog name is
    "infer --phase Decode --mode Overlap": ([*INFER, "--phase", "Decode", "--mode", "Overlap"],
                                            ("decode, batch 8", "overlap mode")),
    "collective --algorithm RING": ([*COLLECTIVE, "--algorithm", "RING"],
                                    ("algorithm: ring",)),
    "collective All-Reduce": (["collective", "All-Reduce", "--fabric", "ring:n=8", "--size",
                               "8M"], ("all-reduce of 8 MiB",)),
    "costs --format CSV": ([*COSTS, "--format", "CSV"], ("op,algorithm,protocol",)),
    "costs --algorithms NCCL": ([*COSTS, "--algorithms", "NCCL"], ("all-reduce,",)),
    "compare --phases Decode --instances ALL": ([*COMPARE, "--phases", "Decode", "--instances",
                                                 "ALL"], ("decode Llama-3-8B",)),
    # a spec's text values written as the catalog and the lists spell them
    "topology show ring:n=4,gpu=lite": (["topology", "show", "ring:n=4,gpu=lite"],
                                        ("[ring:n=4,gpu=Lite]",)),
    "topology show ring:n=4,medium=COPPER": (["topology", "show", "ring:n=4,medium=COPPER"],
                                             ("[ring:n=4]",)),
    "topology show ring:n=4,medium=Optical": (["topology", "show",
                                               "ring:n=4,medium=Pluggable-Optics"],
                                              ("[ring:n=4,medium=pluggable-optics]",)),
    "topology show lite-groups:split=GATEWAY": (["topology", "show", "lite-groups:split=GATEWAY"],
                                                ("[lite-groups:split=gateway]",)),
}


def shown_case(name: str, argv: list[str], words: tuple[str, ...]) -> Case:
    """``netmodel argv`` runs (exit 0 or 3), its output holding each of ``words``."""
    def run(d: Path) -> str | None:
        r = invoke_in(argv, d)
        if r.exit_code not in (0, 3) or "Traceback" in r.output:
            return f"exit {r.exit_code} | {r.output.strip()[-300:]}"
        missing = [w for w in words if w not in r.output]
        return f"output lacks {missing} | {r.output.strip()[:300]}" if missing else None
    return f"taken {name}", run


#: The commands whose every number-taking option is tried at the limits, each with a run
#: that answers in a second or so; the options are read from the CLI's registry.
LIMIT_BASES = {
    ("infer",): INFER,
    ("search",): ["search", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--max-batch", "8"],
    ("costs",): COSTS,
    ("collective",): COLLECTIVE,
    ("yield",): ["yield", "--area", "800mm^2"],
    ("topology", "compare"): ["topology", "compare", "ring:n=8", "ring:n=16"],
}
#: The values each is given: zero written negative, a subnormal, the largest float, inf.
LIMIT_VALUES = ("-0.0", "1e-310", "1e308", "inf")
#: Words a refusal of a number says; an option whose refusal of 'abc' holds none takes no
#: number.
_NUMBER_WORDS = ("number", "whole", "time", "size", "bandwidth", "rate", ">", "seconds",
                 "fraction", "area", "%", "price")


def limit_cases() -> Iterator[Case]:
    """Each value option (not a flag, not a click choice, no file or folder) of each command
    of :data:`LIMIT_BASES` that refuses 'abc' as a number, given each of
    :data:`LIMIT_VALUES`: taken (exit 0 or 3) or refused in one line naming the option."""
    import click

    from netmodel.cli.main import cli

    for path, base in LIMIT_BASES.items():
        cmd = cli
        for part in path:
            cmd = cmd.get_command(None, part)   # type: ignore[attr-defined]
        for p in cmd.params:
            if not isinstance(p, click.Option) or p.is_flag or isinstance(p.type, click.Choice) \
                    or p.type.name in ("file", "path", "directory") \
                    or p.opts[0] in ("--out", "-o", "--plot"):
                continue
            flag = p.opts[0]
            argv = list(base)
            if flag in argv:
                i = argv.index(flag)
                del argv[i:i + 2]
            yield _limit_case(" ".join(path), flag, argv)


def _limit_case(command: str, flag: str, argv: list[str]) -> Case:
    def run(d: Path) -> str | None:
        r = invoke_in([*argv, flag, "abc"], d)
        if r.exit_code == 2 and not any(w in r.output.lower() for w in _NUMBER_WORDS):
            return None   # takes no number
        for value in LIMIT_VALUES:
            r = invoke_in([*argv, flag, value], d)
            if r.exit_code in (0, 3) and "Traceback" not in r.output:
                continue
            why = one_line_refusal(r, ())
            if why is not None:
                return f"{flag} {value}: {why}"
        left = sorted(os.listdir(d))
        return f"wrote {left}" if left else None
    return f"limits {command} {flag}", run


def _units(name: str, *args) -> Callable[[], object]:
    def call() -> object:
        from compute import units

        return getattr(units, name)(*args)
    return call


def _slo(**kw) -> Callable[[], object]:
    def call() -> object:
        from compute.phases import Slo

        return Slo(**kw)
    return call


#: Library calls refused: name -> (call, words of the UserError).
LIBRARY: dict[str, tuple[Callable[[], object], tuple[str, ...]]] = {
    # taken as 0.05 s through its text, where every other number check refused a Decimal
    "parse_time(Decimal('0.05'))": (_units("parse_time", Decimal("0.05")),
                                    ("time", "Decimal('0.05')", "float(value)")),
    "parse_bandwidth(Decimal('1e9'))": (_units("parse_bandwidth", Decimal("1e9")),
                                        ("bandwidth", "Decimal", "float(value)")),
    "parse_bytes(Decimal('8'))": (_units("parse_bytes", Decimal("8")), ("size", "Decimal")),
    # refused without saying why (a Decimal is a number to its user)
    "Slo(tbt=Decimal('0.05'))": (_slo(tbt=Decimal("0.05")), ("tbt", "a Decimal is not read")),
    "RooflineOptions(flops_efficiency=Decimal('0.5'))": (
        lambda: __import__("compute.roofline_options", fromlist=["x"]).RooflineOptions(
            flops_efficiency=Decimal("0.5")), ("flops_efficiency", "a Decimal is not read")),
    "with routed_builds(): resolve_fabric('full-mesh:n=4000')": (
        lambda: _routed("full-mesh:n=4000"), ("full-mesh", "NETMODEL_MAX_ROUTER_LINKS")),
}


def _routed(ref: str) -> object:
    from netmodel.collectives.routing import routed_builds
    from netmodel.study.fabric_ref import resolve_fabric

    with routed_builds():
        return resolve_fabric(ref)


def _spec(text: str) -> Callable[[], object]:
    def call() -> object:
        from topologies.specs import build

        return build(text)
    return call


#: Library calls taken: name -> (call, what the result shows).
LIBRARY_TAKEN: dict[str, tuple[Callable[[], object], Callable[[object], bool]]] = {
    # refused: "time 0.05 has unknown unit '/20'"
    "parse_time(Fraction(1, 20))": (_units("parse_time", Fraction(1, 20)), lambda t: t == 0.05),
    "parse_bandwidth(Fraction(10**11, 2))": (_units("parse_bandwidth", Fraction(10**11, 2)),
                                             lambda b: b == 5e10),
    "parse_bytes(Fraction(8))": (_units("parse_bytes", Fraction(8)), lambda n: n == 8.0),
    "check_phase('Decode')": (lambda: __import__("compute.phases", fromlist=["x"]).check_phase(
        "Decode"), lambda p: p == "decode"),
    "chosen('RING', ALGORITHMS)": (
        lambda: __import__("compute.errors", fromlist=["x"]).chosen(
            "RING", __import__("netmodel.collectives.algorithms", fromlist=["x"]).ALGORITHMS),
        lambda a: a == "ring"),
    "FabricCostModel(ring, algorithm='Ring')": (
        lambda: __import__("netmodel.collectives.model", fromlist=["x"]).FabricCostModel(
            _spec("ring:n=8")(), algorithm="Ring"), lambda m: m.algorithm == "ring"),
    "build('ring:n=4,medium=COPPER') spec and args": (
        _spec("ring:n=4,medium=COPPER"),
        lambda g: g.graph["spec"] == "ring:n=4" and "medium" not in g.graph["args"]),
    "build('ring:n=4,gpu=lite') spec": (_spec("ring:n=4,gpu=lite"),
                                        lambda g: g.graph["spec"] == "ring:n=4,gpu=Lite"),
    "build('ring:n=4,medium=Fibre') args": (
        _spec("ring:n=4,medium=Fibre"),
        lambda g: g.graph["args"]["medium"] == "fibre" and g.graph["spec"].endswith(
            "medium=fibre")),
}

#: Settings: name -> (argv, env, words of the refusal or None where taken).
ENV: dict[str, tuple[list[str], dict[str, str], tuple[str, ...] | None]] = {
    # the router's limit, lowered, refuses before building
    "NETMODEL_MAX_ROUTER_LINKS=100 ring:n=64": (
        ["collective", "all-reduce", "--fabric", "ring:n=64", "--size", "8M"],
        {"NETMODEL_MAX_ROUTER_LINKS": "100"}, ("NETMODEL_MAX_ROUTER_LINKS", "64 edges")),
    "NETMODEL_MAX_ROUTER_LINKS=1e30 ring:n=64": (
        ["collective", "all-reduce", "--fabric", "ring:n=64", "--size", "8M"],
        {"NETMODEL_MAX_ROUTER_LINKS": "1e30"}, None),
    "NETMODEL_MAX_ROUTER_LINKS=-0.0": (
        ["collective", "all-reduce", "--fabric", "ring:n=8", "--size", "8M"],
        {"NETMODEL_MAX_ROUTER_LINKS": "-0.0"}, ("NETMODEL_MAX_ROUTER_LINKS", "whole number")),
    "NETMODEL_JOBS=999999 compare --out": ([*COMPARE[:-1], "--phases", "decode", "--out", "o"],
                                           {"NETMODEL_JOBS": "999999"}, None),
}


def cases() -> Iterator[Case]:
    yield from (refusal_case(n, a, f, w) for n, (a, f, w) in REFUSALS.items())
    yield from (taken_case(n, a, f) for n, (a, f) in TAKEN.items())
    yield from (shown_case(n, a, w) for n, (a, w) in SHOWN.items())
    yield from (env_case(n, a, e, w) for n, (a, e, w) in ENV.items())
    yield from (library_case(n, c, w) for n, (c, w) in LIBRARY.items())
    yield from (library_taken_case(n, c, h) for n, (c, h) in LIBRARY_TAKEN.items())
    yield from limit_cases()


def main() -> int:
    return run_round(cases(), "hostile33-")


if __name__ == "__main__":
    sys.exit(main())
