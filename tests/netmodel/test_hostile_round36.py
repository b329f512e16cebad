"""Hostile round 36 (scripts/hostile_round36.py): values at their bounds, options that
contradict each other, odd data files, and the Python API given one thing twice or the
wrong type. 134 invocations; 24 failed at the HEAD before a747aae2, every one in the library.

Found wrong, each checked here:

(a) ``netmodel.compare``, ``sweep`` and ``run_study`` took a model, scenario, phase, GPU or
network listed twice without a word: ``compare([E, E], ...)`` gave one row (merged by
name), ``compare(phases=['decode', 'decode'])`` and ``scenarios=['lite-flat',
'lite-flat']`` two identical rows, where the command line refuses ``--models A,A``
(compute.validate.refuse_repeats). Now the API refuses it the same way, naming the
parameter; a name is matched regardless of case, as a catalog matches it
(:func:`netmodel.api._once`).

(b) An OCS's logical topology laid over a GPU listed twice (``circuits_for('ring', [0, 0,
1])``) made a circuit from the GPU to itself: returned by ``circuits_for``, refused by
``realize`` only as the graph's self-loop ('edge gpu0-gpu0 joins a node to itself'),
naming no parameter. Now ``members``/``gpus`` is refused naming the GPU and its two places
(topologies.optical._members).

(c) ``FabricCostModel(algorithms=['ring', 'RING'])`` (and ``netmodel.collective_time``'s)
took a candidate twice as one, where ``--algorithms ring,RING`` is refused; and
``validated='yes'`` (or 1, 'no') was taken as its truth, leaving the graph unchecked, where
every flag of the library is Python's or numpy's bool (compute.validate.flag).

(d) ``concurrent_cost`` given a fabric spec or graph for its cost model raised
AttributeError ('str' object has no attribute 'graph').

(e) ``degraded_cost`` passed an unknown keyword to ``FabricCostModel``, whose TypeError
blamed ``FabricCostModel.__init__`` (a function the caller never called), and dropped a
``ring_order`` given without a word (it sets its own: each side runs the faster of the
group's order and a greedy one). Now both are refused naming ``degraded_cost`` and the
keywords it takes.

(f) ``fabric_search`` given a number for its ``collectives`` raised AttributeError ('int'
object has no attribute 'scenario'), and those of another scenario a plain ValueError (not
the UserError every refusal of the library is) that named neither the parameter's use nor the
scenario.

(g) ``die_yield``, ``harvested_yield``, ``die_cost`` and ``yield_curve`` (and
``cost_summary(yield_model='poisson', alpha=3.0)``) took ``alpha``, the negative binomial's
clustering, with the Poisson or Murphy model, which reads none: the value changed nothing,
where ``netmodel yield --alpha 3 --model poisson`` is refused. Now refused the same way.

(h) ``collective_report`` given something else for its ``setup`` raised AttributeError ('int'
object has no attribute 'placement'); ``blast_radius(classes=[])`` answered a blast radius of
nothing without a word.

(i) ``compute.evaluate_many`` of 10^7 (configuration, batch) pairs ran for two minutes,
where ``evaluate_grid`` refuses more than 2,000,000 configurations x batches before any
work (``NETMODEL_MAX_SEARCH_CONFIGURATIONS``); now the pairs are counted and refused alike.
"""

from __future__ import annotations

import numpy as np
import pytest

import netmodel
from compute.errors import UserError
from topologies import build, circuits_for, gpu_nodes, realize

E = "Llama-3-8B"
KW = {"max_batch": 8}


# -- (a) one thing listed twice --------------------------------------------------------------

@pytest.mark.parametrize(("call", "said"), [
    (lambda: netmodel.compare([E, E], ["lite-flat"], "decode", **KW),
     "models 'Llama-3-8B,Llama-3-8B' names Llama-3-8B more than once; give each once"),
    (lambda: netmodel.compare([E, "llama-3-8b"], ["lite-flat"], "decode", **KW),
     "models 'Llama-3-8B,Llama-3-8B' names Llama-3-8B more than once; give each once"),
    (lambda: netmodel.compare([E], ["lite-flat", "lite-flat"], "decode", **KW),
     "scenarios 'lite-flat@Lite,lite-flat@Lite' names lite-flat@Lite more than once; give "
     "each once"),
    (lambda: netmodel.compare([E], ["lite-flat"], ["decode", "Decode"], **KW),
     "phases 'decode,Decode' names one thing more than once ('decode' and 'Decode'); give each "
     "once"),
    (lambda: netmodel.compare([E], ["lite-flat"], "decode", gpus=["Lite", "Lite"], **KW),
     "gpus 'Lite,Lite' names Lite more than once; give each once"),
    (lambda: netmodel.sweep(["lite-flat"], ["fabric.latency=1us,2us"], [E, E], **KW),
     "models 'Llama-3-8B,Llama-3-8B' names Llama-3-8B more than once; give each once"),
    (lambda: netmodel.sweep(["lite-flat"] * 2, ["fabric.latency=1us,2us"], [E], **KW),
     "scenarios 'lite-flat@Lite,lite-flat@Lite' names lite-flat@Lite more than once; give "
     "each once"),
    (lambda: netmodel.sweep(["lite-flat"], ["fabric.latency=1us,2us"], [E], ["decode"] * 2,
                            **KW),
     "phases 'decode,decode' names decode more than once; give each once"),
    (lambda: netmodel.run_study([E], ["Lite", "Lite"], ["decode"], networks=["ring"]),
     "gpus 'Lite,Lite' names Lite more than once; give each once"),
    (lambda: netmodel.run_study([E, E], ["Lite"], ["decode"], networks=["ring"]),
     "models 'Llama-3-8B,Llama-3-8B' names Llama-3-8B more than once; give each once"),
    (lambda: netmodel.run_study([E], ["Lite"], ["decode"], networks=["ring", "ring"]),
     "networks 'ring,ring' names ring more than once; give each once"),
])
def test_one_thing_listed_twice_is_refused(call, said):
    with pytest.raises(UserError) as exc:
        call()
    assert str(exc.value) == said


def test_each_listed_once_still_runs_every_row():
    """The baseline h100-dgx on its own H100 and on the Lite, and lite-flat on its Lite:
    three rows, none merged; one scenario on two GPUs (NAME@GPU) is two scenarios."""
    r = netmodel.compare([E], ["lite-flat", "h100-dgx"], "decode", gpus=["Lite"], **KW)
    assert [(x.scenario, x.gpu) for x in r.rows] == [
        ("lite-flat", "Lite"), ("h100-dgx", "H100-SXM"), ("h100-dgx", "Lite")]
    r = netmodel.compare([E], ["lite-flat", "lite-flat@H100-SXM"], "decode", **KW)
    assert [(x.scenario, x.gpu) for x in r.rows] == [("lite-flat", "Lite"),
                                                     ("lite-flat", "H100-SXM")]
    s = netmodel.sweep(["lite-flat", "lite-flat@H100-SXM"], ["fabric.latency=1us,2us"], [E],
                       **KW)
    assert {row.gpu for row in s.rows} == {"Lite", "H100-SXM"}


# -- (b) a GPU laid twice into a logical topology --------------------------------------------

def test_a_member_given_twice_is_refused_naming_both_places():
    with pytest.raises(UserError, match=r"^members names 0 more than once \(at 0 and 1\); "
                                        r"give each GPU once$"):
        circuits_for("ring", [0, 0, 1])
    with pytest.raises(UserError, match=r"^members names 'a' more than once \(at 0 and 2\)"):
        circuits_for("full-mesh", ["a", "b", "a"])
    g = build("ocs")
    a, b = gpu_nodes(g)[:2]
    with pytest.raises(UserError, match=r"^gpus names 'gpu0' more than once \(at 0 and 1\)"):
        realize(g, "ring", [a, a, b])


def test_members_each_once_keep_their_circuits():
    """A ring of 3 is 3 circuits; a torus side of 2 is two parallel circuits, a pair repeated
    on purpose (8 circuits of 4 pairs on a 2x2)."""
    assert circuits_for("ring", ["a", "b", "c"]) == [("a", "b"), ("b", "c"), ("c", "a")]
    pairs = circuits_for("torus:2x2", ["a", "b", "c", "d"])
    assert len(pairs) == 8 and len(set(pairs)) == 4
    g = build("ocs")
    assert realize(g, "ring", gpu_nodes(g)[:4]).number_of_edges() == 4


# -- (c) FabricCostModel: a candidate twice, a flag as text ----------------------------------

def test_a_candidate_algorithm_twice_is_refused():
    from netmodel.collectives.model import FabricCostModel

    g = build("ring:n=8")
    with pytest.raises(UserError, match=r"^algorithms 'ring,RING' names one thing more than "
                                        r"once \('ring' and 'RING'\); give each once$"):
        FabricCostModel(g, algorithms=["ring", "RING"])
    with pytest.raises(UserError, match=r"^algorithms 'ring,ring' names ring more than once"):
        netmodel.collective_time("ring:n=8", "all-reduce", 1e6, algorithms="ring, ring")
    assert FabricCostModel(g, algorithms=["ring", "tree"]).algorithms == ("ring", "tree")


@pytest.mark.parametrize("value", ["yes", 1, None, "no"])
def test_validated_is_a_flag(value):
    from netmodel.collectives.model import FabricCostModel

    with pytest.raises(UserError, match=r"^FabricCostModel: validated must be true or false"):
        FabricCostModel(build("ring:n=8"), validated=value)


def test_validated_takes_numpy_bool():
    from netmodel.collectives.model import FabricCostModel

    assert FabricCostModel(build("ring:n=8"), validated=np.True_).gpus == 8


# -- (d) concurrent_cost given a fabric for its model ----------------------------------------

@pytest.mark.parametrize("model", ["ring:n=8", build("ring:n=8")])
def test_concurrent_cost_model_of_its_type(model):
    from netmodel.collectives.concurrent import concurrent_cost

    with pytest.raises(UserError, match=r"^model must be a netmodel\.collectives\.model\."
                                        r"FabricCostModel \(e\.g\. FabricCostModel\("):
        concurrent_cost(model, 8, "all-reduce", 1e6)


# -- (e) degraded_cost's keywords ------------------------------------------------------------

def test_degraded_cost_refuses_a_keyword_it_passes_to_no_one():
    from netmodel.collectives.degraded import degraded_cost

    g = build("ring:n=8")
    with pytest.raises(UserError, match=r"^degraded_cost\(\) takes no keyword 'bogus'; "
                                        r"allowed: links, nodes, algorithm, circuits, "
                                        r"placement, "):
        degraded_cost(g, "all-reduce", 1e6, 4, bogus=1)
    with pytest.raises(UserError, match=r"^degraded_cost\(\) takes no keyword 'ring_order' "
                                        r"\(each side runs the faster"):
        degraded_cost(g, "all-reduce", 1e6, 4, ring_order="greedy")


def test_degraded_cost_passes_on_the_model_keywords():
    """gpu7 failed under a group of gpu0..gpu3 on a ring of 8: the ring among them loses
    its way round past gpu7, never faster."""
    from netmodel.collectives.degraded import degraded_cost

    r = degraded_cost(build("ring:n=8"), "all-reduce", 1e6, 4, nodes=["gpu7"],
                      placement="contiguous", algorithms=["ring"])
    assert r.degraded.algorithm == r.healthy.algorithm == "ring"
    assert r.degraded.time >= r.healthy.time > 0


# -- (f) fabric_search's collectives ---------------------------------------------------------

def test_fabric_search_collectives_of_its_type_and_scenario():
    from netmodel.study.fabric_search import ScenarioCollectives, fabric_search
    from netmodel.study.scenario_catalog import get_scenario

    with pytest.raises(UserError, match=r"^collectives must be a netmodel\.study\."
                                        r"scenario_collectives\.ScenarioCollectives .* got 5$"):
        fabric_search(E, "lite-flat", collectives=5, **KW)
    with pytest.raises(UserError, match=r"^collectives were built for another scenario "
                                        r"than 'lite-flat'"):
        fabric_search(E, "lite-flat", collectives=ScenarioCollectives(get_scenario("lite-hier")),
                      **KW)
    own = ScenarioCollectives(get_scenario("lite-flat"))
    assert fabric_search(E, "lite-flat", collectives=own, **KW).best == \
        fabric_search(E, "lite-flat", **KW).best


# -- (g) alpha with a yield model that reads none --------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: __import__("compute.die_yield", fromlist=["x"]).die_yield(814e-6, model="poisson",
                                                                      alpha=2),
    lambda: __import__("compute.die_yield", fromlist=["x"]).harvested_yield(
        814e-6, 144, 132, model="murphy", alpha=2),
    lambda: __import__("compute.die_yield", fromlist=["x"]).die_cost(814e-6, model="poisson",
                                                                     alpha=3),
    lambda: __import__("compute.die_yield", fromlist=["x"]).yield_curve([814e-6],
                                                                        model="poisson", alpha=1),
    lambda: __import__("netmodel.study.cost", fromlist=["x"]).cost_summary(
        "lite-flat", E, yield_model="poisson", alpha=3.0, **KW),
])
def test_alpha_with_a_model_that_reads_none_is_refused(call):
    with pytest.raises(UserError, match=r"^alpha \(the negative binomial's clustering\) applies "
                                        r"only with the 'negative-binomial' yield model, not "
                                        r"'(poisson|murphy)'$"):
        call()


def test_the_models_without_alpha_still_price_a_die():
    """A Poisson die of D x A = 0.814 defects: yield exp(-0.814); harvested 144/132 under
    Murphy as die_cost prices it (the shipped alpha not passed on)."""
    import math

    from compute.die_yield import die_cost, die_yield, harvested_yield

    assert die_yield(814e-6, 1000.0, "poisson") == pytest.approx(math.exp(-0.814), rel=1e-12)
    c = die_cost(814e-6, defect_density=1000.0, model="murphy", sms_physical=144,
                 sms_enabled=132)
    assert c.yield_ == pytest.approx(harvested_yield(814e-6, 144, 132, 1000.0, "murphy"))
    assert die_yield(814e-6, 1000.0, "negative-binomial", 2) == pytest.approx(
        1 / (1 + 0.407) ** 2, rel=1e-12)


# -- (h) collective_report's setup, blast_radius's classes -----------------------------------

def test_collective_report_setup_of_its_type():
    from netmodel.study.collective_report import collective_report

    with pytest.raises(UserError, match=r"^setup must be a netmodel\.study\.collective_setup\."
                                        r"CollectiveSetup \(e\.g\. collective_setup\('ring:n=8'\)"
                                        r"\), got 'ring:n=8'$"):
        collective_report("ring:n=8", "all-reduce", 1e6, 4)


def test_blast_radius_of_no_class_is_refused():
    from netmodel.study.blast_radius import blast_radius

    with pytest.raises(UserError, match=r"^classes is empty; give one or more component "
                                        r"classes \(known: 'copper-end', "):
        blast_radius("lite-flat", E, classes=[], **KW)
    one = blast_radius("lite-flat", E, classes=["nic"], **KW)
    assert {row.cls for row in one.rows} <= {"nic"}


# -- (i) evaluate_many's pairs counted before any work ---------------------------------------

def test_evaluate_many_refuses_more_pairs_than_the_limit(monkeypatch):
    from compute.evaluate_many import evaluate_many

    with pytest.raises(UserError, match=r"^evaluate_many: about 10,000,000 configuration-batch "
                                        r"pairs, over the limit of 2,000,000; give fewer pairs, "
                                        r"or raise NETMODEL_MAX_SEARCH_CONFIGURATIONS$"):
        evaluate_many(E, "H100-SXM", np.ones(10**7, dtype=int), 8)
    monkeypatch.setenv("NETMODEL_MAX_SEARCH_CONFIGURATIONS", "3")
    assert evaluate_many(E, "H100-SXM", [1, 2, 4], 8).latency.shape == (3,)   # at the limit
    with pytest.raises(UserError, match=r"about 4 configuration-batch pairs, over the limit "
                                        r"of 3"):
        evaluate_many(E, "H100-SXM", [1], [8, 16, 32, 64])
