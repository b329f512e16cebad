"""scripts/hostile_round18.py, on the files netmodel reads and writes, run in part: the
cases of each kind that once failed or that guard a door (an XML entity, an external DTD,
a link to a file of others), each judged as the script judges it (round 16's checks, and
nothing of /etc/passwd said, no bidirectional control printed raw, at most 10 s of CPU, at
most 1 GB more peak memory); and the script's reach: each kind of file and each hostile
shape the round promises is among its cases.

Found by the round and fixed (their own tests beside): an output file path that is a
symbolic link was replaced by the file (test_output_symlink_h550), a read-only output file
of a user not root was replaced (test_output_read_only_h550), a saved fabric's GPU type
whose name differs from its key said no rule (test_gpu_type_name_h550), a measurements CSV
with a column twice or a row too long said no fix (test_measurements_shape_h550), a bad
value in an hf_quant_config.json was blamed on the config.json beside it
(test_hf_quant_sidecar_where_h550), two files of --models or --gpus defining one name
differently named no flag and no field (or blamed one scenario: test_distinct_models_h550,
test_two_gpus_one_name_h550), a key or column holding a right-to-left override was printed
raw in the error line (test_error_bidi_h550), an output onto one of the command's own
inputs replaced it (test_output_is_an_input_h550).
"""

from __future__ import annotations

import importlib.util
import sys

import pytest

from tests.netmodel.cli_helpers import ROOT


@pytest.fixture(scope="module")
def round18():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        spec = importlib.util.spec_from_file_location("hostile_round18",
                                                      ROOT / "scripts/hostile_round18.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(ROOT / "scripts"))


@pytest.fixture(scope="module")
def every(round18):
    return {c[0]: c for c in round18.cases()}


#: The cases run here (a few seconds in all): each door and each defect the round found.
FAST = [
    "fabric-graphml billion laughs | show",
    "fabric-graphml external entity /etc/passwd | show",
    "fabric-graphml parameter entity /etc/passwd | show",
    "fabric-graphml external dtd /etc/passwd | show",
    "fabric-graphml xinclude /etc/passwd | show",
    "fabric-graphml deep 10000 | show",
    "fabric-json deep 10000 | show",
    "fabric-json self-loop | collective",
    "fabric-json two parts | show",
    "fabric-json edge to a node not listed | show",
    "fabric-json node named nul | show",
    "fabric-graphml node named newline | show",
    "fabric-json gpu_types entry named apart from its name | show",
    "fabric-json gpu_types sms=1e309 | show",
    "scenario's fabric a fifo | cost",
    "scenario's gpu /dev/zero | cost",
    "measurements column twice | calibrate",
    "measurements row long | calibrate",
    "measurements latency_s=1e309 | calibrate",
    "measurements 50 MB of rows | calibrate",
    "profile deep inline 10000 | infer",
    "scenario deep array 10000 | cost",
    "workload rate=-0.0 | serve",
    "hf-config num_key_value_heads=null | models",
    "hf-config's hf_quant_config.json quant_algo NaN | models",
    "compare --models two files of one name",
    "compare --gpus two files of one name",
    "fabric-json multi-edge with a key | show",
    "gpu key with a right-to-left override",
    "measurements column with a right-to-left override",
    "export -o symlink to a file of others",
    "plot -o dangling symlink",
    "calibrate -o read-only file",
    "export -o the input file",
    "costs -o the fabric it reads through a link",
    "calibrate -o its --base",
]


@pytest.mark.parametrize("name", FAST)
def test_each_case_gets_what_bad_input_gets(round18, every, name):
    why, _ = round18.judge(every[name])
    assert why is None, why


def test_the_round_reaches_every_kind_and_shape(every):
    names = list(every)
    for kind in ("fabric-json", "fabric-graphml", "scenario's", "measurements", "profile",
                 "scenario", "gpu", "model", "gpu-json", "calibrate base", "workload",
                 "hf-config", "hf-config's", "compare", "gpu key", "calibrate -o",
                 "export -o", "costs -o", "plot -o"):
        assert any(n.startswith(kind + " ") for n in names), kind
    for shape in ("self-loop", "edge twice", "two parts", "isolated gpu",
                  "edge to a node not listed", "node named nul", "node named long",
                  "a million gpus claimed", "billion laughs", "external entity", "deep 10000",
                  "key twice", "utf-16", "truncated mid-record", "binary garbage",
                  "column twice", "=1e309", "=-0.0", "=nan", "50 MB", "read-only file",
                  "symlink to a file of others", "parent is a file", "fifo",
                  "the input file"):
        assert any(shape in n for n in names), shape
    assert len(names) > 800


def test_a_case_that_gets_a_result_where_bad_input_is_refused_fails(round18, tmp_path):
    # the judge is not blind: a valid ring given as if it were hostile is a failure
    case = ("ring", ["topology", "show", "ring:n=4"], lambda d: None, False, None)
    why, _ = round18.judge(case)
    assert why is not None and why.startswith("exit 0")
