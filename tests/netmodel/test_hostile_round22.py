"""Hostile round 22 (scripts/hostile_round22.py): options that contradict each other,
files valid in their format but absurd in what they say, values at the documented
limits, very large groups, library calls with numpy and bool values, and results that
must agree by symmetry.

Found wrong, each checked here:

(a) An in-network (NVLS/SHARP) all-reduce on one switch of many GPUs was planned in time
quadratic in the GPUs (the members each switch had reduced were joined one child at a
time, the set copied each time): ``collective all-reduce --fabric
single-switch:n=100000 --group 100000`` ran past two minutes; the plan of 50,000 GPUs took
19.9 s of CPU. Now each switch's members are joined once.

(b) ``calibrate`` took a measurements file with a row pasted twice as two points (the
step weighed twice, "fitted ... to 12 measurements" of 6), and a step measured again at
another latency counted as a step more: three steps in four rows passed the count of
parameters (4) and were refused as "cannot tell gemm_efficiency from
attention_efficiency", which was not the trouble. Now a repeated row is refused naming
both rows, and the count is of the steps measured.

(c) An output path whose suffix was not the format's was refused without a flag nor the
format that asked for it: ``costs -o t.json`` (the default format csv) said ``output file
't.json' must end in one of: .csv``, ``topology export -o x.yml --format json`` ``... must
end in one of: .json``, ``calibrate -o p.json`` ``profile file 'p.json' must end in one
of: .toml``. Now the flag, the format and the one the suffix would take are named (a
suffix alone, a folder or a missing folder as before, with the flag).

(d) A sweep range whose HI is its LO (``cost.pue=1.1:1.1 --points 3``, ``1us:1000ns``)
swept one value where 3 (the default 7) were asked, without a word; a range of one point
whose HI is not its LO was refused (round 11). Now refused too; ``LO:LO:1`` is the one
value as before.

(e) A die area just past the usable wafer was refused as larger than itself: ``yield
--area 70686`` said ``die area 70686 mm^2 is larger than the usable wafer (70686 mm^2 on a
300 mm wafer)``; the wafer's 70,685.83 mm^2 is now shown to the digits that tell them
apart.

(f) ``collective_time(scenario, op, sizes, group)`` refused a group past the scenario in
words that hung on what ran before: ``an instance of 1000000 GPUs does not fit scenario
'h100-dgx@H100-SXM' (32 GPUs)`` the first time, ``group size 1000000 is larger than the
fabric's 32 GPUs`` once a collective had been costed on it (the size was checked only
where the shared model was built). Now checked first, the same words every time.

(g) The routes an algorithm searches on a fabric of GPUs alone were estimated step by step
against the router's limit of route links, never all its steps together: pairwise
all-to-all over a ring of 1,024 GPUs (1,023 steps of 1,024 routes, some 268 million route
links, each step far under the 40 million) ran past a minute into gigabytes, and a ring of
20,000 GPUs' all-reduce past 55 s. Now every step's transfers are estimated together
before any is routed (``Router.check_steps``): the ring all-to-all is refused in two
seconds, naming both algorithms' estimates.
"""

from __future__ import annotations

import time

import pytest

from compute.errors import UserError
from netmodel.api import build_fabric
from tests.netmodel.cli_helpers import one_line_error, run_cli

HEADER = "model,gpu,tp,batch,phase,prompt,context,latency_s\n"
STEPS = ["Llama-2-70B,H100-SXM,8,1,prefill,2048,,0.1368",
         "Llama-2-70B,H100-SXM,8,1,decode,,576,0.0298",
         "Llama-2-70B,H100-SXM,8,32,decode,,576,0.0386"]


def test_an_in_network_plan_of_many_gpus_on_one_switch_is_linear():
    from netmodel.collectives.in_network import in_network_plan

    g = build_fabric("single-switch:n=50000")
    gpus = [n for n, d in g.nodes(data=True) if d.get("kind") == "gpu"]
    t0 = time.process_time()
    levels = in_network_plan(g, gpus)
    took = time.process_time() - t0
    assert [len(level) for level in levels] == [50000]   # one level: every GPU to nvs0
    assert {sw for _, sw, _, _ in levels[0]} == {"nvs0"}
    assert took < 4.0, took   # 0.25 s here; 19.9 s when the members were joined one by one


def test_a_measurement_row_given_twice_is_refused_naming_both(tmp_path):
    (tmp_path / "m.csv").write_text(HEADER + "\n".join(STEPS + STEPS[:1]) + "\n")
    line = one_line_error(run_cli(["calibrate", "--measurements", "m.csv", "-o", "p.toml"],
                                  cwd=tmp_path))
    assert line == ("error: m.csv: row 5 (Llama-2-70B TP 8 prefill batch 1 prompt 2048 on "
                    "H100-SXM) repeats m.csv: row 2: the same step and latency_s 0.1368 s; "
                    "give each measurement once (a repeat weighs its step twice in the fit)")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.csv"]


def test_parameters_are_counted_against_the_steps_measured(tmp_path):
    again = "Llama-2-70B,H100-SXM,8,32,decode,,576,0.0390"   # the third step, measured again
    (tmp_path / "m.csv").write_text(HEADER + "\n".join([*STEPS, again]) + "\n")
    line = one_line_error(run_cli(["calibrate", "--measurements", "m.csv", "-o", "p.toml"],
                                  cwd=tmp_path))
    assert line == ("error: --measurements 'm.csv': cannot fit 4 parameters (gemm_efficiency, "
                    "attention_efficiency, layer_overhead_s, decode_sequence_overhead_s) to 3 "
                    "measured steps (4 measurements, some of one step): give at least as many "
                    "measured steps as parameters, or fit fewer")
    # three parameters on three steps fit: the repeat is a second reading of one step
    r = run_cli(["calibrate", "--measurements", "m.csv", "-o", "p.toml", "--fit",
                 "gemm_efficiency,layer_overhead_s,decode_sequence_overhead_s"], cwd=tmp_path)
    assert r.exit_code == 0 and "to 4 measurements" in r.output, r.output


def test_an_output_suffix_of_another_format_names_both_flags(tmp_path):
    r = run_cli(["costs", "--fabric", "ring:n=8", "--groups", "8", "--sizes", "1MiB", "-o",
                 "t.json"], cwd=tmp_path)
    assert one_line_error(r) == ("error: --output 't.json': --format csv (the default) writes "
                                 "a .csv file, not '.json'; give --format json for a .json "
                                 "file, or a path ending in .csv")
    r = run_cli(["topology", "export", "ring:n=8", "-o", "x.yml", "--format", "json"],
                cwd=tmp_path)
    assert one_line_error(r) == ("error: --output 'x.yml': --format json writes a .json file, "
                                 "not '.yml'; give --format astra-sim for a .yml file, or a "
                                 "path ending in .json")
    r = run_cli(["calibrate", "--measurements", "m.csv", "-o", "p.json"], cwd=tmp_path)
    assert one_line_error(r) == ("error: --out 'p.json': profile file 'p.json' must end in one "
                                 "of: .toml")
    r = run_cli(["topology", "export", "ring:n=8", "-o", "no/x.json"], cwd=tmp_path)
    assert one_line_error(r) == ("error: --output 'no/x.json': output file 'no/x.json': folder "
                                 "'no' does not exist (create it first)")
    assert list(tmp_path.iterdir()) == []


def test_a_sweep_range_of_several_points_with_hi_equal_to_lo_is_refused():
    from netmodel.study.sweep_params import parse_param

    with pytest.raises(UserError) as err:
        parse_param("adjust.hop_latency=1us:1000ns", ["lite-flat"], 3)
    assert str(err.value) == ("sweep parameter adjust.hop_latency range '1us:1000ns' of 3 "
                              "values has HI equal to LO: each value would be '1us'; give HI "
                              "above LO, or the one value")
    assert parse_param("adjust.hop_latency=1us:1us:1", ["lite-flat"]).values == (1e-6,)
    line = one_line_error(run_cli(["sweep", "--scenarios", "h100-dgx", "--models", "Llama-3-8B",
                                   "--max-batch", "8", "-q", "--no-plot", "--param",
                                   "cost.pue=1.1:1.1", "--points", "3"]))
    assert line.startswith("error: --param 'cost.pue=1.1:1.1': sweep parameter cost.pue range "
                           "'1.1:1.1' of 3 values has HI equal to LO")


def test_a_die_area_just_past_the_wafer_is_not_said_larger_than_itself():
    line = one_line_error(run_cli(["yield", "--area", "70686"]))
    assert line == ("error: --area '70686': die area 70686 mm^2 is larger than the usable wafer "
                    "(70685.83 mm^2 on a 300 mm wafer)")
    line = one_line_error(run_cli(["yield", "--area", "70687"]))
    assert line.endswith("(70686 mm^2 on a 300 mm wafer)")


def test_a_group_past_a_scenario_is_refused_alike_before_and_after_a_cost():
    from netmodel import api

    said = "an instance of 1000000 GPUs does not fit scenario 'h100-dgx@H100-SXM' (32 GPUs)"
    for _ in range(2):   # the second after a cost built the scenario's shared model
        with pytest.raises(UserError) as err:
            api.collective_time("h100-dgx", "all-reduce", 1e6, 10**6)
        assert str(err.value) == said
        assert api.collective_time("h100-dgx", "all-reduce", 1e6, 8) > 0


def test_an_algorithm_of_many_steps_is_estimated_whole_before_routing(tmp_path):
    t0 = time.process_time()
    line = one_line_error(run_cli(["collective", "all-to-all", "--fabric", "ring:n=1024",
                                   "--group", "1024", "--size", "1MiB"], cwd=tmp_path))
    took = time.process_time() - t0
    assert line.startswith("error: no algorithm can run all-to-all on this group of 1024 GPUs "
                           "(direct: routing 1,045,504 transfers over this fabric's shortest "
                           "paths would hold about 269,913,602 route links")
    # pairwise's steps, each of 1,024 transfers, estimated together
    assert ("; pairwise: routing 1,044,992 transfers over this fabric's shortest paths would "
            "hold about 267,522,034 route links (from a sample of 512), more than the "
            "router's limit of 40,000,000: use a smaller group or another algorithm)") in line
    assert took < 10, took   # 1 s here; past a minute before
    assert list(tmp_path.iterdir()) == []
