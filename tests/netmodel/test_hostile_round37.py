"""Hostile round 37 (scripts/hostile_round37.py): the library's lower layers given numpy
scalars and arrays, Fractions, Decimals, huge integers, text and subnormals where a number
is wanted, and the dataclasses a user builds directly given fields of another type.

Found wrong, each checked here:

(a) ``compute.comm.RingAlphaBeta`` and ``ScaleUpLowerBound`` (the ``comm`` a user gives
``evaluate``, ``search`` and ``evaluate_grid``) checked their numbers with numpy's
``isfinite``, which raised TypeError for a Decimal, text, None or ``10**30`` and
ValueError for an array; a subnormal bandwidth or efficiency (``5e-324``) was taken and
every collective cost ``inf`` seconds; ``True`` was a bandwidth of 1 B/s. Now each is a
plain float in the range a fabric's link takes (bandwidth 125 kB/s to 1 PB/s, step
latency 0 to 1 ms, compute/data/limits.toml), the efficiency from a profile's least,
1e-4, to 1.

(b) A ``netmodel.study.scenarios.Scenario`` made in code (``dataclasses.replace`` of a
shipped one, as docs/api.md invites) took any object for ``gpu_spec``, ``graph``,
``fabric_file``, ``gpu_file``, ``home_gpu``, ``source`` and ``sources``: a GPU name for
``gpu_spec`` raised AttributeError ('str' object has no attribute 'name'), a spec for
``graph`` AttributeError where its collectives were costed, a list for ``fabric_file``
TypeError (unhashable) where the fabric was built. Now each is refused naming it.

(c) ``ScenarioCollectives(scenario, concurrent=...)`` took any object by its truth: 'no',
NaN and 8 costed every instance at once, 0 each alone, and an array raised ValueError
(ambiguous truth). Now ``concurrent`` is a flag as every flag of the library is
(compute.validate.flag: Python's or numpy's bool; None follows the scenario).

(d) ``compute.roofline.evaluate_grid`` given a 0-d numpy array for ``tps``
(``np.array(4)``, where a plain 4 is refused naming ``tps``) raised TypeError (iteration
over a 0-d array).

(e) ``netmodel.study.cost.cost_summary(clock=np.array([1.0, 0.5]))`` raised ValueError
(ambiguous truth) comparing the clock with 1 before the search; now ``clock`` is read as a
number first, as ``gpu_at_clock`` reads it.

(f) A ``compute.measurements.Measurement`` made in code (``fit_profile`` takes them) was
checked only where the fit first read each field: text for ``latency_s`` raised TypeError
('str' / 'float'), an array for ``batch`` TypeError (unhashable) in the repeat check, a
prompt given to a decode step was taken and never read. Now one made in code is checked
as a CSV row is (compute.measurements._measurement), naming ``Measurement`` and the field.

(g) ``topologies.analysis.bisection_maxflow(graph, side)`` took a side naming no GPU of the
fabric (``['nope']``, a switch) and a GPU's name as text (``'gpu0'``, read letter by
letter): the flow from nothing, 0.0 B/s, was returned as the bisection. Now ``side`` must
be a list of the fabric's GPUs.

(h) ``topologies.degrade.degrade(graph, failed)`` given nodes or links by name (``'gpu0'``,
``[('gpu0', 'gpu1')]``), as ``netmodel.collectives.degraded.degrade`` takes them, raised
AttributeError ('str' object has no attribute 'handed'); ``copy='no'`` copied. Now
``failed`` must be failure components and ``copy`` a flag.

(i) ``topologies.spares.add_spares`` (and ``plan_spares``) took any ``prefix`` into the
spares' names (5 named them '50', '51'; '' named them '0', '1'; a newline broke every
table), read ``like='gpu0'`` letter by letter ('spare template 'g' is not a GPU') and
placed no spare for ``like=[]`` without a word. Now ``prefix`` is a name
(compute.validate.name) and ``like`` a non-empty list of GPUs, or None for every GPU.

(j) ``netmodel.study.availability.spares_needed(limit=...)``, the largest pool searched,
took NaN, -1 and True (a pool of at most -1 GPUs) and raised TypeError or ValueError for
text and arrays after the Monte Carlo run; ``spare_curve(counts=np.array(4))`` raised
TypeError (iteration over a 0-d array). Now ``limit`` is a whole number >= 0 (or None),
checked before the runs, and a 0-d array of counts is refused as a plain int is.

(k) ``netmodel.collectives.degraded.degraded_cost(circuits=5)`` costed the healthy fabric
and then raised TypeError ('int' object is not callable); now ``circuits`` must be a
function (or None), checked before any cost.

(l) ``netmodel.study.crossovers.find_crossovers(fab, tolerance=...)``: a tolerance of 0 or
below searched without end (the bracket's log width is never below it: Llama-3-70B
prefill, lite-flat against h100-dgx, ran past a minute), NaN stopped the search at its
first guess (64x the Lite's bandwidth to match, for 7.28x), text raised TypeError; ``fab``
or a model that is not one raised AttributeError. Now ``tolerance`` is a number from 1e-9
to 1, ``fab`` a CompareResult and each of ``models`` a ModelSpec.

(m) ``compute.power.clock_sweep(..., bogus=1)`` passed the keyword on to the search, whose
TypeError blamed ``search()``, a function the caller never called; now refused naming
``clock_sweep`` and the keywords it takes, before any search.

(n) ``netmodel.study.compare.run_compare(models, scenarios, 'decode')`` read the phase
letter by letter ("unknown phase 'd'"), and a model's name alike ("unknown model 'L'");
now ``models`` and ``phases`` must be lists (compute.validate.listed), as ``gpus`` is.

(o) ``compute.profiles.EngineProfile`` given a numpy array or scalar for ``moe_exchanges``
compared it with ``()`` elementwise: ValueError (ambiguous truth, or shapes that do not
broadcast) instead of the line a list of unknown names gets.

(p) ``compute.die_yield.harvested_yield([], 144, 132)`` raised ValueError (zero-size array
to reduction operation maximum) where ``die_yield([])`` gives an empty array; now no die
has an empty yield there too.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

import netmodel
from compute.comm import RingAlphaBeta, ScaleUpLowerBound
from compute.errors import UserError
from compute.hardware import get_gpu
from topologies import build

BW = "a number from 125,000 to 1,000,000,000,000,000 B/s"


# -- (a) a closed-form collective model's numbers ----------------------------------------

@pytest.mark.parametrize(("kw", "said"), [
    ({"bandwidth": Decimal("1e11")}, f"bandwidth must be {BW}, got Decimal('1E+11')"),
    ({"bandwidth": "1e11"}, f"bandwidth must be {BW}, got '1e11'"),
    ({"bandwidth": None}, f"bandwidth must be {BW}, got None"),
    ({"bandwidth": 10**30}, f"bandwidth must be {BW}, got an integer of 31 digits"),
    ({"bandwidth": np.array([1e11, 2e11])}, f"bandwidth must be {BW}, got an array of shape "
                                            "(2,)"),
    ({"bandwidth": 5e-324}, f"bandwidth must be {BW}, got 5e-324"),
    ({"bandwidth": True}, f"bandwidth must be {BW}, got True"),
    ({"bandwidth": 1e11, "efficiency": 5e-324},
     "efficiency must be a number from 0.0001 to 1, got 5e-324"),
    ({"bandwidth": 1e11, "efficiency": "0.9"},
     "efficiency must be a number from 0.0001 to 1, got '0.9'"),
    ({"bandwidth": 1e11, "step_latency": Fraction(1, 100)},
     "step_latency must be a number from 0 to 0.001 s, got 0.01"),
])
@pytest.mark.parametrize("cls", [RingAlphaBeta, ScaleUpLowerBound])
def test_a_closed_form_models_numbers_are_refused_naming_them(cls, kw, said):
    with pytest.raises(UserError) as exc:
        cls(**kw)
    assert str(exc.value).startswith(said)


def test_numpy_and_python_numbers_in_range_give_the_same_times():
    """A numpy float, a Fraction and an int in range are taken as the float they equal:
    8 GPUs, 8 GB, 100 GB/s, 1 us a step: 14 us + 1.75 x 8e9 / 1e11 s (the docstring's)."""
    times = [RingAlphaBeta(bandwidth=b, step_latency=s, efficiency=e)
             .collective_time("all-reduce", 8e9, 8)
             for b, s, e in ((100e9, 1e-6, 1.0), (np.float64(100e9), np.float32(0.0) + 1e-6, 1),
                             (Fraction(10**11), Fraction(1, 10**6), np.float64(1.0)))]
    assert [round(float(t), 9) for t in times] == [0.140014] * 3
    m = ScaleUpLowerBound(bandwidth=np.float64(450e9))
    assert type(m.bandwidth) is float and m.bandwidth == 450e9


# -- (b) a Scenario made in code ------------------------------------------------------------

@pytest.mark.parametrize(("kw", "said"), [
    ({"gpu_spec": "H100-SXM"}, "gpu_spec must be a compute.hardware.GpuSpec (e.g. "
                               "get_gpu('Lite')) or None, got 'H100-SXM'"),
    ({"graph": "ring:n=8"}, "graph must be a networkx.Graph (e.g. a fabric's "
                            "build('ring:n=8')) or None, got 'ring:n=8'"),
    ({"fabric_file": ["f.json"]}, "fabric_file must be text or None, got ['f.json']"),
    ({"gpu_file": b"g.toml"}, "gpu_file must be text or None, got b'g.toml'"),
    ({"home_gpu": 5}, "home_gpu must be text or None, got 5"),
    ({"source": np.str_("s.toml").encode()}, "source must be text or None, got b's.toml'"),
    ({"sources": ["x"]}, "sources must be a table (a dict), got ['x']"),
])
def test_a_scenario_made_in_code_refuses_fields_of_another_type(kw, said):
    import dataclasses

    with pytest.raises(UserError) as exc:
        dataclasses.replace(netmodel.get_scenario("lite-flat"), **kw)
    assert str(exc.value) == f"scenario 'lite-flat': {said}"


def test_a_scenario_made_in_code_with_its_own_objects_still_runs():
    """A GpuSpec and a fabric graph of its own: costed as the fabric spec's scenario is
    (TP 4, batch 8: the same TBT to the last bit)."""
    import dataclasses

    from netmodel.study.scenarios import fabric_scenario

    graph = build("ring:n=8")
    base = fabric_scenario(graph, "ring:n=8")
    own = dataclasses.replace(base, gpu_spec=get_gpu("H100-SXM"), source="mine",
                              sources={"fabric": "x"})
    a = netmodel.evaluate("Llama-3-8B", tp=4, batch=8, scenario=own)
    b = netmodel.evaluate("Llama-3-8B", tp=4, batch=8, scenario=base)
    assert a.gpu == "H100-SXM" and a.latency == b.latency > 0


# -- (c) ScenarioCollectives' concurrent -------------------------------------------------

@pytest.mark.parametrize(("value", "shown"), [
    ("no", "'no'"), (float("nan"), "nan"), (8, "8"), (0, "0"),
    (np.array([True, False]), "an array of shape (2,)"),
])
def test_concurrent_that_is_no_flag_is_refused(value, shown):
    from netmodel.study.scenario_collectives import ScenarioCollectives

    with pytest.raises(UserError) as exc:
        ScenarioCollectives("lite-flat", value)
    assert str(exc.value) == f"concurrent must be true or false, got {shown}"


def test_concurrent_as_a_flag_or_none_sets_the_instances():
    from netmodel.study.scenario_collectives import ScenarioCollectives

    assert [ScenarioCollectives("lite-flat", v).scenario.instances
            for v in (np.True_, False, None)] == ["all", "alone", "alone"]


# -- (d) evaluate_grid's tps as a 0-d array ----------------------------------------------

def test_a_0d_array_of_tps_is_refused_as_a_plain_int_is():
    from compute.roofline import evaluate_grid

    for tps, shown in ((4, "4"), (np.array(4), "array(4)")):
        with pytest.raises(UserError) as exc:
            evaluate_grid("Llama-3-8B", "H100-SXM", tps, [8], "decode")
        assert str(exc.value) == ("tps must be a list of TP degrees or Parallelism "
                                  f"configurations (e.g. [1, 2, 4, 8]), got {shown}")
    assert evaluate_grid("Llama-3-8B", "H100-SXM", np.array([4]), [8], "decode").tps == (4,)


# -- (e) cost_summary's clock ------------------------------------------------------------

def test_a_clock_that_is_no_number_is_refused_before_the_search():
    from netmodel.study.cost import cost_summary

    with pytest.raises(UserError) as exc:
        cost_summary("lite-flat", "Llama-3-8B", max_batch=8, clock=np.array([1.0, 0.5]))
    assert str(exc.value) == "clock must be a number, got an array of shape (2,)"
    a, b = (cost_summary("lite-flat", "Llama-3-8B", max_batch=8, clock=c).tokens_per_s
            for c in (np.float64(0.8), 0.8))
    assert a == b > 0


# -- (f) a Measurement made in code ------------------------------------------------------

_STEP = {"model": "Llama-3-8B", "gpu": "H100-SXM", "tp": 1, "phase": "decode", "batch": 8,
         "latency_s": 0.01, "context": 100}


@pytest.mark.parametrize(("kw", "said"), [
    ({"latency_s": "0.01"}, "latency_s must be a number from 1e-09 to 1,000,000 s, got "
                            "'0.01'"),
    ({"batch": np.array([1, 2])}, "batch must be a whole number from 1 to 10,000,000, got "
                                  "an array of shape (2,)"),
    ({"tp": float("nan")}, "tp must be a whole number from 1 to 1,000,000, got nan"),
    ({"prompt": 100}, "a decode measurement takes context, not prompt (100: a prefill reads "
                      "prompt, the tokens of each prompt); leave out its prompt"),
    ({"source": 5}, "source must be text of at most 2,000 characters, got 5"),
])
def test_a_measurement_made_in_code_is_checked_as_a_row_is(kw, said):
    from compute.measurements import Measurement

    with pytest.raises(UserError) as exc:
        Measurement(**{**_STEP, **kw})
    assert str(exc.value) == f"Measurement: {said}"


def test_a_measurement_made_in_code_keeps_its_values_as_read():
    """numpy's integers and a phase in capitals are read as a CSV cell is: the same step."""
    from compute.measurements import Measurement

    m = Measurement(**{**_STEP, "batch": np.int64(8), "tp": np.int32(1), "phase": "Decode"})
    assert m == Measurement(**_STEP) and type(m.batch) is int and m.phase == "decode"


# -- (g) a bisection's side ------------------------------------------------------------

@pytest.mark.parametrize(("side", "said"), [
    (["nope"], "side must be a list of GPU nodes of the fabric, got 'nope', which is none "
               "of its GPUs"),
    (["gpu0", "core0"], "side must be a list of GPU nodes of the fabric, got 'core0', which "
                        "is none of its GPUs"),
    ("gpu0", "side must be a list of GPU nodes (e.g. ['gpu0', 'gpu1']), got 'gpu0'"),
])
def test_a_side_of_no_gpus_is_refused(side, said):
    from topologies.analysis import bisection_maxflow

    with pytest.raises(UserError) as exc:
        bisection_maxflow(build("fat-tree:k=4"), side)
    assert str(exc.value) == said


def test_a_side_of_gpus_gives_the_cut():
    """A ring of 6 at 100 GB/s cut in half: two links cross, 2 x 50 GB/s per direction
    (each link's bandwidth carries both ways; the module doctest's figure), whatever
    container the side comes in."""
    from topologies import ring
    from topologies.analysis import bisection_maxflow

    g = ring(6, bandwidth=100e9)
    assert {bisection_maxflow(g, side) for side in (["gpu0", "gpu1", "gpu2"],
                                                   ("gpu0", "gpu1", "gpu2"),
                                                   np.array(["gpu0", "gpu1", "gpu2"]))} \
        == {100e9}


# -- (h) degrade given names ------------------------------------------------------------

WHAT = ("failed must be a list of topologies.failure_domains.Component (as components(graph) "
        "gives them), got ")


@pytest.mark.parametrize(("failed", "kw", "said"), [
    ("gpu0", {}, WHAT + "'gpu0'"),
    ([("gpu0", "gpu1")], {}, WHAT + "('gpu0', 'gpu1') in it; netmodel.collectives.degraded."
                                    "degrade takes nodes and links by name"),
    (None, {"copy": "no"}, "copy must be true or false, got 'no'"),
])
def test_degrade_refuses_names_and_a_copy_of_no_flag(failed, kw, said):
    from topologies.degrade import degrade
    from topologies.failure_domains import components

    g = build("ring:n=8")
    if failed is None:
        failed = components(g)["gpu-die"][:1]
    with pytest.raises(UserError) as exc:
        degrade(g, failed, **kw)
    assert str(exc.value) == said


def test_degrade_of_a_component_still_removes_it():
    from topologies.degrade import degrade
    from topologies.failure_domains import components

    g = build("ring:n=8")
    out = degrade(g, (c for c in components(g)["gpu-die"][:1]), copy=np.False_)
    assert out is g and "gpu0" not in g and g.graph["gpus"] == 7


# -- (i) spares' prefix and templates ------------------------------------------------------

NAME = ("must be non-empty text of at most 200 characters without control or format "
        "characters (such as U+202E) or '$', and no blank at either end")


@pytest.mark.parametrize(("kw", "said"), [
    ({"prefix": 5}, f"spare prefix name 5 {NAME}"),
    ({"prefix": ""}, f"spare prefix name '' {NAME}"),
    ({"prefix": "sp\nare"}, f"spare prefix name 'sp\\nare' {NAME}"),
    ({"like": "gpu0"}, "like must be a non-empty list of the fabric's GPUs (e.g. ['gpu0']) or "
                       "None for every GPU, got 'gpu0'"),
    ({"like": []}, "like must be a non-empty list of the fabric's GPUs (e.g. ['gpu0']) or None "
                   "for every GPU, got []"),
])
def test_spares_refuse_a_prefix_of_no_name_and_templates_of_no_list(kw, said):
    from topologies.spares import add_spares

    with pytest.raises(UserError) as exc:
        add_spares(build("flat:n=6,planes=2,radix=8"), 5, **kw)
    assert str(exc.value) == said


def test_spares_on_free_ports_as_the_doctest_places_them():
    """6 GPUs on two 8-port planes leave 2 ports a plane: 2 spares of the 5 asked, named by
    the prefix, whatever container the templates come in."""
    from topologies.spares import add_spares

    g = build("flat:n=6,planes=2,radix=8")
    for like in (None, ("gpu1",), np.array(["gpu1"]), iter(["gpu1"])):
        out, names = add_spares(g, 5, like=like, prefix="hot")
        assert names == ("hot0", "hot1") and out.graph["gpus"] == 8


# -- (j) spares_needed's limit, spare_curve's counts ---------------------------------------

@pytest.fixture(scope="module")
def cluster():
    from netmodel.study.reliability_cluster import build_cluster

    return build_cluster("lite-flat", "Llama-3-8B", max_batch=8)


@pytest.mark.parametrize(("limit", "shown"), [
    (float("nan"), "nan"), (-1, "-1"), (True, "True"), ("4", "'4'"),
    (np.array([1, 2]), "an array of shape (2,)"),
])
def test_a_limit_of_no_count_is_refused_before_the_runs(cluster, limit, shown, monkeypatch):
    import netmodel.study.availability as availability

    def ran(*_a, **_k):
        raise AssertionError("the Monte Carlo ran before the refusal")

    monkeypatch.setattr(availability, "PoolRuns", ran)
    with pytest.raises(UserError) as exc:
        availability.spares_needed(cluster, horizon="1d", trials=5, limit=limit)
    assert str(exc.value) == f"limit must be a whole number from 0 to 1,000,000,000, got {shown}"


def test_a_0d_array_of_spare_counts_is_refused(cluster):
    from netmodel.study.availability import spare_curve

    with pytest.raises(UserError) as exc:
        spare_curve(cluster, "pod", np.array(4))
    assert str(exc.value) == "counts must be a list of spare counts, got array(4)"


def test_a_limit_as_numpy_or_python_int_searches_alike(cluster):
    from netmodel.study.availability import spares_needed

    got = {spares_needed(cluster, horizon="1d", trials=5, limit=v)
           for v in (np.int64(4), 4, None)}
    assert len(got) == 1 and next(iter(got)) >= 0


# -- (k) degraded_cost's circuits --------------------------------------------------------

def test_circuits_that_is_no_function_is_refused_before_any_cost(monkeypatch):
    import netmodel.collectives.degraded as degraded

    def costed(*_a, **_k):
        raise AssertionError("a model was made before the refusal")

    monkeypatch.setattr(degraded, "FabricCostModel", costed)
    with pytest.raises(UserError) as exc:
        degraded.degraded_cost(build("ring:n=8"), "all-reduce", 1e6, 4, circuits=5)
    assert str(exc.value) == ("circuits must be a function of the surviving GPUs giving the "
                              "graph they are costed on, or None, got 5")


# -- (l) find_crossovers' tolerance, fab and models -----------------------------------------

@pytest.fixture(scope="module")
def fab():
    return netmodel.compare(["Llama-3-70B"], ["h100-dgx", "lite-flat"], ["decode", "prefill"],
                            max_batch=64)


@pytest.mark.parametrize(("kw", "said"), [
    ({"tolerance": 0}, "tolerance must be a number from 1e-09 to 1, got 0"),
    ({"tolerance": -1}, "tolerance must be a number from 1e-09 to 1, got -1"),
    ({"tolerance": float("nan")}, "tolerance must be a number from 1e-09 to 1, got nan"),
    ({"tolerance": "0.1"}, "tolerance must be a number from 1e-09 to 1, got '0.1'"),
    ({"models": [5]}, "models must be a compute.model_spec.ModelSpec (e.g. "
                      "get_model('Llama-3-8B')), got 5"),
])
def test_a_tolerance_the_search_cannot_reach_is_refused(fab, kw, said):
    from netmodel.study.crossovers import find_crossovers

    with pytest.raises(UserError) as exc:
        find_crossovers(fab, **kw)
    assert str(exc.value) == said


def test_a_comparison_of_another_type_is_refused():
    from netmodel.study.crossovers import find_crossovers

    with pytest.raises(UserError) as exc:
        find_crossovers(5)
    assert str(exc.value) == ("fab must be a netmodel.study.compare.CompareResult (e.g. "
                              "netmodel.compare(...)), got 5")


def test_the_finest_tolerance_agrees_with_the_default_to_its_precision(fab):
    """The prefill crossover (~7.28x) found at 1e-9 lies within the default 0.5% of the
    default's; decode never matches within 64x."""
    from netmodel.study.crossovers import TOLERANCE, find_crossovers

    fine, default = ([r.bandwidth_to_match for r in find_crossovers(fab, tolerance=t).rows]
                     for t in (1e-9, TOLERANCE))
    assert fine[0] is None and default[0] is None
    assert abs(np.log(fine[1] / default[1])) <= TOLERANCE and 7 < fine[1] < 7.5


# -- (m) clock_sweep's keywords ------------------------------------------------------------

def test_a_keyword_no_search_takes_is_refused_naming_clock_sweep(monkeypatch):
    import compute.power as power

    def clocked(*_a, **_k):
        raise AssertionError("a clock was set up before the refusal")

    monkeypatch.setattr(power, "gpu_at_clock", clocked)
    with pytest.raises(UserError) as exc:
        power.clock_sweep("Llama-3-8B", "H100-SXM", bogus=1)
    assert str(exc.value) == (
        "clock_sweep() takes no keyword 'bogus'; allowed: model, gpu, phase, clocks, law, "
        "prompt, context, comm, options, slo, tp, pp, ep, attention_dp, expert_skew, "
        "max_gpus, max_batch")


def test_clock_sweep_passes_the_search_its_keywords():
    from compute.power import clock_sweep

    (point,) = clock_sweep("Llama-3-8B", "H100-SXM", clocks=(0.8,), max_batch=8, tp=[2])
    assert point.best.tp == 2 and point.best.batch <= 8


# -- (n) run_compare's lists -------------------------------------------------------------

@pytest.mark.parametrize(("models", "phases", "said"), [
    ("Llama-3-8B", ["decode"], "models must be a list of model names or ModelSpec objects, "
                               "got 'Llama-3-8B'"),
    (["Llama-3-8B"], "decode", "phases must be a list of phases, got 'decode'"),
])
def test_run_compare_refuses_text_for_a_list(models, phases, said):
    from netmodel.study.compare import run_compare

    with pytest.raises(UserError) as exc:
        run_compare(models, ["lite-flat"], phases, max_batch=8)
    assert str(exc.value) == said


# -- (o) a profile's moe_exchanges as numpy ----------------------------------------------

EXCHANGES = ("profile 'vllm-dgx-h100': moe_exchanges must be a list of 'all-reduce', "
             "'all-to-all', 'sglang-dp-gather', 'vllm-gather', each at most once, 'all-to-all' "
             "among them; got ")


@pytest.mark.parametrize(("value", "shown"), [
    (np.array(["all-to-all", "vllm-gather"]), "an array of shape (2,)"),
    (np.int64(4), "4"), (np.array(4), "array(4)"),
])
def test_moe_exchanges_of_numpy_are_refused_as_a_list_is(value, shown):
    import dataclasses

    from compute.profiles import get_profile

    with pytest.raises(UserError) as exc:
        dataclasses.replace(get_profile("vllm-dgx-h100"), moe_exchanges=value)
    assert str(exc.value) == EXCHANGES + shown


def test_moe_exchanges_none_empty_or_a_list_still_read():
    import dataclasses

    from compute.profiles import get_profile

    p = get_profile("vllm-dgx-h100")
    assert [dataclasses.replace(p, moe_exchanges=v).moe_exchanges
            for v in (None, (), [" vllm-gather", "all-to-all"])] == [
        (), (), ("all-to-all", "vllm-gather")]


# -- (p) harvested_yield of no die ---------------------------------------------------------

def test_harvested_yield_of_no_die_is_empty_as_die_yields_is():
    from compute.die_yield import die_yield, harvested_yield

    for out in (harvested_yield([], 144, 132), die_yield([])):
        assert isinstance(out, np.ndarray) and out.shape == (0,)
    # one die as before: at least 132 of 144 SMs good and the critical part clean
    assert harvested_yield([814e-6], 144, 132).tolist() == [
        harvested_yield(814e-6, 144, 132)]
