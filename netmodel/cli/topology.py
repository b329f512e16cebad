"""``netmodel topology list | show | compare | plot | export``: a thin click layer over
:mod:`topologies` (``compare`` over :mod:`netmodel.study.topology_compare`).

Only click and the standard library are imported at module level; networkx, matplotlib and
the topologies package are imported inside the commands so ``netmodel --help`` stays fast.
SPEC is a spec string (``fat-tree:k=8,oversubscription=2,gpu=Lite``), a saved
``.json`` / ``.graphml`` fabric or a scenario (``lite-ocs``, ``lite-flat@Lite+BW``, a
``.toml``: its fabric), resolved once here by
:func:`netmodel.study.fabric_ref.resolve_fabric`; a bad one is one ``error:`` line
with exit status 2.
Output paths follow :mod:`compute.output_paths` (checked before the fabric is built: the folder
must exist and be writable; a figure's suffix names its format).
"""

from __future__ import annotations

import json
from contextlib import nullcontext

import click

from netmodel.cli.help_format import SummaryGroup
from netmodel.cli.options import (
    WHOLE,
    FabricCommand,
    RegistryChoice,
    RegistryHelp,
    as_typed,
    check_format_suffix,
    gpu_help,
)
from netmodel.cli.refusals import value_refused_as

__all__ = ["topology"]


def _default(param) -> str:
    """A builder parameter's default as a spec writes it (a None default by the word the
    spec takes back: :func:`topologies.registry.unset_word`)."""
    value = param.default
    if value is None:
        return param.unset or "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


@click.group(cls=SummaryGroup)
def topology() -> None:
    """Build, analyse, draw and export fabrics (SPEC: 'fat-tree:k=8,gpu=Lite', a saved
    file or a scenario such as lite-ocs or lite-flat@Lite+BW)."""


@topology.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the registry as JSON.")
def list_(as_json: bool) -> None:
    """List the fabric builders with their parameters and defaults."""
    from topologies import builders

    infos = builders()
    if as_json:
        out = [{"name": b.name, "summary": b.summary,
                "params": [{"name": p.name, "type": p.type, "default": p.default,
                            "unit": p.unit} for p in b.params]} for b in infos]
        click.echo(json.dumps(out, indent=1))
        return
    for b in infos:
        click.echo(f"{b.name}: {b.summary}")
        params = ", ".join(f"{p.name}={_default(p)}" + (f" [{p.unit}]" if p.unit else "")
                           for p in b.params)
        click.echo(click.wrap_text(params, width=96, initial_indent="    ",
                                   subsequent_indent="    "))


@topology.command(cls=FabricCommand, short_help="Analyse a fabric: counts, bill of materials, diameter, bandwidths.")
@click.argument("spec")
@click.option("--json", "as_json", is_flag=True, help="Print the analysis as JSON.")
@click.option("--pair", nargs=2, metavar="GPU GPU", default=None,
              help="Two GPUs for path diversity (default: gpu0 and the farthest GPU).")
def show(spec: str, as_json: bool, pair: tuple[str, str] | None) -> None:
    """Analyse a fabric: counts, bill of materials, diameter, bandwidths, path diversity."""
    from netmodel.study.fabric_ref import resolve_fabric
    from topologies.analysis import summary

    fab = resolve_fabric(spec)
    # a built, read or scenario fabric: validated as it was made (resolve_fabric)
    with value_refused_as("--pair", " ".join(pair or ()), "path diversity",
                          *(f"{p!r} is not" for p in pair or ())):
        s = summary(fab.graph, pair=tuple(pair) if pair else None, validated=True)
    scenario = fab.scenario.label if fab.scenario is not None else None
    if as_json:
        doc = s.to_dict()
        click.echo(json.dumps({"scenario": scenario, **doc} if scenario else doc, indent=1))
        return
    click.echo(s.table(scenario))


@topology.command(cls=FabricCommand, short_help="Fabrics side by side: counts, bandwidths, busbw, cost, blast radius.")
@click.argument("specs", nargs=-1, metavar="SPEC SPEC [SPEC...]")
@click.option("--group", type=WHOLE, default=None, metavar="N",
              help="GPUs of the all-reduce group (default 8, or the largest power of two "
                   "every fabric holds).")
@click.option("--gpu", default=None, metavar="NAME|FILE", cls=RegistryHelp,
              help_from=lambda: f"Re-type every fabric given as a spec or a scenario to this "
              f"GPU (not a saved .json/.graphml fabric): {gpu_help()}.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
@click.option("--plot", "plot_path", default=None, metavar="FILE.png",
              help="Also draw the comparison (.png, .svg or .pdf).")
def compare(specs: tuple[str, ...], group: int | None, gpu: str | None, as_json: bool,
            plot_path: str | None) -> None:
    """Fabrics side by side: counts, optics, ports, diameter, injection and bisection
    bandwidth, path diversity, all-reduce busbw of a group at 1 MiB, 64 MiB and 1 GiB,
    network cost and power, blast radius per component class (a scenario's physical
    fabric, before its [adjust])."""
    from compute.errors import UserError

    if len(specs) < 2:
        raise UserError(f"topology compare needs at least 2 fabrics (SPEC arguments), got "
                        f"{len(specs)}")
    if plot_path is not None:
        from netmodel.cli.resolve import check_figure_path

        check_figure_path("--plot", plot_path)
    if gpu is not None:   # its refusal said with the flag, not as a fabric's own gpu=
        from compute.hardware import get_gpu

        with value_refused_as("--gpu", gpu, "unknown GPU", "GPU file", "a GPU", "gpu "):
            get_gpu(gpu)
    from netmodel.study.topology_compare import compare_topologies

    # a group given is said with its flag; the default one (the largest power of two every
    # fabric holds) by the library's words
    # and --gpu given with a saved file (whose GPUs it cannot re-type) said with its flag
    with value_refused_as("--group", str(as_typed("group")), "group ") if group is not None \
            else nullcontext(), value_refused_as("--gpu", gpu, "gpu cannot re-type") \
            if gpu is not None else nullcontext():
        result = compare_topologies(specs, group=group, gpu=gpu)
    if plot_path is not None:
        from compute.outputs import atomic_write
        from netmodel.study.topology_compare_plots import plot_topology_compare

        atomic_write(plot_path, lambda p: plot_topology_compare(result, p), "figure")
    if as_json:
        doc = result.to_dict()
        if plot_path is not None:
            doc["plot"] = plot_path
        click.echo(json.dumps(doc, indent=1))
        return
    click.echo(result.table())
    if plot_path is not None:
        click.echo(f"wrote {plot_path}")


@topology.command(cls=FabricCommand)
@click.argument("spec")
@click.option("-o", "--output", required=True, metavar="FILE",
              help="Picture file; its suffix is the format: .png, .svg or .pdf.")
@click.option("--title", default=None, metavar="TITLE", help="Title (default: the fabric's name).")
def plot(spec: str, output: str, title: str | None) -> None:
    """Draw a fabric (more than 512 GPUs: a representative part plus counts)."""
    from netmodel.cli.resolve import check_figure_path
    from netmodel.study.fabric_ref import resolve_fabric
    from topologies.draw import plot as draw

    check_figure_path("--output", output)
    if title is not None:   # said with the flag, before the fabric is built
        from compute.validate import string

        string("", "--title", title)   # as the figure reads it
    click.echo(f"wrote {draw(resolve_fabric(spec).graph, output, title=title)}")


#: Export formats and the file suffixes each takes.
EXPORT_FORMATS = {"json": (".json",), "graphml": (".graphml",), "astra-sim": (".yml", ".yaml")}


@topology.command(cls=FabricCommand, short_help="Write a fabric as node-link JSON, GraphML or an ASTRA-sim network config.")
@click.argument("spec")
@click.option("-o", "--output", required=True, metavar="FILE",
              help="Output file: .json (node-link), .graphml, or .yml (ASTRA-sim).")
@click.option("--format", "fmt", type=RegistryChoice(lambda: EXPORT_FORMATS), default=None,
              help="File format (default: from the output's suffix). astra-sim: ASTRA-sim's "
                   "analytical network config (topology, npus_count, bandwidth in GB/s, "
                   "latency in ns per dimension), for fabrics its dimensions can express.")
def export(spec: str, output: str, fmt: str | None) -> None:
    """Write a fabric to node-link JSON, GraphML (both read back by any SPEC argument) or an
    ASTRA-sim analytical network config."""
    from pathlib import Path

    from compute.errors import UserError
    from compute.output_paths import check_file_path

    with value_refused_as("--output", output, "output file"):
        check_file_path(output, "output file")
    suffix = Path(output).suffix.lower()
    if fmt is None:
        fmt = next((f for f, s in EXPORT_FORMATS.items() if suffix in s), None)
        if fmt is None:
            every = [s for ss in EXPORT_FORMATS.values() for s in ss]
            if Path(output).name.lower() in every:   # '.json': a suffix alone, said so
                with value_refused_as("--output", output, "output file"):
                    check_file_path(output, "output file", every)
            raise UserError(f"--output {output!r}: unknown fabric file type "
                            f"{suffix or '(none)'!r}; allowed: .json, .graphml, .yml (or give "
                            f"--format)")
    else:
        check_format_suffix(output, fmt, EXPORT_FORMATS, True)
    with value_refused_as("--output", output, "output file"):
        check_file_path(output, "output file", EXPORT_FORMATS[fmt])
    from netmodel.study.fabric_ref import resolve_fabric

    graph = resolve_fabric(spec).graph
    if fmt == "astra-sim":
        from topologies.astra_sim import astra_sim_network, write_astra_sim

        try:
            net = astra_sim_network(graph)
        except UserError as exc:   # which fabric: its words name a kind, not the spec
            raise UserError(f"spec {spec!r}: {exc}") from None
        with value_refused_as("--output", output, "cannot write "):   # its write, as its check
            path = write_astra_sim(graph, output)
        click.echo(f"wrote {path} ({' x '.join(map(str, net.npus_count))} NPUs: "
                   f"{', '.join(net.topology)})")
        for note in net.notes:
            click.echo(f"  approximated: {note}")
        return
    from topologies.io import write_graph

    with value_refused_as("--output", output, "cannot write "):
        path = write_graph(graph, output)
    click.echo(f"wrote {path} ({graph.graph['gpus']} GPUs, {graph.number_of_nodes()} nodes, "
               f"{graph.number_of_edges()} links)")
