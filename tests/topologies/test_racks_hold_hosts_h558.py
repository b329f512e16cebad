"""A rack holds whole hosts: the failure domains' racks never split a host, on every
builder that labels racks, at any host size. lite-hier's rack label is its leaf (16 Lites)
under hosts of 32 Lites: its racks are 32 Lites, not a rack smaller than a host."""

import json

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from netmodel.cli.main import cli
from topologies import build
from topologies.failure_domains import components

SPECS = st.one_of(
    st.builds("leaf-spine:leaves={},radix={},gpu={}".format, st.integers(1, 4),
              st.sampled_from([4, 8, 16, 32]), st.sampled_from(["H100-SXM", "Lite"])),
    st.builds("fat-tree:k={}".format, st.sampled_from([2, 4, 6])),
    st.builds("rail-optimized:domains={},domain_size={},gpus_per_server={}".format,
              st.integers(1, 3), st.just(8), st.sampled_from([2, 4, 8])),
    st.builds("lite-groups:base=[rail-optimized:domains={}],lites=4".format, st.integers(1, 2)),
    st.builds("nvl72:racks={}".format, st.integers(1, 2)),
)


@settings(max_examples=40, deadline=None)
@given(SPECS, st.integers(1, 40))
def test_every_host_sits_in_one_rack(spec, per_host):
    g = build(spec)
    comps = components(g, gpus_per_host=per_host, classes=["host", "rack"])
    rack_of = {n: c.name for c in comps["rack"] for n in c.nodes if g.nodes[n]["kind"] == "gpu"}
    if not rack_of:
        return   # no rack labels
    for host in comps["host"]:
        gpus = [n for n in host.nodes if g.nodes[n]["kind"] == "gpu"]
        assert len({rack_of[n] for n in gpus}) == 1, (spec, per_host, host.name)
    # every GPU in exactly one rack
    assert sorted(rack_of) == sorted(n for n in g if g.nodes[n]["kind"] == "gpu")


def test_lite_hier_racks_are_hosts_of_32():
    r = CliRunner().invoke(cli, ["blast-radius", "--scenario", "lite-hier", "--model",
                                 "Llama-3-70B", "--json", "--no-plot"])
    assert r.exit_code == 0, r.output
    rows = {x["cls"]: x for x in json.loads(r.output)["rows"]}
    # 128 Lites: 4 hosts of 32 (8 H100s' SMs), 8 leaves of 16; a rack holds whole hosts
    assert rows["host"]["count"] == 4 and rows["host"]["gpus_mean"] == 32
    assert rows["rack"]["count"] == 4 and rows["rack"]["gpus_mean"] == 32   # was 8 x 16
    assert rows["leaf"]["count"] == 8 and rows["leaf"]["gpus_mean"] == 16
