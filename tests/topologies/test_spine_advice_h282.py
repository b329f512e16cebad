"""Each rail-optimized builder's refusals name its own parameters (h282).

nvl72 builds through rail_optimized's body; its racks are that body's domains. The advice
of a too-small spine tier is made for the caller's parameter by spine_count (it was made
for rail_optimized's ``domains`` and rewritten by a string replace in nvl72), and the fabric
cap names the builder asked for (nvl72's said 'nvl72: rail-optimized: ...').
"""

import pytest

from compute.errors import UserError
from tests.netmodel.cli_helpers import one_line_error, run_cli
from topologies.hierarchical import nvl72, rail_optimized, spine_count

TOO_MANY = ("{leaves} leaves are too many for one spine tier of 64-port switches "
            "(at most 64); use fewer {unit} or a larger spine_radix")


def test_spine_count_advises_the_callers_unit():
    # 65 leaves with 32 uplinks each: even one cable from each leaf to each of 32 spines
    # needs 65 ports of a 64-port spine
    with pytest.raises(UserError) as err:
        spine_count(65, 32, 64, unit="racks")
    assert str(err.value) == TOO_MANY.format(leaves=65, unit="racks")
    with pytest.raises(UserError) as err:
        spine_count(65, 32, 64)
    assert str(err.value) == TOO_MANY.format(leaves=65, unit="leaves")
    assert spine_count(64, 32, 64, unit="racks") == 32   # 64 leaves fit, one port each


def test_nvl72_and_rail_optimized_spine_lines_verbatim():
    # nvl72: 300 racks x 18 trays = 5400 servers, 32 a leaf (half of 64 ports):
    # ceil(5400 / 32) = 169 SUs of 4 rail leaves = 676 leaves
    r = run_cli(["topology", "show", "nvl72:racks=300"])
    assert one_line_error(r) == ("error: fabric 'nvl72:racks=300': nvl72: "
                                 + TOO_MANY.format(leaves=676, unit="racks"))
    # rail-optimized: 300 DGX-like servers of 8 GPUs, 2 a leaf: 150 SUs of 8 = 1200 leaves
    r = run_cli(["topology", "show", "rail-optimized:domains=300,servers_per_leaf=2"])
    assert one_line_error(r) == ("error: fabric 'rail-optimized:domains=300,"
                                 "servers_per_leaf=2': rail-optimized: "
                                 + TOO_MANY.format(leaves=1200, unit="domains"))


def test_nvl72_fabric_cap_names_nvl72_only():
    # 30000 racks: 2,160,000 GPUs + 30,000 NVLink switches + 67,500 leaves
    # (540,000 trays / 32 = 16,875 SUs x 4 rails) + 32 spines (the estimate's bound,
    # uplinks) = 2,257,532 nodes; 2 x 2,160,000 GPU links + 67,500 x 32 uplinks = 6,480,000
    head = ("the fabric would have about 2,257,532 nodes and 6,480,000 edges, over the "
            "limit of 2,000,000 nodes and 10,000,000 edges")
    with pytest.raises(UserError, match="^nvl72: " + head):
        nvl72(racks=30000)
    r = run_cli(["topology", "show", "nvl72:racks=30000"])
    assert one_line_error(r).startswith("error: fabric 'nvl72:racks=30000': nvl72: " + head)
    with pytest.raises(UserError, match="^rail-optimized: the fabric would have"):
        rail_optimized(domains=270000)


def test_nvl72_refuses_a_gpu_of_more_nvlinks_than_its_chips(tmp_path):
    # (h293) an NVL72 rack has 9 switch trays of 2 NVLink switch chips, each GPU one link to
    # every chip: 18 NVLinks at most. A GPU of 36 was refused naming nvswitch_radix, a
    # parameter nvl72 does not take ('nvswitch_radix 1296 is too small for 72 GPUs with 36
    # NVLinks each: it must be >= 2592'); now in nvl72's terms
    from dataclasses import replace

    from compute.hardware import get_gpu

    want = ("gpu 'Wide' has 36 NVLinks, more than the 18 NVLink switch chips of an NVL72 "
            "rack take (one link to each); give a GPU of at most 18 NVLinks, or "
            "rail-optimized with domain_size=72 and its own nvswitch_radix")
    with pytest.raises(UserError) as err:
        nvl72(gpu=replace(get_gpu("B200-HGX"), name="Wide", nvlinks=36))
    assert str(err.value) == want
    f = tmp_path / "wide.toml"
    f.write_text('[gpu.Wide]\nderive_from = "B200-HGX"\nsource = "test"\nnvlinks = 36\n')
    r = run_cli(["topology", "show", f"nvl72:gpu={f}"])
    assert one_line_error(r) == f"error: fabric 'nvl72:gpu={f}': nvl72: " + want
    # 18 (a B200's own) and 12 (an A100's, 12 of the 18 chips) build: 72 x 18 ports
    assert nvl72().nodes["nvs0"]["radix"] == nvl72(gpu="A100-SXM-80GB").nodes["nvs0"]["radix"] \
        == 1296
