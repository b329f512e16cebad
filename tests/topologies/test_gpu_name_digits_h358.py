"""A GPU's number in its name (gpu3) is read in ASCII digits only: str.isdigit() takes '²'
(which int() then refuses: a ValueError traceback, exit 1) and '٣' (which int() reads as 3).
A torus's dims numbers its GPUs gpu0.. row-major (topologies.schema), and a drawing sorts
nodes by their number (topologies.draw_labels.node_order)."""

from __future__ import annotations

import networkx as nx
import pytest

from compute.errors import UserError
from tests.netmodel.cli_helpers import one_line_error, run_cli
from topologies.direct import torus
from topologies.draw_labels import node_order
from topologies.io import write_graph
from topologies.schema import validate


@pytest.mark.parametrize("name", ["gpu\u00b2", "gpu\u0663", "gpu\uff13"])
def test_torus_gpu_named_with_other_digits_refused(name):
    g = nx.relabel_nodes(torus("2x2"), {"gpu3": name})
    with pytest.raises(UserError, match=f"numbers the torus's GPUs gpu0 to gpu3 row-major, "
                                        f"but it has GPU '{name}'"):
        validate(g, check_connected=False)


def test_torus_file_on_the_command_line(tmp_path):
    path = tmp_path / "t.json"
    write_graph(torus("2x2"), path)
    assert run_cli(["topology", "show", str(path)]).exit_code == 0
    path.write_text(path.read_text().replace('"gpu3"', '"gpu\u00b2"'))
    one_line_error(run_cli(["topology", "show", str(path)]),
                   "graph attribute 'dims' '2x2' numbers the torus's GPUs gpu0 to gpu3 "
                   "row-major, but it has GPU 'gpu\u00b2'")


def test_node_order_reads_ascii_numbers():
    assert sorted(["gpu10", "gpu2", "gpu\u00b2", "gpu1"], key=node_order) == \
        ["gpu1", "gpu2", "gpu10", "gpu\u00b2"]   # 'gpu²' sorts by its name, as a letter
    assert node_order("gpu\u0663") == ("gpu\u0663", 0, "gpu\u0663")


def test_torus_dims_in_other_digits_refused(tmp_path):
    # the graph attribute dims '٢x٢' was read by int() as a 2x2 torus
    path = tmp_path / "t.json"
    write_graph(torus("2x2"), path)
    path.write_text(path.read_text().replace('"dims": "2x2"', '"dims": "\u0662x\u0662"'))
    one_line_error(run_cli(["topology", "show", str(path)]),
                   "invalid fabric graph: graph attribute 'dims' '\u0662x\u0662' has the digit "
                   "'\u0662' (ARABIC-INDIC DIGIT TWO)")

