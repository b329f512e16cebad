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
        run[key] = list(v) if isinstance(v, tuple) else v
    return run
