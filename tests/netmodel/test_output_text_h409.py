"""What the commands print, as text: no line ends in blanks (a table's empty last cell was
padded: topology compare's "blast radius (GPUs): mean (worst)" heading row ended in 60
spaces, study lite-gpu's infeasible rows in 27, models' unset dtypes in one), and counts
agree with their nouns.

The docs samples cannot show trailing blanks (make_docs compares lines with them removed),
so these run the commands themselves (the table-printing commands but the long-running
study parts, sweep and availability, whose docs samples were scanned raw). ``costs
--format nccl-tests`` is left out on purpose: it reproduces nccl-tests' printf layout byte
for byte, trailing blanks included (tests/netmodel/test_cli_collective.py checks it
against a real log).
"""

from __future__ import annotations

import re

import pytest

from tests.netmodel.cli_helpers import run_cli

# (arguments, exit status, a line the output must hold: the row that had the blanks)
COMMANDS = [
    (["topology", "compare", "h100-dgx", "lite-flat", "lite-ocs"], 0,
     "blast radius (GPUs): mean (worst)"),
    (["topology", "compare", "single-switch:n=8", "ring:n=8"], 0,
     "blast radius (GPUs): mean (worst)"),
    (["study", "lite-gpu", "--out", "{tmp}", "--models", "DeepSeek-V3", "--gpus", "Lite",
      "--no-fabric", "--networks", "ring"], 3, "prefill DeepSeek-V3     Lite"),
    (["study", "lite-gpu", "--out", "{tmp}", "--models", "DeepSeek-V3", "--gpus", "Lite",
      "--no-fabric", "--networks", "ring,ideal"], 3, "prefill DeepSeek-V3     Lite"),
    (["models", "Llama-3-8B"], 0, "  mlp_weight_dtype"),
    (["hardware", "H100-SXM"], 0, "  scale-up"),
    (["topology", "show", "single-switch"], 0, "paths:"),
    (["serve", "--scenario", "h100-dgx", "--model", "Llama-3-8B"], 0, "  KV cache"),
    (["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "8", "--batch", "8"], 0,
     "collectives:"),
    (["compare", "--models", "Llama-3-8B", "--scenarios", "lite-flat", "--phases", "decode",
      "-q", "--max-batch", "8"], 0, "  lite-flat@Lite"),
    (["blast-radius", "--scenario", "h100-dgx", "--model", "Llama-3-8B"], 0, "class "),
    (["cost", "--scenario", "lite-flat", "--model", "Llama-3-8B"], 0, "tokens/s "),
]


@pytest.mark.parametrize("args, status, holds", COMMANDS,
                         ids=[" ".join(c[0][:3]) for c in COMMANDS])
def test_no_line_ends_in_blanks(tmp_path, args, status, holds):
    r = run_cli([str(tmp_path / "out") if a == "{tmp}" else a for a in args])
    assert r.exit_code == status, r.output
    lines = r.output.splitlines()
    assert any(line.startswith(holds) for line in lines), (holds, r.output)
    padded = [line for line in lines if line != line.rstrip()]
    assert not padded, padded


def test_infeasible_row_keeps_its_cells_apart(tmp_path):
    """The '-' of the latency and the word 'infeasible' were written together
    ('-infeasible'); the other networks' columns stay where the header puts them."""
    r = run_cli(["study", "lite-gpu", "--out", tmp_path / "out", "--models", "DeepSeek-V3",
                 "--gpus", "Lite", "--no-fabric", "--networks", "ring,ideal"])
    lines = r.output.splitlines()
    head = next(line for line in lines if line.startswith("phase "))
    row = next(line for line in lines if line.startswith("decode  DeepSeek-V3     Lite"))
    assert "-infeasible" not in row and " infeasible" in row
    assert len(row) == len(head), (head, row)   # the ideal network's cells under its header


# ------------------------------------------------------------------ the ring's line
RING_LINE = re.compile(r"collectives: ring alpha-beta over scale-up bandwidth \((\S+) GB/s at "
                       r"(\S+)% link efficiency, (\S+) us per step;")


def test_ring_line_gives_every_number_of_the_time():
    """A reader derives a ring all-reduce from infer's collectives line: 2(n-1)/n x S over
    (bandwidth x efficiency) plus 2(n-1) steps. 196.6 MB on 8 H100s: 344.05 MB / (450 GB/s x
    0.92) = 831.04 us, + 14 x 1.9 us = 857.64 us, the model's own time; the line without the
    efficiency gave 764.6 + 26.6 = 791.2 us. The ring is the calibrated mode's collectives
    (--profile); without a profile the line names the scale-up bound and its numbers: one
    0.6 us step and S over 450 GB/s in the switch, 437.49 us."""
    from compute.hardware import get_gpu
    from compute.roofline import default_comm, ring_comm

    r = run_cli(["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "8",
                 "--batch", "8", "--profile", "vllm-dgx-h100"])
    m = RING_LINE.search(r.output)
    assert m, r.output
    bw, eff, step = float(m[1]) * 1e9, float(m[2]) / 100, float(m[3]) * 1e-6
    n, size = 8, 196.6e6
    derived = 2 * (n - 1) / n * size / (bw * eff) + 2 * (n - 1) * step
    assert derived == pytest.approx(857.64e-6, abs=0.01e-6)
    model = float(ring_comm(get_gpu("H100-SXM")).collective_time("all-reduce", size, n))
    assert derived == pytest.approx(model, rel=1e-9)
    r = run_cli(["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "8",
                 "--batch", "8"])
    m = re.search(r"collectives: lower bound over scale-up switch algorithms \(the least of "
                  r"ring, one-shot, two-shot and in-switch all-reduce, direct other "
                  r"collectives; (\S+) GB/s at (\S+)% link efficiency, (\S+) us per step;",
                  r.output)
    assert m, r.output
    bw, eff, step = float(m[1]) * 1e9, float(m[2]) / 100, float(m[3]) * 1e-6
    derived = step + size / (bw * eff)
    assert derived == pytest.approx(437.49e-6, abs=0.01e-6)
    model = float(default_comm(get_gpu("H100-SXM")).collective_time("all-reduce", size, n))
    assert derived == pytest.approx(model, rel=1e-9)


# ------------------------------------------------------------------ counts and their nouns
def test_topology_show_counts_one_in_the_singular():
    """Two GPUs on one cable: one edge, one hop, one shortest path ('1 edges', '1 GPU-to-GPU
    hops', '1 shortest path(s) of 1 hops' before); 36 lanes (18 NVLinks x 2 ends) stay
    plural."""
    r = run_cli(["topology", "show", "full-mesh:n=2"])
    assert r.exit_code == 0, r.output
    lines = {line.split(":")[0]: line for line in r.output.splitlines()}
    assert lines["links"].startswith("links:       1 edge;")
    assert lines["diameter"] == "diameter:    1 GPU-to-GPU hop (closed form)"
    assert lines["paths"] == "paths:       1 shortest path of 1 hop from gpu0 to gpu1"
    assert ", 36 lanes" in lines["optics"] and "0 pluggable transceivers" in lines["optics"]


def test_serve_says_one_stream():
    """TP 1 pools move each request's KV cache on one GPU pair: '1 stream' ('1 streams')."""
    r = run_cli(["serve", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--rate",
                 "100000"])
    kv = next(line for line in r.output.splitlines() if line.startswith("  KV cache"))
    assert "(TP 1)" in r.output and ", 1 stream: " in kv, r.output


def test_topology_show_groups_thousands():
    """superpod: 31 DGX servers x 8 GPUs x 18 NVLinks = 4,464 board traces, written as the
    other counts are ('board traces: 4464' beside '1,008 pluggable transceivers'; a count
    past a million of cables was '1.57286e+06')."""
    r = run_cli(["topology", "show", "superpod"])
    assert r.exit_code == 0, r.output
    assert "; board traces: 4,464" in r.output and "GPUs:        248 (248 x H100-SXM)" in r.output
    assert not re.search(r"\d{4}", r.output.split("fabric:")[1].split("\n", 1)[1]), r.output


# ------------------------------------------------------------------ single-switch, docs vs tool
def test_fabrics_page_says_what_single_switch_counts():
    """docs/fabrics.md called single-switch 'one HGX board by default' while the tool counts
    one link a GPU (8 traces, 8 of 8 ports); an HGX H100 board's 8 GPUs x 18 NVLinks are
    144. The page now says it is a generic one-switch fabric and quotes both counts, which
    must be what topology show prints."""
    from tests.netmodel.cli_helpers import ROOT

    page = " ".join((ROOT / "docs" / "fabrics.md").read_text().split())
    assert "`single-switch` (one HGX board" not in page
    default = run_cli(["topology", "show", "single-switch"]).output
    board = run_cli(["topology", "show", "single-switch:links=18"]).output
    for quoted, out in (("board traces: 8", default), ("switches 8 of 8 used", default),
                        (f"board traces: {8 * 18}", board),
                        (f"switches {8 * 18} of {8 * 18} used", board)):
        assert f"`{quoted}`" in page and quoted in out, (quoted, out)
