"""Hostile round 13: every option of every command fed hostile values (an in-process
driver over the click group), and the API's flags. Each class below failed on the code
before it: a traceback, exit 1, a line of thousands of characters, or a bad value taken."""

from __future__ import annotations

import os

import pytest

import netmodel
from compute import validate
from compute.errors import UserError
from tests.netmodel.cli_helpers import measured_csv, one_line_error, run_cli

#: a command-line argument of the byte 0xff (not UTF-8), as Python hands it over
NOT_UTF8 = b"\xff".decode(errors="surrogateescape")




# -- a value of thousands of characters is cut in the one line ---------------------------

LONG = "x" * 5000
DIGITS = "1" + "0" * 5000


@pytest.mark.parametrize("value", [LONG, DIGITS])
@pytest.mark.parametrize("args", [
    ["yield", "--area", "814", "--sms"],                                  # UserError
    ["blast-radius", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--rate"],
    ["topology", "show"],                                                 # unknown fabric
    ["compare", "--models", "Llama-3-8B", "--parallelism"],               # click's Choice
    ["costs", "--fabric", "single-switch:n=8", "--seed"],                 # click's int
])
def test_a_long_value_is_cut_in_the_error_line(tmp_path, args, value):
    # the whole value was echoed: lines of 5,050 to 5,330 characters
    line = one_line_error(run_cli(args + [value], tmp_path))
    assert len(line) < 700, len(line)
    assert value[:39] + "..." in line          # its start, then where it was cut
    assert value[:61] not in line


def test_cut_long_keeps_short_words_and_cuts_long_ones_to_60():
    from compute.errors import cut_long

    assert cut_long("unknown model 'Llama'; known: 'a', 'b'") == \
        "unknown model 'Llama'; known: 'a', 'b'"
    word = "'" + "7" * 300 + "'"
    cut = cut_long(f"--x {word} must be")
    assert cut == "--x '" + "7" * 39 + "..." + "7" * 16 + "' must be"
    assert len(cut.split()[1]) == 60
    assert str(UserError(f"bad {word}")) == f"bad {cut.split()[1]}"
    # a path of 100 characters, a deep folder, is shown whole
    path = "/" + "/".join(["folder"] * 13) + "/gpu.toml"
    assert len(path) == 100 and cut_long(path) == path


# -- an empty path is refused, not read as 'not given' ------------------------------------

@pytest.mark.parametrize("option", ["--model-file", "--gpu-file", "--hf-config"])
@pytest.mark.parametrize("value", ["", " "])
def test_an_empty_model_or_gpu_file(tmp_path, option, value):
    # '' ran the catalog's model (exit 0), as if the option were not given
    r = run_cli(["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "1",
              "--batch", "8", option, value], tmp_path)
    one_line_error(r, f"Invalid value for '{option}'", "is an empty path")


@pytest.mark.parametrize("args", [
    ["models", "--model-file"], ["hardware", "--gpu-file"],
    ["calibrate", "-o", "p.toml", "--measurements"],
])
def test_an_empty_path_in_the_other_commands(tmp_path, args):
    one_line_error(run_cli(args + [""], tmp_path), "is an empty path")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", [["models"], ["infer", "--model", "Llama-3-8B", "--gpu",
                                                  "H100-SXM", "--tp", "1", "--batch", "8"]])
def test_a_config_path_too_long_for_the_file_system(tmp_path, command):
    # OSError [Errno 36] File name too long from Path.is_dir(): a traceback, exit 1
    line = one_line_error(run_cli(command + ["--hf-config", LONG], tmp_path),
                           "file name too long (at most 255 bytes a name")
    assert len(line) < 300


# -- collective --group of digits int() refuses -------------------------------------------

@pytest.mark.parametrize("group, needle", [
    (DIGITS, "must be a size >= 1 (at most 1,000,000,000) or GPU nodes"),
    ("0", "must be a size >= 1 (at most 1,000,000,000) or GPU nodes"),
    (str(10**30), "must be a size >= 1 (at most 1,000,000,000) or GPU nodes"),
    ("²", "group member '²' is not a node of the fabric"),
])
def test_collective_group_out_of_range(tmp_path, group, needle):
    # 5,001 digits: ValueError (int's 4,300-digit limit); '²' passed isdigit() and then
    # int() raised ValueError
    r = run_cli(["collective", "all-reduce", "--fabric", "single-switch:n=8", "--size", "8M",
              "--group", group], tmp_path)
    one_line_error(r, needle)
    # a size still is one
    r = run_cli(["collective", "all-reduce", "--fabric", "single-switch:n=8", "--size", "8M",
              "--group", "4", "--json"], tmp_path)
    assert r.exit_code == 0, r.output
    assert '"group_size": 4' in r.output


def test_netmodel_jobs_of_other_digits(monkeypatch):
    from compute.workers import jobs

    for text in ("²", "1" + "0" * 5000):
        monkeypatch.setenv("NETMODEL_JOBS", text)
        with pytest.raises(UserError, match=r"^environment variable NETMODEL_JOBS=.* must be a "
                                            r"whole number from 1 to 999,999 \(default \d+\)$"):
            jobs()
    monkeypatch.setenv("NETMODEL_JOBS", "3")
    assert jobs() == 3


# -- text that UTF-8 cannot write ---------------------------------------------------------

@pytest.mark.parametrize("option", ["--name", "--engine", "--system"])
def test_calibrate_text_of_a_byte_that_is_not_utf8(tmp_path, option):
    # UnicodeEncodeError from the profile's .encode(): a traceback, exit 1
    csv = measured_csv(tmp_path)
    r = run_cli(["calibrate", "--measurements", csv, "-o", "mine.toml", option,
              f"vLLM{NOT_UTF8}"], tmp_path)
    one_line_error(r, "'vLLM\\udcff' holds a byte that is not UTF-8; give UTF-8 text")
    assert not (tmp_path / "mine.toml").exists()


def test_calibrate_an_empty_name_is_refused(tmp_path):
    # '' was read as 'not given': the profile took the output file's stem as its name
    csv = measured_csv(tmp_path)
    r = run_cli(["calibrate", "--measurements", csv, "-o", "mine.toml", "--name", ""], tmp_path)
    one_line_error(r, "profile name '' must be non-empty text")
    assert not (tmp_path / "mine.toml").exists()


def test_a_figure_title_of_a_byte_that_is_not_utf8(tmp_path):
    # matplotlib's FT2Font.set_text raised TypeError on the lone surrogate
    r = run_cli(["topology", "plot", "ring:n=4", "-o", "r.png", "--title", f"a{NOT_UTF8}"],
             tmp_path)
    one_line_error(r, "--title 'a\\udcff' holds a byte that is not UTF-8")
    assert list(tmp_path.iterdir()) == []


def test_validate_name_refuses_what_utf8_cannot_write():
    with pytest.raises(UserError, match=r"^g.toml: GPU name 'H\\udcff' holds a byte that"):
        validate.name("g.toml", "GPU", f"H{NOT_UTF8}")
    assert validate.name("g.toml", "GPU", "H100 é") == "H100 é"


# -- the API's flags ----------------------------------------------------------------------

@pytest.mark.parametrize("value", ["no", 0.0, 1, None, "False"])
def test_compare_reliability_must_be_a_bool(value):
    # any value was taken as its truth: reliability='no' added the blast-radius columns
    with pytest.raises(UserError, match="^compare: reliability must be true or false, got "):
        netmodel.compare(["Llama-3-8B"], ["h100-dgx"], ["decode"], max_batch=16,
                         reliability=value)


@pytest.mark.parametrize("key", ["fabric", "reliability", "quiet", "figures"])
def test_run_study_flags_must_be_bools(key):
    with pytest.raises(UserError, match=f"^the study: {key} must be true or false, got 'no'$"):
        netmodel.run_study(["Llama-3-8B"], ["Lite"], ["decode"], **{key: "no"})


# -- the API and topologies' public functions given a value of the wrong kind -------------

NOT_A_GRAPH = [None, "ring:n=4", 5, [], {"nodes": []}]


@pytest.mark.parametrize("value", NOT_A_GRAPH)
@pytest.mark.parametrize("name", ["gpu_nodes", "gpu_types", "fabric_table", "gpu_spec"])
def test_topologies_functions_name_a_graph_that_is_none(name, value):
    # AttributeError: 'NoneType' object has no attribute 'nodes' (or 'graph')
    import topologies

    fn = getattr(topologies, name)
    args = (value, "Lite") if name == "gpu_spec" else (value,)
    with pytest.raises(UserError, match="^graph must be a networkx Graph \\(a fabric from "
                                        "build or read_graph\\), got "):
        fn(*args)


@pytest.mark.parametrize("pair", ["ab", 5, ("gpu0",), ("gpu0", "gpu1", "gpu2")])
def test_summary_pair_of_two_nodes(pair):
    # 'ab' was spread into path_diversity(graph, 'a', 'b'), 5 raised TypeError, a 3-tuple
    # 'takes from 1 to 3 positional arguments but 4 were given'
    import topologies

    g = topologies.single_switch(n=4)
    with pytest.raises(UserError, match="^pair must be two GPU nodes \\(a, b\\), got "):
        topologies.summary(g, pair=pair)
    p = topologies.summary(g, pair=("gpu0", "gpu3")).path_diversity
    assert (p.source, p.target, p.hops, p.paths) == ("gpu0", "gpu3", 2, 1)   # one switch


@pytest.mark.parametrize("members", [None, 3, 2.5, "abc"])
def test_circuit_members_must_be_a_list(members):
    # None or 3 raised TypeError from len(); 'abc' was taken as the members 'a', 'b', 'c'
    import topologies

    with pytest.raises(UserError, match="^members must be a list of GPU nodes, got "):
        topologies.circuits_for("ring", members)
    if members is not None:   # realize's None: every GPU
        with pytest.raises(UserError, match="^gpus must be a list of GPU nodes, got "):
            topologies.realize(topologies.ocs(gpus=8, ports=2), "ring", members)
    assert topologies.circuits_for("ring", range(3)) == [(0, 1), (1, 2), (2, 0)]


@pytest.mark.parametrize("path", [None, 5, 2.5])
def test_write_graph_path_of_the_wrong_kind(path):
    import topologies

    with pytest.raises(UserError, match="^fabric file must be a path, got "):
        topologies.write_graph(topologies.ring(n=4), path)


def test_collective_time_placement_or_algorithm_as_an_array():
    # numpy: 'The truth value of an array with more than one element is ambiguous'
    import numpy as np

    for key in ("placement", "algorithm"):
        with pytest.raises(UserError, match=f"^unknown {key} an array of shape \\(2,\\); "):
            netmodel.collective_time("single-switch:n=8", "all-reduce", 1e6, 2,
                                     **{key: np.array([1, 2])})


@pytest.mark.parametrize("value", [None, 5, float("nan")])
def test_run_study_networks_and_sweep_gpus_must_be_lists(value):
    # TypeError: 'NoneType' / 'int' / 'float' object is not iterable
    with pytest.raises(UserError, match="^networks must be one network name, or a list of "
                                        "them, got "):
        netmodel.run_study(["Llama-3-8B"], ["Lite"], ["decode"], networks=value)
    if value is not None:
        with pytest.raises(UserError, match="^gpus must be one name, file or object, or a "
                                            "list of them, got "):
            netmodel.sweep(["h100-dgx"], ["adjust.hop_latency=1us,2us"], ["Llama-3-8B"],
                           max_batch=16, gpus=value)


def test_run_study_models_as_an_array():
    # 'models or DEFAULT_MODELS' asked an array for its truth: numpy's ValueError
    import numpy as np

    with pytest.raises(UserError, match="^a model is a name or a path, got 1$"):
        netmodel.run_study(np.array([1, 2]), ["Lite"], ["decode"])


@pytest.mark.parametrize("value", [1, "no", None])
def test_validate_check_connected_must_be_a_bool(value):
    # 'no' checked connectivity, None skipped it; an array raised numpy's ValueError
    import topologies

    with pytest.raises(UserError, match="^check_connected must be true or false, got "):
        topologies.validate(topologies.ring(n=4), check_connected=value)


def test_load_hf_config_of_a_name_too_long():
    # OSError [Errno 36] File name too long from Path.is_dir(), before read_text's check
    from compute.hf_config import load_hf_config

    with pytest.raises(UserError, match="^cannot read config.json 'xxx.*': File name too "
                                        "long"):
        load_hf_config(LONG)


@pytest.mark.parametrize("address", ["²", "höst:8786", "tcp://ｈｏｓｔ:8786"])
def test_a_scheduler_address_that_is_not_ascii(address):
    # '²' passed the plain connection as host '2' (0.0.0.2), then dask.Client refused it
    # ('missing port number'); the half-made client hung 20 s at exit and printed a
    # traceback after the error line
    from netmodel.study.distributed import Executor

    with pytest.raises(UserError, match=r"^scheduler=.* is not an address; give HOST:PORT or "
                                        r"tcp://HOST:PORT \(an ASCII host name\)$"):
        Executor(scheduler=address)


def test_sweep_parallelism_as_an_array():
    # numpy: 'The truth value of an array with more than one element is ambiguous'
    import numpy as np

    with pytest.raises(UserError, match="^parallelism an array of shape \\(2,\\) is unknown; "
                                        "known: 'all', 'auto', 'tp'$"):
        netmodel.sweep(["h100-dgx"], ["adjust.hop_latency=1us,2us"], ["Llama-3-8B"],
                       max_batch=16, parallelism=np.array(["tp", "all"]))


def test_an_output_path_of_a_byte_that_is_not_utf8_is_echoed_back(tmp_path):
    # where stdout is strict (a UTF-8 locale other than C), 'wrote <path>' raised
    # UnicodeEncodeError after the file was written: a traceback, exit 1
    import subprocess
    import sys

    env = dict(os.environ, PYTHONIOENCODING="utf-8:strict")
    r = subprocess.run([sys.executable, "-m", "netmodel", "topology", "export", "ring:n=4",
                        "-o", b"r\xff.json"], cwd=tmp_path, env=env, capture_output=True)
    assert (r.returncode, r.stderr) == (0, b""), r.stderr[-300:]
    assert r.stdout.startswith(b"wrote r\xff.json (4 GPUs")     # the name's own bytes
    assert [p.name.encode(errors="surrogateescape") for p in tmp_path.iterdir()] == \
        [b"r\xff.json"]


# -- costs -o of any suffix: '-o ../../etc/passwd' replaced that file -------------------

@pytest.mark.parametrize("fmt, name, allowed", [
    ("csv", "passwd", "--format csv writes a .csv file, not a name without a suffix"),
    # a suffix of another format
    ("json", "victim.csv", "--format json writes a .json file, not '.csv'"),
    ("nccl-tests", "victim.conf", "--format nccl-tests writes a .txt or .log file"),
])
def test_costs_output_must_have_its_formats_suffix(tmp_path, fmt, name, allowed):
    # every other -o/--out checked its suffix; costs wrote its table over any file, exit 0
    victim = tmp_path / name
    victim.write_text("root:x:0:0:root:/root:/bin/bash\n")
    cwd = tmp_path / "a" / "b"
    cwd.mkdir(parents=True)
    one_line_error(run_cli(["costs", "--fabric", "single-switch:n=8", "--format", fmt,
                          "-o", f"../../{name}"], cwd),
                    f"--output '../../{name}': {allowed}")
    assert victim.read_text() == "root:x:0:0:root:/root:/bin/bash\n"
    assert sorted(p.name for p in tmp_path.rglob("*")) == sorted(["a", "b", name])


# -- study lite-gpu --no-fabric ran nothing on Dask: --scheduler/--workers were ignored ---

@pytest.mark.parametrize("dask, given", [
    (["--scheduler", "junk"], "--scheduler 'junk'"),
    (["--scheduler", "tcp://127.0.0.1:1"], "--scheduler 'tcp://127.0.0.1:1'"),
    (["--workers", "2"], "--workers 2"),
])
def test_study_dask_options_with_no_fabric_are_refused(tmp_path, dask, given):
    # only the fabric parts run on Dask: any text was taken and unused, exit 0
    r = run_cli(["study", "lite-gpu", "-q", "--no-plot", "--models", "Llama-3-8B", "--gpus",
              "Lite", "--phases", "decode", "--no-fabric", "--out", "out", *dask], tmp_path)
    one_line_error(r, f"{given} with --no-fabric: nothing would run on Dask")
    assert not (tmp_path / "out").exists()


def test_study_library_refuses_an_executor_it_would_not_use():
    # the command line refuses --scheduler/--workers with --no-fabric (14e2149); the
    # library took executor= with fabric=False and ran without it
    from netmodel.study.distributed import Executor
    from netmodel.study.lite_gpu import run_full_study

    with pytest.raises(UserError, match=r"^executor Executor\(scheduler='tcp://127\.0\.0\.1:1'\)"
                                        r" with fabric=False: nothing would run on it"):
        run_full_study(fabric=False, executor=Executor(scheduler="tcp://127.0.0.1:1"))
