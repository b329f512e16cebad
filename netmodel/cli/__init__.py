"""The command line: one module per command group, each thin (parse, call the library, print)."""

from __future__ import annotations

#: Options that choose only where or how output goes, not what is computed: left out of the
#: run an output folder's manifest records.
_NOT_THE_RUN = frozenset({"out_dir", "output", "as_json", "quiet", "no_plot", "plot_path",
                          "workers", "scheduler"})


def run_record() -> dict:
    """The run that writes an ``--out`` folder, for its ``netmodel-manifest.json``: the
    command (``study lite-gpu``) and every option as given or defaulted, named as on the
    command line without its dashes (``max-batch``) and valued as typed (text, not parsed;
    a repeated option a list), less those that change only where or how output goes."""
    import click

    from netmodel.cli.options import ReadAs, as_typed

    ctx = click.get_current_context()
    names, c = [], ctx
    while c.parent is not None:
        names.append(c.info_name)
        c = c.parent
    run = {"command": " ".join(reversed(names))}
    for param in ctx.command.params:
        if param.name in _NOT_THE_RUN or param.name not in ctx.params:
            continue
        key = max(param.opts, key=len).lstrip("-") if isinstance(param, click.Option) \
            else param.name
        v = ctx.params[param.name]
        if isinstance(param.type, ReadAs):   # the command gets the value read; the run, typed
            v = as_typed(param.name)
        run[key] = [_text(x) for x in v] if isinstance(v, tuple) else _text(v)
    return run


def say_written(paths, as_json: bool) -> None:
    """Say which files were written (not with --json: stdout is then JSON only)."""
    if paths and not as_json:
        import click

        click.echo("wrote " + ", ".join(str(p) for p in paths))


def _text(value: object) -> object:
    r"""``value``, but a string with bytes that are not UTF-8 (a file name Python reads in
    as lone surrogates) written with those bytes as ``\xNN``: JSON that strict readers take
    (a lone surrogate's escape is no character; jq turns it into U+FFFD).

    >>> _text("bad\udcff.toml"), _text("ünï"), _text(3)
    ('bad\\xff.toml', 'ünï', 3)
    """
    if not isinstance(value, str):
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return value
