"""Hostile round 32 (scripts/hostile_round32.py): numpy scalars, Fractions and Decimals at the
library's entry points; files with keys twice, BOMs, CRLF, 1e308 and odd names; calibrate's
CSVs; outputs; NETMODEL_* settings.

Found wrong, each checked here:

(a) A flag (a true/false field or parameter) took numpy's bool in some places and refused it
in others: a fabric builder's ``in_network_reduction=np.True_`` was taken, while
:class:`RooflineOptions`' ``overlap_collectives`` and ``two_batch_overlap``, every bool field
of :class:`ModelSpec`, :class:`GpuSpec` (and a saved fabric's GPU table),
:class:`ScaleUpLowerBound`'s ``in_switch``, a calibration's flags, :func:`netmodel.compare`'s
``reliability``, :func:`~topologies.analysis.summary`'s ``validated`` and
:func:`~topologies.schema.validate`'s ``check_connected`` said "must be true or false, got
np.True_" (some "True or False"). One rule now (:func:`compute.validate.flag`): Python's or
numpy's bool, kept as Python's; 0/1, ``"yes"`` and None refused in one line naming the
field. A calibration's ``scaleup_everywhere`` was not checked at all (``1`` was taken as
its truth): every bool field of the calibration is now checked.

(b) The library's entry points with a true/false parameter took any value as its truth:
``compare_files(plot='no')`` drew the figures, ``run_compare(reliability='no')`` added the
reliability columns (only :func:`netmodel.compare` checked it), ``partition(checked='no')``
took a GPU twice unchecked; ``collective_report``'s ``all_groups``, ``cost_table``'s
``all_algorithms``, ``cost_summary``'s ``without_price``, ``to_nccl_tests``'
``per_algorithm``, ``find_crossovers``' ``latency``, the other ``*_files``' ``plot`` alike.
Each is now checked first by :func:`compute.validate.flag`.

(c) A parallel configuration's degree of numpy's True (``Parallelism(np.True_)``) was taken as
a degree of 1, where Python's True is refused; and ``ep=np.True_`` / ``attention_dp=np.True_``
(every divisor, as ``True``) were refused as degrees ("EP degree must be a whole number >=
1, got np.True_"). Both now read numpy's bool as Python's (compute.parallel).

(d) A scenario's fabric value given as a numpy scalar (``with_param("fabric.domains",
np.int64(2))``, ``np.float32``, ``np.True_`` for ``sharp``) was refused as "[fabric] domains
must be a string, number or boolean, got 2"; in a Scenario made in code it was kept, and
its ``to_toml`` refused "cannot write np.int64(2) to TOML (allowed: strings, numbers,
booleans)" and its spec said ``sharp=True``. A [fabric] table now holds Python's values
(netmodel.study.fabric_table.plain_value).

(e) :func:`~netmodel.study.collective_report.collective_report` read every ``group`` that
is not Python's int as a list of GPU nodes: ``np.int64(4)`` raised TypeError ('numpy.int64'
object is not iterable), so did ``np.True_``, ``np.float64(4.0)`` and ``np.array(4)``. A
size of numpy's is now a size; the others are refused by the model's own check ("group
must be a size (int) or a list of GPU nodes, got np.True_"). And
:func:`~netmodel.study.collective_setup.collective_setup` kept a ``seed`` of numpy's, which
failed the report's JSON where it overrides a scenario's (TypeError: Object of type int64
is not JSON serializable): it is now checked and kept as Python's int first.

(f) A sweep parameter's values took numpy's True as 1.0 (``SweepParam("fabric.planes",
(np.True_, 16))`` swept 1 and 16 planes) where Python's True is refused: now refused alike.

(g) A list of numbers holding a bool was read by numpy as numbers, True as 1: message sizes
(``collective_time(..., [True, 1e6], ...)``, ``check_nbytes([True, 8])`` and cost_table's
sizes costed a 1-byte message), die areas (``die_yield([True, 8e-4])``: a yield for an
area of 1 m^2; ``dies_per_wafer`` said "die area 1e+06 mm^2 is larger than the usable
wafer") and a grid's batches (``evaluate_grid(..., [True, 8], ...)``: a batch of 1). Each
now asks :func:`compute.validate.holds_flag` and refuses it.

(h) :class:`~netmodel.study.distributed.Executor` (and so ``compare(workers=...)``)
refused ``workers=np.int64(1)`` as "workers=1 is not allowed; a local cluster takes 1 to 8
workers"; ``timeout='abc'`` raised TypeError ('>' not supported between 'str' and 'int'),
``timeout=np.True_`` was a second and ``processes='no'`` its truth. Each is checked now
(numpy's whole numbers kept as Python's int).

(i) Counts checked as ``isinstance(v, int)`` refused numpy's integers, some in words that
contradict themselves: a calibration's ``channels=np.int64(16)`` ("channels must be a
whole number in 1..1024, got 16"), ``load_bandwidth(gpu, np.int64(8))`` ("host_gpus must
be a whole number >= 1, got 8"), ``spare_pools(cluster, np.int64(2))``,
``plan_spares(graph, np.int64(2))``, ``hosts(graph, np.int64(4))``. Each now takes a whole
number of numpy's, kept as Python's int.

(j) :func:`compute.outputs.write_outputs`' ``jobs`` was not checked: ``'2'`` raised
TypeError ('<' not supported between 'int' and 'str') in the middle of the write, ``0``,
``-1``, ``2.5`` and ``True`` ran. It is now a whole number >= 1 (numpy's too) or None,
refused before any folder is made.

(k) Numbers of numpy's kept in a model or a calibration failed every result's JSON: a
ModelSpec with ``layers=np.int64(16)`` made numpy's bools downstream (evaluate's
``to_dict``: "Object of type bool is not JSON serializable"); a calibration's
``nvlink_bandwidth=np.float32(...)`` reached a collective result's ``as_dict`` ("Object of
type float32 ..."). A ModelSpec's whole numbers and a calibration's (and a protocol's)
floats are now kept as Python's.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import re
from dataclasses import replace

import numpy as np
import pytest

from compute.comm import ScaleUpLowerBound
from compute.errors import UserError
from compute.hardware import GpuSpec, get_gpu
from compute.model_spec import ModelSpec
from compute.models import get_model
from compute.roofline_options import RooflineOptions
from compute.validate import flag, is_flag
from netmodel.collectives.calibration import Calibration

#: A valid object of each library dataclass that checks its fields (has ``__post_init__``)
#: and holds a true/false field; the flags themselves are read off the fields.
BASES = {
    RooflineOptions: RooflineOptions,
    ModelSpec: lambda: get_model("Llama-3-8B"),
    GpuSpec: lambda: get_gpu("H100-SXM"),
    ScaleUpLowerBound: lambda: ScaleUpLowerBound(4.5e11),
    Calibration: Calibration.ideal,
}


def _bool_fields(cls) -> list[str]:
    return [f.name for f in dataclasses.fields(cls) if f.type in (bool, "bool")]


def _checked_classes_with_flags() -> set[type]:
    """Every dataclass of compute, topologies and netmodel's library modules (not its
    command line) that checks its fields (``__post_init__``) and has a bool field."""
    found = set()
    for pkg in ("compute", "topologies", "netmodel.collectives", "netmodel.study"):
        root = importlib.import_module(pkg)
        for info in pkgutil.walk_packages(root.__path__, f"{pkg}."):
            mod = importlib.import_module(info.name)
            for obj in vars(mod).values():
                if isinstance(obj, type) and dataclasses.is_dataclass(obj) \
                        and obj.__module__ == mod.__name__ and hasattr(obj, "__post_init__") \
                        and _bool_fields(obj):
                    found.add(obj)
    return found


def test_every_checked_dataclass_with_a_flag_is_tried_here():
    assert _checked_classes_with_flags() == set(BASES)


FLAGS = [(cls, name) for cls in BASES for name in _bool_fields(cls)]


@pytest.mark.parametrize("cls, name", FLAGS, ids=[f"{c.__name__}.{n}" for c, n in FLAGS])
def test_a_flag_takes_numpys_bool_as_pythons(cls, name):
    base = BASES[cls]()
    own = getattr(base, name)
    for value in (np.bool_(own), np.array(own)):
        got = getattr(replace(base, **{name: value}), name)
        assert type(got) is bool and got is own


@pytest.mark.parametrize("cls, name", FLAGS, ids=[f"{c.__name__}.{n}" for c, n in FLAGS])
@pytest.mark.parametrize("bad, shown", [(1, "1"), (0, "0"), ("yes", "'yes'"), (None, "None"),
                                        (np.array([True, False]), None)])
def test_a_flag_refuses_what_is_not_true_or_false(cls, name, bad, shown):
    base = BASES[cls]()
    with pytest.raises(UserError, match=f"{name} must be true or false, got") as refused:
        replace(base, **{name: bad})
    if shown is not None:
        assert str(refused.value).endswith(f"got {shown}")


def test_is_flag():
    assert [is_flag(v) for v in (True, False, np.True_, np.False_, np.array(False))] == [True] * 5
    assert [is_flag(v) for v in (1, 0, 1.0, "true", None, np.array([True]),
                                 np.int64(1))] == [False] * 7
    assert flag("", "x", np.False_) is False


def test_fabric_flags_and_graph_checks_take_numpys_bool():
    from netmodel.api import build_fabric
    from topologies.analysis import summary
    from topologies.schema import validate

    g = build_fabric(("single-switch", {"n": 4, "in_network_reduction": np.True_}))
    assert g.nodes["nvs0"]["in_network_reduction"] is True
    g.nodes["nvs0"]["in_network_reduction"] = np.False_   # a graph made with numpy
    assert validate(g, check_connected=np.True_).nodes["nvs0"]["in_network_reduction"] is False
    assert summary(g, validated=np.False_) is not None
    with pytest.raises(UserError, match="validated must be true or false, got 1$"):
        summary(g, validated=1)


def _entry_points():
    """The library's entry points with a true/false parameter that took any value as its
    truth (``plot='no'`` drew the figures, ``checked='no'`` skipped the checks), each called
    with that parameter: the check comes first, before any other argument is read."""
    from netmodel.collectives.cost_table import to_nccl_tests
    from netmodel.collectives.placement import partition
    from netmodel.study.blast_radius import blast_files
    from netmodel.study.collective_report import collective_report, cost_table
    from netmodel.study.compare import compare_files, run_compare
    from netmodel.study.cost import cost_summary
    from netmodel.study.crossovers import find_crossovers
    from netmodel.study.lite_gpu_files import full_study_files, study_files
    from netmodel.study.sweep import sweep_files

    return {
        "run_compare": (lambda v: run_compare([], [], reliability=v), "reliability"),
        "compare_files": (lambda v: compare_files(None, plot=v), "plot"),
        "sweep_files": (lambda v: sweep_files(None, plot=v), "plot"),
        "blast_files": (lambda v: blast_files(None, plot=v), "plot"),
        "study_files": (lambda v: study_files(None, plot=v), "plot"),
        "full_study_files": (lambda v: full_study_files(None, plot=v), "plot"),
        "full_study_files summary": (lambda v: full_study_files(None, summary=v), "summary"),
        "collective_report": (lambda v: collective_report(None, "all-reduce", 1e6, 2,
                                                          all_groups=v), "all_groups"),
        "cost_table": (lambda v: cost_table(None, [], [], [], all_algorithms=v),
                       "all_algorithms"),
        "cost_summary": (lambda v: cost_summary(None, None, without_price=v), "without_price"),
        "partition": (lambda v: partition(None, 4, checked=v), "checked"),
        "to_nccl_tests": (lambda v: to_nccl_tests([], per_algorithm=v), "per_algorithm"),
        "find_crossovers": (lambda v: find_crossovers(None, latency=v), "latency"),
    }


@pytest.mark.parametrize("name", list(_entry_points()))
@pytest.mark.parametrize("bad", ["no", 0.0, None])
def test_an_entry_points_flag_is_checked_first(name, bad):
    call, parameter = _entry_points()[name]
    with pytest.raises(UserError, match=f"^{parameter} must be true or false, got "):
        call(bad)


def test_an_entry_points_flag_takes_numpys_bool():
    from netmodel.api import build_fabric
    from netmodel.collectives.cost_table import to_nccl_tests
    from netmodel.collectives.placement import partition

    ring = build_fabric("ring:n=8")
    assert partition(ring, 4, checked=np.False_) == partition(ring, 4)
    assert to_nccl_tests([], per_algorithm=np.True_) == to_nccl_tests([])


@pytest.mark.parametrize("key", ["tp", "pp", "ep", "attention_dp"])
def test_a_degree_of_numpys_true_is_refused(key):
    from compute.parallel import Parallelism

    degrees = {"tp": 1, "pp": 1, "ep": 1, "attention_dp": 1, key: np.True_}
    with pytest.raises(UserError, match=r"degree must be a whole number >= 1, got np\.True_$"):
        Parallelism(**degrees)


@pytest.mark.parametrize("key", ["ep", "attention_dp"])
def test_every_divisor_asked_by_numpys_true(key):
    from compute.parallel import configurations

    mixtral = get_model("Mixtral-8x7B")
    every = configurations(mixtral, 8, **{key: True})
    assert configurations(mixtral, 8, **{key: np.True_}) == every
    assert len(every) > len(configurations(mixtral, 8))   # more than degree 1 alone
    with pytest.raises(UserError, match=r"degree must be a whole number >= 1, got np\.False_"):
        configurations(mixtral, 8, **{key: np.False_})


@pytest.mark.parametrize("value, plain", [(np.int64(2), 2), (np.float32(2.0), 2.0),
                                          (np.uint8(2), 2)])
def test_a_fabric_value_of_numpys_is_pythons(value, plain):
    from netmodel.api import get_scenario

    got = get_scenario("h100-dgx").with_param("fabric.domains", value).fabric["domains"]
    assert type(got) is type(plain) and got == plain


def test_a_scenario_made_with_numpys_values_writes_its_file():
    from netmodel.api import get_scenario

    s = get_scenario("h100-dgx")
    assert s.with_param("fabric.sharp", np.True_).fabric["sharp"] is True
    made = replace(s, fabric={**s.fabric, "domains": np.int64(2), "sharp": np.False_})
    lines = made.to_toml().splitlines()
    assert "domains = 2" in lines and "sharp = false" in lines
    assert "domains=2," in made.fabric_spec() and "sharp=false" in made.fabric_spec()


@pytest.mark.parametrize("source", [{"fabric": "ring:n=8"}, {"scenario": "h100-dgx"}])
def test_a_collective_reports_group_of_numpys(source):
    from netmodel.study.collective_report import collective_report
    from netmodel.study.collective_setup import collective_setup

    setup = collective_setup(**source)
    sized = collective_report(setup, "all-reduce", 1e6, np.int64(4))
    assert sized.result.group == collective_report(setup, "all-reduce", 1e6, 4).result.group
    assert len(sized.result.group) == 4
    for bad, shown in ((np.True_, "np.True_"), (np.float64(4.0), "4.0"),
                       (np.array(4), "array(4)")):
        with pytest.raises(UserError, match=f"^group must be a size .int. or a list of GPU "
                                            f"nodes, got {re.escape(shown)}$") as refused:
            collective_report(setup, "all-reduce", 1e6, bad)
        assert refused.value.parameter == "group"


def test_a_seed_of_numpys_is_kept_as_pythons():
    import json

    from netmodel.study.collective_report import collective_report
    from netmodel.study.collective_setup import collective_setup

    setup = collective_setup(scenario="h100-dgx", seed=np.int64(3))
    assert setup.overrides["seed"] == (0, 3) and type(setup.seed) is int
    doc = json.loads(json.dumps(collective_report(setup, "all-reduce", 1e6, 4).to_dict()))
    assert doc == json.loads(json.dumps(collective_report(
        collective_setup(scenario="h100-dgx", seed=3), "all-reduce", 1e6, 4).to_dict()))
    with pytest.raises(UserError, match=r"^seed must be a whole number >= 0, got np\.True_$"):
        collective_setup(fabric="ring:n=8", seed=np.True_)


@pytest.mark.parametrize("true", [True, np.True_, np.array(True)])
def test_a_sweep_value_of_true_is_refused(true):
    from netmodel.study.sweep_params import SweepParam, check_param

    with pytest.raises(UserError, match=r"^sweep parameter fabric.planes value .*True.* must "
                                        r"be a finite number >= 0 \(in SI\)$"):
        check_param(SweepParam("fabric.planes", (true, 16)), ["lite-flat"])
    assert check_param(SweepParam("fabric.planes", (np.int64(8), np.float32(16))),
                       ["lite-flat"]).values == (8.0, 16.0)


def _sizes(values):
    import netmodel

    return netmodel.collective_time("ring:n=4", "all-reduce", values, 4)


def _areas(values):
    from compute.die_yield import die_yield

    return die_yield(values)


def _batches(values):
    from compute.roofline import check_batches

    return check_batches(values)


@pytest.mark.parametrize("call, good, words", [
    (_sizes, [1e6, 2e6], "message size must be a number of bytes, got "),
    (_areas, [8e-4, 1e-4], "die area must be numbers, got "),
    (_batches, [1, 8], "batches must be whole numbers >= 1, got "),
])
@pytest.mark.parametrize("flag_at", [0, 1])
@pytest.mark.parametrize("truth", [True, np.True_])
def test_a_list_of_numbers_holding_a_bool_is_refused(call, good, words, flag_at, truth):
    held = list(good)
    held[flag_at] = truth
    with pytest.raises(UserError, match=f"^{words}"):
        call(held)
    assert len(call(good)) == 2   # the numbers alone are taken


def test_holds_flag():
    from compute.validate import holds_flag

    assert holds_flag([8, True]) and holds_flag((1.0, np.False_)) and holds_flag(np.array([True]))
    assert holds_flag([[1, 2], [3, True]]) and holds_flag(np.array([1, True], dtype=object))
    assert not (holds_flag([8, 2.0]) or holds_flag(np.arange(3)) or holds_flag(8)
                or holds_flag("True") or holds_flag(np.array([1, 2.5], dtype=object)))


def test_a_positive_number_is_not_numpys_true():
    from compute.quantities import check_finite_positive

    with pytest.raises(UserError, match=r"^x must be a finite number > 0, got np\.True_$"):
        check_finite_positive("x", np.True_)   # float(np.True_) is 1.0
    assert check_finite_positive("x", np.float32(2)) == 2.0


def test_an_executors_numbers_and_flag():
    from netmodel.study.distributed import Executor

    ex = Executor(workers=np.int64(1), timeout=np.float32(5), processes=np.False_)
    assert (ex.workers, type(ex.workers), ex.timeout, ex.processes) == (1, int, 5.0, False)
    for kw, said in (({"timeout": "abc"}, "^timeout='abc' must be a positive number of seconds$"),
                     ({"timeout": np.True_}, "^timeout=np.True_ must be a positive number"),
                     ({"processes": "no"}, "^processes must be true or false, got 'no'$"),
                     ({"workers": np.True_}, "^workers=np.True_ is not allowed")):
        with pytest.raises(UserError, match=said):
            Executor(**kw)


def test_counts_of_numpys_are_taken_as_pythons():
    from netmodel.api import build_fabric
    from netmodel.study.reliability_catalog import catalog
    from netmodel.study.reliability_cluster import build_cluster
    from netmodel.study.reliability_spares import spare_pools
    from topologies.enclosures import hosts
    from topologies.spares import plan_spares

    cal = Calibration.ideal().with_(channels=np.int64(16))
    assert cal.channels == 16 and type(cal.channels) is int
    storage = catalog().with_(load_from="storage")
    assert storage.load_bandwidth("H100-SXM", np.int64(8)) == \
        storage.load_bandwidth("H100-SXM", 8)
    cluster = build_cluster("h100-dgx", "Llama-3-8B", max_batch=8)
    pools = spare_pools(cluster, np.int64(2))
    assert pools.spares == 2 and type(pools.spares) is int
    ring = build_fabric("ring:n=8")
    assert hosts(ring, np.int64(4)) == hosts(ring, 4) and len(hosts(ring, 4)) == 2
    leaf = build_fabric("flat:n=4")   # a switch with free ports
    assert plan_spares(leaf, np.int64(2)) == plan_spares(leaf, 2) and len(plan_spares(leaf, 2))
    for bad in (np.True_, 2.0, -1):
        with pytest.raises(UserError, match="spare count must be a whole number >= 0, got "):
            plan_spares(leaf, bad)


@pytest.mark.parametrize("jobs", ["2", 0, -1, 2.5, True, np.True_])
def test_write_outputs_jobs_is_checked_first(tmp_path, jobs):
    from compute.outputs import write_outputs

    with pytest.raises(UserError, match=r"^jobs must be a whole number >= 1 \(or None"):
        write_outputs(tmp_path / "o", {"a.txt": b"x"}, jobs=jobs)
    assert list(tmp_path.iterdir()) == []   # nothing made, no staging folder left


def test_write_outputs_takes_numpys_jobs(tmp_path):
    from compute.outputs import write_outputs

    def writer(path: str) -> None:
        with open(path, "w") as f:
            f.write("drawn")

    write_outputs(tmp_path / "o", {"a.txt": b"x", "b.txt": writer}, jobs=np.int64(2))
    assert (tmp_path / "o" / "b.txt").read_text() == "drawn"


def test_a_models_numbers_of_numpys_are_pythons():
    import json

    import netmodel

    model = replace(get_model("Llama-3-8B"), layers=np.int64(16), heads=np.int32(32))
    assert (type(model.layers), type(model.heads)) == (int, int)
    doc = json.loads(json.dumps(netmodel.evaluate(model, "H100-SXM", "decode", tp=1,
                                                  batch=8).to_dict()))
    plain = replace(get_model("Llama-3-8B"), layers=16)
    assert doc == json.loads(json.dumps(netmodel.evaluate(plain, "H100-SXM", "decode", tp=1,
                                                          batch=8).to_dict()))


def test_a_calibrations_floats_of_numpys_are_pythons():
    import json

    from netmodel.api import build_fabric
    from netmodel.collectives.calibration import Protocol
    from netmodel.collectives.calibration_files import default_calibration
    from netmodel.collectives.model import FabricCostModel

    cal = default_calibration().with_(nvlink_bandwidth=np.float32(2e10),
                                      reduction_rate=np.float32(1e11))
    assert (type(cal.nvlink_bandwidth), type(cal.reduction_rate)) == (float, float)
    model = FabricCostModel(build_fabric("ring:n=8"), calibration=cal)
    assert json.loads(json.dumps(model.cost("all-reduce", 1e6, model.group(4)).as_dict()))
    p = Protocol("mine", np.float32(0.5), np.float32(1e-6), np.float32(1e-6), np.float32(2e-6))
    assert {type(p.bandwidth_factor), type(p.step_latency_scaleout)} == {float}
