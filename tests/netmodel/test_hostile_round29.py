"""Hostile round 29 (scripts/hostile_round29.py): module_ports, saved fabrics edited by
hand, serve/availability/blast-radius/yield/cost options at their ends, and the library
called with bad objects.

Found wrong, each checked here:

(a) ``compute.die_yield.yield_curve`` of 10^10 die areas (a numpy view of one number, no
memory of its own) raised MemoryError ('Unable to allocate 74.5 GiB') after 58 s of
trying; its areas run a Python call each (about 80 us), so a million is already 80 s. Now
counted before any array is made and refused past NETMODEL_MAX_YIELD_AREAS (1,000,000).

(b) A builder's ``module_ports`` given as 2.0 (a scenario file's ``module_ports = 2.0``,
``build_fabric("superpod", {"module_ports": 2.0})``) or numpy's 2 was refused as 'must be 1
or 2 (...), got 2.0' (and 'got 2'), where every other count of the builder
(``domain_size = 8.0``) and the spec ``superpod:module_ports=2.0`` read it as the whole
number. Now read as 2 (an int in the graph attribute); 2.5, True and NaN still refused.

(c) A yield model ('p\u043eisson', a Cyrillic o), a spare placement ('gr\u043eup'), a
parallelism ('\u0430ll'), the phase 'both' of ``cost --phase`` ('b\u043eth') and a medium
(of a builder's spec, a scenario's [fabric], a saved fabric's edge) in look-alike letters
were refused beside a list that showed the name alike ('known: ..., 'poisson''). Now each
asks 'did you mean ...? (it has ...)' (compute.errors.lookalike), as every other choice.

(d) ``sweep --param fabric.module_ports=3`` on a shipped scenario said 'no point of the
sweep can be built: rail-optimized: module_ports must be 1 or 2 (...), got 3', naming no
flag (the builder's refusal names no parameter path). Now the line names the parameters
swept, and the command line the --param typed.

(e) ``availability --seed`` refused 2**63 and above ('from 0 to 2**63 - 1'), a bound said
only there: the library's Monte Carlo took seed=2**64. Now the bound is the library's
(netmodel.study.availability_mc.MAX_SEED), which the option reads.

(f) A ``netmodel.study.scenarios.Scenario`` made in code (docs/api.md: every function takes
one) took the choices a scenario file's reader refuses: ``links='as_built'`` ran as built,
``calibration='x'`` the default, ``instances='\u0430ll'`` (a Cyrillic a) each instance
alone, ``circuits='x'`` was kept; ``fabric={}`` raised KeyError 'builder' and ``fabric=5``
or ``adjust=5`` AttributeError where they were used; a name of two lines ('a\\nb'),
none or the number 5 was printed as it was. Now each is refused when the Scenario is
made, naming the scenario and the field.

(g) A HuggingFace config's ``torch_dtype`` or ``position_embedding_type`` in look-alike
letters (a Cyrillic a in 'bfloat16', a Cyrillic o in 'rope') was refused beside a list
showing it alike. Now asked about, as every other choice; so are a scenario file's
[fabric] builder ('r\u0430il-optimized'), compute.power's state and a cost table's format
(``CostTable.table(fmt)``, which now drops blanks at either end as every choice does),
and a GPU or model named from ``--gpu-file``/``--model-file`` ('Mine\u2011X', a
non-breaking hyphen).

(h) A fabric graph whose ``module_ports`` was edited in code (3, '2', True) was read by
topologies.optic_modules.module_ports as it was: the bill of materials grouped
superpod:sus=1's optics three a module (357 modules), '2' counted as 2; only
``validate`` refused it. ``bill_of_materials(5)`` and ``module_count(5)`` raised
AttributeError, ``ends_held(5, 10, 3)`` KeyError. Now each is refused as the schema
refuses it (module_ports reads the attribute through the schema's check), or naming the
parameter.

(i) ``blast_radius(..., "prefill", context=5)`` (and ``build_cluster``) ran the prefill at
its default prompt, ignoring the context a prefill never reads, where ``evaluate`` and
``search`` refuse it (docs/api.md). The rule moved from netmodel.api to
compute.phases.refuse_unread_tokens, which both use.

(j) The spare-pool functions took what they should refuse: ``spare_curve(c, "pod",
counts=[1.5])`` solved 1 spare and said 4.7% (1.5 of 32), ``counts=range(10**9)`` ran on (each a
closed-form solve, about a millisecond), ``spares_needed(c, threshold=nan)`` answered 0,
``reliability_summary(quantile=nan)`` ran; a cluster of 5 (``spare_curve``,
``spares_needed``, ``reliability_summary``) or a search of 5 (``build_cluster``) raised
AttributeError. Now each count must be a whole number >= 0 (a pool may exceed the
cluster: one that replaces a whole cluster's failure), at most NETMODEL_MAX_SPARE_COUNTS
(10,000) counted before any is solved, and the shares and objects are checked, naming
the parameter.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import netmodel
from compute.die_yield import MAX_CURVE_AREAS, yield_curve
from compute.errors import UserError
from tests.netmodel.cli_helpers import ROOT, one_line_error, run_cli
from topologies.inventory import bill_of_materials

SCENARIO = (ROOT / "netmodel/data/scenarios/h100-dgx.toml").read_text().replace(
    'name = "h100-dgx"', 'name = "mine"')
PORTS_RULE = "1 or 2 (the optical cable ends one pluggable module serves)"


def test_yield_curve_counts_its_areas_before_any_array():
    view = np.broadcast_to(814e-6, (10**5, 10**5))   # 10^10 areas in no memory
    with pytest.raises(UserError, match=r"^yield_curve: about 10,000,000,000 die areas, "
                                        r"over the limit of 1,000,000; give fewer areas "
                                        r"\(each about 80 us\), or raise "
                                        r"NETMODEL_MAX_YIELD_AREAS$"):
        yield_curve(view)
    assert MAX_CURVE_AREAS == 1_000_000


def test_yield_curve_limit_is_settable(monkeypatch):
    monkeypatch.setenv("NETMODEL_MAX_YIELD_AREAS", "1")
    assert yield_curve([814e-6])["sms_physical"].tolist() == [144]   # 144 SMs, as an H100
    with pytest.raises(UserError, match="about 2 die areas, over the limit of 1"):
        yield_curve([814e-6, 203.5e-6])
    with pytest.raises(UserError, match=r"^die area must be numbers"):   # ragged: named
        yield_curve([[1e-4], [2e-4, 3e-4]])


@pytest.mark.parametrize("ports", [2, np.int64(2), "2.0"])   # a float in code: refused (h741)
def test_module_ports_a_whole_number_is_read_as_it(ports):
    g = netmodel.build_fabric("superpod", {"sus": 1, "module_ports": ports})
    assert g.graph["module_ports"] == 2 and type(g.graph["module_ports"]) is int
    # one SU: 1,008 optical cable ends in 508 twin-port modules (a leaf's 31st GPU port alone)
    b = bill_of_materials(g)
    assert (b.pluggable_transceivers, b.pluggable_ends, b.module_ports) == (508, 1008, 2)
    single = netmodel.build_fabric("superpod", {"sus": 1, "module_ports": np.int64(1)})
    assert "module_ports" not in single.graph
    with pytest.raises(UserError, match=r"superpod: module_ports must be a whole number "
                                        r"\(an int\), got 2\.0"):
        netmodel.build_fabric("superpod", {"sus": 1, "module_ports": np.float64(2.0)})
    assert bill_of_materials(single).pluggable_transceivers == 1008


@pytest.mark.parametrize("ports, shown", [(2.5, "2.5"), (True, "True"), (math.nan, "nan"),
                                          (0, "0"), (3.0, "3.0"), ("two", "'two'")])
def test_module_ports_other_values_still_refused(ports, shown):
    with pytest.raises(UserError, match=r"^superpod: module_ports must be "):
        netmodel.build_fabric("superpod", {"sus": 1, "module_ports": ports})
    try:
        netmodel.build_fabric("superpod", {"sus": 1, "module_ports": ports})
    except UserError as exc:
        assert str(exc).endswith(f"got {shown}")


def test_a_scenario_files_module_ports_2_0_is_2(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO.replace("module_ports = 2 ", "module_ports = 2.0 "))
    assert netmodel.build_fabric(path).graph["module_ports"] == 2
    path.write_text(SCENARIO.replace("module_ports = 2 ", "module_ports = 2.5 "))
    with pytest.raises(UserError, match=rf"\[fabric\]: rail-optimized: module_ports must be "
                                        rf"{PORTS_RULE.replace('(', '.').replace(')', '.')}, "
                                        rf"got 2.5"):
        netmodel.build_fabric(path)


def _fabric_json(tmp_path, medium):
    """ring:n=8 saved as JSON, its first edge's medium ``medium``."""
    path = tmp_path / "f.json"
    assert run_cli(["topology", "export", "ring:n=8", "-o", path]).exit_code == 0
    path.write_text(path.read_text().replace('"medium": "copper"', f'"medium": "{medium}"', 1))
    return path


AVAIL = ["--scenario", "h100-dgx", "--model", "Llama-3-8B", "--max-batch", "8"]


@pytest.mark.parametrize("argv, line", [
    (["yield", "--area", "814", "--model", "p\u043eisson"],
     "error: unknown yield model 'p\u043eisson'; did you mean 'poisson'? (it has '\u043e', "
     "U+043E CYRILLIC SMALL LETTER O); known: 'murphy', 'negative-binomial', 'poisson'"),
    (["blast-radius", *AVAIL, "--spare-placement", "gr\u043eup"],
     "error: --spare-placement 'gr\u043eup': unknown spare placement 'gr\u043eup'; did you "
     "mean 'group'? (it has '\u043e', U+043E CYRILLIC SMALL LETTER O); known: 'global', "
     "'group', 'pod'"),
    (["cost", *AVAIL, "--phase", "b\u043eth"],
     "error: --phase 'b\u043eth': unknown phase 'b\u043eth'; did you mean 'both'? (it has "
     "'\u043e', U+043E CYRILLIC SMALL LETTER O); known: 'decode', 'prefill' or 'both'"),
    (["topology", "show", "ring:n=4,medium=c\u043epper"],
     "error: fabric 'ring:n=4,medium=c\u043epper': ring: medium 'c\u043epper' is not a known "
     "medium; did you mean 'copper'? (it has '\u043e', U+043E CYRILLIC SMALL LETTER O); "
     "known: 'board', 'co-packaged-optics', 'copper', 'fibre', 'on-package', "
     "'pluggable-optics'"),
])
def test_lookalike_choices_are_asked_about(argv, line):
    r = run_cli(argv)
    assert one_line_error(r) == line


def test_a_saved_fabrics_medium_in_lookalike_letters_is_asked_about(tmp_path):
    path = _fabric_json(tmp_path, "c\u043epper")
    one_line_error(run_cli(["topology", "show", path]),
                   f"{path}: invalid fabric graph: edge 'gpu0'-'gpu7' medium 'c\u043epper' is "
                   f"not one of 'board', ", "'pluggable-optics'; did you mean 'copper'? (it has "
                   "'\u043e', U+043E CYRILLIC SMALL LETTER O)")
    line = one_line_error(run_cli(["topology", "show", _fabric_json(tmp_path, "Copper")]))
    assert line.endswith("'pluggable-optics'")   # a case apart is no look-alike: the list


def test_a_scenario_files_medium_in_lookalike_letters_is_asked_about(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO.replace('"pluggable-optics"', '"pluggable-\u043eptics"'))
    one_line_error(run_cli(["cost", "--scenario", path, "--model", "Llama-3-8B",
                            "--max-batch", "8"]),
                   "[fabric]: rail-optimized: medium 'pluggable-\u043eptics' is not a known "
                   "medium; did you mean 'pluggable-optics'? (it has")


@pytest.mark.parametrize("call, start", [
    (lambda: netmodel.search("Llama-3-8B", "H100-SXM", "decode", parallelism="\u0430ll"),
     "parallelism '\u0430ll' is unknown; did you mean 'all'? (it has '\u0430', U+0430 "
     "CYRILLIC SMALL LETTER A); known: 'all', 'auto', 'tp'"),
    (lambda: netmodel.sweep(["h100-dgx"], ["adjust.hop_latency=1us,2us"], ["Llama-3-8B"],
                            ["decode"], parallelism="\u0430uto", max_batch=8),
     "parallelism '\u0430uto' is unknown; did you mean 'auto'? (it has"),
    (lambda: __import__("netmodel.study.reliability_spares", fromlist=["x"]).check_placement(
        "p\u043ed"), "unknown spare placement 'p\u043ed'; did you mean 'pod'? (it has"),
    (lambda: __import__("compute.die_yield", fromlist=["x"]).die_cost(
        814e-6, model="p\u043eisson"),
     "unknown yield model 'p\u043eisson'; did you mean 'poisson'? (it has"),
    (lambda: __import__("compute.phases", fromlist=["x"]).check_phase("b\u043eth", both=True),
     "unknown phase 'b\u043eth'; did you mean 'both'? (it has"),
    (lambda: netmodel.build_fabric("ring", {"n": 4, "medium": "c\u043epper"}),
     "ring: medium 'c\u043epper' is not a known medium; did you mean 'copper'? (it has"),
])
def test_library_lookalike_choices_are_asked_about(call, start):
    with pytest.raises(UserError) as exc:
        call()
    assert str(exc.value).startswith(start), str(exc.value)


def test_phase_both_not_suggested_where_both_is_not_taken():
    from compute.phases import check_phase

    with pytest.raises(UserError) as exc:
        check_phase("b\u043eth")
    assert str(exc.value) == "unknown phase 'b\u043eth'; known: 'decode', 'prefill'"


SWEEP = ["sweep", "--scenarios", "h100-dgx", "-q", "--no-plot", "--models", "Llama-3-8B",
         "--max-batch", "8"]


def test_a_sweep_of_no_buildable_point_names_its_param(tmp_path):
    r = run_cli([*SWEEP, "--param", "fabric.module_ports=3,4", "--out", tmp_path / "o"])
    assert one_line_error(r) == (
        f"error: --param 'fabric.module_ports=3,4': no point of the sweep can be built: "
        f"rail-optimized: module_ports must be {PORTS_RULE}, got 3 (at every value of "
        f"fabric.module_ports)")
    assert not (tmp_path / "o").exists()


def test_the_seeds_bound_is_the_librarys():
    from netmodel.study.availability import availability
    from netmodel.study.availability_mc import MAX_SEED

    assert MAX_SEED == 2**63 - 1
    kw = dict(max_batch=8, trials=5, horizon="1h")
    with pytest.raises(UserError, match=r"^seed must be a whole number from 0 to 2\*\*63 - 1, "
                                        r"got an integer of 20 digits$"):
        availability("h100-dgx", "Llama-3-8B", seed=2**64, **kw)
    with pytest.raises(UserError, match=r"^seed must be a whole number from 0 to 2\*\*63 - 1, "
                                        r"got -1$"):
        availability("h100-dgx", "Llama-3-8B", seed=-1, **kw)
    assert availability("h100-dgx", "Llama-3-8B", seed=MAX_SEED, **kw).mc.seed == MAX_SEED
    one_line_error(run_cli(["availability", "--scenario", "h100-dgx", "--model", "Llama-3-8B",
                            "--max-batch", "8", "-q", "--trials", "5", "--horizon", "1h",
                            "--seed", str(2**63)]),
                   f"--seed '{2**63}' must be a whole number from 0 to 2**63 - 1")


@pytest.mark.parametrize("field, value, said", [
    ("links", "as_built", "links 'as_built' is unknown; known: 'as-built', 'scale-up'"),
    ("calibration", "x", "calibration 'x' is unknown; known: 'default', 'ideal'"),
    ("instances", "\u0430ll", "instances '\u0430ll' is unknown; did you mean 'all'? (it has "
                              "'\u0430', U+0430 CYRILLIC SMALL LETTER A); known: 'all', "
                              "'alone'"),
    ("instances", None, "instances None is unknown; known: 'all', 'alone'"),
    ("circuits", "x", "circuits 'x' is unknown; known: 'best', 'ring', 'torus'"),
    ("adjust", 5, "adjust must be a netmodel.study.scenarios.Adjust, got 5"),
    ("fabric", {}, "fabric must be a table naming its builder ({'builder': 'fat-tree', "
                   "'k': 8}), or graph a fabric graph, got {}"),
    ("fabric", 5, "fabric must be a table naming its builder"),
])
def test_a_scenario_made_in_code_is_checked_as_a_file_is(field, value, said):
    import dataclasses

    s = netmodel.get_scenario("h100-dgx")
    with pytest.raises(UserError) as exc:
        dataclasses.replace(s, **{field: value})
    assert str(exc.value).startswith(f"scenario 'h100-dgx': {said}"), str(exc.value)


def test_a_scenario_made_in_code_keeps_its_choices_read_as_a_files():
    import dataclasses

    s = dataclasses.replace(netmodel.get_scenario("h100-dgx"), links=" scale-up ",
                            instances="all")
    assert (s.links, s.instances, s.calibration) == ("scale-up", "all", "default")


@pytest.mark.parametrize("name, said", [
    ("", "Scenario: name must be non-empty text, got ''"),
    ("a\nb", "Scenario: name 'a\\nb' holds a control character"),
    (5, "Scenario: name must be text of at most 2,000 characters, got 5"),
])
def test_a_scenario_made_in_code_has_a_name_on_one_line(name, said):
    import dataclasses

    with pytest.raises(UserError) as exc:
        dataclasses.replace(netmodel.get_scenario("h100-dgx"), name=name)
    assert str(exc.value).startswith(said), str(exc.value)
    with pytest.raises(UserError, match=r"^scenario 'h100-dgx': description must be text"):
        dataclasses.replace(netmodel.get_scenario("h100-dgx"), description=5)


LLAMA_CONFIG = {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
                "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
                "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256}


@pytest.mark.parametrize("key, value, said", [
    ("torch_dtype", "bflo\u0430t16",
     "torch_dtype 'bflo\u0430t16' is unknown; did you mean 'bfloat16'? (it has '\u0430', "
     "U+0430 CYRILLIC SMALL LETTER A); known: 'bfloat16', "),
    ("torch_dtype", "torch.bflo\u0430t16", "did you mean 'bfloat16'? (it has"),
    ("position_embedding_type", "r\u043epe",
     "position_embedding_type 'r\u043epe' is unknown; did you mean 'rope'? (it has "
     "'\u043e', U+043E CYRILLIC SMALL LETTER O); known: "),
])
def test_hf_config_lookalike_choices_are_asked_about(tmp_path, key, value, said):
    import json

    path = tmp_path / "config.json"
    path.write_text(json.dumps({**LLAMA_CONFIG, key: value}))
    one_line_error(run_cli(["models", "--hf-config", path]), said)
    path.write_text(json.dumps({**LLAMA_CONFIG, "torch_dtype": "bfloat16"}))
    assert run_cli(["models", "--hf-config", path]).exit_code == 0


def test_a_scenario_files_builder_in_lookalike_letters_is_asked_about(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO.replace('"rail-optimized"', '"r\u0430il-optimized"'))
    one_line_error(run_cli(["cost", "--scenario", path, "--model", "Llama-3-8B",
                            "--max-batch", "8"]),
                   "[fabric] needs 'builder' naming a fabric builder, got 'r\u0430il-optimized'; "
                   "did you mean 'rail-optimized'? (it has '\u0430', U+0430 CYRILLIC SMALL "
                   "LETTER A); known: 'fat-tree', ")


def test_power_state_and_table_format_in_lookalike_letters_are_asked_about():
    from compute.evaluate_one import evaluate
    from compute.power import gpu_power
    from netmodel.study.collective_report import cost_table
    from netmodel.study.collective_setup import collective_setup

    step = evaluate("Llama-3-8B", "Lite", 1, 4, "prefill")
    with pytest.raises(UserError, match=r"^unknown power state 'pr\u0435fill'; did you mean "
                                        r"'prefill'\? \(it has"):
        gpu_power("Lite", "pr\u0435fill", step)
    assert gpu_power("Lite", " prefill ", step) == gpu_power("Lite", "prefill", step)
    t = cost_table(collective_setup(fabric="single-switch:n=8"), ["all-reduce"], [1024.0], [2])
    with pytest.raises(UserError, match=r"^fmt: unknown table format 'j\u0455on'; did you mean "
                                        r"'json'\? \(it has"):
        t.table("j\u0455on")
    assert t.table(" csv ") == t.table("csv")


def test_a_name_from_a_users_file_in_lookalike_letters_is_asked_about(tmp_path):
    gpus = tmp_path / "g.toml"
    gpus.write_text('[gpu."Mine-X"]\nderive_from = "H100-SXM"\nfraction = 1\n'
                    'source = "what-if: mine"\n')
    argv = ["infer", "--model", "Llama-3-8B", "--gpu-file", gpus, "--tp", "1", "--batch", "1"]
    one_line_error(run_cli([*argv, "--gpu", "Mine\u2011X"]),
                   "unknown GPU 'Mine\u2011X'; did you mean 'Mine-X'? (it has '\u2011', U+2011 "
                   "NON-BREAKING HYPHEN); known: ")
    assert run_cli([*argv, "--gpu", "mine-x"]).exit_code == 0   # case aside, as --gpu reads


@pytest.mark.parametrize("ports, shown", [(3, "must be 1 or 2 (the optical cable ends one "
                                              "pluggable module serves), got 3"),
                                          ("2", "must be a whole number, got '2'"),
                                          (True, "must be a whole number, got True")])
def test_module_ports_edited_in_code_is_refused_where_it_is_read(ports, shown):
    from topologies import superpod
    from topologies.optic_modules import module_count, module_ports, optical_modules

    g = superpod(1)
    g.graph["module_ports"] = ports
    said = f"invalid fabric graph: graph attribute 'module_ports' {shown}"
    for read in (module_ports, module_count, optical_modules, bill_of_materials):
        with pytest.raises(UserError) as exc:
            read(g)
        assert str(exc.value) == said


def test_optics_functions_name_a_graph_that_is_not_one():
    from topologies.optic_modules import ends_held, module_count

    for read in (bill_of_materials, module_count):
        with pytest.raises(UserError, match=r"^graph must be a networkx Graph \(a fabric from "
                                            r"build or read_graph\), got 5$"):
            read(5)
    with pytest.raises(UserError) as exc:
        ends_held(5, 10, 3)
    assert str(exc.value) == f"ports must be {PORTS_RULE}, got 3"
    assert ends_held(508, 1008, 2) == "twin-port modules holding 1,008 optical cable ends"


def test_a_reliability_cluster_refuses_the_tokens_its_phase_never_reads():
    from netmodel.study.blast_radius import blast_radius
    from netmodel.study.reliability_cluster import build_cluster

    with pytest.raises(UserError, match=r"^context 5 sets a decode step's context \(the tokens "
                                        r"in the KV cache\); with phase 'prefill' give prompt"):
        blast_radius("h100-dgx", "Llama-3-8B", "prefill", context=5, max_batch=8)
    with pytest.raises(UserError, match=r"^prompt 100 sets a prefill's prompt; with phase "
                                        r"'decode' give context"):
        build_cluster("h100-dgx", "Llama-3-8B", "decode", prompt=100, max_batch=8)
    with pytest.raises(UserError, match=r"^context 5 sets a decode step's context"):   # as ever
        netmodel.evaluate("Llama-3-8B", "H100-SXM", "prefill", tp=1, batch=1, context=5)


@pytest.fixture(scope="module")
def cluster():
    from netmodel.study.reliability_cluster import build_cluster

    return build_cluster("h100-dgx", "Llama-3-8B", max_batch=8)


@pytest.mark.parametrize("counts, said", [
    ([-1], "counts must be whole numbers of spares >= 0, got -1"),
    ([1.5], "counts must be whole numbers of spares >= 0, got 1.5"),
    ([True], "counts must be whole numbers of spares >= 0, got True"),
    (range(10**9), "spare_curve: about 1,000,000,000 spare counts, over the limit of 10,000; "
                   "give fewer counts (each a closed-form solve), or raise "
                   "NETMODEL_MAX_SPARE_COUNTS"),
    ((n for n in range(10**9)), "spare_curve: about 10,001 spare counts, over the limit"),
    ("0,8", "counts must be a list of spare counts, got '0,8'"),
])
def test_spare_curve_reads_its_counts_as_spares(cluster, counts, said):
    from netmodel.study.availability import spare_curve

    with pytest.raises(UserError) as exc:
        spare_curve(cluster, "pod", counts=counts)
    assert str(exc.value).startswith(said), str(exc.value)
    pct, _, _ = spare_curve(cluster, "pod", counts=[0, 8, 64])   # a pool past the cluster
    assert pct.tolist() == [0.0, 25.0, 200.0]   # of its 32 GPUs


def test_spare_pool_functions_check_their_shares_and_objects(cluster):
    from netmodel.study.availability import spare_curve, spares_needed
    from netmodel.study.reliability_cluster import build_cluster
    from netmodel.study.reliability_summary import reliability_summary

    with pytest.raises(UserError, match=r"^capacity threshold must be a share in \(0, 1\], "
                                        r"got nan$"):
        spares_needed(cluster, threshold=math.nan)
    with pytest.raises(UserError, match=r"^quantile \(the share of the time at or above the "
                                        r"threshold\) must be a share in \(0, 1\], got nan$"):
        reliability_summary(None, None, cluster=cluster, method="analytic", quantile=math.nan)
    for call in (lambda: spare_curve(5, "pod"), lambda: spares_needed(5)):
        with pytest.raises(UserError, match=r"^cluster must be a netmodel.study."
                                            r"reliability_cluster.Cluster \(e.g. "
                                            r"build_cluster\(scenario, model\)\), got 5$"):
            call()
    with pytest.raises(UserError, match=r"^search must be a netmodel.study.fabric_search."
                                        r"FabricSearch"):
        build_cluster("h100-dgx", "Llama-3-8B", search=5, max_batch=8)
