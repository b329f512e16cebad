#!/usr/bin/env python
"""Regenerate what the docs show from what the code does.

    python scripts/make_docs.py                 rewrite every generated block of README.md
                                                and docs/*.md
    python scripts/make_docs.py --check         change nothing; exit 1 listing stale blocks
    python scripts/make_docs.py docs/compute.md only these pages
    COMMAND --json | python scripts/make_docs.py shape
                                                print the key structure of a JSON document

A generated block is announced by an HTML comment at the start of a line (invisible when
GitHub renders the page):

``<!-- sample: COMMAND -->``
    The fenced block right after it is ``$ COMMAND`` and its console output (stdout and
    stderr as a terminal shows them; ``# exit status N`` when N is not 0). Several commands,
    one per line, may stand between ``<!-- sample:`` and ``-->``; they run in order.
    ``<!-- sample needs=PATH: ... -->`` leaves the block alone when PATH (relative to the
    project root) is absent, e.g. the published measurements in ``../shared/reference``.
``<!-- markdown: COMMAND -->`` ... ``<!-- /markdown -->``
    COMMAND's output pasted as Markdown (a script that prints tables, such as
    ``python scripts/accuracy_collectives.py --markdown``); ``needs=PATH`` as above.
``<!-- file: NAME -->``
    The fenced block after it is written to NAME in the page's scratch folder before the
    page's samples run (a scenario or GPU file that a sample reads); NAME must be a new
    plain name, not one of the project's.
``<!-- findings: SOURCE`` ... ``-->`` then ``<!-- /findings -->``
    The top-level bullets of SOURCE (a generated ``summary.md``), with their sub-bullets,
    whose first line, bold marks removed, starts with each line of the comment, copied
    verbatim; a line that matches no bullet or several is an error.
``<!-- commands -->`` ... ``<!-- /commands -->``
    The command table, from ``netmodel.cli.main``'s registry (what ``netmodel --help``
    lists); each command links to the page that says ``<!-- documents: CMD ... -->``.
``<!-- docstring: MODULE -->`` ... ``<!-- /docstring -->``
    MODULE's docstring up to its first doctest, as Markdown (``<!-- docstring: MODULE
    bullets -->``: only its first bullet list), e.g. ``compute.units``' unit rules.
``<!-- columns: MODULE.CLASS -->`` ... ``<!-- /columns -->``
    The columns of a result row (a dataclass: its ``columns()`` where it has one, else its
    fields in order) as a table: name, type (``or null``: empty in CSV, ``null`` in JSON)
    and the ``#:`` comment on the field in the code. ``<!-- columns: MODULE.CLASS own -->``:
    only the fields the class adds to the dataclasses it extends.
``<!-- modules: PACKAGE -->`` ... ``<!-- /modules -->``
    Every module directly in PACKAGE's folder (not its subpackages, ``__init__`` or
    ``__main__``) with the first sentence of its docstring, e.g. the module tables of
    ``docs/architecture.md``.

Samples run in a fresh scratch folder per page, which links the project's top-level files
and folders: paths read as from the project root (``docs/figures/study.csv``,
``python scripts/...``), and what a sample writes under a new name (``--out cmp/``) stays
in the scratch folder (a sample must not write into the project's own folders). Hidden
entries, ``.gitignore``'d ones (``results/``) and the names the page's samples write
(:func:`written`) are not linked, so a reader's own ``results/`` or ``alone/`` at the root
is never written through a link (:func:`link_project`). ``netmodel ...`` runs in this process through click's ``CliRunner`` (the same code
as the console script, without the start-up cost); ``| head -N`` and ``| python
scripts/make_docs.py shape`` filter in this process; any other command runs in ``bash``.
Lines are compared with trailing blanks removed. ``tests/test_docs.py`` runs the same check.

The blocks drawn from the code's own text (findings, commands, docstring, columns, modules)
are rendered by ``scripts/docs_from_code.py``; this script finds every block, runs the
samples and writes the pages.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))   # docs_from_code beside this script, however this one was loaded
try:
    from docs_from_code import (
        ROOT,
        DocsError,
        _rel,
        render_columns,
        render_commands,
        render_docstring,
        render_findings,
        render_modules,
    )
finally:
    sys.path.remove(str(HERE))
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

os.environ.setdefault("MPLBACKEND", "Agg")

#: Fixed terminal width for commands whose output depends on it (click's help).
COLUMNS = "100"

_SAMPLE = re.compile(
    r"^<!-- sample(?P<opts>[^:\n]*):(?P<body>.*?)-->[ \t]*\n"
    r"(?P<block>```console\n.*?^```[ \t]*\n)?", re.S | re.M)
_MARKDOWN = re.compile(
    r"^<!-- markdown(?P<opts>[^:\n]*):(?P<body>.*?)-->[ \t]*\n(?P<block>.*?)^<!-- /markdown -->",
    re.S | re.M)
_FILE = re.compile(r"^<!-- file: (?P<name>[^\s>]+) -->[ \t]*\n```[^\n]*\n(?P<body>.*?)^```[ \t]*$",
                   re.S | re.M)
_FINDINGS = re.compile(
    r"^<!-- findings: (?P<source>\S+)[ \t]*\n(?P<select>.*?)-->[ \t]*\n(?P<body>.*?)"
    r"^<!-- /findings -->", re.S | re.M)
_COMMAND_TABLE = re.compile(r"^<!-- commands -->[ \t]*\n(?P<body>.*?)^<!-- /commands -->",
                       re.S | re.M)
_DOCSTRING = re.compile(
    r"^<!-- docstring: (?P<module>[\w.]+)(?: (?P<part>\w+))? -->[ \t]*\n(?P<body>.*?)"
    r"^<!-- /docstring -->",
    re.S | re.M)
_COLUMNS = re.compile(
    r"^<!-- columns: (?P<target>[\w.]+)(?: (?P<part>\w+))? -->[ \t]*\n(?P<body>.*?)"
    r"^<!-- /columns -->", re.S | re.M)
_MODULES = re.compile(r"^<!-- modules: (?P<package>[\w.]+) -->[ \t]*\n(?P<body>.*?)"
                      r"^<!-- /modules -->", re.S | re.M)
_HEAD = re.compile(r"^head -(?:n ?)?(\d+)$")
_SHAPE = "python scripts/make_docs.py shape"


def pages() -> list[Path]:
    """README.md and every docs/*.md page, README first."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


# ---- running commands -------------------------------------------------------------------

@contextlib.contextmanager
def _cwd(path: Path) -> Iterator[None]:
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def _netmodel(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[str, int]:
    from click.testing import CliRunner

    from netmodel.cli.main import cli

    runner = CliRunner(env={"COLUMNS": COLUMNS, **env})
    with _cwd(cwd):
        result = runner.invoke(cli, argv, prog_name="netmodel")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        import traceback

        tb = "".join(traceback.format_exception(*result.exc_info)[-3:]).strip()
        raise DocsError(f"`netmodel {shlex.join(argv)}` crashed: {tb}")
    return result.output, result.exit_code


def _shell(command: str, cwd: Path) -> tuple[str, int]:
    proc = subprocess.run(["bash", "-c", command], cwd=cwd, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          env={**os.environ, "COLUMNS": COLUMNS,      # this Python first
                               "PATH": os.pathsep.join([str(Path(sys.executable).parent),
                                                        os.environ.get("PATH", "")]),
                               "PYTHONPATH": os.pathsep.join(
                                   [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])},
                          timeout=600)
    return proc.stdout, proc.returncode


def shape(document) -> str:
    """The key structure of a JSON document: every key with the type of its value, lists
    shown by their first element, one top-level key per line.

    >>> print(shape({"a": 1, "b": [{"c": "x", "d": None}], "e": {"f": 1.5}}))
    {
      a: int
      b: [{c: str, d: null}]
      e: {f: float}
    }
    """
    def inline(v) -> str:
        if isinstance(v, dict):
            return "{" + ", ".join(f"{k}: {inline(x)}" for k, x in v.items()) + "}"
        if isinstance(v, list):
            if not v:
                return "[]"
            if all(isinstance(x, dict) for x in v):   # the union of the rows' keys
                merged: dict = {}
                for x in v:
                    for k, y in x.items():
                        if k not in merged or merged[k] is None:
                            merged[k] = y
                return f"[{inline(merged)}]"
            return f"[{inline(v[0])}]"
        if v is None:
            return "null"
        return {bool: "bool", int: "int", float: "float", str: "str"}.get(type(v), "?")

    if not isinstance(document, dict):
        return inline(document)
    lines = ["{"]
    for k, v in document.items():
        lines.extend(textwrap.wrap(f"{k}: {inline(v)}", 96, initial_indent="  ",
                                   subsequent_indent="      ", break_on_hyphens=False))
    lines.append("}")
    return "\n".join(lines)


def _filter(output: str, stage: str) -> str:
    if m := _HEAD.match(stage):
        return "".join(output.splitlines(keepends=True)[: int(m.group(1))])
    if stage == _SHAPE:
        try:
            return shape(json.loads(output)) + "\n"
        except json.JSONDecodeError as exc:
            raise DocsError(f"`{stage}` got no JSON: {exc}") from None
    raise DocsError(f"unsupported filter `{stage}` after a netmodel command "
                    f"(allowed: head -N, {_SHAPE})")


def run_command(command: str, scratch: Path) -> tuple[str, int]:
    """Run one sample command; return (console output, exit status)."""
    stages = [s.strip() for s in command.split(" | ")]
    words = shlex.split(stages[0])
    env = {}
    while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    if words and words[0] == "netmodel":
        output, status = _netmodel(words[1:], scratch, env)
        for stage in stages[1:]:
            output = _filter(output, stage)
        return output, status
    if stages[-1] == _SHAPE:
        output, status = run_command(" | ".join(stages[:-1]), scratch)
        return _filter(output, _SHAPE), status
    return _shell(command, scratch)


def render_sample(commands: list[str], scratch: Path) -> str:
    """The console block of a sample: each ``$ command`` followed by its output."""
    lines = ["```console"]
    for command in commands:
        output, status = run_command(command, scratch)
        lines.append(f"$ {command}")
        lines.extend(line.rstrip() for line in output.rstrip("\n").splitlines())
        if status:
            lines.append(f"# exit status {status}")
    lines.append("```")
    return "\n".join(lines) + "\n"


def render_markdown(commands: list[str], scratch: Path) -> str:
    """The commands' output as Markdown, with a blank line after each table (a line without
    pipes right after a table would otherwise join it)."""
    out: list[str] = []
    for command in commands:
        output, status = run_command(command, scratch)
        if status:
            raise DocsError(f"`{command}` exited with status {status}: {output.strip()[-300:]}")
        for line in output.rstrip("\n").splitlines():
            line = line.rstrip()
            if out and out[-1].startswith("|") and line and not line.startswith("|"):
                out.append("")
            out.append(line)
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


# ---- links -----------------------------------------------------------------------------

_LINK = re.compile(r"!?\[[^\]]*\]\((?P<target>[^)\s]+)(?:\s+\"[^\"]*\")?\)")
_FENCE = re.compile(r"^```.*?^```[ \t]*$", re.S | re.M)
_CODE = re.compile(r"`[^`\n]*`")


def anchors(text: str) -> set[str]:
    """The anchors GitHub gives a Markdown page's headings (lower case, punctuation dropped,
    spaces as hyphens)."""
    out = set()
    for m in re.finditer(r"^#{1,6}\s+(.*?)\s*#*\s*$", _FENCE.sub("", text), re.M):
        slug = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
        out.add(slug)
    return out


def broken_links(page: Path) -> list[str]:
    """The relative links (and images) of ``page`` whose file, or heading anchor in a
    Markdown file, does not exist."""
    text = page.read_text()
    prose = _CODE.sub("", _FENCE.sub("", re.sub(r"<!--.*?-->", "", text, flags=re.S)))
    bad = []
    for m in _LINK.finditer(prose):
        target = m.group("target")
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):       # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            bad.append(f"{_rel(page)}: link to {target}: {_rel(file)} does not exist")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file.read_text()):
            bad.append(f"{_rel(page)}: link to {target}: no heading #{anchor} in {_rel(file)}")
    return bad


# ---- one page ---------------------------------------------------------------------------

@dataclass
class Block:
    """One generated block of a page: where it is, what it says, what it should say."""
    page: Path
    line: int
    kind: str
    what: str
    old: str
    new: str | None = None          # None: skipped (its `needs` is absent)
    note: str = ""
    commands: list[str] = field(default_factory=list, repr=False)
    span: tuple[int, int] = field(default=(0, 0), repr=False)

    @property
    def stale(self) -> bool:
        return self.new is not None and _norm(self.old) != _norm(self.new)

    def describe(self) -> str:
        return f"{_rel(self.page)}:{self.line}: {self.kind} {self.what}"


def _norm(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def _sample_commands(body: str) -> list[str]:
    return [c.strip() for c in body.strip().splitlines() if c.strip()]


def _options(opts: str, where: str) -> dict[str, str]:
    out = {}
    for word in opts.split():
        key, eq, value = word.partition("=")
        if not eq or key not in ("needs",):
            raise DocsError(f"{where}: unknown sample option {word!r} (allowed: needs=PATH)")
        out[key] = value
    return out


def _ignored(root: Path) -> list[str]:
    """The patterns of ``root/.gitignore`` (none without one), comments and negations
    left out."""
    try:
        lines = (root / ".gitignore").read_text().splitlines()
    except OSError:
        return []
    return [ln.strip() for ln in lines if ln.strip() and ln.strip()[0] not in "#!"]


#: The options of netmodel's commands that name a file or folder they write.
_WRITES = ("--out", "--output", "-o", "--plot")
#: The shell's words that end one simple command and start the next.
_SEPARATORS = {";", "&&", "||", "|", "&"}


def written(commands: list[str]) -> set[str]:
    """The first path component of every path ``commands`` write: the targets of
    netmodel's ``--out``, ``--output``/``-o`` and ``--plot``, of ``>`` redirections and of
    ``tee`` (``--out alone/`` -> ``alone``), in every command of a line (``;``, ``&&``,
    ``|``).

    >>> sorted(written(["netmodel compare --out alone/", "netmodel costs -o t.csv > log",
    ...                 "netmodel costs --plot b.png; netmodel costs | tee -a t.txt"]))
    ['alone', 'b.png', 'log', 't.csv', 't.txt']
    """
    out = set()
    for command in commands:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        try:
            words = list(lexer)
        except ValueError:
            continue
        head = None                          # the current simple command's first word
        for i, w in enumerate(words):
            if w in _SEPARATORS:
                head = None
                continue
            if head is None:
                head = w
                continue
            target = None
            after = words[i + 1] if i + 1 < len(words) else None
            if (w in _WRITES or w in (">", ">>", ">|")) and after not in _SEPARATORS:
                target = after
            elif "=" in w and w.partition("=")[0] in _WRITES:
                target = w.partition("=")[2]
            elif head == "tee" and not w.startswith("-") and words[i - 1] not in _WRITES:
                target = w
            if target and not target.startswith("/"):
                out.add(Path(target).parts[0] if Path(target).parts else target)
    return out


def link_project(root: Path, scratch: Path, skip: set[str] = frozenset()) -> None:
    """Link ``root``'s entries into ``scratch`` so that samples read paths as from the
    project root, but not hidden entries, those ``.gitignore`` names (a run's outputs:
    ``results/``, ``build/``) nor the names in ``skip`` (what the samples write): a
    sample that writes ``--out results/`` writes into the scratch folder, not through a
    link into the ``results/`` the README's first command made, or the ``alone/`` a
    reader made following a page's example."""
    import fnmatch

    patterns = _ignored(root)
    for entry in root.iterdir():
        name = entry.name
        if name.startswith(".") or name in skip or any(
                fnmatch.fnmatch(name, p.strip("/")) and (entry.is_dir() or not p.endswith("/"))
                for p in patterns if "/" not in p.strip("/")):
            continue
        (scratch / name).symlink_to(entry)


def blocks(page: Path, *, run: bool = True,
           progress: Callable[[str], None] | None = None) -> list[Block]:
    """Every generated block of ``page``, with what it should say now (``run=False``: only
    locate them)."""
    text = page.read_text()
    found: list[Block] = []
    for m in _SAMPLE.finditer(text):
        commands = _sample_commands(m.group("body"))
        where = f"{_rel(page)}:{_line_of(text, m.start())}"
        opts = _options(m.group("opts"), where)
        start, end = (m.start("block"), m.end("block")) if m.group("block") else (m.end(), m.end())
        found.append(Block(page, _line_of(text, m.start()), "sample",
                           "`" + " ; ".join(commands) + "`", m.group("block") or "",
                           span=(start, end), note=opts.get("needs", ""), commands=commands))
    for m in _MARKDOWN.finditer(text):
        commands = _sample_commands(m.group("body"))
        opts = _options(m.group("opts"), f"{_rel(page)}:{_line_of(text, m.start())}")
        found.append(Block(page, _line_of(text, m.start()), "markdown",
                           "`" + " ; ".join(commands) + "`", m.group("block"),
                           span=(m.start("block"), m.end("block")),
                           note=opts.get("needs", ""), commands=commands))
    for m in _FINDINGS.finditer(text):
        found.append(Block(page, _line_of(text, m.start()), "findings",
                           f"from {m.group('source')}", m.group("body"),
                           span=(m.start("body"), m.end("body")),
                           note=m.group("source") + "\n" + m.group("select")))
    for m in _COMMAND_TABLE.finditer(text):
        found.append(Block(page, _line_of(text, m.start()), "commands", "table",
                           m.group("body"), span=(m.start("body"), m.end("body"))))
    for m in _DOCSTRING.finditer(text):
        found.append(Block(page, _line_of(text, m.start()), "docstring", m.group("module"),
                           m.group("body"), span=(m.start("body"), m.end("body")),
                           note=f"{m.group('module')} {m.group('part') or ''}"))
    for m in _COLUMNS.finditer(text):
        found.append(Block(page, _line_of(text, m.start()), "columns", m.group("target"),
                           m.group("body"), span=(m.start("body"), m.end("body")),
                           note=f"{m.group('target')} {m.group('part') or ''}"))
    for m in _MODULES.finditer(text):
        found.append(Block(page, _line_of(text, m.start()), "modules", m.group("package"),
                           m.group("body"), span=(m.start("body"), m.end("body")),
                           note=m.group("package")))
    found.sort(key=lambda b: b.span)
    if not run:
        return found
    with tempfile.TemporaryDirectory(prefix="netmodel-docs-") as tmp:
        scratch = Path(tmp)
        link_project(ROOT, scratch, set().union(*(written(b.commands) for b in found
                                                   if b.kind in ("sample", "markdown"))))
        for m in _FILE.finditer(text):
            name = m.group("name")
            if "/" in name or name.startswith(".") or (scratch / name).exists():
                raise DocsError(f"{_rel(page)}:{_line_of(text, m.start())}: file name {name!r} "
                                "must be a new plain name (not a project file)")
            (scratch / name).write_text(m.group("body"))
        for b in found:
            t0 = time.perf_counter()
            if b.kind in ("sample", "markdown") and b.note and not (ROOT / b.note).exists():
                b.note = f"skipped: {b.note} is absent"
                continue
            if b.kind == "sample":
                b.new = render_sample(b.commands, scratch)
            elif b.kind == "markdown":
                b.new = render_markdown(b.commands, scratch)
            elif b.kind == "findings":
                source, _, select = b.note.partition("\n")
                b.new = render_findings(ROOT / source, _sample_commands(select))
            elif b.kind == "commands":
                b.new = render_commands(page)
            elif b.kind == "docstring":
                b.new = render_docstring(*b.note.split())
            elif b.kind == "columns":
                b.new = render_columns(*b.note.split())
            elif b.kind == "modules":
                b.new = render_modules(b.note)
            if progress:
                progress(f"{b.describe()} ({time.perf_counter() - t0:.2f} s)")
    return found


def rewrite(page: Path, found: list[Block]) -> bool:
    """Write ``page`` with every block's new text; True if it changed."""
    text = page.read_text()
    out, last = [], 0
    for b in found:
        if b.new is None:
            continue
        out.append(text[last:b.span[0]])
        out.append(b.new)
        last = b.span[1]
    out.append(text[last:])
    new = "".join(out)
    if new == text:
        return False
    from compute.outputs import atomic_write

    atomic_write(page, new.encode(), what="docs page")
    return True


def _diff(b: Block, limit: int = 12) -> str:
    lines = list(difflib.unified_diff(_norm(b.old).splitlines(), _norm(b.new or "").splitlines(),
                                      "documented", "produced now", lineterm="", n=0))
    more = f"\n    ... {len(lines) - limit} more diff lines" if len(lines) > limit else ""
    return "\n".join("    " + line for line in lines[:limit]) + more


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["shape"]:
        try:
            document = json.load(sys.stdin)
        except json.JSONDecodeError as exc:
            print(f"error: shape reads one JSON document on stdin (a command's --json): {exc}",
                  file=sys.stderr)
            return 2
        print(shape(document))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pages", nargs="*", type=Path, help="pages (default README.md, docs/*.md)")
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 if stale")
    ap.add_argument("-v", "--verbose", action="store_true", help="time each block")
    args = ap.parse_args(argv)
    targets = [p.resolve() for p in args.pages] or pages()
    for given in args.pages:
        page = given.resolve()
        if page.suffix != ".md" or not page.is_file():
            print(f"error: page '{given}' is not a Markdown file here; give README.md or "
                  "docs/NAME.md (or none for every page)", file=sys.stderr)
            return 2
    say = (lambda s: print(s, file=sys.stderr)) if args.verbose else None
    t0 = time.perf_counter()
    n_blocks, bad, changed = 0, [], []
    try:
        for page in targets:
            found = blocks(page, progress=say)
            n_blocks += len(found)
            for b in found:
                if b.new is None:
                    print(f"{b.describe()}: {b.note}", file=sys.stderr)
                elif b.stale:
                    bad.append(b)
            if not args.check and rewrite(page, found):
                changed.append(_rel(page))
    except DocsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    links = [msg for page in targets for msg in broken_links(page)]
    for msg in links:
        print(f"broken link: {msg}")
    took = f"{n_blocks} generated blocks in {len(targets)} pages, {time.perf_counter() - t0:.1f} s"
    if args.check:
        for b in bad:
            print(f"stale: {b.describe()}\n{_diff(b)}")
        if bad or links:
            print(f"{len(bad)} stale of {took}; run `python scripts/make_docs.py` to "
                  "regenerate them")
            return 1
        print(f"all fresh: {took}")
        return 0
    print(f"rewrote {', '.join(changed) or 'nothing'} ({len(bad)} blocks changed; {took})")
    return 1 if links else 0


if __name__ == "__main__":
    sys.exit(main())
