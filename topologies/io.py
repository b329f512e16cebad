"""Fabrics to and from files: node-link JSON (``.json``) and GraphML (``.graphml``).

Both keep every node, edge and graph attribute of the schema with its type; a graph read
back is validated, so a user's own fabric that passes :func:`~topologies.schema.validate`
works everywhere a built one does. Files are written atomically (a temporary file in the
same folder, then :func:`os.replace`): a failed write leaves nothing behind.

The JSON shape is networkx's node-link format with the key ``edges``::

    {"directed": false, "multigraph": false,
     "graph": {"name": ..., "spec": ..., "gpus": N, ...},
     "nodes": [{"id": "gpu0", "kind": "gpu", "gpu": "H100-SXM", ...}, ...],
     "edges": [{"source": "gpu0", "target": "nvs0", "bandwidth": 4.5e11, ...}, ...]}

>>> import tempfile, os
>>> from topologies import ring
>>> folder = tempfile.mkdtemp()
>>> path = os.path.join(folder, "ring.graphml")
>>> write_graph(ring(4), path) == path
True
>>> read_graph(path).edges["gpu0", "gpu1"]["bandwidth"]
225000000000.0
"""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx

from compute.errors import UserError
from compute.outputs import atomic_write
from topologies.schema import validate

__all__ = ["FORMATS", "read_graph", "write_graph"]

FORMATS = (".json", ".graphml")


def _format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise UserError(f"{path}: unknown fabric file type {suffix or '(none)'!r}; "
                        f"allowed: {', '.join(FORMATS)}")
    return suffix


def write_graph(graph: nx.Graph, path) -> str:
    """Validate ``graph`` and write it to ``path`` (``.json`` or ``.graphml``); return the
    path."""
    validate(graph, check_connected=False)
    path = Path(path)
    kind = _format(path)

    def write(tmp):
        if kind == ".json":
            data = nx.node_link_data(graph, edges="edges")
            with open(tmp, "w") as fh:
                json.dump(data, fh, indent=1)
                fh.write("\n")
        else:
            nx.write_graphml(graph, tmp)

    return atomic_write(path, write)


def read_graph(path) -> nx.Graph:
    """The fabric saved in ``path`` (``.json`` or ``.graphml``), validated."""
    path = Path(path)
    kind = _format(path)
    if not path.is_file():
        raise UserError(f"fabric file {path} does not exist")
    try:
        if kind == ".json":
            data = json.loads(path.read_text())
            if not isinstance(data, dict) or "nodes" not in data:
                raise UserError(f"{path}: expected a node-link JSON object with 'nodes' and "
                                "'edges'")
            if data.get("directed") or data.get("multigraph"):
                raise UserError(f"{path}: a fabric is an undirected simple graph (directed and "
                                "multigraph must be false)")
            edges = "edges" if "edges" in data else "links"
            graph = nx.node_link_graph(data, directed=False, multigraph=False, edges=edges)
        else:
            graph = nx.read_graphml(path)
            if graph.is_directed() or graph.is_multigraph():
                raise UserError(f"{path}: a fabric is an undirected simple graph "
                                "(edgedefault='undirected'; merge parallel cables into one "
                                "edge with 'links')")
    except UserError:
        raise
    except (ValueError, KeyError, TypeError, nx.NetworkXError, OSError) as exc:
        # json.JSONDecodeError and xml ParseError are ValueError/SyntaxError subclasses
        raise UserError(f"{path} is not a readable {kind[1:]} fabric: {exc}") from None
    except SyntaxError as exc:
        raise UserError(f"{path} is not a readable {kind[1:]} fabric: {exc}") from None
    for key in ("node_default", "edge_default"):  # GraphML reader's bookkeeping
        graph.graph.pop(key, None)
    graph.graph.setdefault("name", path.stem)
    graph.graph.setdefault("spec", "")
    return validate(graph)
