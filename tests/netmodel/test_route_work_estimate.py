"""Routes found by search (a direct-connect fabric's, GPUs forwarding) are estimated from a
sample before a large batch is routed (route_sampling._SAMPLE_FROM pairs and more): past the
router's limit of route links the batch is refused in one line (TooManyRouteLinks), and an
algorithm that needs it is left out of the fastest-of choice instead of holding gigabytes
(h257: 'collective all-reduce --fabric torus:dims=16x16x16 --group 1024' held 13.1 GB for
185 s, its 131,072-GPU torus form ran past 300 s); under the limit the routes are those of
the batch routed without a sample, to the bit."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from netmodel.collectives import route_sampling, routing
from netmodel.collectives.model import FabricCostModel
from netmodel.collectives.routing import Router
from netmodel.collectives.steps import NotApplicable
from tests.netmodel.cli_helpers import one_line_error, run_cli
from topologies import build


def _all_pairs(p: int, step: int = 1) -> list:
    gpus = [f"gpu{i}" for i in range(0, p * step, step)]
    return [(a, b, 1.0) for a in gpus for b in gpus if a != b]


def _digest(loads) -> str:
    links, coef, lat, so = loads
    return hashlib.sha256(links.tobytes() + coef.tobytes() + np.float64(lat).tobytes()
                          + bytes([bool(so)])).hexdigest()


@pytest.mark.parametrize("spec, p, one_by_one", [
    ("torus:dims=6x6x6", 120, False),               # kept shortest paths, numpy
    ("lite-groups:base=[torus:dims=3x3x2],lites=4,split=gateway", 72, False),
    ("torus:dims=6x6x6", 60, True),                 # one search per pair
])
def test_a_sample_first_routes_the_same_bits(monkeypatch, spec, p, one_by_one):
    graph = build(spec)
    transfers = _all_pairs(p)
    if one_by_one:   # read where a router is built (Router._dag_sized)
        monkeypatch.setattr(routing, "DAG_NODES", 100)
    monkeypatch.setattr(route_sampling, "_SAMPLE_FROM", 10**9)
    monkeypatch.setattr(route_sampling, "_SAMPLE_FROM_ONE_BY_ONE", 10**9)
    plain = Router(graph)
    assert plain._dag_sized is not one_by_one
    want = _digest(plain.loads(transfers))
    monkeypatch.setattr(route_sampling, "_SAMPLE_FROM", 1000)
    monkeypatch.setattr(route_sampling, "_SAMPLE_FROM_ONE_BY_ONE", 1000)
    sampled = Router(graph)
    assert _digest(sampled.loads(transfers)) == want
    # every pair routed once: the sample is not routed twice
    assert len(sampled._rt_links.a) == len(plain._rt_links.a)
    assert len(sampled._rt_hops.a) == len(plain._rt_hops.a)


def test_the_estimate_is_the_mean_of_the_sample(monkeypatch):
    # all pairs of 120 GPUs of a 6x6x6 torus: the neighbours' routes are one link each,
    # not searched; the others are estimated from 512 of them spread evenly
    graph = build("torus:dims=6x6x6")
    transfers = _all_pairs(120)
    r = Router(graph)
    r.loads(transfers)
    nbr = sum(1 for a, b, _ in transfers if graph.has_edge(a, b))
    searched = len(r._rt_links.a) - nbr
    monkeypatch.setattr(route_sampling, "_SAMPLE_FROM", 1000)
    monkeypatch.setattr(route_sampling, "_SEARCH_LINKS", 1)
    with pytest.raises(route_sampling.TooManyRouteLinks) as err:
        Router(graph).loads(transfers)
    text = str(err.value)
    assert f"routing {len(transfers) - nbr:,} transfers" in text
    estimate = int(text.split("about ")[1].split(" route links")[0].replace(",", ""))
    assert abs(estimate - searched) < 0.05 * searched, (estimate, searched)
    assert "from a sample of 512" in text and "limit of 1:" in text


def test_past_the_limit_direct_is_left_out_and_named(monkeypatch):
    monkeypatch.setattr(route_sampling, "_SAMPLE_FROM", 1000)
    monkeypatch.setattr(route_sampling, "_SEARCH_LINKS", 50_000)
    model = FabricCostModel(build("torus:dims=6x6x6"))
    group = model.group(120)
    with pytest.raises(NotApplicable, match="route links"):
        model.compiled("all-reduce", "direct", group)
    names = {c[0] for c in model.candidates("all-reduce", group)}
    assert "direct" not in names and "ring" in names


def test_the_command_line_says_it_in_one_line(monkeypatch):
    monkeypatch.setattr(route_sampling, "_SAMPLE_FROM", 1000)
    monkeypatch.setattr(route_sampling, "_SEARCH_LINKS", 50_000)
    r = run_cli(["collective", "all-reduce", "--fabric", "torus:dims=6x6x6", "--group", "120",
                 "--algorithm", "direct"])
    one_line_error(r, "direct: routing", "route links", "limit of 50,000",
                   "use a smaller group or another algorithm")
    ok = run_cli(["collective", "all-reduce", "--fabric", "torus:dims=6x6x6", "--group", "120"])
    assert ok.exit_code == 0, ok.output
    listed = ok.output.split("alternatives (best protocol each): ")[1].splitlines()[0]
    names = [item.rsplit(" ", 2)[0] for item in listed.split(", ")]
    assert "direct" not in names and "ring" in names, listed
