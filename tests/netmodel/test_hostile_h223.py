"""Hostile input, helper 223 (reliability commands, catalog, concurrent groups).

(a) A scenario's fabric over the 131,072-GPU limit of the reliability models
(:data:`netmodel.study.reliability_fabric.MAX_GPUS`): with no ``--gpus`` the cluster is one
copy of the fabric, whose size was never held to the limit, so a leaf-spine of radix
100,000 (400,000 GPUs) ran ``blast-radius`` for 90 s and ``availability`` for over 60 s.
Now refused once the fabric is built, before the search, in one line.

(b) ``Catalog.with_`` took any storage bandwidth > 0; it now holds the CLI's 1 MB/s floor
(a GPU's least scale-up bandwidth, ``compute.gpu_ranges.spec_ranges``), naming the parameter.

(c) ``concurrent_cost(model, None, ...)`` raised TypeError ('NoneType' object is not
iterable), and a group given as a set was taken, its ring order then Python's string
hashing (PYTHONHASHSEED); a set of groups ordered the result's rows so. Both are refused,
naming the parameter; a dict's keys keep their insertion order and are taken.

(d) ``availability --repair-time host=99y --repair-time gpu-die=99y --repair-time
gpu-package=99y`` (a century is allowed) printed a mean capacity of -105 (Monte Carlo and
closed form), 'goodput -836 tokens/s/SM' and '10625% of the capacity is lost', exit 0:
the model adds the losses of the outages in progress (first-order), with no cap at the
whole cluster. Both now cap the sum at the cluster: the Monte Carlo's level per moment, the
closed form's mean adds back ``E[(X - I)^+] / I`` of the compound Poisson sum ``X``.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from compute.errors import UserError
from netmodel.study.reliability_fabric import MAX_GPUS, cluster_cells
from tests.netmodel.cli_helpers import one_line_error, run_cli
from tests.netmodel.scenario_helpers import scenario_toml

# ------------------------------------------------------------------ (a) fabric over the limit

# 2 leaves x 131,074 / 2 GPUs = 131,074 GPUs: two over the limit, the smallest leaf-spine
# above it (radix even); built in about half a second
BIG = scenario_toml("big-ls", "H100-SXM",
                    {"builder": "leaf-spine", "leaves": 2, "radix": 131074, "gpu": "$gpu"},
                    description="a leaf-spine of 131,074 GPUs", links="as-built")


def test_the_limit_is_held_on_one_copy_of_the_fabric():
    assert cluster_cells(None, MAX_GPUS) == 1          # at the limit: one cell
    with pytest.raises(UserError, match=r"fabric has 131,074 GPUs, more than .* \(131,072 GPUs\)"):
        cluster_cells(None, MAX_GPUS + 2)
    with pytest.raises(UserError, match="fabric has 131,074 GPUs"):
        cluster_cells(131_074, MAX_GPUS + 2)           # the fabric, before the --gpus checks


@pytest.mark.parametrize("command", ["blast-radius", "availability"])
def test_a_fabric_over_the_limit_is_refused_in_one_line(tmp_path, command):
    path = tmp_path / "big.toml"
    path.write_text(BIG)
    one_line_error(run_cli([command, "--scenario", path, "--model", "Llama-3-70B"]),
                   "scenario big-ls@H100-SXM's fabric has 131,074 GPUs",
                   "(131,072 GPUs); use a smaller fabric")


# ------------------------------------------------------------------ (b) storage bandwidth floor
# Catalog.with_ took any storage bandwidth > 0 (the CLI refuses below 1 MB/s since b75dc6c):
# at 1e-300 B/s a spare's load time overflowed to inf, at 1 B/s it ran past a century.

@pytest.mark.parametrize("bw", [1e-300, 1.0, 999_999.0])
def test_the_catalog_holds_storage_bandwidth_to_the_clis_floor(bw):
    from netmodel.study.reliability_catalog import catalog

    with pytest.raises(UserError, match=r"^host_storage_bandwidth must be >= 1e\+06 bytes/s \(1 MB/s"):
        catalog().with_(load_from="storage", host_storage_bandwidth=bw)


def test_the_floor_itself_is_taken():
    from netmodel.study.reliability_catalog import catalog

    assert catalog().with_(load_from="storage",
                           host_storage_bandwidth=1e6).host_storage_bandwidth == 1e6


# ------------------------------------------------------------------ (c) concurrent groups

@pytest.fixture(scope="module")
def model8():
    from netmodel.api import build_fabric
    from netmodel.collectives.model import FabricCostModel

    return FabricCostModel(build_fabric("single-switch:n=8"))


def test_concurrent_cost_refuses_no_groups_by_name(model8):
    from netmodel.collectives.concurrent import concurrent_cost

    with pytest.raises(ValueError, match="^groups must be a group size .* got None$"):
        concurrent_cost(model8, None, "all-reduce", 1e6)


@pytest.mark.parametrize("make, needle", [
    (lambda g: [set(g[:4]), g[4:]], "groups[0] must be an ordered list of GPUs (its order is "
                                    "the ring order), got a set"),
    (lambda g: [g[:4], frozenset(g[4:])], "groups[1] must be an ordered list of GPUs"),
    (lambda g: {tuple(g[:4]), tuple(g[4:])}, "groups must be an ordered list of groups (one "
                                             "result row each, in their order), got a set"),
])
def test_concurrent_cost_refuses_unordered_groups(model8, make, needle):
    from netmodel.collectives.concurrent import concurrent_cost

    with pytest.raises(UserError) as info:
        concurrent_cost(model8, make(model8.router.gpu_list), "all-reduce", 1e6)
    assert needle in str(info.value)
    assert "changes from run to run" in str(info.value)


def test_ordered_groups_still_run_alike(model8):
    """A dict's keys (insertion order) cost as the same list does."""
    from netmodel.collectives.concurrent import concurrent_cost

    g = model8.router.gpu_list
    a = concurrent_cost(model8, [g[:4], g[4:]], "all-reduce", 1e6)
    b = concurrent_cost(model8, [dict.fromkeys(g[:4]).keys(), tuple(g[4:])], "all-reduce", 1e6)
    assert np.array_equal(a.time, b.time)


# ------------------------------------------------------------------ (d) capacity in [0, 1]

def _one_instance_kind(rate, down_s):
    from netmodel.study.availability_kinds import Kind

    return Kind("gpu-die", "x", rate=rate, down=1, slow=0.0, units=-1, restored=0.0,
                d_repair=down_s, d_swap=60.0, hold=down_s, d_slow=0.0)


def test_the_closed_form_caps_overlapping_outages_at_the_cluster_by_hand():
    """One instance, no spares, failures at rate r each down 2/r s: the outages in progress
    N are Poisson with mean 2, the instance is up while N = 0: mean capacity e^-2 = 0.1353
    (the additive mean was 1 - 2 = -1). With 2 kinds of mean 1 over 2 instances (each
    failure 1 instance): X ~ Poisson(2) instances lost, capped at 2: E[min(X, 2)] =
    2 - 2 e^-2 - e^-2 x 2 = 2 - 4e^-2, mean 2e^-2 = 0.2707 (additive 1 - 2/2 = 0)."""
    from netmodel.study.availability_analytic import analytic
    from netmodel.study.reliability_spares import SparePools

    pools = SparePools("pod", 0, 1, (0,))
    r = 1e-5
    a = analytic([_one_instance_kind(r, 2 / r)], pools, 1)
    assert a.mean == pytest.approx(math.exp(-2), rel=1e-9)
    assert a.overlap == pytest.approx(2.0)            # the additive sum is still reported
    b = analytic([_one_instance_kind(r, 1 / r)] * 2, pools, 2)
    assert b.mean == pytest.approx(2 * math.exp(-2), rel=1e-9)
    # far past the cluster: 0, never below (the additive mean was 1 - 1000)
    assert analytic([_one_instance_kind(r, 1000 / r)], pools, 1).mean == pytest.approx(0, abs=1e-12)
    # small losses: the first-order mean as before, to the bit
    k = _one_instance_kind(1e-4, 3600.0)
    assert analytic([k] * 10, pools, 100).mean == 1 - 10 * 1e-4 * 3600.0 / 100


def test_the_monte_carlo_caps_at_the_cluster_and_agrees_by_hand():
    from netmodel.study.availability_mc import simulate
    from netmodel.study.reliability_spares import SparePools

    pools = SparePools("pod", 0, 1, (0,))
    r = 2 / (86400 * 30)                       # 2 failures per 30 d, each down 30 d
    mc = simulate([_one_instance_kind(r, 86400 * 30)], pools, 1, horizon="1y", trials=400,
                  seed=3)
    assert 0 <= mc.p1 <= mc.p99 <= 1
    assert abs(mc.mean - math.exp(-2)) <= 4 * mc.mean_ci
    far = simulate([_one_instance_kind(r * 50, 86400 * 30)], pools, 1, horizon="30d",
                   trials=20, seed=3)
    assert 0 <= far.mean < 1e-6


def test_the_command_line_never_prints_a_negative_goodput():
    r = run_cli(["availability", "--scenario", "lite-flat", "--model", "Llama-3-70B",
                 "--repair-time", "host=99y", "--repair-time", "gpu-die=99y",
                 "--repair-time", "gpu-package=99y", "--trials", "50", "-q", "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    for mean in (d["monte_carlo"]["mean"], d["analytic"]["mean"], d["analytic_no_spares"]["mean"]):
        assert 0 <= mean <= 1e-6
    assert 0 <= d["goodput_tokens_per_s_per_sm"] <= 1e-6 * d["healthy_tokens_per_s_per_sm"]
