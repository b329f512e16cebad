"""Hostile round 16 (h502): the refusals that named the bad value by a noun rather than by
the flag, argument, file, section or key that gave it (scripts/hostile_round15.py's 36
warnings, and round 16's files: scripts/hostile_round16.py).

- a value typed for an option and quoted by a library refusal that names no flag
  (``unknown GPU 'nope'`` from ``--scenario lite-flat@nope``) is said with that flag
  (:func:`netmodel.cli.refusals.named_by_value`);
- ``topology compare`` names which of its fabrics a refusal is about;
- a scenario file's ``[collective]`` keys are refused naming the file, the section and
  the key (``s.toml: [collective]: placement 'x' is unknown``);
- ``calibrate -o ''`` names ``--out``, a fit the rows cannot carry names
  ``--measurements``;
- availability's event cap says which flags lower the work;
- a number no float holds (``1e400``) in a TOML or JSON file is said with its line, key and
  table, not only the file;
- a file that starts with two byte-order marks says so (its parser said 'invalid statement
  (at line 1, column 1)', where an editor shows nothing).
"""

from __future__ import annotations

from importlib import resources

import pytest

from compute.errors import UserError
from tests.netmodel.cli_helpers import measured_csv, one_line_error, run_cli

COST = ["cost", "--model", "Llama-3-8B", "--max-batch", "8"]


def _lite_flat() -> str:
    return resources.files("netmodel").joinpath("data/scenarios/lite-flat.toml").read_text() \
        .replace('name = "lite-flat"', 'name = "mine"')


# -- values typed for options, quoted by a refusal that names no flag -------------------------

@pytest.mark.parametrize("args, start", [
    # before: "error: unknown GPU 'nope'; known: ..." (which of the values typed?)
    (["--scenario", "lite-flat@nope"], "error: --scenario 'lite-flat@nope': unknown GPU "
                                       "'nope'; known: "),
    # before: "error: unknown scenario ''; known: ..."
    (["--scenario", "@Lite"], "error: --scenario '@Lite': unknown scenario ''; known: "),
    (["--scenario", ""], "error: --scenario '': a scenario must be a name or a .toml path"),
])
def test_cost_scenario_refusals_name_the_flag(args, start):
    r = run_cli(["cost", *args, "--model", "Llama-3-8B"])
    assert one_line_error(r).startswith(start)


def test_an_empty_model_names_its_flag():
    # before: "error: unknown model ''; known: ..."
    r = run_cli(["cost", "--scenario", "h100-dgx", "--model", ""])
    assert one_line_error(r).startswith("error: --model '': unknown model ''; known: ")


SWEEP = ["sweep", "--scenario", "h100-dgx", "--models", "Llama-3-8B", "--max-batch", "8",
         "-q", "--no-plot"]


@pytest.mark.parametrize("param, rest", [
    ("cost.nic_price=-1,2", "cost.nic_price value '-1' is outside the range a sweep takes, "
                           "from 0 to 1.599e+09USD"),
    ("cost.utilization=0.5:0.1", "sweep parameter cost.utilization range '0.5:0.1' is empty: "
                                 "HI is below LO"),
    ("cost.nic_price=1,,2", "sweep parameter cost.nic_price values '1,,2' have an empty item"),
    ("cost.lifetime=0y,5y", "cost.lifetime value '0y' is outside the range a sweep takes, "
                           "above 0 up to 5e+06year"),
])
def test_sweep_param_refusals_name_the_flag(param, rest):
    # before: the library's line alone, no --param
    line = one_line_error(run_cli([*SWEEP, "--param", param]))
    assert line.startswith(f"error: --param '{param}': {rest}")


def test_too_many_points_names_points_not_param():
    # before: "sweep parameter cost.pue: about 1,000,000,000 values ...; give fewer points"
    line = one_line_error(run_cli([*SWEEP, "--param", "cost.pue=1:2", "--points", "1e9"]))
    assert line.startswith("error: --points '1e9': sweep parameter cost.pue: about "
                           "1,000,000,000 values, over the limit of 1,000")


def test_every_gpu_failed_names_fail():
    every = ",".join(f"gpu{i}" for i in range(8))
    r = run_cli(["collective", "all-reduce", "--fabric", "ring:n=8", "--group", "8", "--size",
                 "1MiB", "--fail", every])
    # before: "error: every GPU of the fabric failed"
    assert one_line_error(r) == f"error: --fail '{every}': every GPU of the fabric failed"


@pytest.mark.parametrize("spec, rest", [
    ("ring:n=0", "ring: n must be an integer >= 2, got 0"),
    ("ring:[n=8", "spec '[n=8' has an unmatched '['"),
])
def test_topology_compare_names_the_fabric(spec, rest):
    # before: "error: ring: n must be an integer >= 2, got 0" beside ring:n=8 (which ring?)
    r = run_cli(["topology", "compare", "ring:n=8", spec])
    assert one_line_error(r) == f"error: fabric '{spec}': {rest}"


def test_named_by_value_leaves_ambiguity_and_named_flags_alone():
    from netmodel.cli.refusals import named_by_value

    # two options quote the value: which is not known, so the line stays as it is
    both = [("--gpu", "Lite"), ("--scenario", "lite-flat@Lite")]
    assert named_by_value("unknown GPU 'Lite'", both) == "unknown GPU 'Lite'"
    # a line that names a flag already
    assert named_by_value("--gpu 'x' is unknown", [("--gpu", "x")]) == "--gpu 'x' is unknown"
    # a value the line says whole already
    assert named_by_value("lite-flat@nope: bad", [("--scenario", "lite-flat@nope")]) == \
        "lite-flat@nope: bad"
    # nothing typed is quoted
    assert named_by_value("group size 9 is too large", [("--model", "Llama-3-8B")]) == \
        "group size 9 is too large"


# -- a scenario file's [collective] section -------------------------------------------------

@pytest.mark.parametrize("key, value, rest", [
    ("placement", '"nope"', "placement 'nope' is unknown; known: 'contiguous'"),
    ("links", "[]", "links [] is unknown; known: 'as-built', 'scale-up'"),
    ("calibration", '"nope"', "calibration 'nope' is unknown; known: 'default', 'ideal'"),
    ("algorithm", '"nope"', "unknown algorithm 'nope'; known: 'auto'"),
    ("algorithm", "5", "algorithm 5 is unknown; known: 'auto'"),
    ("tuner", '"bad"', "tuner 'bad' is unknown; known: "),
    ("instances", '"some"', "instances 'some' is unknown; known: "),
])
def test_collective_section_keys_name_file_section_and_key(tmp_path, key, value, rest):
    # before: "s.toml: placement 'nope' is unknown" (which table's placement?)
    lines = [ln for ln in _lite_flat().splitlines() if not ln.startswith(f"{key} =")]
    lines.insert(lines.index("[collective]") + 1, f"{key} = {value}")
    (tmp_path / "s.toml").write_text("\n".join(lines) + "\n")
    for cmd in (["cost", "--scenario", "s.toml", "--model", "Llama-3-8B", "--max-batch", "8"],
                ["collective", "all-reduce", "--scenario", "s.toml", "--group", "8",
                 "--size", "1MiB"]):
        line = one_line_error(run_cli(cmd, tmp_path))
        assert line.startswith(f"error: s.toml: [collective]: {rest}"), line


def test_ocs_circuits_key_names_the_section(tmp_path):
    text = resources.files("netmodel").joinpath("data/scenarios/lite-ocs.toml").read_text()
    text = "\n".join('circuits = "bestest"' if ln.startswith("circuits =") else ln
                     for ln in text.splitlines()).replace('name = "lite-ocs"', 'name = "m"')
    (tmp_path / "s.toml").write_text(text + "\n")
    line = one_line_error(run_cli(["cost", "--scenario", "s.toml", "--model", "Llama-3-8B"],
                                  tmp_path))
    assert line.startswith("error: s.toml: [collective]: circuits 'bestest' is unknown"), line


# -- calibrate ------------------------------------------------------------------------------

def test_calibrate_empty_out_names_the_flag(tmp_path):
    csv = measured_csv(tmp_path)
    # before: "error: profile file must not be empty" (which option?)
    r = run_cli(["calibrate", "--measurements", csv, "-o", ""], tmp_path)
    assert one_line_error(r) == "error: --out '': profile file must not be empty"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["measured.csv"]


def test_calibrate_too_few_rows_names_the_measurements(tmp_path):
    csv = tmp_path / "m.csv"
    csv.write_text("model,gpu,tp,batch,phase,prompt,context,latency_s\n"
                   "Llama-2-70B,H100-SXM,8,1,prefill,2048,,0.1368\n")
    r = run_cli(["calibrate", "--measurements", csv, "-o", tmp_path / "out.toml"], tmp_path)
    # before: "error: cannot fit 3 parameters ... to 1 measurement: ..." (which file?)
    assert one_line_error(r).startswith(
        f"error: --measurements '{csv}': cannot fit 3 parameters (gemm_efficiency, "
        f"attention_efficiency, layer_overhead_s) to 1 measurement")
    assert not (tmp_path / "out.toml").exists()


# -- availability's event cap ---------------------------------------------------------------

def test_event_cap_says_which_flags_lower_the_work(tmp_path):
    out = tmp_path / "out"
    r = run_cli(["availability", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "-q",
                 "--no-plot", "--max-batch", "8", "--trials", "100000", "--horizon", "100y",
                 "--out", out])
    # before: "...; at most 2e+07: give fewer trials or a shorter horizon" (no flag named)
    assert one_line_error(r) == (
        "error: 4.26e+07 failure events to simulate (100,000 trials); at most 2e+07: give "
        "fewer --trials or a shorter --horizon; a smaller --cluster-gpus lowers the work too")
    assert not out.exists()


# -- a number no float holds, in a file: its line, table and key ----------------------------

def test_toml_number_out_of_range_names_line_table_and_key(tmp_path):
    gpu = tmp_path / "g.toml"
    gpu.write_text('[gpu."Mine"]\nderive_from = "H100-SXM"\nsource = "test"\n'
                   "tdp_W = 1e400\n")
    r = run_cli(["infer", "--model", "Llama-3-8B", "--gpu", gpu, "--tp", "1", "--batch", "1"])
    # before: "g.toml holds the number 1e400, beyond ..." (where in the file?)
    assert one_line_error(r) == (
        f"error: {gpu} holds the number 1e400 at line 4 ([gpu.\"Mine\"] tdp_W), beyond the "
        f"range of a float (at most about 1.8e308); give a number within it")


def test_json_fabric_number_out_of_range_names_line_and_key(tmp_path):
    f = tmp_path / "f.json"
    assert run_cli(["topology", "export", "ring:n=4", "-o", f]).exit_code == 0
    lines = f.read_text().splitlines()
    at = next(i for i, ln in enumerate(lines) if '"latency": 1e-08' in ln)   # an edge's
    lines[at] = lines[at].split(":")[0] + ": 1e-400,"
    f.write_text("\n".join(lines) + "\n")
    line = one_line_error(run_cli(["topology", "show", f]))
    assert line.startswith(f'error: {f} holds the number 1e-400 at line {at + 1} ("edges" > '
                           f'"latency"), below the smallest number'), line


def test_number_place_finds_no_place_for_a_number_not_written():
    from compute.config_files import number_place

    assert number_place("a = 1\n", "1e400") == ""
    # a number inside a longer one is not it
    assert number_place("a = 11e400\nb = 1e400\n", "1e400") == " at line 2 (b)"
    with pytest.raises(UserError, match=r"at line 2 \(\[t\] b\)"):
        from compute.config_files import parse_table

        parse_table("[t]\nb = 1e999\n", "toml", "x.toml")


# -- two byte-order marks -------------------------------------------------------------------

BOM = "\ufeff"


@pytest.mark.parametrize("name, args", [
    ("g.toml", ["infer", "--model", "Llama-3-8B", "--gpu", "{f}", "--tp", "1", "--batch", "1"]),
    ("s.toml", ["cost", "--scenario", "{f}", "--model", "Llama-3-8B"]),
    ("m.csv", ["calibrate", "--measurements", "{f}", "-o", "{d}/out.toml"]),
    ("f.json", ["topology", "show", "{f}"]),
    ("f.graphml", ["topology", "show", "{f}"]),
])
def test_two_byte_order_marks_are_said(tmp_path, name, args):
    f = tmp_path / name
    if name.startswith("f."):
        assert run_cli(["topology", "export", "ring:n=4", "-o", f]).exit_code == 0
        text = f.read_text()
    else:   # the parsers stop at the second mark before anything else of the file
        text = "x = 1\n"
    f.write_text(BOM + BOM + text, encoding="utf-8")
    argv = [a.replace("{f}", str(f)).replace("{d}", str(tmp_path)) for a in args]
    # before: "... is malformed TOML: Invalid statement (at line 1, column 1)", "... not
    # well-formed (invalid token): line 1, column 1", "Expecting value: line 1 column 1"
    line = one_line_error(run_cli(argv), str(f))
    assert line.endswith("starts with 2 byte-order marks (U+FEFF, invisible in most "
                         "editors); save it as UTF-8 with one or none"), line
    assert not (tmp_path / "out.toml").exists()


def test_one_byte_order_mark_is_read_past(tmp_path):
    f = tmp_path / "f.json"
    assert run_cli(["topology", "export", "ring:n=4", "-o", f]).exit_code == 0
    f.write_text(BOM + f.read_text(), encoding="utf-8")
    r = run_cli(["topology", "show", f])
    assert r.exit_code == 0, r.output
    assert "ring of 4" in r.output


# -- a TOML date or time where a number belongs ---------------------------------------------

def test_a_toml_date_is_said_as_the_file_wrote_it(tmp_path):
    gpu = tmp_path / "g.toml"
    gpu.write_text('[gpu."Mine"]\nderive_from = "H100-SXM"\nsource = "test"\n'
                   "max_instance = 1979-05-27\n")
    r = run_cli(["infer", "--model", "Llama-3-8B", "--gpu", gpu, "--tp", "1", "--batch", "1"])
    # before: "..., got datetime.date(1979, 5, 27)": Python's repr, not the file's text
    line = one_line_error(r, str(gpu), "max_instance")
    assert line.endswith("got the date 1979-05-27"), line


# -- a table where a [fabric] number belongs --------------------------------------------------

def test_a_table_for_a_number_of_fabric_is_said_as_such(tmp_path):
    text = "\n".join("n = {}" if ln.startswith("n = ") else ln
                     for ln in _lite_flat().splitlines())
    (tmp_path / "s.toml").write_text(text + "\n")
    r = run_cli(["cost", "--scenario", "s.toml", "--model", "Llama-3-8B"], tmp_path)
    # before: "s.toml: [fabric.n] needs 'builder' naming a fabric builder; known: ..." (read
    # as a fabric of its own)
    assert one_line_error(r) == ("error: s.toml: [fabric] n must be a value (flat's n takes "
                                 "int), got a table")


def test_a_gpu_without_a_die_names_the_scenario_that_gave_it(tmp_path):
    from tests.netmodel.cli_helpers import ROOT

    catalog = (ROOT / "compute/data/gpus.toml").read_text()   # H100-SXM's table, renamed:
    at = catalog.index('[gpu."H100-SXM"]')                    # a GPU of its own, no die
    table = catalog[at:catalog.index("\n[", at + 1)]
    (tmp_path / "g.toml").write_text(table.replace('"H100-SXM"', '"Mine"', 1) + "\n")
    (tmp_path / "s.toml").write_text(_lite_flat().replace('gpu = "Lite"', 'gpu = "g.toml"'))
    r = run_cli(["cost", "--scenario", "s.toml", "--model", "Llama-3-8B", "--max-batch", "8"],
                tmp_path)
    # before: "error: no die data for GPU 'Mine'; ..." (which option brought GPU 'Mine'?)
    assert one_line_error(r).startswith("error: --scenario 's.toml': no die data for GPU "
                                        "'Mine'; dies are known for: ")
    r = run_cli(["sweep", "--scenarios", "s.toml", "--models", "Llama-3-8B", "--max-batch", "8",
                 "-q", "--no-plot", "--param", "cost.pue=1.1,1.2", "--out", "out"], tmp_path)
    assert one_line_error(r).startswith("error: --scenarios 's.toml': no die data for GPU "
                                        "'Mine'; dies are known for: ")
    assert not (tmp_path / "out").exists()
