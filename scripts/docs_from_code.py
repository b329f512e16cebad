"""The generated blocks of the docs drawn from the code's own text, with no command run: the
README's findings (bullets of a study's ``summary.md``), its command table, a module's
docstring, a result row's columns and a package's module table.

``scripts/make_docs.py`` finds the blocks on each page and renders these kinds here (the
samples and Markdown it gets by running commands, itself); :class:`DocsError` is the error
of both, and :func:`_rel` how both name a path.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_DOCUMENTS = re.compile(r"^<!-- documents: (?P<names>[^>]*?) -->", re.M)


class DocsError(Exception):
    """A generated block that cannot be produced (a crashed sample, a bad marker)."""


def _rel(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)

def summary_bullets(text: str) -> list[str]:
    """The top-level bullets of a Markdown document, each with its nested lines (sub-bullets
    and continuations, indented) as one string."""
    out: list[str] = []
    open_bullet = False
    for line in text.splitlines():
        if line.startswith("- "):
            out.append(line)
            open_bullet = True
        elif open_bullet and line.startswith("  ") and line.strip():
            out[-1] += "\n" + line
        else:                     # a blank line or other text ends the bullet
            open_bullet = False
    return out


def _plain(bullet: str) -> str:
    return bullet.split("\n", 1)[0][2:].replace("**", "").replace("`", "")


def render_findings(source: Path, selectors: list[str]) -> str:
    """The bullets of ``source`` that start with each selector, in the selectors' order."""
    if not source.is_file():
        raise DocsError(f"findings source {_rel(source)} is absent (run `netmodel study "
                        f"lite-gpu --out {_rel(source.parent)}`)")
    bullets = summary_bullets(source.read_text())
    out = []
    for sel in selectors:
        hits = [b for b in bullets if _plain(b).startswith(sel)]
        if len(hits) != 1:
            raise DocsError(f"findings selector {sel!r} matches {len(hits)} bullets of "
                            f"{_rel(source)}, not one; edit the selector lines of the "
                            "<!-- findings: --> marker")
        out.append(hits[0])
    return "\n".join(out) + "\n"


def documented_commands(docs: list[Path]) -> dict[str, Path]:
    """Command name -> the docs page whose ``<!-- documents: ... -->`` line names it."""
    where: dict[str, Path] = {}
    for page in docs:
        for m in _DOCUMENTS.finditer(page.read_text()):
            for name in m.group("names").split():
                if name in where and where[name] != page:
                    raise DocsError(f"command {name!r} is documented by both "
                                    f"{_rel(where[name])} and {_rel(page)}")
                where[name] = page
    return where


def render_commands(readme: Path) -> str:
    """The README's command table from the command registry (``netmodel --help``)."""
    import click

    from netmodel.cli.main import _COMMANDS, cli

    ctx = click.Context(cli, info_name="netmodel")
    where = documented_commands(sorted((ROOT / "docs").glob("*.md")))
    available = cli.list_commands(ctx)            # what `netmodel --help` lists
    names = [n for n in _COMMANDS if n in available] + [n for n in available
                                                         if n not in _COMMANDS]
    rows = ["| command | what it does | manual |", "|---|---|---|"]
    for name in names:
        cmd = cli.get_command(ctx, name)
        label = f"`netmodel {name}`"
        if isinstance(cmd, click.Group):
            label += " (" + ", ".join(f"`{s}`" for s in cmd.list_commands(ctx)) + ")"
        what = _COMMANDS[name][2] if name in _COMMANDS else cmd.get_short_help_str()
        page = where.get(name)
        manual = (f"[{page.stem}]({os.path.relpath(page, readme.parent)})" if page
                  else f"`netmodel {name} --help`")
        rows.append(f"| {label} | {what} | {manual} |")
    return "\n".join(rows) + "\n"


_ROLE = re.compile(r":(?P<role>\w+):`(?P<tilde>~?)(?P<name>[\w.]+)`")


def _rst_to_markdown(text: str, module) -> str:
    """Inline reStructuredText to Markdown: ````x```` -> ```x```; ``:role:`name``` -> the
    name (a ``:data:`` string or tuple of strings shows its value)."""
    def role(m: re.Match) -> str:
        name = m.group("name")
        value = getattr(module, name, None) if m.group("role") == "data" else None
        if isinstance(value, str):
            return f"`{value}`"
        if isinstance(value, tuple) and value and all(isinstance(v, str) for v in value):
            return ", ".join(f"`{v}`" for v in value)
        return f"`{name.rsplit('.', 1)[-1]}`" if m.group("tilde") else f"`{name}`"

    return _ROLE.sub(role, text).replace("``", "`")


def render_docstring(module_name: str, part: str = "") -> str:
    """A module's docstring up to its first doctest, as Markdown; ``part="bullets"``: only
    its first bullet list, rewrapped."""
    module = importlib.import_module(module_name)
    doc = (inspect.getdoc(module) or "").split("\n>>>")[0].rstrip()
    if part == "bullets":
        items: list[str] = []
        for line in doc.splitlines():
            if line.startswith("* "):
                items.append(line)
            elif items and line.startswith("  ") and line.strip():
                items[-1] += " " + line.strip()
            elif items and line.strip():
                break
        if not items:
            raise DocsError(f"the docstring of {module_name} holds no bullet list")
        out = []
        for item in items:
            out.extend(textwrap.wrap(_rst_to_markdown(item, module), 96,
                                     subsequent_indent="  ", break_on_hyphens=False,
                                     break_long_words=False))
        return "\n".join(out) + "\n"
    if part:
        raise DocsError(f"unknown docstring part {part!r} (allowed: bullets)")
    out, literal = [], False
    for line in doc.splitlines():
        if literal and line.strip() and not line.startswith("    "):
            out.append("```")
            literal = False
        if literal:
            out.append(line[4:])
            continue
        if line.rstrip().endswith("::"):
            out.append(_rst_to_markdown(line.rstrip()[:-1], module))
            out.append("```")
            literal = True
            continue
        out.append(_rst_to_markdown(line, module))
    if literal:
        out.append("```")
    return "\n".join(out).replace("```\n\n", "```\n").strip("\n") + "\n"


def _cell(text: str) -> str:
    """Text fit for a Markdown table cell (pipes escaped, one line)."""
    return " ".join(text.split()).replace("|", "\\|")


_FIELD_NOTE = re.compile(r"^\s+(?P<name>\w+)\s*:[^#\n]*?#:\s*(?P<note>.+?)\s*$")
_NOTE_LINE = re.compile(r"^\s+#:\s*(?P<note>.+?)\s*$")
_FIELD = re.compile(r"^\s+(?P<name>\w+)\s*:")


def field_notes(cls: type) -> dict[str, str]:
    """The ``#:`` comments on a dataclass's fields (after the field on its line, or on the
    lines just above it), from its source and its bases'."""
    notes: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if klass is object:
            continue
        try:
            source = inspect.getsource(klass)
        except (OSError, TypeError):
            continue
        above: list[str] = []
        for line in source.splitlines():
            if m := _FIELD_NOTE.match(line):
                notes[m.group("name")] = m.group("note")
                above = []
            elif m := _NOTE_LINE.match(line):
                above.append(m.group("note"))
            elif (m := _FIELD.match(line)) and above:
                notes[m.group("name")] = " ".join(above)
                above = []
            else:
                above = []
    return notes


def _type_text(annotation: object) -> str:
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__",
                                                                   str(annotation))
    parts = [p.strip() for p in text.split("|")]
    if "None" in parts and len(parts) > 1:
        return " or ".join(p for p in parts if p != "None") + " or null"
    return text


def _import_object(target: str) -> object:
    module_name, _, name = target.rpartition(".")
    try:
        return getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError, ValueError) as exc:
        raise DocsError(f"cannot import {target}: {exc}") from None


def render_columns(target: str, part: str = "") -> str:
    """The columns of the result row ``MODULE.CLASS`` as a Markdown table (``part="own"``:
    only the fields it adds to the dataclasses it extends)."""
    import dataclasses

    cls = _import_object(target)
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise DocsError(f"{target} is not a dataclass")
    if part not in ("", "own"):
        raise DocsError(f"unknown columns part {part!r} (allowed: own)")
    by_name = {f.name: f for f in dataclasses.fields(cls)}
    names = list(cls.columns()) if callable(getattr(cls, "columns", None)) else list(by_name)
    if part == "own":
        inherited = {f.name for base in cls.__mro__[1:] if dataclasses.is_dataclass(base)
                     for f in dataclasses.fields(base)}
        names = [n for n in names if n not in inherited]
    notes = field_notes(cls)
    rows = ["| column | type | note in the code |", "|---|---|---|"]
    for name in names:
        f = by_name[name]
        note = notes.get(name, "")
        extra = []
        if f.metadata.get("key"):
            extra.append("identifies the row")
        if f.metadata.get("group"):
            extra.append(f"`{f.metadata['group']}` group")
        note = "; ".join(x for x in [*extra, _rst_to_markdown(note, None)] if x)
        rows.append(f"| `{name}` | {_cell(_type_text(f.type))} | {_cell(note)} |")
    return "\n".join(rows) + "\n"


_SENTENCE_END = re.compile(r"(?<!e\.g)(?<!i\.e)[.?!](?:\s+|$)")


def first_sentence(doc: str) -> str:
    """The first sentence of a docstring's first paragraph, on one line."""
    para = " ".join(doc.strip().split("\n\n")[0].split())
    m = _SENTENCE_END.search(para)
    return para[: m.start() + 1] if m else para


def render_modules(package: str) -> str:
    """Every module directly in ``package``'s folder with the first sentence of its
    docstring, as a Markdown table (read with ``ast``: nothing is imported)."""
    import ast

    folder = ROOT.joinpath(*package.split("."))
    if not (folder / "__init__.py").is_file():
        raise DocsError(f"{package} is not a package of this project")
    rows = ["| module | job (its docstring's first sentence) |", "|---|---|"]
    for path in sorted(folder.glob("*.py")):
        if path.name.startswith("__"):       # __init__ (the package), __main__
            continue
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        job = _rst_to_markdown(first_sentence(doc), None) if doc else "(no docstring)"
        rows.append(f"| `{path.name}` | {_cell(job)} |")
    return "\n".join(rows) + "\n"
