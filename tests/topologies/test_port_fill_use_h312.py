"""port_fill takes port_use's result (use=), as network_bill passes its own (h312)."""
import pytest

from compute.errors import UserError
from topologies import build
from topologies.inventory import port_fill, port_use


@pytest.mark.parametrize("spec, fill", [
    # 4 DGX x 8 rails on 8 leaves of 32 GPU-facing ports: 32 / 256
    ("rail-optimized:domains=4", 0.125),
    # 128 Lites x 4 planes on 4 planes of 144 ports: 512 / 576
    ("flat:n=128,planes=4,radix=144", 128 / 144),
])
def test_use_gives_the_same_fill(spec, fill):
    g = build(spec)
    assert port_fill(g, use=port_use(g)) == port_fill(g) == pytest.approx(fill)


@pytest.mark.parametrize("bad, needle", [
    ([{}, {}, {}], "three dicts; got"),          # a list, not port_use's tuple
    (({}, {}), "three dicts; got"),              # two of the three
    (({}, {}, 3), "three dicts; got"),
])
def test_wrong_shape_refused_in_one_line(bad, needle):
    g = build("rail-optimized:domains=4")
    with pytest.raises(UserError) as e:
        port_fill(g, use=bad)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("use must be port_use(graph)") and needle in msg


def test_another_graphs_use_refused():
    g = build("rail-optimized:domains=4")
    other = port_use(build("flat:n=8,planes=2,radix=16"))   # names plane0, absent from g
    with pytest.raises(UserError, match="names node 'plane0'"):
        port_fill(g, use=other)
