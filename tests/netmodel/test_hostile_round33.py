"""Hostile round 33 (scripts/hostile_round33.py): choices in another case, lists naming one
choice twice, a spec's text values as written, a fabric no router indexes, Decimals and
Fractions as durations and rates, advice that runs as given.

Found wrong, each checked here:

(a) Two rules for one kind of text: catalog names were matched regardless of case
(``--gpu h100-sxm``, ``--scenarios H100-DGX``, a builder ``FAT-TREE``) while every choice
was refused in another case (``--phase Decode``: "unknown phase 'Decode'", ``--algorithm
RING``, ``--format CSV``, ``--instances ALL``, ``--mode Overlap``, an op ``All-Reduce``). One
rule now, :func:`compute.errors.chosen` (which :func:`~compute.errors.find_name` calls): a
unique match but for case is the choice, as the list spells it; a text matching several
but for case names none. A list naming one choice in two cases (``--phases
decode,Decode``, ``--algorithms ring,RING``, ``--ops all-reduce,ALL-REDUCE``) is one thing
twice, refused as ``--scenarios h100-dgx,H100-DGX`` is.

(b) A built fabric's spec wrote a builder's text values as typed: ``ring:n=4,gpu=lite``
showed ``[ring:n=4,gpu=lite]`` (the catalog's 'Lite'), and, under (a), ``medium=COPPER``
would have shown ``medium=COPPER`` and been recorded in ``args`` apart from the default
it is, so ``topology compare ring:n=4,medium=COPPER ring:n=4`` compared one fabric twice.
A catalog GPU and a medium or split are now written as their lists spell them
(``topologies.registry._as_spelled``), a default dropped.

(c) ``collective --fabric full-mesh:n=4000`` (7,998,000 edges, within the fabric limits)
built for 117 s and 3.2 GB before the router refused its 15,996,000 directed links. A
fabric built to be routed (a spec or file given to a command that costs collectives, and
every scenario's fabric: ``compare`` on a scenario file of a full mesh of 4,000 built for
68 s first) is now built under a cap of half the router's limit
(:func:`netmodel.collectives.routing.routed_builds`), refused by the builder's estimate first.

(d) ``parse_time(Decimal("0.05"))`` read the Decimal through its text (0.05 s) while
``Slo(tbt=Decimal("0.05"))`` and every :func:`compute.validate.number` refused it without
saying why; ``parse_time(Fraction(1, 20))`` said "time 0.05 has unknown unit '/20'". One
rule: a number in code is a ``numbers.Real`` (a Fraction too, not a Decimal); a Decimal is
refused saying to give ``float(value)`` (:func:`compute.describe.decimal_hint`, said by
:func:`~compute.describe.describe` with every Decimal shown).

(e) The blast radius' advice for an OCS fabric without circuits said "set them in the
spec: ocs,logical=ring", a spec no command reads ("unknown fabric 'ocs,logical=ring'"):
now ``ocs:logical=ring``.

(f) A value an option took by default and the run refused was said as if typed:
``collective all-reduce --fabric ring:n=4`` answered "--group '8': group size 8 is larger
than the fabric's 4 GPUs" to a user who gave no --group (``costs`` likewise with --groups
'2,4,8'). :func:`netmodel.cli.refusals.value_refused_as` now says "(its default)" where click
records the option's value as its default.

(g) A measurements CSV's number its range refuses was named as converted, not as typed
(the rule every file follows): a context '-0.0' said "got 0", a tp '1e7' "got 10000000".
Where the number prints unlike its cell, the cell is named as typed (compute.measurements).
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest

from compute.errors import UserError, chosen, find_name
from compute.phases import PHASES, Slo, check_phase
from compute.roofline_options import RooflineOptions
from compute.units import parse_bandwidth, parse_bytes, parse_time
from compute.validate import number
from netmodel.collectives.algorithms import ALGORITHMS
from netmodel.collectives.model import FabricCostModel
from netmodel.study.fabric_ref import resolve_fabric
from tests.netmodel.cli_helpers import one_line_error, run_cli
from topologies.specs import build

INFER = ["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "1", "--batch", "8"]
COSTS = ["costs", "--fabric", "ring:n=8", "--sizes", "8M", "--groups", "8"]
COLLECTIVE = ["collective", "all-reduce", "--fabric", "ring:n=8", "--size", "8M"]


# -- (a) one rule for case ----------------------------------------------------------------

def test_a_choice_in_another_case_is_that_choice_as_the_list_spells_it():
    assert chosen("Decode", PHASES) == "decode" and check_phase(" PREFILL ") == "prefill"
    assert chosen("RING", ALGORITHMS) == "ring"
    assert chosen("a", ("A", "a")) == "a"          # the exact one first
    assert chosen("Aa", ("aa", "AA")) is None       # two but for case: neither
    assert chosen("rin", ALGORITHMS) is None        # no prefix match
    # a catalog name by the same rule (find_name calls chosen)
    assert find_name({"H100-SXM": 1}, " h100-sxm ") == "H100-SXM"
    assert find_name(["gpu-a", "GPU-A"], "Gpu-A") is None


def test_the_library_reads_choices_by_it():
    assert FabricCostModel(build("ring:n=8"), algorithm="Ring").algorithm == "ring"
    assert RooflineOptions(mode="Serial").mode == "serial"


@pytest.mark.parametrize("argv, says", [
    ([*INFER, "--phase", "Decode", "--mode", "Overlap"], "decode, batch 8"),
    ([*COLLECTIVE, "--algorithm", "RING"], "algorithm: ring (LL128 protocol)"),
    (["collective", "All-Reduce", "--fabric", "ring:n=8", "--size", "8M"], "all-reduce of 8 MiB"),
    ([*COSTS, "--format", "CSV"], "op,algorithm,protocol,group_size"),
    ([*COSTS, "--algorithms", "NCCL"], "all-reduce,"),
])
def test_the_command_line_takes_a_choice_in_another_case(argv, says):
    r = run_cli(argv)
    assert r.exit_code == 0, r.output
    assert says in r.output


@pytest.mark.parametrize("argv, says", [
    (["compare", "--models", "Llama-3-8B", "--scenarios", "h100-dgx", "--max-batch", "8",
      "-q", "--no-plot", "--phases", "decode,Decode"], "--phases 'decode,Decode' names one "
     "thing more than once ('decode' and 'Decode')"),
    ([*COSTS, "--algorithms", "ring,RING"], "--algorithms 'ring,RING' names one thing more "
     "than once"),
    ([*COSTS, "--ops", "all-reduce,ALL-REDUCE"], "--ops 'all-reduce,ALL-REDUCE' names one "
     "thing more than once"),
])
def test_a_list_naming_one_choice_in_two_cases_names_it_twice(argv, says):
    one_line_error(run_cli(argv), says)


def test_a_choice_spelt_otherwise_is_still_refused_with_netmodels_spelling():
    one_line_error(run_cli([*COLLECTIVE, "--algorithm", "Two_Shot"]),
                   "--algorithm", "netmodel spells it 'two-shot'", "known: 'auto'")


# -- (b) a spec's text values as written ------------------------------------------------------

@pytest.mark.parametrize("typed, spec", [
    ("ring:n=4,gpu=lite", "ring:n=4,gpu=Lite"),
    ("ring:n=4,gpu= LITE+bw", "ring:n=4,gpu=Lite+BW"),
    ("ring:n=4,medium=COPPER", "ring:n=4"),                       # the default, dropped
    ("ring:n=4,medium=Fibre", "ring:n=4,medium=fibre"),
    ("lite-groups:split=GATEWAY", "lite-groups:split=gateway"),
    ("fat-tree:k=008", "fat-tree:k=8"),
])
def test_a_specs_text_values_are_written_as_their_lists_spell_them(typed, spec):
    g = build(typed)
    assert g.graph["spec"] == spec
    assert build(spec).graph["args"] == g.graph["args"]


def test_one_fabric_in_two_cases_is_one_fabric():
    assert resolve_fabric("ring:n=4,medium=COPPER").key == resolve_fabric("ring:n=4").key
    one_line_error(run_cli(["topology", "compare", "ring:n=4,medium=COPPER", "ring:n=4"]),
                   "names one thing more than once")
    r = run_cli(["topology", "show", "ring:n=4,gpu=lite"])
    assert r.exit_code == 0 and "[ring:n=4,gpu=Lite]" in r.output


# -- (c) a fabric no router indexes, refused before it is built --------------------------------

def test_a_fabric_to_be_routed_is_refused_by_the_builders_estimate(monkeypatch, tmp_path):
    from netmodel.collectives.routing import routed_builds
    from tests.netmodel.scenario_helpers import scenario_toml

    # the router's limit lowered to 100 directed links: a ring of 61 (61 edges, 122 links)
    # is refused by its builder's estimate, before any graph is made; shown, it is built.
    # (Sizes no other test builds: a fabric already built and kept is not built again.)
    monkeypatch.setenv("NETMODEL_MAX_ROUTER_LINKS", "100")
    with routed_builds(), pytest.raises(UserError) as exc:
        resolve_fabric("ring:n=61")
    assert str(exc.value) == (
        "ring: the fabric would have about 61 nodes and 61 edges, over the limit of "
        "2,000,000 nodes and 50 edges; routing it would index two directed links an edge, "
        "over the 100 a router indexes: use a smaller fabric, or raise "
        "NETMODEL_MAX_ROUTER_LINKS")
    one_line_error(run_cli(["collective", "all-reduce", "--fabric", "ring:n=59", "--size",
                            "8M"]), "--fabric 'ring:n=59'", "59 edges",
                   "routing it would index two directed links an edge")
    one_line_error(run_cli(["costs", "--fabric", "ring:n=57", "--sizes", "8M", "--groups",
                            "8"]), "57 edges", "NETMODEL_MAX_ROUTER_LINKS")
    # a scenario's fabric is costed, so routed: its file named with the refusal
    (tmp_path / "s.toml").write_text(scenario_toml("ring-55", "H100-SXM", {
        "builder": "ring", "n": 55, "gpu": "$gpu"}))
    one_line_error(run_cli(["compare", "--models", "Llama-3-8B", "--phases", "decode",
                            "--max-batch", "8", "-q", "--no-plot", "--scenarios",
                            str(tmp_path / "s.toml")]), "s.toml: [fabric]", "55 edges",
                   "NETMODEL_MAX_ROUTER_LINKS")
    r = run_cli(["topology", "show", "ring:n=61"])
    assert r.exit_code == 0 and "61 edges" in r.output
    with routed_builds():   # within: 25 edges, 50 directed links
        assert resolve_fabric("ring:n=25").graph.number_of_edges() == 25


def test_full_mesh_4000_is_refused_at_once():
    from netmodel.collectives.routing import routed_builds

    with routed_builds(), pytest.raises(UserError, match=r"about 4,000 nodes and 7,998,000 "
                                        r"edges, over the limit of 2,000,000 nodes and "
                                        r"5,000,000 edges; routing it"):
        resolve_fabric("full-mesh:n=4000")


# -- (d) Decimals and Fractions --------------------------------------------------------------

@pytest.mark.parametrize("read, what", [(parse_time, "time"), (parse_bandwidth, "bandwidth"),
                                        (parse_bytes, "size")])
def test_a_decimal_is_refused_as_a_number_by_every_reader(read, what):
    with pytest.raises(UserError) as exc:
        read(Decimal("8"))
    assert str(exc.value).startswith(f"{what} must be a number or a number with a unit as "
                                     f"text, got Decimal('8') (a Decimal is not read as a "
                                     f"number: give float(value)")
    assert read("8") == 8.0   # its text is read


def test_a_decimal_refusal_says_why_everywhere():
    for make in (lambda: Slo(tbt=Decimal("0.05")),
                 lambda: RooflineOptions(flops_efficiency=Decimal("0.5")),
                 lambda: number("", "x", Decimal("1"), minimum=0, maximum=2)):
        with pytest.raises(UserError, match=r"a Decimal is not read as a number: give "
                                            r"float\(value\)"):
            make()


def test_a_fraction_is_its_value():
    assert parse_time(Fraction(1, 20)) == 0.05
    assert parse_bandwidth(Fraction(10**11, 2)) == 5e10
    assert parse_bytes(Fraction(8)) == 8.0
    assert Slo(tbt=Fraction(1, 20)).tbt == 0.05


def test_a_whole_number_written_with_a_fraction_reads_alike_everywhere(tmp_path):
    # '--tp 2.0' and a measurements CSV's tp '2e0' are both TP 2 (the one number grammar)
    r = run_cli(["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "2.0",
                 "--batch", "8e0"])
    assert r.exit_code == 0 and "on 2 x H100-SXM" in r.output and "batch 8," in r.output


# -- (f) a default refused is said to be one ------------------------------------------------------

@pytest.mark.parametrize("argv, line", [
    (["collective", "all-reduce", "--fabric", "ring:n=4", "--size", "8M"],
     "error: --group '8' (its default): group size 8 is larger than the fabric's 4 GPUs"),
    (["costs", "--fabric", "ring:n=4", "--sizes", "8M"],
     "error: --groups '2,4,8' (its default): group size 8 is larger than the fabric's 4 GPUs"),
    (["collective", "all-reduce", "--fabric", "ring:n=4", "--size", "8M", "--group", "8"],
     "error: --group '8': group size 8 is larger than the fabric's 4 GPUs"),   # typed
])
def test_a_default_refused_is_said_to_be_one(argv, line):
    assert one_line_error(run_cli(argv)) == line


# -- (g) a measurements CSV's number refused as typed ------------------------------------------

@pytest.mark.parametrize("column, cell, said", [
    ("context", "-0.0", "context must be a whole number from 1 to 10,000,000, got '-0.0'"),
    ("tp", "-0", "tp must be a whole number from 1 to 1,000,000, got '-0'"),
    ("tp", "1e7", "tp must be a whole number from 1 to 1,000,000, got '1e7'"),
    ("batch", "0.0", "batch must be a whole number from 1 to 10,000,000, got '0.0'"),
    ("tp", "0", "tp must be a whole number from 1 to 1,000,000, got 0"),   # as typed: guards
    ("latency_s", "-0.0", "latency_s must be a number from 1e-09 to 1,000,000 s, got -0.0"),
])
def test_a_measurements_cell_is_refused_as_typed(tmp_path, column, cell, said):
    header = "model,gpu,tp,batch,phase,prompt,context,latency_s"
    row = dict(zip(header.split(","), "Llama-3-8B,H100-SXM,1,16,decode,,96,0.01".split(","),
                   strict=True))
    row[column] = cell
    (tmp_path / "m.csv").write_text(header + "\nLlama-3-8B,H100-SXM,1,8,decode,,96,0.0078\n"
                                    + ",".join(row.values()) + "\n")
    one_line_error(run_cli(["calibrate", "--measurements", tmp_path / "m.csv", "-o",
                            tmp_path / "p.toml"]), f"m.csv: row 3: {said}")
    assert not (tmp_path / "p.toml").exists()


# -- (e) advice that runs ------------------------------------------------------------------------

def test_the_ocs_advice_is_a_spec_that_runs():
    one_line_error(run_cli(["blast-radius", "--fabric", "ocs", "--model", "Llama-3-8B",
                            "--max-batch", "8"]),
                   "set them in the spec: ocs:logical=ring (or logical=torus:AxB)")
    assert resolve_fabric("ocs:logical=ring").graph.graph["logical"]
