"""A cell of a search's grid is its configuration's `evaluate` to the last bit (issue 11,
item 2: the same configuration gets the same numbers from every command).

`netmodel infer --json` (compute.evaluate_one's scalar path) and `netmodel search --json`,
`compare.json` and `sweep.json` (cells of compute.roofline.evaluate_grid over batches
1..1024) gave the same plain-TP step a `latency_s` one unit in the last place apart in about
half the configurations: Llama-3-70B decode on lite-flat, TP 16, batch 165,
`--overlap-collectives`: infer 0.03507698205587596 s, search and compare
0.035076982055875956 s. The scalar path added a step's 9 stages in the order numpy's
pairwise sum adds a one-cell grid's, but a grid of many cells (a search's) sums
``(counts x stage times).sum(axis=0)`` one stage after another. Every path now adds them
one after another (compute.roofline.stage_sum), as the many-cell grids and the pipelined
grids' pass always did, so search, compare and sweep keep their numbers and infer joins
them.

Hand-derived step of the first case (Llama-3-70B decode on 2 x H100-SXM, batch 7, context
1513, the default collectives, the scale-up bound: 450 GB/s, 0.6 us a step, and H100's
switch reduces; HBM 3.35 TB/s; every stage
memory-bound, per GPU, 80 layers):
  qkv       (8192 x 40 heads x 128 x 2 B weights + 7 x (8192 + 5120) x 2 B) = 84.07 MB
            / 3.35 TB/s = 25.10 us
  attention 7 x 1513 x 4 KV heads x 128 x 2 (K, V) x 2 B + q/out = 21.82 MB: 6.513 us
  out_proj  4096 x 8192 x 2 B + activations = 67.28 MB: 20.08 us
  mlp_up    8192 x 2 x 14336 x 2 B + activations = 470.1 MB: 140.3 us
  mlp_down  14336 x 8192 x 2 B + activations = 235.2 MB: 70.21 us
  2 all-reduces of 7 x 8192 x 2 B = 114,688 B on 2 GPUs, in the switch:
            0.6 us + 114,688 / 450e9 = 0.6 + 0.2549 = 0.8549 us each
  a layer 25.10 + 6.513 + 20.08 + 140.3 + 70.21 + 2 x 0.8549 = 263.91 us, x 80 = 21.113 ms;
  + the embedding's all-reduce 0.855 us + the LM head reading 8192 x 64128 x 2 B = 1.05 GB
  (313.9 us) = 21.428 ms (with the ring, 1.9 us a step at 0.92 x 450 GB/s: 4.077 us an
  all-reduce and 21.947 ms a step). Old code: grid and evaluate one ulp apart; now the same.
"""

from __future__ import annotations

import numpy as np
import pytest

from compute.evaluate_one import evaluate
from compute.roofline import evaluate_grid, make_workload
from compute.roofline_options import RooflineOptions

BATCHES = np.arange(1, 1025)
OPTIONS = [None, RooflineOptions(mode="serial"), RooflineOptions(overlap_collectives=True)]


def test_hand_derived_step_is_the_grid_cell():
    """The hand-derived 21.428 ms step above, the same float from the grid and from
    evaluate (the old evaluate was one ulp below)."""
    grid = evaluate_grid("Llama-3-70B", "H100-SXM", [2, 4, 8], BATCHES,
                         make_workload("decode"))
    one = evaluate("Llama-3-70B", "H100-SXM", 2, 7, "decode")
    assert one.latency == pytest.approx(21.428e-3, rel=2e-4)
    assert float(grid.latency[0, 6]) == one.latency


@pytest.mark.parametrize("options", OPTIONS, ids=["overlap", "serial", "overlap-collectives"])
@pytest.mark.parametrize("gpu, tps", [("H100-SXM", [2, 4, 8]), ("Lite", [8, 16, 32])])
@pytest.mark.parametrize("phase", ["decode", "prefill"])
def test_every_cell_is_evaluate_to_the_last_bit(options, gpu, tps, phase):
    """Sampled cells of a search-sized grid equal `evaluate` exactly (old code: 4 to 10 of
    each 18 differed by one ulp), NaN where the configuration is not timed alike."""
    grid = evaluate_grid("Llama-3-70B", gpu, tps, BATCHES, make_workload(phase),
                         options=options)
    for i, tp in enumerate(tps):
        for b in (1, 7, 64, 165, 333, 1000):
            got = float(grid.latency[i, b - 1])
            want = evaluate("Llama-3-70B", gpu, tp, b, phase, options=options).latency
            assert got == want or (np.isnan(got) and np.isnan(want)), (tp, b, got, want)


@pytest.mark.parametrize("options", OPTIONS, ids=["overlap", "serial", "overlap-collectives"])
@pytest.mark.parametrize("phase", ["decode", "prefill"])
def test_one_cell_time_split_is_the_search_grids_cell(options, phase):
    """The split of a step into compute, memory and network seconds (compare's and sweep's
    split columns, evaluate_many's) is added stage after stage too: a one-cell grid's split
    summed its stages with numpy's sum(axis=0), pairwise, where a search-sized grid adds them
    one after another, so the same configuration's split came one ulp apart in some cells
    (helper 227's reading of 2c37e54). Each part of the split equals the many-cell grid's to
    the last bit, and the parts add up to the step as latency does."""
    kw = {"options": options} if options else {}
    work = make_workload(phase)
    grid = evaluate_grid("Llama-3-70B", "H100-SXM", [2, 4, 8], BATCHES, work, **kw)
    many = grid.time_split()
    for i, tp in enumerate([2, 4, 8]):
        for j in (0, 6, 164, 511, 1023):
            one = evaluate_grid("Llama-3-70B", "H100-SXM", [tp], BATCHES[j:j + 1], work, **kw)
            if not one.fits[0, 0]:
                continue
            split = one.time_split()
            assert set(split) == set(many)
            for r in split:
                assert float(split[r][0, 0]) == float(many[r][i, j]), (tp, j, r)
            parts = sum(float(v[0, 0]) for v in split.values())
            assert parts == pytest.approx(float(one.latency[0, 0]), rel=1e-12)
