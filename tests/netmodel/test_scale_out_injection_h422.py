"""Where GPUs of a server share its NICs, topology show and topology compare name the
scale-out injection per GPU (the server's NICs over its GPUs, by hand) beside the
injection figure (the smallest GPU's own links, unchanged); a NIC a GPU prints nothing
new (the default fabrics' outputs are compared with the old code's in the commit)."""
from click.testing import CliRunner

from netmodel.cli.main import cli
from netmodel.study.topology_compare import compare_topologies

FOUR = "rail-optimized:domains=2,nics_per_server=4"   # 4 x 50 GB/s for 8 GPUs: 25 GB/s
ONE = "rail-optimized:domains=2,nics_per_server=1"    # 50 GB/s for 8 GPUs: 6.25 GB/s


def _show(spec):
    r = CliRunner().invoke(cli, ["topology", "show", spec])
    assert r.exit_code == 0, r.output
    return next(line for line in r.output.splitlines() if line.startswith("injection:"))


def test_show_names_the_nic_share():
    assert _show(FOUR) == ("injection:   450 GB/s per GPU per direction (switch tier 0: "
                           "450 GB/s); scale-out 25 GB/s per GPU (its server's NICs shared "
                           "by its GPUs)")
    assert _show(ONE).endswith("; scale-out 6.25 GB/s per GPU (its server's NICs shared by "
                               "its GPUs)")
    assert _show("rail-optimized:domains=2") == (
        "injection:   500 GB/s per GPU per direction (switch tier 0: 450 GB/s, "
        "switch tier 1: 50 GB/s)")


def test_compare_notes_the_nic_share():
    c = compare_topologies(["rail-optimized:domains=2", FOUR, ONE])
    full, four, one = c.rows
    assert [r.injection_per_gpu for r in c.rows] == [500e9, 450e9, 450e9]   # own links
    said = "injection per GPU: its own links; GPUs of a server share its NICs, scale-out "
    assert not any(n.startswith("injection") for n in full.notes)
    assert said + "25 GB/s per GPU" in four.notes
    assert said + "6.25 GB/s per GPU" in one.notes
