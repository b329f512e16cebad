"""Hostile round 21 (scripts/hostile_round21.py): a number typed in another spelling and
options each fine alone but wrong together.

Found wrong, each checked here:

(a) infer and search refused a degree in the library's words alone: ``--tp 1e3`` said
``TP degree 1000 does not divide ...``, ``--ep 5.0`` ``EP degree 5 needs ...``, no word of
the flag nor of the text typed; ``--attention-dp 5`` in search ``no configuration to
search: ...``. Now the flag and the text as typed come first.

(b) A degree that does not divide TP (``--attention-dp 3``, ``--ep 3`` at TP 8) said so
but not which do. Now ``allowed: 1, 2, 4, 8 (the divisors of TP 8)``.

(c) ``--two-batch-overlap`` with ``--pp 2`` or with ``--profile`` named neither flag nor
the profile; now ``--pp '2': ...`` and ``(--two-batch-overlap with profile '...': drop one
of them)``.

(d) ``yield --sms 1000000000/1`` named ``sms_physical``, a library parameter; now
``--sms '1000000000/1': ...``.

(e) ``serve --workload`` of requests past the model's context said ``decode with a context
of 100013 tokens exceeds ...; use a shorter context``: serve has no context option, and the
file was not named. Now the file, its prompt and output, and the most they may add to.

(f) infer and search of a step past the model's context (a config.json whose
``max_position_embeddings`` is below the default context of 1,513 tokens, or ``--prompt
2e3``) said ``decode with a context of 1513 tokens exceeds ...``, no flag; now ``--context
'1513': ...`` (the default, where not typed: the flag to change) or ``--prompt '2e3': ...``.

(g) One collective algorithm asked for where it cannot run said ``no algorithm can run
all-reduce on this group of 8 GPUs (torus: ...)``: not which flag or file asked for it.
Now ``--algorithm 'torus': ...; give --algorithm auto ...``, and a scenario's own
``[collective] algorithm`` is named with the scenario and what to give instead (every
command that costs it: infer, compare, cost, serve, collective, costs).

(h) ``availability --spare-placement group`` with no spares (``--spares`` left out, 0,
0%) ran as without it, exit 0: the option dropped without a word. Now refused, naming both
flags; with spares (1, 1%) it runs.

(i) ``--model-file`` beside ``--hf-config`` was dropped without a word (a file that did not
exist too), and ``--gpu-file`` beside ``--fabric ring:n=8`` costed the catalog's H100-SXM
where the file defines another GPU (``--scenario`` takes the file's). Both refused now,
the second told how to build the fabric of the file's GPU (``gpu=FILE`` in the spec); with
``--gpu Mine`` of the file the refusal told to write ``gpu=Mine`` in the spec, which the
spec refuses (``unknown GPU 'Mine'``): now ``gpu=FILE`` there too.

(j) ``sweep --scheduler http://127.0.0.1:9`` (a scheme Dask lacks), ``inproc://x`` (a
scheduler in another process) and ``ucx://...`` (no UCX package) said one line, then hung
20 s at exit and printed a traceback (``Exception ignored in Client.__del__ ...
TimeoutError``): dask.Client had half-started. Now the scheme's own connect is tried first
(netmodel.study.distributed._probe_comm): one line, at once, the last two saying why;
so for ``tls://`` at a listener with no TLS settings in Dask's config (the same hang), and
``ws://`` at a web server, which the first probe made a traceback (tornado's
WebSocketError): ``Non-websocket response``.

(k) ``--tbt 50μs`` with the Greek small letter mu (U+03BC, which Unicode folds the micro
sign to) was ``unknown unit 'μs' (allowed: s, ms, us, µs, ns, ps)``: the allowed one looks
the same. Now read as the micro sign's (compute.units.parse_quantity), wherever a time
takes a unit.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.netmodel.cli_helpers import one_line_error, run_cli

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "hostile_round21.py"


def _load():
    spec = importlib.util.spec_from_file_location("hostile_round21", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


H21 = _load()
INFER = ["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--batch", "4"]
SERVE = ["serve", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--max-batch", "8"]


@pytest.mark.parametrize("name", sorted(H21.REFUSALS))
def test_each_refusal_of_the_round(name, tmp_path):
    argv, files, words = H21.REFUSALS[name]
    _, run = H21.refusal_case(name, argv, files, words)
    assert run(tmp_path) is None


def test_a_degree_typed_as_1e3_is_named_by_its_flag():
    line = one_line_error(run_cli([*INFER, "--tp", "1e3"]))
    assert line == ("error: --tp '1e3': TP degree 1000 does not divide the 32 attention heads "
                    "of Llama-3-8B; allowed: 1, 2, 4, 8 (up to this GPU's largest instance, 8)")


def test_attention_dp_not_dividing_tp_lists_the_divisors():
    line = one_line_error(run_cli(["infer", "--model", "DeepSeek-V3", "--gpu", "H200-SXM",
                                   "--batch", "16", "--tp", "8", "--attention-dp", "3"]))
    assert line == ("error: --attention-dp '3': attention DP degree 3 does not divide TP "
                    "degree 8; allowed: 1, 2, 4, 8 (the divisors of TP 8)")


def test_two_batch_overlap_with_a_profile_names_both():
    line = one_line_error(run_cli([*INFER, "--tp", "1", "--two-batch-overlap", "--profile",
                                   "vllm-dgx-h100"]))
    assert line == ("error: two-batch overlap is modelled on the roofline; give no profile "
                    "(--two-batch-overlap with profile 'vllm-dgx-h100', the calibrated mode: "
                    "drop one of them)")


def test_yield_sms_past_the_limit_is_said_with_the_flag():
    line = one_line_error(run_cli(["yield", "--area", "814", "--sms", "1000000000/1"]))
    assert line == ("error: --sms '1000000000/1': sms_physical must be a whole number from 1 "
                    "to 100,000, got 1000000000")


def test_serve_workload_past_the_context_names_the_file_and_its_numbers(tmp_path):
    (tmp_path / "w.toml").write_text("prompt = 8000\noutput = 500\n")
    line = one_line_error(run_cli([*SERVE, "--workload", "w.toml"], cwd=tmp_path))
    assert line == ("error: --workload 'w.toml': workload 'w': prompt 8000 + output 500 "
                    "tokens is a context of 8500, past Llama-3-8B's max_context of 8192 "
                    "tokens; allowed: prompt + output up to 8192 (a shorter workload, or a "
                    "model file with a larger max_context)")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.toml"]


def test_serve_workload_of_one_output_token_at_the_context_runs(tmp_path):
    """One output token is the prefill's: the context is the prompt alone (8192 fits)."""
    (tmp_path / "w.toml").write_text("prompt = 8192\noutput = 1\n")
    r = run_cli([*SERVE, "--workload", "w.toml"], cwd=tmp_path)
    assert r.exit_code == 0, r.output


def test_a_default_context_past_the_model_names_the_flag(tmp_path):
    (tmp_path / "config.json").write_text(H21.HF_1024)
    line = one_line_error(run_cli(["infer", "--hf-config", "config.json", "--gpu", "H100-SXM",
                                   "--tp", "1", "--batch", "1"], cwd=tmp_path))
    assert line == ("error: --context '1513' (its default): decode with a context of 1513 tokens exceeds "
                    "config's max_context of 1,024 tokens; use a shorter context, or a model "
                    "file with a larger max_context")


def test_a_scenario_algorithm_that_cannot_run_names_the_scenario(tmp_path):
    (tmp_path / "s.toml").write_text(H21.OCS_TORUS)
    line = one_line_error(run_cli(["infer", "--model", "Llama-3-8B", "--batch", "4", "--tp",
                                   "2", "--scenario", "s.toml"], cwd=tmp_path))
    assert line.startswith("error: scenario 'lite-ocs@Lite' runs every collective with "
                           "algorithm 'torus', which cannot run all-gather on an instance of "
                           "2 GPUs (torus: torus needs a torus fabric")
    assert line.endswith('give the scenario\'s [collective] algorithm = "auto" (the fastest '
                         'valid one per op and size) or one that runs on its fabric')


def test_a_spare_placement_without_spares_is_refused(tmp_path):
    line = one_line_error(run_cli([*H21.AVAIL, "--spare-placement", "group", "--out", "o"],
                                  cwd=tmp_path))
    assert line == ("error: --spare-placement 'group' places the spare GPUs; --spares '0' "
                    "holds none: give --spares N or P% (e.g. 2%), or drop --spare-placement")
    assert list(tmp_path.iterdir()) == []


def test_a_gpu_file_beside_a_fabric_of_another_gpu_is_refused(tmp_path):
    (tmp_path / "g.toml").write_text(H21.GPU_FILE)
    line = one_line_error(run_cli(["infer", "--model", "Llama-3-8B", "--fabric", "ring:n=8",
                                   "--gpu-file", "g.toml", "--tp", "1", "--batch", "1"],
                                  cwd=tmp_path))
    assert line == ("error: --gpu-file 'g.toml' defines no GPU of the fabric's type "
                    "'H100-SXM' (it defines 'Mine'): with --fabric the GPU is the fabric's "
                    "own; build the fabric of the file's GPU with gpu=g.toml in its spec (e.g. "
                    "ring:n=8,gpu=g.toml), or drop --gpu-file")
    r = run_cli(["infer", "--model", "Llama-3-8B", "--fabric", "ring:n=8,gpu=g.toml", "--tp",
                 "1", "--batch", "1"], cwd=tmp_path)
    assert r.exit_code == 0 and "1 x Mine," in r.output, r.output


@pytest.mark.parametrize("name", sorted(H21.CHILD_REFUSALS))
def test_a_scheduler_address_of_another_scheme_is_one_line_at_once(name, tmp_path):
    pytest.importorskip("distributed")
    argv, words = H21.CHILD_REFUSALS[name]
    _, run = H21.child_refusal_case(name, argv, words)
    assert run(tmp_path) is None


def test_a_time_in_greek_mu_is_the_micro_signs():
    from compute.units import parse_time

    assert parse_time("50\u03bcs") == parse_time("50\u00b5s") == parse_time("50us") == 50e-6
    r = run_cli([*INFER, "--tp", "1", "--tbt", "50\u03bcs"])
    assert r.exit_code == 0 and "(SLO 50 us: MISSED)" in r.output, r.output
