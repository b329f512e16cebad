"""Hostile command lines: every bad input is one ``error:`` line, exit status 2, no traceback,
nothing written (docs/units-and-errors.md). Each case is a class of failure an adversarial
sweep of the command line found (click's multi-line usage errors, empty list items taken as
"not given", inputs of a skipped study part never checked, absurd magnitudes accepted,
malformed CSV rows); the cases fail fast, before any search runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from compute.errors import UserError
from netmodel.cli.main import cli
from tests.netmodel.cli_helpers import one_line_error

SCEN = ["--scenario", "lite-flat", "--model", "Llama-3-8B"]
STUDY = ["study", "lite-gpu", "-q", "--no-plot", "--models", "Llama-3-8B", "--gpus", "Lite",
         "--phases", "decode", "--no-fabric"]
HEADER = "model,gpu,tp,batch,phase,prompt,context,latency_s\n"
ROW = "Llama-2-70B,H100-SXM,8,1,decode,,1500,0.0298\n"


#: A measurements CSV that calibrate reads (the repository's own test data).
MEASURED = Path(__file__).parents[1] / "compute" / "data" / "splitwise_perf_model_medians.csv"


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], prog_name="netmodel")


# ------------------------------------------------------------ click's own usage errors
# What netmodel owns of these lines: one 'error:' line, exit 2, the option and the value
# named, the command's help pointed to, and the unknown option's line (written by
# netmodel.cli.refusals.unknown_option_line: click 8.2.0-8.3.0 wrote 'No such option: --batch
# Did you mean --max-batch?', 8.4 on 'No such option '--batch'. Did you mean ...'). The
# rest of the wording is click's and changes between the releases pyproject allows.

@pytest.mark.parametrize("args, needles", [
    (["sweep", "--scenario", "lite-flat", "--param", "fabric.latency=1us",
      "--parallelism", "pp"],
     ["'--parallelism'", "'pp'", "(see 'netmodel sweep --help')"]),
    (["sweep", "--scenario", "lite-flat", "--param", "fabric.latency=1us", "--workers", "nan"],
     ["'--workers'", "'nan'", "(see 'netmodel sweep --help')"]),
    (["topology", "compare", "ring:n=8", "full-mesh:n=8", "--group", "1.5"],   # 1e12 is a number
     ["'--group'", "'1.5'", "(see 'netmodel topology compare --help')"]),
    (["blast-radius", *SCEN, "--area-share", "abc"], ["'--area-share'", "'abc'"]),
    (["search", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--batch", "8"],
     ["error: No such option '--batch'. Did you mean '--max-batch'? "
      "(see 'netmodel search --help')"]),
    (["infer", "--modle", "x"],
     ["error: No such option '--modle'. (Did you mean one of: '--mode', '--model', "
      "'--model-file'?) (see 'netmodel infer --help')"]),
    (["serve", "--model", "Llama-3-8B"], ["'--scenario'", "(see 'netmodel serve --help')"]),
    (["no-such-command"], ["unknown command 'no-such-command'; known: 'availability'",
                           "(see 'netmodel --help')"]),
    (["--no-such-option"], ["error: No such option '--no-such-option' (see 'netmodel --help')"]),
])
def test_usage_errors_are_one_line(args, needles):
    one_line_error(run(*args), *needles)


def test_a_file_where_a_folder_belongs_is_one_line_and_left_alone(tmp_path):
    f = tmp_path / "taken.csv"
    f.write_text("precious\n")
    for cmd in (["compare", "--models", "Llama-3-8B", "--scenarios", "lite-flat", "-q"],
                ["availability", *SCEN, "-q"], ["blast-radius", *SCEN],
                ["study", "lite-gpu", "-q"]):
        one_line_error(run(*cmd, "--out", f), "'--out'", repr(str(f)))
    assert f.read_text() == "precious\n"


def test_a_folder_where_a_file_belongs_is_one_line(tmp_path):
    one_line_error(run("calibrate", "--measurements", tmp_path, "-o", tmp_path / "p.toml"),
                   "'--measurements'", repr(str(tmp_path)))
    assert not (tmp_path / "p.toml").exists()


def test_a_bare_group_still_shows_its_help():
    r = run("topology")
    assert r.output.startswith("Usage: netmodel topology") and "Commands:" in r.output


# ------------------------------------------------------------ empty list items

@pytest.mark.parametrize("args, needle", [
    (["compare", "--models", "Llama-3-8B,", "--scenarios", "lite-flat"],
     "--models 'Llama-3-8B,' has an empty item"),
    (["compare", "--models", "Llama-3-8B", "--scenarios", ""], "--scenarios '' is empty"),
    (["compare", "--models", "Llama-3-8B", "--scenarios", "lite-flat", "--gpus", ""],
     "--gpus '' is empty"),
    (["compare", "--models", "Llama-3-8B", "--scenarios", "lite-flat,,lite-hier"],
     "has an empty item"),
    (["sweep", "--scenario", "lite-flat,", "--param", "fabric.latency=1us"],
     "--scenarios 'lite-flat,' has an empty item"),   # --scenario: its other name
    (["sweep", "--scenario", "lite-flat", "--gpus", "", "--param", "fabric.latency=1us"],
     "--gpus '' is empty"),
    (["sweep", "--scenario", "lite-flat", "--param", "fabric.latency=100ns,,1us"],
     "sweep parameter fabric.latency values '100ns,,1us' have an empty item"),
    ([*STUDY, "--out", "{tmp}/out", "--scenarios", ""], "--scenarios '' is empty"),
    ([*STUDY[:4], *STUDY[6:], "--out", "{tmp}/out", "--models", "Llama-3-8B,"],
     "has an empty item"),   # STUDY less its --models: an option is given once
])
def test_empty_items_are_refused_not_dropped(args, needle, tmp_path):
    one_line_error(run(*(a.replace("{tmp}", str(tmp_path)) for a in args)), needle)
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------ study: inputs of skipped parts

@pytest.mark.parametrize("extra, needle", [
    (["--moe-model", "NoModel"], "unknown model 'NoModel'"),
    (["--moe-model", ""], "unknown model ''"),
    (["--moe-model", "Llama-3-8B"], "--moe-model 'Llama-3-8B' is not a mixture of experts"),
    (["--scenarios", "nosuch"], "unknown scenario 'nosuch'"),
])
def test_study_checks_every_input_before_the_first_part(extra, needle, tmp_path):
    # --no-fabric skips the parts that use them: they are still checked, first
    one_line_error(run(*STUDY, "--out", tmp_path / "out", *extra), needle)
    assert not (tmp_path / "out").exists()


def test_run_full_study_refuses_a_dense_moe_model():
    from netmodel.study.lite_gpu import run_full_study

    with pytest.raises(UserError, match="moe model 'Llama-3-8B' is not a mixture of experts"):
        run_full_study(["Llama-3-8B"], ["Lite"], ["decode"], fabric=False, moe="Llama-3-8B")


# ------------------------------------------------------------ absurd magnitudes

@pytest.mark.parametrize("extra, needle", [
    (["--defect-density", "1e9"], "--defect-density 1e+09 per cm^2 is above 100 per cm^2"),
    (["--alpha", "1e-300"], "alpha must be a finite number >= 0.01 and <= 100, got 1e-300"),
    (["--wafer-diameter", "1e9mm"], "--wafer-diameter 1e+09 mm is above 1000 mm"),
    (["--sms", "99999999999999999999/1"],
     "sms_physical must be a whole number from 1 to 100,000, got an integer of 20 digits"),
    (["--model", "poisson", "--alpha", "3"],
     "--alpha applies only with --model negative-binomial, not poisson"),
    (["--wafer-price", "abc"], "--wafer-price 'abc' is not a number"),
    (["--wafer-price", "5GHz"], "has unknown unit 'GHz' (it takes a plain number)"),
])
def test_yield_refuses_absurd_values(extra, needle):
    one_line_error(run("yield", "--area", "814", *extra), needle)


def test_yield_library_names_parameters_and_survives_huge_integers():
    from compute.yield_model import die_cost

    with pytest.raises(UserError, match="defect_density 1000 per cm"):
        die_cost(814e-6, defect_density=1e7)
    with pytest.raises(UserError, match="wafer_price must be .*got an integer of 401 digits$"):
        die_cost(814e-6, wafer_price=10**400)
    # the bounds themselves are taken: 100 defects/cm^2 leaves ~1e-7 of an H100 die clean
    assert die_cost(814e-6, defect_density=1e6).yield_ == pytest.approx(
        (1 + 1e6 * 814e-6 / 2) ** -2)


@pytest.mark.parametrize("extra, needle", [
    (["--repair-time", "gpu-die=1e300y"],
     "--repair-time 'gpu-die=1e300y': repair time of gpu-die is longer than 100 y, the "
     "longest time taken; allowed: 0 to 100y"),
    (["--detection", "1e300y"], "--detection '1e300y': detection time is longer than 100 y"),
    (["--warmup", "200y"], "--warmup '200y': warm-up time is longer than 100 y"),
    (["--rate", "transceiver=2"],
     "--rate 'transceiver=2': rate of transceiver must be a number from 0 to 1 per hour, "
     "got 2.0"),
    (["--area-share", "nan"], "--area-share must be in [0.269, 1]"),
    # (the flag named, with both bounds: it said 'storage bandwidth must be a number from 0
    # to 1e+15 bytes/s', where the least taken is 1 MB/s)
    (["--load-from", "storage", "--load-bandwidth", "1e20"],
     "--load-bandwidth '1e20' is above 1 PB/s, the most a storage bandwidth may be; allowed: "
     "1 MB/s to 1 PB/s"),
    (["--load-from", "storage", "--load-bandwidth", "2PB/s"],
     "--load-bandwidth '2PB/s' is above 1 PB/s"),
])
def test_reliability_refuses_absurd_times_and_rates(extra, needle, tmp_path):
    one_line_error(run("blast-radius", *SCEN, "--out", tmp_path / "out", *extra), needle)
    assert not (tmp_path / "out").exists()


def test_reliability_catalog_names_parameters():
    from netmodel.study.reliability_catalog import catalog

    with pytest.raises(UserError, match="^detection time must be"):
        catalog().with_(detection_s=float(10**400 // 10**300))
    with pytest.raises(UserError, match="got an integer of 401 digits"):
        catalog().with_(warmup_s=10**400)
    # a century is taken
    assert catalog().with_(detection_s=100 * 365.25 * 86400).detection_s == 3155760000.0


@pytest.mark.parametrize("extra, needle", [
    (["--clock", "abc"], "--clock 'abc' is not a number"),
    (["--clock", "1GHz"], "--clock '1GHz' has unknown unit 'GHz' (it takes a plain number)"),
])
def test_plain_numbers_say_so(extra, needle):
    one_line_error(run("cost", *SCEN, *extra), needle)


# ------------------------------------------------------------ measurement CSVs

@pytest.mark.parametrize("text, needle", [
    # a quote opened and never closed (h244: read as one cell to the end of the file,
    # then 'row 2 has fewer cells than the header has columns (8)')
    (HEADER + '"Llama-2-70B,H100-SXM,8,1,decode,,1500,0.0298\n' + ROW,
     "row 2 is not readable CSV: a quoted cell is not closed"),
    (HEADER + "Llama-2-70B,H100-SXM,8,1,decode,\n", "row 2 has fewer cells"),
    (HEADER.strip() + ",latency_s\n" + ROW.strip() + ",1\n",
     "column(s) latency_s given twice"),
])
def test_malformed_measurement_rows(text, needle, tmp_path):
    csv = tmp_path / "m.csv"
    csv.write_text(text)
    one_line_error(run("calibrate", "--measurements", csv, "-o", tmp_path / "p.toml"), needle)
    assert not (tmp_path / "p.toml").exists()


@pytest.mark.parametrize("args, needle", [
    (["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "8", "--batch", "1e30"],
     "--batch must be a whole number from 1 to 1,000,000,000, got '1e30'"),
    (["search", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--max-batch", "1e12"],
     "--max-batch must be a whole number from 1 to 1,000,000,000"),
    (["collective", "all-reduce", "--fabric", "single-switch:n=8", "--size", "1e30"],
     "is 1e+30 B: a message is a whole number of bytes from 1 B to 1 PiB (1,125,899,906,842,624 B"),
    (["costs", "--fabric", "single-switch:n=8", "--sizes", "1B:1e30B"],
     "--sizes '1e30B' is 1e+30 B: a message is a whole number of bytes from 1 B to 1 PiB"),
])
def test_whole_numbers_and_message_sizes_are_bounded(args, needle):
    # 1e30 was taken: a batch printed as 1000000000000000019884624838656, an all-reduce of
    # 9e17 TiB taking 3.6e18 s
    one_line_error(run(*args), needle)


# ------------------------------------------------------------ files that are not files

@pytest.mark.parametrize("args", [
    ["infer", "--model", "X", "--gpu", "H100-SXM", "--tp", "8", "--batch", "8",
     "--model-file", "{f}.toml"],
    ["hardware", "--gpu-file", "{f}.toml"],
    ["models", "--hf-config", "{f}.json"],
    ["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "8", "--batch", "8",
     "--scenario", "{f}.toml"],
    ["calibrate", "--measurements", "{f}.csv", "-o", "{tmp}/p.toml"],
])
def test_a_fifo_is_refused_not_waited_on(args, tmp_path):
    # a named pipe with no writer blocked open() forever (every TOML/JSON/CSV reader)
    import os

    f = tmp_path / "pipe"
    for suffix in (".toml", ".json", ".csv"):
        os.mkfifo(f"{f}{suffix}")
    one_line_error(run(*(a.replace("{f}", str(f)).replace("{tmp}", str(tmp_path))
                         for a in args)), "is not a regular file (a FIFO, device or socket)")
    assert not (tmp_path / "p.toml").exists()


def test_read_text_refuses_devices_and_folders(tmp_path):
    from compute.config_files import read_text

    with pytest.raises(UserError, match=r"'/dev/zero' is not a regular file \(a FIFO"):
        read_text("/dev/zero", "model file")
    with pytest.raises(UserError, match=r"cannot read model file '.*': it is a folder, not a"):
        read_text(tmp_path, "model file")
    (tmp_path / "ok.toml").write_text("a = 1\n")
    assert read_text(tmp_path / "ok.toml") == "a = 1\n"


# ------------------------------------------------------------ outputs checked before the work

def test_costs_sizes_refuse_an_empty_item():
    # '1B,,2B' was taken as '1B,2B'
    one_line_error(run("costs", "--fabric", "single-switch:n=8", "--sizes", "1B,,2B"),
                   "--sizes '1B,,2B' has an empty item")


@pytest.mark.parametrize("plot, needle", [
    ("{tmp}/busbw.txt", "figure '{tmp}/busbw.txt' must end in one of: .png, .svg, .pdf"),
    ("", "figure must not be empty"),
    ("/proc/busbw.png", "figure '/proc/busbw.png': cannot write a file in '/proc'"),
])
def test_collective_plot_paths_are_checked_first(plot, needle, tmp_path):
    # a .txt got a PNG, '' was taken as no plot, /proc failed after the work
    t = str(tmp_path)
    one_line_error(run("collective", "all-reduce", "--fabric", "single-switch:n=8", "--plot",
                       plot.replace("{tmp}", t)), needle.replace("{tmp}", t))
    assert list(tmp_path.iterdir()) == []


def test_plot_suffix_names_the_format(tmp_path):
    r = run("collective", "all-reduce", "--fabric", "single-switch:n=8", "--plot",
            tmp_path / "b.svg")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "b.svg").read_bytes().lstrip().startswith(b"<?xml")


def test_costs_unwritable_table_writes_no_figure(tmp_path):
    # the figure was written, then the table failed (/proc accepts os.access, not files)
    one_line_error(run("costs", "--fabric", "single-switch:n=8", "--sizes", "1KiB:1MiB",
                       "-o", "/proc/t.csv", "--plot", tmp_path / "p.png"),
                   "output file '/proc/t.csv': cannot write a file in '/proc'")
    assert not (tmp_path / "p.png").exists()


def test_an_output_that_is_a_fifo_is_not_replaced(tmp_path):
    # -o /dev/null (run as root) replaced the device node with a regular file
    import os
    import stat

    f = tmp_path / "pipe.csv"
    os.mkfifo(f)
    for args in (["costs", "--fabric", "single-switch:n=8", "-o", f],
                 ["topology", "export", "ring:n=8", "-o", f, "--format", "json"]):
        one_line_error(run(*args), f"output file '{f}' exists and is not a regular file")
        assert stat.S_ISFIFO(os.stat(f).st_mode)


@pytest.mark.parametrize("args", [
    ["compare", "--models", "Llama-3-8B", "--scenarios", "lite-flat", "-q", "--out", ""],
    ["sweep", "--scenario", "lite-flat", "--param", "fabric.latency=1us", "-q", "--out", ""],
    ["costs", "--fabric", "ring:n=8", "-o", ""],
])
def test_an_empty_output_path_is_refused_not_ignored(args):
    # '' was taken as 'no --out': the run printed its table and wrote nothing, exit 0
    one_line_error(run(*args), "must not be empty")


def test_compare_checks_its_folder_before_the_work(monkeypatch):
    import netmodel.study.compare as compare

    def boom(*a, **k):
        raise AssertionError("ran before --out was checked")

    monkeypatch.setattr(compare, "run_compare", boom)
    one_line_error(run("compare", "--models", "Llama-3-8B", "--scenarios", "lite-flat", "-q",
                       "--out", "/proc/adv"), "output folder '/proc/adv': cannot write a file in")


@pytest.mark.parametrize("args", [
    ["serve", "--scenario", "lite-flat", "--model", "Llama-3-8B", "--tbt", "1e308s"],
    ["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "8", "--batch", "8",
     "--ttft", "1e30s"],
])
def test_slo_is_at_most_a_day(args):
    # 1e308 s was taken: serve printed 'SLO inf ms'; now within a serving SLO's range
    # (h333: 600 s for TTFT, 10 s for TBT, compute/data/limits.toml)
    one_line_error(run(*args), "s, outside the 1 us to ")


def test_slo_bounds_in_the_library():
    from compute.phases import Slo

    assert Slo(ttft=600, tbt=10).limit("decode") == 10
    with pytest.raises(UserError, match="^ttft SLO 600.5 s, outside the 1 us to 600 s allowed "):
        Slo(ttft=600.5)


@pytest.mark.parametrize("command", ["blast-radius", "availability"])
@pytest.mark.parametrize("bandwidth", ["1e-300B/s", "1B/s", "999999B/s"])
def test_load_bandwidth_below_a_gpus_floor_is_refused(command, bandwidth, tmp_path):
    # hostile pass 219: 1e-300 B/s overflowed the load time to inf (blast-radius printed
    # 'repair (inf h)', exit 0; availability NaN warnings and 'inf failure events', 7 lines);
    # 1 B/s loaded a 16 GB shard in 1.6e10 s, past the century every time is held to
    # (availability: goodput -1.493e+04 tokens/s/SM, exit 0)
    one_line_error(run(command, *SCEN, "--load-from", "storage", "--load-bandwidth",
                       bandwidth, "--out", tmp_path / "out"),
                   f"--load-bandwidth '{bandwidth}' is below 1 MB/s, the least a GPU's "
                   f"bandwidth may be; allowed: 1 MB/s to 1 PB/s")
    assert not (tmp_path / "out").exists()


def test_load_bandwidth_floor_is_taken():
    from netmodel.cli.reliability_inputs import _bandwidth_refused_as
    from netmodel.study.reliability_catalog import catalog

    storage = catalog().with_(load_from="storage")
    with _bandwidth_refused_as("1MB/s"):   # the floor itself: 1e14 B (100,000 GB) in 1e8 s
        assert storage.with_(host_storage_bandwidth=1e6).host_storage_bandwidth == 1e6
    with pytest.raises(UserError, match="^--load-bandwidth '0.999999MB/s' is below 1 MB/s"), \
            _bandwidth_refused_as("0.999999MB/s"):
        storage.with_(host_storage_bandwidth=999_999.0)


def test_load_bandwidth_range_checked_once_by_the_catalog():
    # the option's parser reads the bandwidth only; the range is the catalog's (the CLI
    # restated the floor and the ceiling in a check of its own), said with the flag
    from netmodel.cli.reliability_inputs import _storage_bandwidth

    assert (_storage_bandwidth("1B/s"), _storage_bandwidth("2PB/s")) == (1.0, 2e15)
    with pytest.raises(UserError, match="^--load-bandwidth must be a bandwidth from 1 MB/s to 1 PB/s"):
        _storage_bandwidth("0")


def test_load_bandwidth_needs_storage_loading():
    # --load-bandwidth without --load-from storage was silently ignored
    from netmodel.study.reliability_catalog import catalog

    one_line_error(run("blast-radius", *SCEN, "--load-bandwidth", "1GB/s"),
                   "--load-bandwidth applies only with --load-from 'storage', not 'fabric'")
    cat = catalog().with_(load_from="storage", host_storage_bandwidth=2e9)
    assert (cat.load_from, cat.host_storage_bandwidth) == ("storage", 2e9)


@pytest.mark.parametrize("text, needle", [
    (HEADER + ROW + "A" * 200_000 + ",H100-SXM,8,1,decode,,1500,0.03\n",
     "row 3 is not readable CSV: a cell holds more than 131,072 characters"),
    ("A" * 200_000 + "," + HEADER, "the header is not readable CSV: field larger than"),
])
def test_a_measurement_cell_over_the_csv_limit_is_one_line(text, needle, tmp_path):
    # _csv.Error escaped as a traceback
    csv = tmp_path / "m.csv"
    csv.write_text(text)
    one_line_error(run("calibrate", "--measurements", csv, "-o", tmp_path / "p.toml"), needle)
    assert not (tmp_path / "p.toml").exists()


def test_yield_refuses_a_dust_sized_die():
    # --area 1e-300 printed 1e302 dies per wafer
    from compute.yield_model import MIN_DIE_AREA, gross_dies_per_wafer

    one_line_error(run("yield", "--area", "1e-300"),
                   "die area 1e-300 mm^2 is below 0.001 mm^2")
    # at the bound, Hennessy & Patterson's formula: pi 150^2 / 0.001 - pi 300 / sqrt(0.002)
    assert gross_dies_per_wafer(MIN_DIE_AREA) == pytest.approx(
        3.14159265 * 150**2 / 1e-3 - 3.14159265 * 300 / 0.002**0.5, rel=1e-6)


def test_yield_refuses_an_astronomical_wafer_price():
    # --wafer-price 1e308 printed a cost per good die of 300 digits
    from compute.yield_model import die_cost

    one_line_error(run("yield", "--area", "814", "--wafer-price", "1e308"),
                   "--wafer-price must be a finite number >= 0 and <= 1e+07, got 1e+308")
    # at the bound: 63 whole dies x 50.5% yield (D A = 0.814, (1 + 0.407)^-2) -> ~$312k
    c = die_cost(814e-6, wafer_price=1e7)
    assert c.cost_per_good_die == pytest.approx(1e7 / (63 * 1.407**-2), rel=1e-3)


@pytest.mark.parametrize("args, needle", [
    (["compare", "--models", "Llama-3-8B,Llama-3-8B", "--scenarios", "lite-flat", "-q"],
     "--models 'Llama-3-8B,Llama-3-8B' names Llama-3-8B more than once"),
    (["sweep", "--scenario", "lite-flat,lite-flat", "--param", "fabric.latency=1us"],
     "--scenarios 'lite-flat,lite-flat' names lite-flat more than once"),
    (["costs", "--fabric", "ring:n=8", "--groups", "2,4,2"],
     "--groups '2,4,2' names 2 more than once"),
    (["costs", "--fabric", "ring:n=8", "--ops", "all-reduce,all-reduce"],
     "names all-reduce more than once"),
    (["search", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "8,8"],
     "--tp '8,8' names 8 more than once"),
    (["search", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--pp", "2,,4"],
     "--pp '2,,4' has an empty item; give e.g. 1,2,4"),
    (["calibrate", "--measurements", str(MEASURED), "-o", "p.toml", "--fit",
      "layer_overhead_s,layer_overhead_s"], "names layer_overhead_s more than once"),
])
def test_a_name_given_twice_is_refused(args, needle):
    # each was run twice: duplicate rows in the table, CSV and JSON
    one_line_error(run(*args), needle)


def test_sweep_refuses_a_fabric_value_past_the_builders_maximum():
    # each point past 1 s was a '-' column, the header overflowing to 'inf' us
    one_line_error(run("sweep", "--scenario", "lite-flat", "--models", "Llama-3-8B", "-q",
                       "--param", "fabric.latency=1us:1e308s"),
                   "fabric.latency 1e308s is 1e+308 s, outside the 0 to 1 ms")  # h333
    from netmodel.study.sweep import parse_param

    assert parse_param("fabric.latency=100ns,1ms", ["lite-flat"]).values == pytest.approx(
        (1e-7, 1e-3), rel=1e-12)  # the bound itself is taken


def test_availability_refuses_a_half_hour_monte_carlo():
    # 131,072 GPUs x 1,000 trials x 100 years (1.44e9 events, ~1e6 sampled a second) was
    # under the old 2e9 guard and ran for half an hour
    one_line_error(run("availability", *SCEN, "-q", "--no-plot", "--gpus", "131072",
                       "--trials", "1000", "--horizon", "100y"),
                   "failure events to simulate (1,000 trials); at most 2e+07")


@pytest.mark.parametrize("kind, text, args", [
    ("model", '[model."Llama-3-8B"]\nlayers = 2\nhidden = 4096\nheads = 32\nffn = 14336\n'
              'vocab = 128256\nsource = "test"\n', ["models", "--model-file"]),
    ("GPU", '[gpu."H100-SXM"]\nderive_from = "H100-SXM"\nsource = "test"\nfraction = 0.05\n',
     ["hardware", "--gpu-file"]),
])
def test_a_user_file_may_not_redefine_a_catalog_entry(kind, text, args, tmp_path):
    # a 2-layer Llama-3-8B or a 5% H100-SXM was reported under the catalog name
    f = tmp_path / "mine.toml"
    f.write_text(text)
    name = text.split('"')[1]
    one_line_error(run(*args, f), f"'{name}' already name(s) a catalog {kind}")
    # under another name the same entry is taken
    f.write_text(text.replace(f'"{name}"]', '"Mine"]'))
    r = run(*args, f)
    assert r.exit_code == 0 and "Mine" in r.output, r.output
