"""A list option naming one thing twice is refused however the two are spelled (h416).

The catalogs match names regardless of case (:func:`compute.errors.find_name`), so
``--scenarios h100-dgx,H100-DGX`` named one scenario twice and the run merged them without
a word, while ``h100-dgx,h100-dgx`` was refused; so did a list spread over an option's
repeats (``sweep --scenarios x --scenarios x``), numbers spelled two ways (``--tp 8,08``)
and ``topology compare lite-flat LITE-FLAT``. Now every such list is refused in one line,
exit 2, by one rule (:func:`compute.validate.refuse_repeats`, keyed by what each name
resolves to: :data:`netmodel.cli.resolve.NAME_KEYS`, :attr:`Fabric.key`)."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from netmodel.cli.resolve import distinct_names
from netmodel.study.topology_compare import compare_topologies
from tests.netmodel.cli_helpers import one_line_error, run_cli

CHEAP = ["--models", "Llama-3-8B", "--phases", "decode", "--max-batch", "1", "--quiet",
         "--no-plot"]
SWEEP = ["sweep", "--param", "fabric.latency=1us,2us", *CHEAP]


@pytest.mark.parametrize("args, line", [
    # before: each ran, the two merged into one (exit 0)
    (["compare", "--scenarios", "h100-dgx,H100-DGX", *CHEAP],
     "error: --scenarios 'h100-dgx,H100-DGX' names one thing more than once ('h100-dgx' "
     "and 'H100-DGX'); give each once"),
    (["compare", "--scenarios", "lite-flat", "--gpus", "H100-SXM,h100-sxm", *CHEAP],
     "error: --gpus 'H100-SXM,h100-sxm' names one thing more than once ('H100-SXM' and "
     "'h100-sxm'); give each once"),
    (["compare", "--scenarios", "lite-flat", "--models", "Llama-3-8B,llama-3-8b",
      "--phases", "decode", "--max-batch", "1", "--quiet", "--no-plot"],
     "error: --models 'Llama-3-8B,llama-3-8b' names one thing more than once ('Llama-3-8B' "
     "and 'llama-3-8b'); give each once"),
    # lite-flat is lite-flat on its own GPU, Lite
    (["compare", "--scenarios", "lite-flat,lite-flat@lite", *CHEAP],
     "error: --scenarios 'lite-flat,lite-flat@lite' names one thing more than once "
     "('lite-flat' and 'lite-flat@lite'); give each once"),
    # over the option's repeats, as one list
    ([*SWEEP, "--scenarios", "lite-flat", "--scenarios", "lite-flat"],
     "error: --scenarios 'lite-flat,lite-flat' names lite-flat more than once; give each "
     "once"),
    ([*SWEEP, "--scenarios", "lite-flat,lite-ocs", "--scenarios", "LITE-OCS"],
     "error: --scenarios 'lite-flat,lite-ocs,LITE-OCS' names one thing more than once "
     "('lite-ocs' and 'LITE-OCS'); give each once"),
    (["study", "lite-gpu", "--out", "st", "--gpus", "Lite,lite"],
     "error: --gpus 'Lite,lite' names one thing more than once ('Lite' and 'lite'); give "
     "each once"),
    # numbers: one value, two spellings
    (["search", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "8,08"],
     "error: --tp '8,08' names one thing more than once ('8' and '08'); give each once"),
    (["costs", "--scenario", "lite-flat", "--groups", "2,4,02"],
     "error: --groups '2,4,02' names one thing more than once ('2' and '02'); give each "
     "once"),
    (["topology", "compare", "lite-flat", "LITE-FLAT"],
     "error: fabrics 'lite-flat LITE-FLAT' names one thing more than once ('lite-flat' and "
     "'LITE-FLAT'); give each once"),
    (["topology", "compare", "ring:n=8", "RING: n=8"],
     "error: fabrics 'ring:n=8 RING: n=8' names one thing more than once ('ring:n=8' and "
     "'RING: n=8'); give each once"),
])
def test_one_thing_twice_is_refused(args, line, tmp_path):
    r = run_cli(args, cwd=tmp_path)
    assert one_line_error(r) == line
    assert list(tmp_path.iterdir()) == []   # nothing written


def test_the_same_text_twice_keeps_its_words():
    with pytest.raises(UserError, match=r"^--scenarios 'lite-flat,lite-flat' names lite-flat "
                       r"more than once; give each once$"):
        distinct_names("--scenarios", ["lite-flat,lite-flat"])


@pytest.mark.parametrize("option, texts", [
    ("--scenarios", ["lite-flat,lite-flat@Lite+BW"]),   # another GPU: another scenario
    ("--scenarios", ["h100-dgx", "lite-flat,lite-ocs"]),
    ("--gpus", ["Lite,Lite+BW,H100-SXM"]),
    ("--models", ["Llama-3-8B,Llama-3-70B"]),
])
def test_different_things_pass(option, texts):
    want = [n.strip() for t in texts for n in t.split(",")]
    assert distinct_names(option, texts) == want


def test_library_compares_fabrics_not_spellings():
    with pytest.raises(UserError, match=r"^fabrics 'lite-flat Lite-Flat' names one thing"):
        compare_topologies(["lite-flat", "Lite-Flat"])
    # two values of one parameter are two fabrics
    r = compare_topologies(["ring:n=8", "RING:n=4"], group=4)
    assert [(row.fabric, row.gpus) for row in r.rows] == [("ring:n=8", 8), ("RING:n=4", 4)]
