"""Hostile round 30 (scripts/hostile_round30.py): output folders holding something under the
manifest's name, the library given Python's and numpy's other number types, and options
jointly impossible.

Found wrong, each checked here:

(a) An output folder holding a folder named ``netmodel-manifest.json`` (of one's notes),
and nothing else, was taken as an earlier output and replaced whole: the notes were
deleted with it (``study lite-gpu``, ``compare``, ``sweep``, ``availability --out``). So
was a symbolic link or a FIFO under that name. Now refused, the folder untouched
(compute.output_paths.check_folder_path); a manifest file that is not JSON, alone, is still
an output folder replaced (tests/compute/test_outputs.py).

(b) numpy's scalars taken by the library's checks were kept as numpy's:
``compare(max_batch=np.int64(8))``, ``sweep(max_batch=...)``, ``Slo(tbt=np.float32(0.05))``,
``RooflineOptions(flops_efficiency=np.float32(0.5), memory_reserve=..., dense_mlp_tp=
np.int64(1))`` each raised TypeError 'Object of type int64 is not JSON serializable' from
``to_json``. And ``Slo(tbt=Fraction(1, 20))`` was taken and kept, then refused by the
search as 'latency_limit must be a number of seconds > 0 (inf: no limit), got 0.05'. Now
each check returns Python's number (compute.search.check_max_batch, the one check of
search's, compare's and sweep's max_batch; Slo; RooflineOptions).

(c) ``search --max-gpus 1 --tp 8`` said '...; at most 1 GPUs', naming neither --max-gpus nor
why: now '--max-gpus 1 is below TP 8 x PP 1' (compute.parallel.configurations names its
parameter, the command line its flag).

(d) ``netmodel.study.serving.serve(max_batch=np.int64(8))`` and ``expert_skew=
np.float32(1)``, and ``netmodel.run_study(max_batch=np.int64(8))``, raised the same
TypeError from ``to_json``: serve and the study now check them (check_max_batch,
compute.roofline.check_skew) before recording them.

(e) ``netmodel.sweep(..., points=3)`` of a list parameter (``adjust.bandwidth_scale=0.5,1``)
swept the list without a word, where ``sweep --points 3`` is refused: the rule is now the
library's (netmodel.study.sweep_params.refuse_unread_points), which the command line calls
with its flags' names.

(f) ``compare``/``sweep`` given a set of names (scenarios, phases, models, GPUs) ran them in
the order of Python's string hashing, which PYTHONHASHSEED changes from run to run: the
rows, and the baseline (the first scenario where the default is not among them), changed
from one run to the next. A set of more than one name is now refused, as a collective's
group is (compute.validate.refuse_unordered, in listed and netmodel.api's lists).

(g) As root (a container's user), ``HOME=/proc`` or ``/sys`` made every command that draws
print matplotlib's two warnings (its mkdir of ``$HOME/.config/matplotlib`` failed) after
its output: ``os.access`` says yes to root everywhere. netmodel.cli.process.may_make now
makes and removes a folder there to see, for root, and gives matplotlib its own folder.
"""

from __future__ import annotations

import json
import os
from fractions import Fraction

import numpy as np
import pytest
from click.testing import CliRunner

from compute.errors import UserError
from compute.output_paths import MANIFEST
from compute.outputs import write_outputs
from compute.phases import Slo
from compute.roofline_options import RooflineOptions
from compute.search import check_max_batch
from netmodel.cli.main import cli


def _notes_folder(out):
    (out / MANIFEST).mkdir(parents=True)
    (out / MANIFEST / "notes.txt").write_text("mine")


def _link(out):
    out.mkdir()
    (out.parent / "m.json").write_text('{"files": {}}')
    os.symlink("../m.json", out / MANIFEST)


def _fifo(out):
    out.mkdir()
    os.mkfifo(out / MANIFEST)


@pytest.mark.parametrize("make, said", [(_notes_folder, "it is a folder"),
                                        (_link, "it is a symbolic link"),
                                        (_fifo, "it is not a regular file")])
def test_a_manifest_that_is_no_file_is_refused(tmp_path, make, said):
    out = tmp_path / "o"
    make(out)
    before = sorted(str(p) for p in out.rglob("*"))
    with pytest.raises(UserError, match=rf"holds '{MANIFEST}', which is not the file netmodel "
                                        rf"writes there: {said}; netmodel replaces"):
        write_outputs(out, {"a.csv": b"1"})
    assert sorted(str(p) for p in out.rglob("*")) == before


def test_the_notes_folder_survives_a_command(tmp_path):
    _notes_folder(tmp_path / "o")
    r = CliRunner().invoke(cli, ["compare", "--models", "Llama-3-8B", "--scenarios", "h100-dgx",
                                 "--phases", "decode", "--max-batch", "8", "--no-plot", "-q",
                                 "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and r.output.count("\n") == 1, r.output
    assert "it is a folder" in r.output
    assert (tmp_path / "o" / MANIFEST / "notes.txt").read_text() == "mine"


def test_an_empty_folder_and_a_link_to_one_are_still_taken(tmp_path):
    (tmp_path / "real").mkdir()
    os.symlink("real", tmp_path / "o")
    write_outputs(tmp_path / "o", {"a.csv": b"1"})
    write_outputs(tmp_path / "o", {"a.csv": b"2"})
    assert (tmp_path / "o").is_symlink()
    assert (tmp_path / "real" / "a.csv").read_bytes() == b"2"


def test_numbers_of_other_types_are_kept_as_python_numbers():
    for slo in (Slo(tbt=np.float32(0.5)), Slo(tbt=Fraction(1, 2))):
        assert type(slo.tbt) is float and slo.tbt == 0.5
    assert Slo(tbt=np.float32(0.05)).tbt == float(np.float32(0.05))   # its exact value
    o = RooflineOptions(flops_efficiency=np.float32(0.5), memory_efficiency=Fraction(1, 4),
                        memory_reserve=np.float32(0.25), dense_mlp_tp=np.int64(1))
    d = json.loads(json.dumps(o.to_dict()))
    assert (d["flops_efficiency"], d["memory_efficiency"], d["memory_reserve"],
            d["dense_mlp_tp"]) == (0.5, 0.25, 0.25, 1)
    assert [type(check_max_batch(v)) for v in (np.int64(8), np.uint16(8), 8)] == [int] * 3
    for bad in (8.0, np.float64(8), True, 0, "8"):
        with pytest.raises(UserError, match="max_batch must be a whole number >= 1"):
            check_max_batch(bad)


def test_compare_json_of_numpy_max_batch_and_slo():
    import netmodel

    def doc(**kw):
        d = json.loads(netmodel.compare(["Llama-3-8B"], ["h100-dgx"], ["decode"],
                                        **kw).to_json())
        return {k: v for k, v in d.items() if k != "written_utc"}

    plain = doc(max_batch=8)
    assert doc(max_batch=np.int64(8)) == plain
    assert doc(max_batch=8, slo=Slo(tbt=np.float64(0.05))) == plain
    assert plain["settings"]["max_batch"] == 8


def test_a_fraction_slo_searches_as_its_float():
    import netmodel

    a = netmodel.search("Llama-3-8B", "H100-SXM", "decode", max_batch=64,
                        slo=Slo(tbt=Fraction(1, 20))).best
    b = netmodel.search("Llama-3-8B", "H100-SXM", "decode", max_batch=64).best
    assert (a.tp, a.batch, a.latency) == (b.tp, b.batch, b.latency)


@pytest.mark.parametrize("args, said", [
    (["--max-gpus", "1", "--tp", "8"], "--max-gpus 1 is below TP 8 x PP 1"),
    (["--max-gpus", "4", "--tp", "8", "--pp", "2,4"], "--max-gpus 4 is below TP 8 x PP 2")])
def test_max_gpus_below_the_degrees_names_its_flag(args, said):
    r = CliRunner().invoke(cli, ["search", "--model", "Llama-3-8B", "--gpu", "H100-SXM",
                                 "--max-batch", "8", *args])
    assert r.exit_code == 2 and r.output.count("\n") == 1, r.output
    assert r.output.startswith("error: --tp '8'") and r.output.rstrip().endswith(said)


def test_serve_json_of_numpy_max_batch_and_skew():
    from netmodel.study.serving import serve

    def doc(**kw):
        d = json.loads(serve("Llama-3-8B", "h100-dgx", dimensions="tp",
                             **{"max_batch": 8, **kw}).to_json())
        return d["settings"]

    plain = doc()
    assert doc(max_batch=np.int64(8)) == plain == doc(expert_skew=np.float32(1))
    assert (plain["max_batch"], plain["expert_skew"]) == (8, 1.0)


def test_sweep_points_of_a_list_is_refused_by_the_library():
    import netmodel

    with pytest.raises(UserError, match=r"^points 3 sets the values of a LO:HI range, and no "
                                        r"parameter of params has one \(adjust\.bandwidth_scale"
                                        r"=0\.5,1 gives its own values\): give LO:HI, or leave "
                                        r"points None$"):
        netmodel.sweep(["h100-dgx"], ["adjust.bandwidth_scale=0.5,1"], ["Llama-3-8B"],
                       ["decode"], points=3, max_batch=8)
    r = netmodel.sweep(["h100-dgx"], ["adjust.bandwidth_scale=0.5:1"], ["Llama-3-8B"],
                       ["decode"], points=3, max_batch=8)
    assert [row.x for row in r.rows] == pytest.approx([0.5, 0.5 ** 0.5, 1.0])


@pytest.mark.parametrize("kw, key", [({"scenarios": {"lite-flat", "lite-hier"}}, "scenarios"),
                                     ({"phases": frozenset({"decode", "prefill"})}, "phases"),
                                     ({"gpus": {"Lite", "H100-SXM"}}, "gpus")])
def test_a_set_of_names_is_refused(kw, key):
    import netmodel

    args = {"models": ["Llama-3-8B"], "scenarios": ["lite-flat"], "phases": ["decode"], **kw}
    with pytest.raises(UserError, match=rf"^{key} must be a list or tuple, got a \w*set, whose "
                                        r"order changes from run to run"):
        netmodel.compare(**args, max_batch=8)


def test_study_json_of_numpy_max_batch():
    import netmodel

    skipped = dict(fabric=False, sweep=False, paper=False, reliability=False, cost=False,
                   crossovers=False, serving=False, packed=False, moe=None)

    def doc(max_batch):
        d = json.loads(netmodel.run_study(["Llama-3-8B"], ["Lite"], ["decode"],
                                          networks=["ring"], max_batch=max_batch,
                                          **skipped).to_json())
        return d["study"]

    plain = doc(8)
    assert doc(np.int64(8)) == plain and plain["settings"]["max_batch"] == 8


@pytest.mark.parametrize("home", ["/proc", "/sys"])
def test_a_home_no_folder_can_be_made_in_is_not_taken(home):
    from netmodel.cli.process import may_make

    if not os.path.isdir(home):
        pytest.skip(f"no {home} here")
    assert not may_make(os.path.join(home, ".config", "matplotlib"))


def test_a_home_a_folder_can_be_made_in_is_taken(tmp_path):
    from netmodel.cli.process import may_make

    assert may_make(str(tmp_path / ".config" / "matplotlib"))
    assert list(tmp_path.iterdir()) == []   # the probe left nothing
