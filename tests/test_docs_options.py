"""Every option a user can type is in the manual.

``tests/test_docs.py`` checks the other direction (each option the pages name exists). Here
each option of each command (``netmodel COMMAND --help``) must be named, by one of its
names, on the page whose ``<!-- documents: ... -->`` line names the command, or elsewhere in
README.md or docs/*.md in a paragraph or table row that names the command too (an option
shared by several commands documented once, a limit in units-and-errors.md's table).
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.compute.report_helpers import script

ROOT = Path(__file__).resolve().parents[1]
docs_from_code = script("docs_from_code")


def _options() -> dict[str, list[list[str]]]:
    """Command path (``'topology export'``) -> the names of each of its options."""
    import click

    from netmodel.cli.help_format import commands_under
    from netmodel.cli.main import cli

    return {" ".join(path): [
        names for p in cmd.params if isinstance(p, click.Option)
        if (names := [o for o in (*p.opts, *p.secondary_opts)
                      if o.startswith("-") and o not in ("--help", "-h")])]
        for path, cmd in commands_under(cli) if path}


def _word(text: str) -> re.Pattern:
    return re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, text)) + r")(?![\w-])")


def undocumented(options: dict[str, list[list[str]]], pages: list[Path]) -> list[str]:
    """``'COMMAND: --option'`` for each option no page names as the module docstring says."""
    own = docs_from_code.documented_commands(pages)
    chunks = [c for p in pages for c in re.split(r"\n[ \t]*\n|\n(?=\|)", p.read_text())]
    missing = []
    for path, opts in options.items():
        page = own.get(path.split()[0])
        text = page.read_text() if page else ""
        command = _word([path.split()[-1]])
        for names in opts:
            named = _word(names)
            if not named.search(text) and not any(named.search(c) and command.search(c)
                                                  for c in chunks):
                missing.append(f"{path}: {names[-1]}"
                               + (f" (not on {page.name})" if page else ""))
    return missing


def test_every_option_of_every_command_is_in_the_manual():
    options = _options()
    assert len(options) > 15 and ["--max-transfers"] in options["collective"]
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    assert undocumented(options, pages) == []


def test_an_option_missing_from_the_manual_is_found(tmp_path):
    (tmp_path / "a.md").write_text("<!-- documents: infer -->\n`--tp` and `-o`.\n\n"
                                    "`infer` takes `--pp`.\n")
    (tmp_path / "b.md").write_text("`--ep` and `--batch` of search.\n\n| `infer` | `--json` |\n")
    options = {"infer": [["--tp"], ["-o", "--output"], ["--pp"], ["--ep"], ["--json"]],
               "topology export": [["--format"]], "search": [["--batch"], ["--gpu"]]}
    assert undocumented(options, [tmp_path / "a.md", tmp_path / "b.md"]) == [
        "infer: --ep (not on a.md)", "topology export: --format", "search: --gpu"]


def test_each_limit_is_read_where_the_limits_table_says():
    """units-and-errors.md's table of limits: each row's environment variable or option is
    read in the file its `where` column names (a limit moved to another module leaves the
    table pointing at the old one otherwise)."""
    page = (ROOT / "docs" / "units-and-errors.md").read_text()
    rows = re.findall(r"^\|[^\n]*\| `?(?:option )?`?(NETMODEL_MAX_\w+|--[a-z-]+)`?[^|\n]*\| "
                      r"`([\w/.]+\.py)` \|$", page, flags=re.M)
    assert len(rows) >= 12
    # an option by its Python name (--max-transfers: max_transfers, MAX_TRANSFERS)
    assert [f"{name} is not in {where}" for name, where in rows
            if not (ROOT / where).is_file() or name.lstrip("-").replace("-", "_").lower()
            not in (ROOT / where).read_text().lower()] == []


def test_every_script_is_in_the_architecture_pages_table():
    """docs/architecture.md's table of scripts/ names each script (``bench_PART.py`` and
    ``hostile_round*.py`` stand for their families)."""
    page = (ROOT / "docs" / "architecture.md").read_text()
    table = page.split("### scripts/", 1)[1].split("\n\n", 1)[0]
    patterns = [re.escape(n).replace("PART", r"\w+").replace(r"\*", r"\w*")
                for n in re.findall(r"`([\w*./]+)`", table)]
    scripts = [p.name for p in (ROOT / "scripts").glob("*.py")] + ["inference_reports/"]
    assert len(scripts) > 10
    assert [s for s in scripts if not any(re.fullmatch(p, s) for p in patterns)] == []
