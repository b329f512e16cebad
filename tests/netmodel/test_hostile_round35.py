"""Hostile round 35 (scripts/hostile_round35.py): odd but plausible data files, paths,
absurd sizes and wrong types, on what rounds 15-34 tried least.

Found wrong, each checked here:

(a) An output whose name fits the file system (255 bytes) but not the staging folder or
temporary file netmodel writes it through beside it (``.NAME.netmodel-staging-PID-XXXXXXXX``,
``.NAME.XXXXXXXX.tmp.csv``) passed every check: ``compare --out`` of a 250-byte name ran
the whole comparison, then said "cannot write output folder '...': File name too long";
``costs -o`` of a 244-byte name alike. Now the check before any work refuses it, saying how
long the name may be (:func:`compute.output_paths._room_beside`), with the flag typed.

(b) A refusal raised while writing an output ("cannot write output folder 'out': ...": a place
the checks let through that could not be written after all, a full disk, a folder made
read-only since) named no flag, where the same output's check has named it since 8e7159cf
(``--out 'out': output folder 'out' ...``). Now the write is said as the check is,
``--out 'out': cannot write output folder 'out': ...``
(:func:`netmodel.cli.refusals.output_refused_as`: compare,
sweep, study lite-gpu, availability, blast-radius; costs' ``--output`` folder or file,
topology export's ``--output``, calibrate's ``--out``); a full disk keeps exit status 1.

(c) The failure catalog's ``host_storage_bandwidth`` was said as ``--load-bandwidth`` by a
match of one refusal's start (netmodel.cli.reliability_inputs' ``_UNREAD``), the name
nowhere else: a refusal naming it elsewhere kept the library's name. Now the option declares
the library's name for its value (``RegistryHelp(parameters=...)``), which
:func:`netmodel.cli.refusals.flags_for_parameters` says as the flag wherever it stands.

(d) ``netmodel.sweep``'s ``params`` given as a table (``{'fabric.latency': ['1us']}``, a
natural guess) or a number was refused as "params must be one name, file or object, or a
list of them", the words of models and scenarios: a sweep parameter is a ``PATH=LO:HI``
text, no name, file or object; ``phases`` and ``networks`` alike. Now each says what one of
its items is (:data:`netmodel.api._ONE`).

(e) ``Scenario.with_param`` given a path that is no text (``5``, ``None``, ``b'fabric.n'``)
raised AttributeError ('int' object has no attribute 'split') or TypeError; now a UserError
naming ``path`` and the forms a parameter's name takes.

(f) The failure catalog's ``with_(rates=...)`` or ``repair_hours=...`` given a list of pairs
or a number raised AttributeError ('list' object has no attribute 'items'); now a UserError
naming the parameter, with an example table (netmodel.study.reliability_catalog, a check of
four lines before the tables are read).
"""

from __future__ import annotations

import errno
import os
import re

import pytest
from click.testing import CliRunner

import netmodel
from compute.errors import UserError
from netmodel.cli.main import cli

MEASURED = os.path.join(os.path.dirname(__file__), "..", "..", "compute", "data",
                        "vllm_h100_2024_measurements.csv")
COMPARE = ["compare", "--models", "Llama-3-8B", "--phases", "decode", "--max-batch", "8",
           "-q", "--no-plot"]


def _run(argv: list[str], where) -> tuple[int, list[str]]:
    old = os.getcwd()
    os.chdir(where)
    try:
        r = CliRunner().invoke(cli, argv, prog_name="netmodel")
    finally:
        os.chdir(old)
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r.exit_code, r.output.strip().splitlines()


# -- (a) a name with no room for the staging folder or temporary file beside it ------------


def _staging_longer() -> int:
    """How much longer the staging folder's name is than the output folder's: '.', the
    18 characters of '.netmodel-staging-', this process's id, '-' and tempfile's 8."""
    return 1 + len(".netmodel-staging-") + len(str(os.getpid())) + 1 + 8


def test_a_folder_name_without_room_for_its_staging_folder_is_refused_first(tmp_path):
    from compute.outputs import write_outputs

    most = 255 - _staging_longer()
    written = write_outputs(tmp_path / ("a" * most), {"x.txt": b"1"})
    assert written[0].read_bytes() == b"1"
    with pytest.raises(UserError, match=re.escape(
            f"its name is {most + 1} bytes; netmodel writes it through a staging folder "
            f"beside it whose name is {_staging_longer()} bytes longer, so it may be at most "
            f"{most} bytes where a name holds 255")):
        write_outputs(tmp_path / ("b" * (most + 1)), {"x.txt": b"1"})
    assert sorted(len(n) for n in os.listdir(tmp_path)) == [most]   # nothing beside


def test_a_file_name_without_room_for_its_temporary_file_is_refused_first(tmp_path):
    from compute.outputs import atomic_write

    # '.', the name, '.', 8 random characters, '.tmp' and the suffix '.csv': 18 longer
    atomic_write(tmp_path / ("a" * 233 + ".csv"), b"1")
    with pytest.raises(UserError, match="its name is 238 bytes; netmodel writes it through "
                                        "a temporary file beside it whose name is 18 bytes "
                                        "longer, so it may be at most 237 bytes"):
        atomic_write(tmp_path / ("b" * 234 + ".csv"), b"1")
    assert [len(n) for n in os.listdir(tmp_path)] == [237]


def test_compare_out_of_a_long_name_is_refused_before_the_work(tmp_path):
    # it ran the comparison, then: "error: cannot write output folder '...': File name
    # too long"
    rc, lines = _run([*COMPARE, "--out", "a" * 250], tmp_path)
    assert rc == 2 and len(lines) == 1, lines
    assert lines[0].startswith("error: --out 'aaaaaaaaa")
    assert lines[0].endswith(f"its name is 250 bytes; netmodel writes it through a staging "
                             f"folder beside it whose name is {_staging_longer()} bytes "
                             f"longer, so it may be at most {255 - _staging_longer()} bytes "
                             f"where a name holds 255")
    assert os.listdir(tmp_path) == []


# -- (b) a write refused after the checks names the flag, as the checks do -----------------


@pytest.mark.parametrize("argv, said", [
    ([*COMPARE, "--out", "out"], "--out 'out': cannot write output folder 'out'"),
    (["sweep", "--scenarios", "lite-flat", "--models", "Llama-3-8B", "--param",
      "fabric.latency=1us,2us", "--max-batch", "8", "-q", "--no-plot", "--out", "out"],
     "--out 'out': cannot write output folder 'out'"),
    (["blast-radius", "--scenario", "lite-flat", "--model", "Llama-3-8B", "--max-batch", "8",
      "--no-plot", "--out", "out"],
     "--out 'out': cannot write output folder 'out'"),
    (["costs", "--fabric", "ring:n=8", "--sizes", "8M", "--groups", "8", "--format", "vidur",
      "-o", "vid"], "--output 'vid': cannot write output folder 'vid'"),
    (["costs", "--fabric", "ring:n=8", "--sizes", "8M", "--groups", "8", "-o", "t.csv"],
     "--output 't.csv': cannot write output file 't.csv'"),
    (["topology", "export", "ring:n=4", "-o", "f.json"],
     "--output 'f.json': cannot write fabric file 'f.json'"),
    (["calibrate", "--measurements", "m.csv", "-o", "p.toml"],
     "--out 'p.toml': cannot write profile file 'p.toml'"),
])
@pytest.mark.parametrize("code, reason, status", [
    (errno.EACCES, "Permission denied", 2), (errno.ENOSPC, "No space left on device", 1)])
def test_a_write_refused_names_its_flag(tmp_path, monkeypatch, argv, said, code, reason,
                                        status):
    # before: "error: cannot write output folder 'out': Permission denied", no flag (a
    # name of 2 characters or fewer had it: netmodel.cli.refusals.named_by_value)
    import shutil

    import compute.outputs

    def refused(path):
        raise OSError(code, reason)

    shutil.copy(MEASURED, tmp_path / "m.csv")
    monkeypatch.setattr(compute.outputs, "_fix_mode", refused)
    rc, lines = _run(argv, tmp_path)
    assert (rc, lines) == (status, [f"error: {said}: {reason}"])
    assert os.listdir(tmp_path) == ["m.csv"]


# -- (c) a library parameter of another name than its flag, declared by the option --------


@pytest.mark.parametrize("command", ["availability", "blast-radius"])
def test_the_storage_bandwidth_parameter_is_said_as_its_flag_anywhere(command):
    from netmodel.cli.refusals import flags_for_parameters

    cmd = cli.get_command(None, command)
    (option,) = [p for p in cmd.params if "--load-bandwidth" in p.opts]
    assert option.parameters == ("host_storage_bandwidth",)
    # mid-sentence too: the start-of-line match left it as the library's name
    assert flags_for_parameters("give host_storage_bandwidth only with load_from 'storage'",
                                cmd, []) == \
        "give --load-bandwidth only with --load-from 'storage'"


def test_load_bandwidth_without_storage_is_said_as_before(tmp_path):
    rc, lines = _run(["blast-radius", "--scenario", "lite-flat", "--model", "Llama-3-8B",
                      "--load-bandwidth", "1GB/s", "--load-from", "fabric"], tmp_path)
    assert (rc, lines) == (2, ["error: --load-bandwidth applies only with --load-from "
                               "'storage', not 'fabric' (spares load from a peer over the "
                               "fabric)"])


# -- (d) a parameter taking several says what one of them is ---------------------------------


@pytest.mark.parametrize("call, said", [
    (lambda: netmodel.sweep(["lite-flat"], {"fabric.latency": ["1us"]}, ["Llama-3-8B"]),
     "params must be one 'PATH=LO:HI' or 'PATH=V1,V2' text, or a list of them, got "
     "{'fabric.latency': ['1us']}"),
    (lambda: netmodel.compare(["Llama-3-8B"], ["lite-flat"], 5, max_batch=8),
     "phases must be one phase ('prefill' or 'decode'), or a list of them, got 5"),
    (lambda: netmodel.run_study(["Llama-3-8B"], ["Lite"], ["decode"], networks=5),
     "networks must be one network name, or a list of them, got 5"),
    # a model, scenario or GPU is one: said as before
    (lambda: netmodel.compare(["Llama-3-8B"], ["lite-flat"], ["decode"], gpus=5),
     "gpus must be one name, file or object, or a list of them, got 5"),
])
def test_a_list_parameter_refused_says_what_one_item_is(call, said):
    with pytest.raises(UserError, match="^" + re.escape(said) + "$"):
        call()


# -- (e) Scenario.with_param's path is text --------------------------------------------------


@pytest.mark.parametrize("path", [5, None, b"fabric.n"])
def test_with_param_path_that_is_no_text_is_refused_naming_it(path):
    from compute.validate import describe

    with pytest.raises(UserError, match="^" + re.escape(
            f"path must be a parameter's name as text (fabric.KEY, fabric.base.KEY or "
            f"adjust.KEY), got {describe(path)}") + "$"):
        netmodel.get_scenario("lite-flat").with_param(path, 64)
    # the same value under its name is taken
    assert netmodel.get_scenario("lite-flat").with_param("fabric.n", 64).fabric["n"] == 64


# -- (f) the failure catalog's tables are tables ---------------------------------------------


@pytest.mark.parametrize("given, said", [
    ({"rates": [("nic", 1e-6)]}, "rates must be a table of failure class to value (e.g. "
                                 "{'nic': 1e-06} per part per hour), got [('nic', 1e-06)]"),
    ({"repair_hours": 24}, "repair_hours must be a table of failure class to value (e.g. "
                           "{'nic': 24} hours), got 24"),
])
def test_catalog_rates_and_repair_hours_that_are_no_table_are_refused(given, said):
    from netmodel.study.reliability_catalog import catalog

    with pytest.raises(UserError, match="^" + re.escape(said) + "$"):
        catalog().with_(**given)
    # as a table, taken: the class's rate or repair time is the one given
    cat = catalog().with_(rates={"nic": 1e-6}, repair_hours={"nic": 24})
    assert cat.classes["nic"].rate_per_hour == 1e-6
    assert cat.classes["nic"].repair_local_s == 24 * 3600
