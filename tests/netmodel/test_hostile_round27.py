"""Hostile round 27 (scripts/hostile_round27.py): the newest options and their
combinations: serve's --load/--rate at their edges and together, SLOs no cell meets, every
serve option at once; infer/search/calibrate with --scenario/--fabric and the 'bound'
network's name; the study's networks and part flags; compare --instances all --parallelism
all; options given twice; numbers in odd spellings; outputs nobody may write.

Found wrong, each checked here:

(a) ``serve --kv-ports 1_000`` (or a fullwidth digit) said the flag twice: '--kv-ports
'1_000': --kv-ports '1_000' groups its digits with '_' ...'. Now once.

(b) ``--dense-mlp-tp`` stated two ranges: '5' was 'must be 1 (SGLang's --moe-dense-tp-size
1) or unset', '0x10', 'x' or '1.5' 'must be a whole number from 1 to 1,000,000,000'. Now
the one range for each.

(c) compare's refusal of an option beside --parallelism named the library's parameter, not
the flag: ``compare --instances all --parallelism tp --dense-mlp-tp 1`` said 'dense MLP TP
1 runs beside attention DP, which parallelism 'tp' does not search; give parallelism 'auto'
or 'all'' (two of the values it quotes typed, so no flag put in front), and ``--parallelism
all --two-batch-overlap`` 'parallelism 'all' searches pipeline stages ...; give parallelism
'auto' or 'tp' with --two-batch-overlap'. Now --parallelism (compare and sweep), and the
dense refusal says to leave --dense-mlp-tp unset.

(d) ``calibrate --fabric ring:n=2`` of a TP 4 row said '... an instance of 4 GPUs does not
fit the fabric (2 GPUs)': which fabric, by which flag, unsaid. Now '... does not fit
--fabric 'ring:n=2' (2 GPUs); give a fabric of 4 GPUs or more' (and --scenario alike).

(e) The study's library took its networks as it found them: ``run_full_study(networks=
"bound")`` was 'unknown network 'b'' (a text read letter by letter), ``networks=None`` and a
list of lists raised TypeError; ``run_lite_gpu_study(network="bound")`` (no comm_factory)
costed the ring and labelled its rows 'bound' (Llama-3-8B decode on 4 Lite GPUs 87.06
tokens/s/SM where the bound gives 92.87), any label alike. Now a network named without a
factory is costed as that network, a name of none is refused, and ``networks`` must be a
list of names.

(f) A ``NETMODEL_MAX_*`` setting past the 30 digits read (32 nines) was refused as 'must be
a whole number >= 1 (default 20,000)', a range it is in. Now 'from 1 to 1e30', below the
range and above it alike.

(g) A choice typed in letters that print as one of its values (a Cyrillic 'а' in 'аll', a
fullwidth 'ｆ' in 'fp8', a Cyrillic 'і' in 'ring') was refused as unknown beside a list
that shows it: 'unknown network 'bоund'; known: 'bound', 'ideal', 'ring'', '--instances
'аll' is not allowed; allowed: 'all', 'alone'', ''аll' is not one of 'auto', 'tp', 'all''.
Round 26 asked 'did you mean ...?' of catalog names only; now of --networks, --instances,
--phases, --parallelism and every click choice (--format, --repair), --mode,
--compute-dtype, a collective's operation, --algorithm, --placement, a fabric's builder
or scenario, --share.

(h) An option given twice, its second value '--' (``--max-batch 8 --max-batch --``, which
click reads as the value '--'), was refused as '--max-batch is given twice ('8' and '')':
the '--' taken for the end of the options. Now ''8' and '--''.

(i) ``serve --tp-only --dense-mlp-tp 1`` of DeepSeek-V3 was refused as 'dense MLP TP 1 runs
beside attention DP; no configuration searched has it (give attention DP > 1, or leave
--dense-mlp-tp unset)': serve has no attention-DP option; its pools search attention DP
unless --tp-only. Now '... which --tp-only does not search (plain tensor parallelism):
drop --tp-only or leave --dense-mlp-tp unset'.

(j) ``--profile`` with ``--flops-efficiency`` or ``--memory-efficiency`` (infer, search,
compare) was 'give a profile or flops/memory efficiency factors, not both': no flag, no
value. Now 'give profile 'vllm-dgx-h100' or efficiency factors (--flops-efficiency 0.5),
not both: ...' (the library names its parameters, flops_efficiency).

(k) ``infer``/``search --mtp-tokens 1 --pp 2`` was 'MTP decode models one pipeline stage;
got PP 2; allowed: PP 1', no flag, where two-batch overlap's same refusal is said with
--pp. Now '--pp '2': MTP decode models ...'.

(l) As (g), a file's choice (compute.validate.choice: a scenario's [collective] placement,
circuits, links, calibration; a model file's norm) in lookalike letters: 'placement
'cоntiguous' is unknown; known: 'contiguous', ...'. Now asked about too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from compute.errors import UserError
from tests.netmodel.cli_helpers import ROOT, one_line_error, run_cli

SHIPPED_CSV = ROOT / "compute/data/vllm_h100_2024_measurements.csv"
KV = ["serve", "--scenario", "lite-ocs", "--model", "Llama-3-8B", "--max-batch", "8",
      "--tp-only"]
DSV3 = ["serve", "--scenario", "h100-dgx", "--model", "DeepSeek-V3", "--max-batch", "8"]
COMPARE = ["compare", "--models", "DeepSeek-V3", "--max-batch", "8", "-q", "--no-plot",
           "--scenarios", "lite-ocs"]
SWEEP = ["sweep", "--scenarios", "lite-ocs", "-q", "--no-plot", "--models", "DeepSeek-V3",
         "--max-batch", "8", "--param", "adjust.hop_latency=1us"]


@pytest.mark.parametrize("typed, said", [
    ("1_000", "error: --kv-ports '1_000' groups its digits with '_'; write 1000"),
    ("\uff11", "error: --kv-ports '\uff11' has the digit '\uff11' (FULLWIDTH DIGIT ONE)"),
])
def test_kv_ports_in_an_odd_spelling_names_its_flag_once(typed, said):
    line = one_line_error(run_cli([*KV, "--kv-ports", typed]))
    assert line.startswith(said) and line.count("--kv-ports") == 1, line


@pytest.mark.parametrize("typed, got", [
    ("5", "5"), ("0x10", "'0x10'"), ("x", "'x'"), ("1.5", "'1.5'"), ("nan", "'nan'"),
    ("0", "0"), ("1e400", "an integer of 401 digits"),
])
def test_dense_mlp_tp_states_one_range(typed, got):
    line = one_line_error(run_cli([*DSV3, "--dense-mlp-tp", typed]))
    assert line == (f"error: dense MLP TP degree (--dense-mlp-tp) must be 1 (SGLang's "
                    f"--moe-dense-tp-size 1) or unset (the stage's TP), got {got}"), line


@pytest.mark.parametrize("base", [COMPARE, SWEEP])
@pytest.mark.parametrize("extra, line", [
    (["--instances", "all", "--parallelism", "tp", "--dense-mlp-tp", "1"],
     "error: dense MLP TP 1 runs beside attention DP, which --parallelism 'tp' does not "
     "search; give --parallelism 'auto' or 'all', or leave --dense-mlp-tp unset"),
    (["--parallelism", "all", "--two-batch-overlap"],
     "error: --parallelism 'all' searches pipeline stages, which two-batch overlap does not "
     "model (one stage); give --parallelism 'auto' or 'tp' with --two-batch-overlap"),
    (["--instances", "all", "--parallelism", "all", "--mtp-tokens", "1", "--phases",
      "decode"],
     "error: --parallelism 'all' searches pipeline stages, which MTP decode does not model "
     "(one stage); give --parallelism 'auto' or 'tp' with --mtp-tokens"),
])
def test_a_refusal_beside_parallelism_names_the_flag(tmp_path, base, extra, line):
    assert one_line_error(run_cli([*base, *extra, "--out", tmp_path / "o"])) == line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("flag, ref, what", [("--fabric", "ring:n=2", "fabric"),
                                              ("--scenario", "s.toml", "scenario")])
def test_calibrate_names_the_fabric_an_instance_does_not_fit(tmp_path, flag, ref, what):
    shipped = (ROOT / "netmodel/data/scenarios/lite-ocs.toml").read_text()
    (tmp_path / "s.toml").write_text(shipped.replace('name = "lite-ocs"', 'name = "mine"')
                                     .replace("gpus = 128", "gpus = 2"))
    line = one_line_error(run_cli(["calibrate", "--measurements", SHIPPED_CSV, "-o", "p.toml",
                                   flag, ref], tmp_path))
    assert line.endswith(f"(Llama-3-70B TP 4 decode batch 8 context 96 on H100-SXM): an "
                         f"instance of 4 GPUs does not fit {flag} {ref!r} (2 GPUs); give a "
                         f"{what} of 4 GPUs or more"), line
    assert [p.name for p in tmp_path.iterdir()] == ["s.toml"]


@pytest.mark.parametrize("networks, said", [
    ("bound", "networks must be a list of the study's network names (ring, bound, ideal), "
              "got 'bound'; give ['bound']"),
    (None, "networks must be a list of the study's network names (ring, bound, ideal), got "
           "None"),
    ([["ring"]], "unknown network ['ring']; known: ring, bound, ideal"),
    (["Bounds"], "unknown network 'Bounds'; known: ring, bound, ideal"),   # 'Bound': bound
])
def test_run_full_study_networks_must_be_a_list_of_names(networks, said):
    from netmodel.study.lite_gpu import run_full_study

    with pytest.raises(UserError) as exc:
        run_full_study(["Llama-3-8B"], ["Lite"], ["decode"], networks=networks, fabric=False)
    assert str(exc.value) == said


def test_a_network_named_without_a_factory_is_costed_as_that_network():
    from netmodel.study.lite_gpu import NETWORKS, run_lite_gpu_study

    kw = dict(models=["Llama-3-8B"], gpus=["Lite"], phases=["decode"])
    named = run_lite_gpu_study(**kw, network="bound")
    bound = run_lite_gpu_study(**kw, network="bound", comm_factory=NETWORKS["bound"])
    ring = run_lite_gpu_study(**kw)
    lite = [r for r in named.rows if r.gpu == "Lite"][0]
    assert lite.network == "bound" and lite.tp == 4
    assert lite.tokens_per_s_per_sm == [r for r in bound.rows if r.gpu == "Lite"][0] \
        .tokens_per_s_per_sm
    # the ring's own figure, which 'bound' carried before: 4 Lite GPUs' rings cost more
    assert lite.tokens_per_s_per_sm > [r for r in ring.rows if r.gpu == "Lite"][0] \
        .tokens_per_s_per_sm * 1.05
    for label, said in (("custom", "network 'custom' is none of the study's networks "
                                   "(known: ring, bound, ideal)"),
                        ("", "network must be a name (non-empty text), got ''")):
        with pytest.raises(UserError, match=f"^{said}".replace("(", r"\(").replace(")", r"\)")):
            run_lite_gpu_study(**kw, network=label)


def test_nothing_written_by_the_refusals(tmp_path: Path):
    # the study refuses before its first part: no output folder made
    one_line_error(run_cli(["study", "lite-gpu", "--out", tmp_path / "o", "--networks",
                            "ring,Ideal", "--no-fabric"]), "unknown network 'Ideal'")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("value", ["9" * 32, "1e31", "0", "-0"])
def test_a_setting_past_its_range_is_told_the_one_range(tmp_path, value):
    line = one_line_error(run_cli([*COMPARE, "--out", tmp_path / "o"],
                                  env={"NETMODEL_MAX_COMPARE_SEARCHES": value}))
    assert line == (f"error: environment variable NETMODEL_MAX_COMPARE_SEARCHES={value!r} "
                    f"must be a whole number from 1 to 1e30 (default 20,000)"), line
    assert list(tmp_path.iterdir()) == []


CYR_A, CYR_E, CYR_O, CYR_I = "\u0430", "\u0435", "\u043e", "\u0456"
INFER = ["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "1", "--batch", "1"]
COLLECTIVE = ["collective", "all-reduce", "--fabric", "ring:n=8", "--group", "8", "--size",
              "1MiB"]
CMP = ["compare", "--models", "Llama-3-8B", "--max-batch", "8", "-q", "--no-plot",
       "--scenarios", "lite-ocs"]


@pytest.mark.parametrize("argv, typed, meant, odd", [
    (["study", "lite-gpu", "--out", "o", "--no-fabric", "--networks", f"b{CYR_O}und"],
     f"unknown network 'b{CYR_O}und'", "bound", "U+043E CYRILLIC SMALL LETTER O"),
    ([*CMP, "--instances", f"{CYR_A}ll"], f"--instances '{CYR_A}ll' is not allowed", "all",
     "U+0430 CYRILLIC SMALL LETTER A"),
    ([*CMP, "--parallelism", f"{CYR_A}ll"], f"'{CYR_A}ll' is not one of 'auto', 'tp', 'all'", "all",
     "U+0430"),
    ([*CMP, "--phases", f"d{CYR_E}code"], f"unknown phase 'd{CYR_E}code'", "decode",
     "U+0435 CYRILLIC SMALL LETTER IE"),
    ([*INFER, "--mode", f"{CYR_O}verlap"], f"unknown mode '{CYR_O}verlap'", "overlap", "U+043E"),
    ([*INFER, "--compute-dtype", "\uff46p8"], "unknown compute dtype '\uff46p8'", "fp8",
     "U+FF46 FULLWIDTH LATIN SMALL LETTER F"),
    (["collective", f"{CYR_A}ll-reduce", *COLLECTIVE[2:]], f"unknown collective operation "
     f"'{CYR_A}ll-reduce'", "all-reduce", "U+0430"),
    ([*COLLECTIVE, "--algorithm", f"tr{CYR_E}e"], f"unknown algorithm 'tr{CYR_E}e'", "tree", "U+0435"),
    ([*COLLECTIVE, "--placement", f"c{CYR_O}ntiguous"], f"unknown placement 'c{CYR_O}ntiguous'",
     "contiguous", "U+043E"),
    ([*COLLECTIVE[:2], "--fabric", f"r{CYR_I}ng:n=8", *COLLECTIVE[4:]], f"unknown fabric 'r{CYR_I}ng:n=8'",
     "ring", "U+0456"),
    (["topology", "export", "ring:n=8", "-o", "x.json", "--format", f"js{CYR_O}n"],
     f"'js{CYR_O}n' is not one of 'json', 'graphml', 'astra-sim'", "json", "U+043E"),
    (["cost", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--max-batch", "8", "--share",
      f"{CYR_A}s-built"], f"unknown network share '{CYR_A}s-built'", "as-built", "U+0430"),
])
def test_a_choice_in_lookalike_letters_is_asked_about(tmp_path, argv, typed, meant, odd):
    line = one_line_error(run_cli(argv, tmp_path))
    assert f"{typed}; did you mean {meant!r}? (it has " in line and odd in line, line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, flag, first", [
    (["serve", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--max-batch", "8"],
     "--max-batch", "8"),
    ([*COLLECTIVE], "--size", "1MiB"),
])
def test_a_second_value_of_dashes_is_said_as_typed(argv, flag, first):
    assert one_line_error(run_cli([*argv, flag, "--"])) == (
        f"error: {flag} is given twice ({first!r} and '--'); it takes one value: give it once")


def test_serve_says_tp_only_is_what_leaves_no_attention_dp():
    line = one_line_error(run_cli([*DSV3, "--tp-only", "--dense-mlp-tp", "1"]))
    assert line == ("error: --dense-mlp-tp 1 runs the dense MLP layers beside attention DP, "
                    "which --tp-only does not search (plain tensor parallelism): drop "
                    "--tp-only or leave --dense-mlp-tp unset"), line
    # a dense model's own refusal comes first, as without --tp-only
    one_line_error(run_cli(["serve", "--scenario", "h100-dgx", "--model", "Llama-3-8B",
                            "--max-batch", "8", "--tp-only", "--dense-mlp-tp", "1"]),
                   "Llama-3-8B has no dense MLP layers")


@pytest.mark.parametrize("command", [
    ["infer", "--model", "Llama-2-70B", "--gpu", "H100-SXM", "--tp", "8", "--batch", "4"],
    ["search", "--model", "Llama-2-70B", "--gpu", "H100-SXM", "--max-batch", "8"],
])
def test_a_profile_beside_efficiency_factors_names_them(command):
    line = one_line_error(run_cli([*command, "--profile", "vllm-dgx-h100",
                                   "--memory-efficiency", ".5", "--flops-efficiency", "0.25"]))
    assert line == ("error: give profile 'vllm-dgx-h100' or efficiency factors "
                    "(--flops-efficiency 0.25 and --memory-efficiency 0.5), not both: the "
                    "profile holds the engine's efficiencies"), line


@pytest.mark.parametrize("command, pp", [
    (["infer", "--model", "DeepSeek-V3", "--gpu", "H200-SXM", "--tp", "8", "--batch", "8"],
     "2"),
    (["search", "--model", "DeepSeek-V3", "--gpu", "H200-SXM", "--max-batch", "8"], "1,2"),
])
def test_mtp_beside_pipeline_stages_names_pp(command, pp):
    line = one_line_error(run_cli([*command, "--mtp-tokens", "1", "--pp", pp]))
    assert line == (f"error: --pp {pp!r}: MTP decode models one pipeline stage; got PP 2; "
                    f"allowed: PP 1"), line


@pytest.mark.parametrize("old, new, meant", [
    ('placement = "contiguous"', f'placement = "c{CYR_O}ntiguous"', "contiguous"),
    ('circuits = "best"', f'circuits = "b{CYR_E}st"', "best"),
])
def test_a_file_choice_in_lookalike_letters_is_asked_about(tmp_path, old, new, meant):
    shipped = (ROOT / "netmodel/data/scenarios/lite-ocs.toml").read_text()
    (tmp_path / "s.toml").write_text(shipped.replace('name = "lite-ocs"', 'name = "mine"')
                                     .replace(old, new))
    line = one_line_error(run_cli(["compare", "--models", "Llama-3-8B", "--max-batch", "8",
                                   "-q", "--no-plot", "--scenarios", "s.toml"], tmp_path))
    assert f"is unknown; did you mean {meant!r}? (it has " in line, line
    assert [p.name for p in tmp_path.iterdir()] == ["s.toml"]


@pytest.mark.parametrize("typed, meant, odd", [
    ("t\u0440", "tp", "'\u0440', U+0440 CYRILLIC SMALL LETTER ER"),
    (f"{CYR_A}ll", "all", "'\u0430', U+0430 CYRILLIC SMALL LETTER A"),
])
def test_serve_dimensions_in_lookalike_letters_are_asked_about(typed, meant, odd):
    """The serving study's search space (``serve(dimensions=...)``; the command line sets it
    only by the flag --tp-only) in look-alike letters, as every other choice: its refusal
    asks about the value it prints as (compute.validate.choice)."""
    from netmodel.study.serving import serve

    with pytest.raises(UserError) as err:
        serve("Llama-3-8B", "lite-flat", "coding", dimensions=typed, max_batch=8)
    assert str(err.value) == (f"serve: dimensions {typed!r} is unknown; did you mean "
                              f"{meant!r}? (it has {odd}); known: 'all', 'tp'")
