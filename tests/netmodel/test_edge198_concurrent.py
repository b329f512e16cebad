"""Edge cases of many collectives at once (helper 198): groups of different sizes or
algorithms sharing links by time (concurrent_time), each group on its own (algorithm,
protocol) (concurrent_cost, concurrent_own), and the fabric search's ``instances = "all"``
charge against ``collective --all-groups``. What holds is asserted; each defect found was
a strict xfail with its reproducer, unmarked by the commit that fixed it (the defects'
section below)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compute.errors import UserError
from netmodel.api import collective_time
from netmodel.cli.main import cli
from netmodel.collectives.concurrent import (
    concurrent_cost,
    concurrent_own,
    concurrent_own_makespan,
)
from netmodel.collectives.model import FabricCostModel
from netmodel.study.scenario_collectives import ScenarioCollectives
from tests.netmodel.scenario_helpers import scenario_toml
from topologies import build

OPS = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "broadcast", "reduce",
       "send-recv")
# 1 byte, odd sizes, and 1 TiB
SIZES = np.array([1.0, 3.0, 1e6 + 1, 2.0 ** 26 + 7, 2.0 ** 40])

_MODELS: dict[str, FabricCostModel] = {}


def model(spec: str, placement: str = "contiguous") -> FabricCostModel:
    key = f"{spec}|{placement}"
    if key not in _MODELS:
        _MODELS[key] = FabricCostModel(build(spec), placement=placement)
    return _MODELS[key]


def gpus(a: int, b: int) -> tuple[str, ...]:
    return tuple(f"gpu{i}" for i in range(a, b))


def run(*args):
    return CliRunner().invoke(cli, list(args))


# --- what holds ---------------------------------------------------------------------------

@pytest.mark.parametrize("op", OPS)
def test_groups_sharing_no_link_take_their_time_alone(op):
    # one switch: every GPU's link is its own group's, so groups of 2, 3, 4 and 7 GPUs
    # (different shapes, different algorithms: ring, direct, tree, in-network...) share no
    # link and each takes, to the last bit, what collective costs it alone
    m = model("single-switch:n=16")
    groups = [gpus(0, 2), gpus(2, 5), gpus(5, 9), gpus(9, 16)]
    r = concurrent_cost(m, groups, op, SIZES)
    alone = np.array([[m.cost(op, s, list(g)).time for s in SIZES] for g in groups])
    assert r.time.tobytes() == r.alone.tobytes() == alone.tobytes()
    assert (r.slowdown == 1.0).all()


@pytest.mark.parametrize("algorithm", [None, "ring", "direct"])
def test_identical_groups_identical_beside_an_odd_one(algorithm):
    # 2:1 leaf-spine, 4 GPUs a leaf: three groups of one GPU on each leaf (alike by
    # symmetry) beside an odd group of 3 on the same leaves' uplinks: the three take the
    # same bits, every group is slowed (>= 1), the makespan is no less than any alone
    m = model("leaf-spine:leaves=4,radix=8,oversubscription=2")
    groups = [tuple(f"gpu{i + 4 * leaf}" for leaf in range(4)) for i in range(3)]
    groups.append(("gpu3", "gpu7", "gpu11"))
    for op in ("all-reduce", "all-gather", "broadcast"):
        r = concurrent_cost(m, groups, op, SIZES, algorithm)
        assert r.time[0].tobytes() == r.time[1].tobytes() == r.time[2].tobytes()
        assert (r.time >= r.alone).all()
        assert (r.makespan >= r.alone.max(axis=0)).all()
        assert np.isfinite(r.time).all()
        assert r.slowdown.max() > 1.5       # the uplinks are shared: a real slowdown


def test_one_group_alone_is_its_collective():
    # one group is all there is: its time together is its time alone, and collective's
    m = model("fat-tree:k=4,oversubscription=2", "spread")
    for op in ("all-reduce", "all-to-all", "broadcast"):
        r = concurrent_cost(m, [gpus(0, 9)], op, SIZES)
        want = np.array([m.cost(op, s, list(gpus(0, 9))).time for s in SIZES])
        assert r.time[0].tobytes() == r.alone[0].tobytes() == want.tobytes()


@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(spec=st.sampled_from(["ring:n=12", "torus:dims=4x4",
                             "leaf-spine:leaves=4,radix=8,oversubscription=2",
                             "fat-tree:k=4,oversubscription=2",
                             "rail-optimized:domains=2,domain_size=4,gpus_per_server=4"]),
       cuts=st.lists(st.integers(2, 16), min_size=1, max_size=5),
       shuffle=st.randoms(use_true_random=False),
       op=st.sampled_from(OPS))
def test_random_groups_invariants(spec, cuts, shuffle, op):
    # random groups of 2..16 GPUs, any order of GPUs: finite; never faster together than
    # alone, to the bit; the makespan is the slowest group's and no less than any alone;
    # all sizes at once are, bit for bit, each size alone; the groups listed in another
    # order take the same times, bit for bit
    m = model(spec)
    names = [n for n, d in build(spec).nodes(data=True) if d.get("kind") == "gpu"]
    shuffle.shuffle(names)
    groups, i = [], 0
    for k in cuts:
        if i + k > len(names):
            break
        groups.append(tuple(names[i:i + k]))
        i += k
    if not groups:
        return
    try:
        r = concurrent_cost(m, groups, op, SIZES)
    except UserError:
        return     # an op no algorithm runs on some group: refused in one line
    assert np.isfinite(r.time).all() and np.isfinite(r.alone).all()
    assert (r.time >= r.alone).all()
    assert (r.makespan >= r.alone.max(axis=0)).all()
    assert r.makespan.tobytes() == r.time.max(axis=0).tobytes()
    for s in (0, 2, 4):
        one = concurrent_cost(m, groups, op, SIZES[s])
        assert one.time[:, 0].tobytes() == r.time[:, s].tobytes()
        assert one.alone[:, 0].tobytes() == r.alone[:, s].tobytes()
    back = concurrent_cost(m, groups[::-1], op, SIZES)
    assert back.time[::-1].tobytes() == r.time.tobytes()
    assert back.alone[::-1].tobytes() == r.alone.tobytes()
    assert back.makespan.tobytes() == r.makespan.tobytes()


@pytest.mark.parametrize("k", range(2, 17))
def test_every_group_size_compiled_as_costed(k):
    # every group size 2..16 on a 2:1 leaf-spine, instances spread: the search's compiled
    # makespan (concurrent_own) is concurrent_cost's, bit for bit, at all sizes at once
    m = model("leaf-spine:leaves=4,radix=8,oversubscription=2", "spread")
    for op in ("all-reduce", "all-to-all"):
        ref = concurrent_cost(m, k, op, SIZES)
        got = concurrent_own_makespan(m, op, concurrent_own(m, k, op), SIZES)
        assert got.tobytes() == ref.makespan.tobytes()
        assert (ref.time >= ref.alone).all()


@pytest.mark.parametrize("spec", ["torus:dims=4x4", "rail-optimized:domains=2,domain_size=8,"
                                  "in_network_reduction=true"])
def test_compiled_makespan_of_mixed_groups(spec):
    # groups of 2, 3, 5 and 6 GPUs scattered over the fabric (different shapes, different
    # algorithms, some in-network): concurrent_own's compiled makespan is concurrent_cost's,
    # bit for bit, at sizes across send/recv's LL/Simple switches and 1 TiB
    m = model(spec)
    names = [n for n, d in build(spec).nodes(data=True) if d.get("kind") == "gpu"]
    order = names[::3] + names[1::3] + names[2::3]
    groups = [tuple(order[0:2]), tuple(order[2:5]), tuple(order[5:10]), tuple(order[10:16])]
    sizes = np.array([1.0, 65537.0, 2.0 ** 19, 2.0 ** 21 + 1, 2.0 ** 26 + 7, 2.0 ** 40])
    for op in ("all-reduce", "all-gather", "all-to-all", "send-recv", "broadcast"):
        ref = concurrent_cost(m, groups, op, sizes)
        got = concurrent_own_makespan(m, op, concurrent_own(m, groups, op), sizes)
        assert got.tobytes() == ref.makespan.tobytes()
        # to the bit: a group's time together is at least its time alone (it was 1 ulp
        # under on rail-optimized before the fixes below)
        assert (ref.makespan >= ref.alone.max(axis=0)).all()


def _all_scenario(tmp_path, name: str) -> str:
    text = resources.files("netmodel").joinpath(f"data/scenarios/{name}.toml").read_text()
    path = tmp_path / f"{name}_all.toml"
    path.write_text(text.replace('calibration = "default"',
                                 'calibration = "default"\ninstances = "all"', 1))
    return str(path)


@pytest.mark.parametrize("name,tp,op", [
    ("h100-dgx", 3, "all-reduce"),     # instances straddle servers (8 GPUs each)
    ("h100-dgx", 12, "all-gather"),
    ("h100-dgx", 24, "all-to-all"),
    ("lite-direct", 6, "all-reduce"),  # straddle the 4-Lite meshes
    ("lite-hier", 24, "reduce-scatter"),
    ("lite-ocs", 6, "all-reduce"),     # each instance's circuits
    ("lite-ocs", 3, "send-recv"),
])
def test_all_groups_is_the_search_charge(tmp_path, name, tp, op):
    # collective --scenario F --all-groups: its makespan, the instances_all line, the
    # search's ScenarioCollectives.collective_time and the API's collective_time agree to
    # the last bit, one size at a time or all at once
    path = _all_scenario(tmp_path, name)
    sc = ScenarioCollectives(path)
    texts = ["1", "3", "1000001", "1GiB"]
    many = np.asarray(sc.collective_time(op, np.array([1.0, 3.0, 1000001.0, 2.0 ** 30]), tp))
    api = np.asarray(collective_time(path, op, np.array([1.0, 3.0, 1000001.0, 2.0 ** 30]), tp))
    assert many.tobytes() == api.tobytes()
    for i, text in enumerate(texts):
        r = run("collective", op, "--scenario", path, "--group", str(tp), "--size", text,
                "--all-groups", "--json")
        assert r.exit_code == 0, r.output
        doc = json.loads(r.output)
        assert doc["all_groups"]["makespan"] == doc["instances_all"]["time"] == float(many[i])
        assert np.isfinite(many[i]) and many[i] >= doc["time"]
        assert doc["all_groups"]["slowdown_max"] >= 1.0


@pytest.mark.parametrize("argv,says", [
    (["--size", "0"], "size must be a whole number of bytes from 1 B to 1 PiB"),
    (["--size", "-1"], "size must be a whole number of bytes from 1 B to 1 PiB"),
    (["--size", "nan"], "size must be a whole number of bytes from 1 B to 1 PiB"),
    (["--size", "inf"], "size must be a whole number of bytes from 1 B to 1 PiB"),
    (["--size", "1e400"], "size must be a whole number of bytes from 1 B to 1 PiB"),
    (["--size", "0.5"], "is 0.5 B: a message is a whole number of bytes from 1 B to 1 PiB"),
    (["--group", "0"], "--group '0' must be a size >= 1"),
    (["--group", "-3"], "--group '-3' must be a size >= 1"),
    (["--group", "17"], "group size 17 is larger than the fabric's 16 GPUs"),
    (["--group", "2.5"], "--group '2.5' must be a size >= 1"),   # a number, not whole
    (["--group", "gpu0,gpu1"], "give --group a size instead"),
    (["--group", "5", "--placement", "random", "--seed", "-1"], "--seed must be a whole"),
])
def test_all_groups_refusals(argv, says):
    args = {"--group": "4", "--size": "1MiB"}
    rest = []
    it = iter(argv)
    for a in it:
        if a in args:
            args[a] = next(it)
        else:
            rest.append(a)
    r = run("collective", "all-reduce", "--fabric", "fat-tree:k=4", "--group", args["--group"],
            "--size", args["--size"], "--all-groups", *rest)
    assert r.exit_code == 2 and says in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1


def test_all_groups_one_tib_and_one_byte():
    # the extremes of size through the CLI: finite, slowdown >= 1, exit 0
    for size in ("1", "3", "1TiB"):
        r = run("collective", "all-to-all", "--fabric", "leaf-spine:leaves=4,radix=8,"
                "oversubscription=2", "--group", "5", "--placement", "spread", "--size", size,
                "--all-groups", "--json")
        assert r.exit_code == 0, r.output
        doc = json.loads(r.output)["all_groups"]
        assert np.isfinite(doc["makespan"]) and doc["slowdown_max"] >= 1.0


@pytest.mark.parametrize("groups,says", [
    ([], "needs at least one group"),
    ([("gpu0",), ("gpu1", "gpu2")], "at least 2 GPUs"),
    ([("gpu0", "gpu0")], "appears more than once"),
    ([("gpu0", "gpuX")], "is not a node of the fabric"),
    ([("gpu0", "nvs0")], "is a switch, not a GPU"),
    (0, "group size must be an integer >= 1, got 0"),
    (9, "group size 9 is larger than the fabric's 8 GPUs"),
])
def test_library_refusals(groups, says):
    m = model("single-switch:n=8")
    with pytest.raises(UserError, match=says):
        concurrent_cost(m, groups, "all-reduce", 1e6)


@pytest.mark.parametrize("size", [1e308, 2.0 ** 51, 2.0 ** 50 + 8.0])
def test_library_refuses_a_size_no_gpu_holds(size):
    # concurrent_cost is a public entry (collectives.md's example): it bounds a user's size
    # at 1 PiB as FabricCostModel.cost and netmodel.collective_time do (it costed 1e308 B)
    m = model("single-switch:n=8")
    with pytest.raises(UserError, match=r"message size .* B is above 1 PiB "
                                        r"\(1,125,899,906,842,624 B\)"):
        concurrent_cost(m, [gpus(0, 2), gpus(2, 5)], "all-reduce", [1.0, size])
    assert np.isfinite(concurrent_cost(m, [gpus(0, 2), gpus(2, 5)], "all-reduce",
                                       2.0 ** 50).time).all()


def test_the_search_charge_stays_unbounded():
    # the instances = all charge (concurrent_own_makespan) costs a search's grid, whose
    # batches may fit no memory: groups on different algorithms at 2e18 B are routed
    # together (concurrent_cost's steps, unbounded there), not refused
    m = model("torus:dims=4x4")
    names = [n for n, d in build("torus:dims=4x4").nodes(data=True) if d.get("kind") == "gpu"]
    order = names[::3] + names[1::3] + names[2::3]
    groups = [tuple(order[0:2]), tuple(order[2:5]), tuple(order[5:10]), tuple(order[10:16])]
    own = concurrent_own(m, groups, "broadcast")
    said: list = []
    big = concurrent_own_makespan(m, "broadcast", own, 2e18, said)
    assert said == ["time"]   # routed together, in time
    assert np.isfinite(big) and big > concurrent_own_makespan(m, "broadcast", own, 2.0 ** 40)


@pytest.mark.parametrize("size", [0.0, -5.0, float("nan"), float("inf"), "1MiB"])
def test_library_refuses_bad_sizes(size):
    m = model("single-switch:n=8")
    with pytest.raises(UserError, match="message size must be"):
        concurrent_cost(m, [gpus(0, 2), gpus(2, 5)], "all-reduce", size)


# --- defects (were strict xfails; all fixed) ----------------------------------------------

# edge pass 198 found this (fixed): see the commit that unmarked it
def test_shared_group_in_time_never_faster_than_alone():
    m = model("ring:n=8")
    r = concurrent_cost(m, [gpus(0, 2), gpus(2, 8)], "all-to-all", 2.0 ** 30)
    # each group's step spread together as the lone collective's (route_joint.py): 5.871 ms,
    # not its transfers' own routes' 6.848 ms
    assert r.alone[1, 0] == m.cost("all-to-all", 2.0 ** 30, list(gpus(2, 8))).time
    assert r.slowdown[0, 0] > 1.3          # the small group is held back: links are shared
    assert (r.time >= r.alone).all(), r.slowdown.tolist()


# edge pass 198 found this (fixed): see the commit that unmarked it
def test_mixed_algorithms_never_faster_than_alone():
    m = model("torus:dims=4x4")
    # groups of 5: tree for one, bidirectional rings for two (the groups of 6's broadcast
    # mixed ring and tree while concurrent steps kept each transfer's own route; spread
    # together as a lone collective's, both groups take the tree)
    r = concurrent_cost(m, 5, "all-reduce", 2.0 ** 28 + 7)
    assert sorted(set(r.algorithms[:, 0].tolist())) == ["bidirectional-ring", "tree"]
    assert (r.time >= r.alone).all(), r.slowdown.tolist()


# edge pass 198 found this (fixed): see the commit that unmarked it
def test_no_sizes_is_refused_or_empty():
    m = model("single-switch:n=8")
    try:
        r = concurrent_cost(m, [gpus(0, 2), gpus(2, 5)], "all-reduce", [])
    except UserError:
        return
    except Exception as exc:   # noqa: BLE001 - the defect: any other exception
        raise AssertionError(f"{type(exc).__name__}: {exc}") from None
    assert r.time.shape == (2, 0)


# edge pass 198 found this (fixed): see the commit that unmarked it
def test_two_dimensional_sizes_are_refused_clearly():
    m = model("single-switch:n=8")
    try:
        concurrent_cost(m, [gpus(0, 2), gpus(2, 5)], "all-reduce", [[1.0, 2.0], [3.0, 4.0]])
    except UserError:
        return
    except Exception as exc:   # noqa: BLE001
        raise AssertionError(f"{type(exc).__name__}: {exc}") from None


# edge pass 198 found this (fixed): see the commit that unmarked it
@pytest.mark.parametrize("groups", [2.0, True])
def test_group_size_of_wrong_type_is_refused(groups):
    m = model("single-switch:n=8")
    try:
        concurrent_cost(m, groups, "all-reduce", 1e6)
    except UserError:
        return
    except Exception as exc:   # noqa: BLE001
        raise AssertionError(f"{type(exc).__name__}: {exc}") from None


# edge pass 198 found this (fixed): see the commit that unmarked it
@pytest.mark.parametrize("size", [float("nan"), float("inf"), -1.0])
def test_own_makespan_refuses_bad_sizes(size):
    m = model("single-switch:n=8")
    own = concurrent_own(m, 4, "all-reduce")
    with pytest.raises(UserError, match="message size"):
        concurrent_own_makespan(m, "all-reduce", own, size)


def test_own_makespan_of_no_bytes_is_no_time():
    # as every collective_time (the search's, a fabric model's): 0 bytes take 0 s; it
    # charged 0 bytes 7.37 us (edge pass 198)
    m = model("single-switch:n=8")
    own = concurrent_own(m, 4, "all-reduce")
    assert concurrent_own_makespan(m, "all-reduce", own, [0.0, 1e6])[0] == 0.0


def _ring12(tmp_path, instances: str = "all") -> str:
    path = tmp_path / f"ring12_{instances}.toml"
    path.write_text(scenario_toml(
        "h198-ring12", "H100-SXM", {"builder": "ring", "n": 12, "gpu": "$gpu"},
        description="12 H100 in a ring, every instance at once", links="as-built",
        instances=instances))
    return str(path)


def test_search_charge_any_shape_and_one_gpu(tmp_path):
    # 12 GPUs on a ring, every instance at once: instances of 3, 5 (two, two GPUs left
    # over) and 12; the charge of a 2-D array of sizes is, bit for bit, each size's; an
    # instance of one GPU communicates nothing (0 s, as collective --group 1 says)
    path = _ring12(tmp_path)
    sc = ScenarioCollectives(path)
    grid = np.array([[1.0, 3.0, 1000001.0], [2.0 ** 26 + 7, 2.0 ** 33, 2.0 ** 40]])
    for tp in (3, 5, 12):
        for op in ("all-reduce", "all-to-all", "send-recv"):
            t = np.asarray(sc.collective_time(op, grid, tp))
            assert t.shape == grid.shape and np.isfinite(t).all()
            flat = [float(np.asarray(sc.collective_time(op, s, tp))) for s in grid.ravel()]
            assert t.ravel().tolist() == flat
            alone = np.asarray(ScenarioCollectives(_ring12(tmp_path, "alone"))
                               .collective_time(op, grid, tp))
            assert (t >= alone).all()
    assert np.asarray(sc.collective_time("all-reduce", grid, 1)).tolist() == [[0.0] * 3] * 2


# edge pass 198 found this (fixed): see the commit that unmarked it
def test_search_charge_of_no_sizes_is_empty(tmp_path):
    path = _ring12(tmp_path)
    assert ScenarioCollectives(_ring12(tmp_path, "alone")).collective_time(
        "all-reduce", np.array([]), 4).shape == (0,)
    assert np.asarray(collective_time(path, "all-reduce", np.array([]), 4)).shape == (0,)
    assert np.asarray(ScenarioCollectives(path).collective_time(
        "all-reduce", np.array([]), 4)).shape == (0,)


def test_overrides_charge_the_scenario_they_make(tmp_path):
    # collective --scenario lite-hier(all) --algorithm ring --placement spread --all-groups
    # charges, bit for bit, what the search charges the scenario edited to say so, for
    # instances within and across the 16-Lite leaves (TP 3, 12, 24)
    path = _all_scenario(tmp_path, "lite-hier")
    edited = tmp_path / "hier_ring_spread.toml"
    text = Path(path).read_text()
    edited.write_text(text.replace('placement = "contiguous"', 'placement = "spread"', 1)
                      .replace('algorithm = "auto"', 'algorithm = "ring"', 1))
    sc = ScenarioCollectives(str(edited))
    for tp in (3, 12, 24):
        for text, n in (("3", 3.0), ("1GiB", 2.0 ** 30)):
            r = run("collective", "all-reduce", "--scenario", path, "--group", str(tp),
                    "--size", text, "--all-groups", "--json", "--algorithm", "ring",
                    "--placement", "spread")
            doc = json.loads(r.output)
            want = float(np.asarray(sc.collective_time("all-reduce", n, tp)))
            assert doc["all_groups"]["makespan"] == doc["instances_all"]["time"] == want


# edge pass 198 found this (fixed): see the commit that unmarked it
def test_empty_algorithm_name_is_refused():
    m = model("single-switch:n=8")
    with pytest.raises(UserError, match="unknown algorithm ''"):
        FabricCostModel(build("single-switch:n=8"), algorithm="")
    with pytest.raises(UserError, match="unknown algorithm ''"):
        concurrent_cost(m, [gpus(0, 2)], "all-reduce", 1e6, algorithm="")


# edge pass 198 found (latent: no algorithm tried sends a zero-byte transfer) a group whose
# step loads a link with 0 s per byte held with the link beside a group loading it 1 s
def test_a_step_that_loads_nothing_takes_no_time():
    from netmodel.collectives.concurrent_time import _paces, timed_steps

    pace, _ = _paces(np.array([0, 1]), np.array([1, 0]), np.array([0.0, 1.0]), 2, 2)
    assert pace.tolist() == [0.0, 1.0]            # on its own link: no time
    pace, _ = _paces(np.array([0, 1]), np.array([0, 0]), np.array([0.0, 1.0]), 2, 1)
    assert pace.tolist() == [0.0, 1.0]
    e = [(np.array([0, 1]), np.array([0, 0]), np.array([0.0, 1.0]))]
    assert timed_steps(np.array([[3.0], [1.0]]), e, 1).tolist() == [[0.0], [1.0]]


# edge pass 198 found this (fixed: concurrent_cost and concurrent_own cost the groups in an
# order of their own, by their GPUs' node numbers, the rows put back in the listed order):
# ring:n=12, listed so, 2.534437162891046e-05 and 2.529437162891046e-05 s; listed the other
# way, 1 ulp more each
def test_the_groups_order_changes_no_bit():
    m = model("ring:n=12")
    groups = [("gpu0", "gpu7", "gpu2", "gpu6"), ("gpu9", "gpu8")]
    a = concurrent_cost(m, groups, "all-reduce", 1e6 + 1)
    b = concurrent_cost(m, groups[::-1], "all-reduce", 1e6 + 1)
    assert a.algorithms[:, 0].tolist() == ["direct", "recursive-doubling"]
    assert a.alone.tobytes() == b.alone[::-1].tobytes()
    assert a.time.tobytes() == b.time[::-1].tobytes()
    assert (a.time >= a.alone).all()


@pytest.mark.parametrize("option, word", [("--algorithm=", "algorithm"),
                                          ("--placement=", "placement")])
@pytest.mark.parametrize("where", [("--fabric", "single-switch:n=8"),
                                   ("--scenario", "lite-flat")])
def test_an_empty_choice_on_the_command_line_is_refused(option, word, where):
    # collective read '' as the default (auto, contiguous, the scenario's own), where the
    # library refuses it (edge pass 198)
    r = run("collective", "all-reduce", *where, "--group", "4", "--size", "1MiB", option)
    assert r.exit_code == 2
    # said with its flag (an algorithm's since h482, a placement's since h502)
    flagged = f"--{word} '': "
    assert r.output.strip().splitlines()[-1].startswith(f"error: {flagged}unknown {word} ''")


def test_the_slowest_groups_choice_is_of_the_group_listed_first():
    # full mesh of 8, broadcast of 16 MiB: the three groups take the same time, two on tree
    # and (gpu2, gpu0) on ring. The result's algorithm is the slowest group's choice, the
    # first as listed whose time is the makespan (what time.argmax() and --all-groups'
    # slowest_group name): since 63f3570 costed the groups in an order of their own, it was
    # the first of that order's, 'ring' beside a slowest group (gpu6, gpu4, gpu1) on tree
    m = model("full-mesh:n=8")
    groups = [("gpu6", "gpu4", "gpu1"), ("gpu2", "gpu0"), ("gpu3", "gpu7", "gpu5")]
    for k in range(3):
        listed = groups[k:] + groups[:k]
        r = concurrent_cost(m, listed, "broadcast", 2.0 ** 24)
        assert len(set(r.time[:, 0].tolist())) == 1          # a three-way tie
        assert sorted(r.algorithms[:, 0].tolist()) == ["ring", "tree", "tree"]
        w = int(r.time[:, 0].argmax())
        assert w == 0
        assert (r.algorithm[0], r.protocol[0]) == (r.algorithms[w, 0], r.protocols[w, 0])
        assert r.algorithm[0] == ("ring" if listed[0] == ("gpu2", "gpu0") else "tree")


def test_the_group_no_algorithm_runs_on_is_the_first_listed():
    # rail-optimized, in-network only: a group across two scale-up domains runs nothing.
    # Of two such groups the line named the first of the costing's own order (gpu4, gpu20)
    # since 63f3570, not the first given (gpu5, gpu21)
    m = model("rail-optimized")
    groups = [("gpu8", "gpu9", "gpu10", "gpu11"), ("gpu5", "gpu21"), ("gpu0", "gpu1"),
              ("gpu4", "gpu20")]
    with pytest.raises(UserError, match=r"^no algorithm can run all-reduce on the group "
                                        r"gpu5, gpu21$"):
        concurrent_cost(m, groups, "all-reduce", 2.0 ** 20, "in-network")
