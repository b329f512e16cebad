"""An algorithm typed by NCCL's (or NVIDIA's) name is refused with what netmodel calls it
(h334): '--algorithm nvls' said only "unknown algorithm 'nvls'; known: ..." though the model
has NVLS as 'in-network'. The names come from one table beside the registry
(ALGORITHM_ALIASES); none is taken in place of netmodel's own."""

import pytest

from compute.errors import UserError
from netmodel.collectives.algorithms import ALGORITHM_ALIASES, ALGORITHMS
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.names import NCCL_ALGORITHMS
from tests.netmodel.cli_helpers import one_line_error, run_cli
from topologies import build

#: name typed -> what the refusal says (NCCL_ALGO's names, NCCL user guide)
CASES = {
    "nvls": "'nvls' is NCCL's name; netmodel calls it 'in-network'",
    "NVLS": "'NVLS' is NCCL's name; netmodel calls it 'in-network'",
    "nvlstree": "'nvlstree' is NCCL's name; netmodel calls it 'in-network-tree'",
    "NVLSTree": "'NVLSTree' is NCCL's name; netmodel calls it 'in-network-tree'",
    "collnet": "'collnet' is NCCL's name; netmodel calls it 'collnet-direct' or 'collnet-chain'",
    "sharp": "'sharp' is NVIDIA's name; netmodel calls it 'in-network'",
    "pat": "'pat' is NCCL's name for an algorithm netmodel does not model",
    "CollnetDirect": "(netmodel spells it 'collnet-direct')",
    # netmodel's own name in another case is that name (compute.errors.chosen: 'Ring' is
    # 'ring', h728); spelt otherwise, it is refused with netmodel's spelling
    "Two_Shot": "(netmodel spells it 'two-shot')",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_collective_names_what_netmodel_calls_it(name):
    one_line_error(run_cli(["collective", "all-reduce", "--fabric", "nvl72", "--algorithm",
                            name]), f"unknown algorithm {name!r} ", CASES[name], "known: 'auto'")


@pytest.mark.parametrize("name", ["nvls", "collnet", "pat", "sharp"])
def test_costs_and_a_scenario_say_it_too(name):
    one_line_error(run_cli(["costs", "--fabric", "nvl72", "--algorithm", name, "--sizes",
                            "1MiB", "--groups", "8"]), CASES[name])
    one_line_error(run_cli(["costs", "--fabric", "nvl72", "--algorithms", f"ring,{name}",
                            "--sizes", "1MiB", "--groups", "8"]), CASES[name])
    one_line_error(run_cli(["collective", "all-reduce", "--scenario", "h100-dgx",
                            "--algorithm", name]), CASES[name])


def test_the_library_refuses_them_by_name_and_accepts_none():
    g = build("nvl72")
    for name, said in CASES.items():
        with pytest.raises(UserError, match="unknown algorithm") as e:
            FabricCostModel(g, algorithm=name)
        assert said in str(e.value)
    with pytest.raises(UserError, match="netmodel calls it 'in-network'"):
        FabricCostModel(g).algorithm_names("all-reduce", "nvls")


def test_the_table_names_only_the_registrys_algorithms():
    assert ALGORITHM_ALIASES["nvls"][1] == ("in-network",)
    assert {a for _, names in ALGORITHM_ALIASES.values() for a in names} <= set(NCCL_ALGORITHMS)
    assert not set(ALGORITHM_ALIASES) & set(ALGORITHMS)
