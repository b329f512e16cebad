#!/usr/bin/env python
"""Print the collective model's error against published nccl-tests measurements.

`python scripts/accuracy_collectives.py [--markdown]`

Compares all-reduce busbw, size by size, with every curve of ``../shared/reference`` (beside
the project root: 8xH200 and 8xA100 sweeps, H100 by GPU count, small-message times) and the
published results cited in ``tests/netmodel/data/nccl_allreduce_published.csv`` (8xH100,
8xH800, 4xGB200, 4xGB300, 8xB200 and 8xB300 NVLink systems, 8 GB200 or GB300 of two trays over
MNNVL, a 72-GPU NVL72 rack and 64 GPUs of a GB300 rack, and 16 to 1,984 GPUs across nodes
over InfiniBand with and without SHARP, RoCE (16-40 H100; 128 and 192 GB200 or GB300 GPUs on 2-3
racks), Ethernet (16-128 B300), AWS EFA (16-256 H100) and GCP GPUDirect-TCPXO (16 H100)). The
model: each system's fabric from
:func:`topologies.build`, the shipped defaults (NCCL's constants, taken once, never fitted
to these curves) and ``auto`` over NCCL's algorithms (``algorithms="nccl"``) unless the
measurement forced one, or a tuner plugin chose (a row's nccl_algorithm 'auto (PLUGIN tuner
plugin, PLATFORM)': AWS's p5 runs): then the plugin's published choice where it makes one
(:mod:`netmodel.collectives.tuner_plugin`). Where NCCL's own tuner chose (nccl_algorithm
'auto...' naming no plugin) the model chooses as NCCL's tuner would, the tuner ``nccl``
(:class:`~netmodel.collectives.tuner_plugin.NcclTuner`: Ring, Tree, NVLS and NVLSTree
priced by NCCL's formulas, the chosen pair costed by the model; elsewhere, where CollNet or
NVLS across nodes can run or a scale-up domain holds more than 8 GPUs, the model's auto): so
the model reproduces NCCL's choice where a source states it (NVIDIA/nccl issue 1801's ring)
rather than taking the fastest of its own costs. Error is model / measured - 1.

Regions and targets (issue 11): on 8-GPU NVLink systems busbw within 10% at >= 256 MiB,
within 25% from 1 MiB to 128 MiB, within 2x below 1 MiB; across nodes (>= 16 GPUs) within
25% at >= 64 MiB. Without ``../shared/reference`` only the cited curves are compared.
Other ops (all-gather, reduce-scatter, all-to-all, broadcast, reduce, send-recv), from
``tests/netmodel/data/nccl_ops_published.csv``: its measured sweeps size by size, against the
same regions and targets as all-reduce, with the launch floor below where the run's
``gpus_per_thread`` is known, as for all-reduce; its single large-message points (a
maintainer's figure or closed form) against the large-message targets.

nccl-tests' launch: a run with ``-g N`` (one host thread driving N GPUs) times iterations of
ncclGroupStart, one ncclAllReduce (or the op's call: every op's test runs the same loop) per
GPU, ncclGroupEnd, issued back to back and waited for once (NVIDIA/nccl-tests src/common.cu,
BenchTime/startColl); NCCL's ncclGroupEnd prepares and
launches each GPU's kernel in turn on that thread (NVIDIA/nccl src/group.cc, doLaunches). So an
iteration takes the longer of the collective and N launches, ``N x`` the per-GPU host cost of
``tests/netmodel/data/nccl_tests_launch.toml`` (~5 us, NCCL's maintainer). Curves whose launch
is known (``gpus_per_thread``) are also shown with that floor ("model + launch"): a
property of the harness, not of the cluster, so the plain model is always shown beside it and
the library's collective model does not include it.

NCCL releases: each curve is costed with the constants of the NCCL release its run printed
(the data files' ``nccl`` column; :attr:`netmodel.collectives.calibration.Calibration.nccl_release`,
the values of ``netmodel/data/collective_generations.toml`` by release); a curve whose
source names none with the newest the data file holds (the library's default), one of a
release past the file's range with the newest and one before it with the oldest, each
curve's heading saying which. A run whose source names no release but whose measurements
show a release's rule (the ``nccl`` column ``<=2.28``: the data file's comments say which
measurement shows it) is costed with the newest release the file holds at or below it.
"""

from __future__ import annotations

import csv
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT.parent / "shared" / "reference"
PUBLISHED = ROOT / "tests" / "netmodel" / "data" / "nccl_allreduce_published.csv"
PUBLISHED_OPS = ROOT / "tests" / "netmodel" / "data" / "nccl_ops_published.csv"
LAUNCH = ROOT / "tests" / "netmodel" / "data" / "nccl_tests_launch.toml"

MIB = 2 ** 20
#: (name, lower bound of size, upper bound (exclusive), bound on the error, kind)
REGIONS_8GPU = (("< 1 MiB", 0, MIB, 2.0, "factor"), ("1-128 MiB", MIB, 129 * MIB, 0.25, "rel"),
                (">= 256 MiB", 256 * MIB, float("inf"), 0.10, "rel"))
REGION_MULTI = (">= 64 MiB", 64 * MIB, float("inf"), 0.25, "rel")
#: The most GPUs of one NVLink system: a curve of up to this many is held to
#: :data:`REGIONS_8GPU`, a larger one to :data:`REGION_MULTI`.
SYSTEM_GPUS = 8


def _rows(path):
    with open(path) as fh:
        return list(csv.DictReader(line for line in fh if not line.startswith("#")))


def launch_cost() -> float:
    """Seconds of host time per GPU per collective in nccl-tests (:data:`LAUNCH`)."""
    import tomllib

    with open(LAUNCH, "rb") as fh:
        return float(tomllib.load(fh)["launch"]["per_gpu_s"])


def _fmt_size(n: float) -> str:
    from compute.units import format_bytes

    return format_bytes(n).replace(" ", "")


# ------------------------------------------------------------------ curves


class Curve:
    """One measured curve of ``op`` (all-reduce unless named) and the model's busbw at its
    sizes. ``gpus_per_thread``: GPUs one host thread of the run drove (nccl-tests' ``-g``; 1
    for one rank per GPU; None where not known); where known, :attr:`harness` is the model's
    busbw with nccl-tests' launch floor (module docstring)."""

    def __init__(self, key, system, fabric, gpus, algorithm, sizes, measured, source,
                 target=True, note="", op="all-reduce", gpus_per_thread=None, tuner=None,
                 buffsize=None, release="", nccl_chose=False):
        self.key, self.system, self.fabric, self.gpus = key, system, fabric, gpus
        self.tuner = tuner      # (plugin, platform) whose tuner chose, or None: NCCL's
        self.algorithm, self.sizes, self.measured = algorithm, sizes, measured
        self.source, self.target, self.note, self.op = source, target, note, op
        self.gpus_per_thread = gpus_per_thread
        self.buffsize = buffsize    # the run's NCCL_BUFFSIZE (bytes), or None: NCCL's default
        self.release = release      # the run's NCCL release as its source prints it, or ""
        self.nccl_chose = nccl_chose    # NCCL's own tuner chose the run's algorithms
        self.model = self.choice = self.time = self.harness = None

    def run(self) -> Curve:
        import numpy as np

        from netmodel.collectives.calibration_files import default_calibration
        from netmodel.collectives.model import FabricCostModel
        from netmodel.collectives.tuner_plugin import NCCL_TUNER, TunerPlugin
        from topologies import build

        # auto, auto:A,B (auto over those of NCCL's algorithms the run left enabled) or one
        kind, _, names = self.algorithm.partition(":")
        alg = None if kind == "auto" else self.algorithm
        # a plugin's tuner chooses under auto as the run's did (FabricCostModel's tuner);
        # where NCCL's own tuner chose, its emulation chooses ('nccl': where Ring, Tree,
        # NVLS and NVLSTree are the only candidates; elsewhere the model's auto)
        tuner = (NCCL_TUNER if self.nccl_chose and kind == "auto" else None) \
            if self.tuner is None else TunerPlugin.load(*self.tuner)
        cal = default_calibration().with_(nccl_release=emulated(self.release)[0])
        if self.buffsize is not None:
            cal = cal.with_(simple_buffer=self.buffsize)
        model = FabricCostModel(build(self.fabric), validated=True, tuner=tuner,
                                algorithms=tuple(names.split(",")) if names else "nccl",
                                calibration=cal)
        sw = model.sweep(self.op, np.asarray(self.sizes, dtype=float), self.gpus, alg)
        self.model = sw.busbw / 1e9
        self.time = sw.time
        self.choice = [f"{a}/{p}" for a, p in zip(sw.algorithm, sw.protocol, strict=True)]
        if self.gpus_per_thread is not None:
            # the thread issues its GPUs' launches one after another; an iteration takes the
            # longer of that and the collective (busbw scales as 1 / time at a given size)
            floor = self.gpus_per_thread * launch_cost()
            self.harness = np.where(sw.time >= floor, self.model, self.model * sw.time / floor)
        return self

    def errors(self):
        return [m / x - 1 for m, x in zip(self.model, self.measured, strict=True)]

    def worst(self, lo, hi, kind, model=None):
        """The worst error (``rel``: largest ``|model/measured - 1|``; ``factor``: largest
        ratio either way) over sizes in ``[lo, hi)``, or None without one; ``model``: busbw
        to use instead of the plain model's (:attr:`harness`)."""
        model = self.model if model is None else model
        vals = [(m, x) for n, m, x in zip(self.sizes, model, self.measured, strict=True)
                if lo <= n < hi]
        if not vals:
            return None
        if kind == "factor":
            return max(max(m / x, x / m) for m, x in vals)
        return max(abs(m / x - 1) for m, x in vals)


def emulated(release: str) -> tuple[str, str]:
    """``(the release the model emulates for a run of NCCL release, how the heading says
    it)``: the run's own where the data file covers it, else the nearest release it covers;
    its newest where the source names none; for ``<=X`` (none stated, at most X inferred
    from the run's measurements) the newest it covers at or below X."""
    from netmodel.collectives.calibration_files import default_calibration
    from netmodel.collectives.calibration_generations import parse_release, release_text

    covered = default_calibration().releases
    newest = release_text(covered.newest)
    if not release:
        return newest, f"NCCL release not stated: {newest}'s constants"
    if release.startswith("<="):
        top = min(parse_release(release[2:], "nccl"), covered.newest)
        if top < covered.oldest:
            top = covered.oldest
        return (release_text(top), f"NCCL release not stated, {release} inferred: "
                f"{release_text(top)}'s constants")
    r = parse_release(release, "nccl")
    if covered.oldest <= r <= covered.newest:
        return release, f"NCCL {release}'s constants"
    near = covered.newest if r > covered.newest else covered.oldest
    return (release_text(near), f"NCCL {release}, outside the data file's releases "
            f"({covered.covered()}): {release_text(near)}'s constants")


def shared_curves() -> list[Curve]:
    """The 8-GPU sweeps of ../shared/reference (empty where it is absent)."""
    if not REFERENCE.is_dir():
        return []
    rows = _rows(REFERENCE / "nccl_allreduce_busbw_8gpu.csv")
    out = []
    # the builder's default reduction follows the GPU: NVLS on H200, none on A100. Both are
    # Azure's guide, whose Benchmarks/NVIDIA/NCCLBandwidth.py runs one all_reduce_perf with
    # '-g <GPUs of the host>' (Azure/AI-benchmarking-guide issue 7): 8 GPUs per thread
    for key, prefix, gpu in (("h200-8", "8xH200", "H200-SXM"),
                             ("a100-8", "8xA100", "A100-SXM-80GB")):
        sel = [r for r in rows if r["system"].startswith(prefix)]
        out.append(Curve(key, sel[0]["system"] + f" (NCCL {sel[0]['nccl']})",
                         f"single-switch:n=8,gpu={gpu}", 8, "auto",
                         [float(r["bytes"]) for r in sel], [float(r["busbw_GBps"]) for r in sel],
                         "../shared/reference/nccl_allreduce_busbw_8gpu.csv: " + sel[0]["source"],
                         gpus_per_thread=8, release=sel[0]["nccl"]))
    return out


def tuner_of(nccl_algorithm: str):
    """``(plugin, platform)`` for a run whose algorithms a tuner plugin chose (its
    nccl_algorithm reads 'auto (PLUGIN tuner plugin, PLATFORM)'), else None (where NCCL's
    own tuner chose, :class:`Curve` costs with the tuner ``nccl``, NCCL's emulated)."""
    m = re.fullmatch(r"auto \((\S+) tuner plugin, (\S+)\)", nccl_algorithm)
    return (m[1], m[2]) if m else None


def cited_curves() -> list[Curve]:
    """The curves of tests/netmodel/data/nccl_allreduce_published.csv, in file order; a
    source 'same' is the row above's (a case may start with it: a second run of one source)."""
    out: dict = {}
    last = ""
    for r in _rows(PUBLISHED):
        r["source"] = last = last if r["source"] == "same" else r["source"]
        c = out.get(r["case"])
        if c is None:
            c = out[r["case"]] = Curve(r["case"], r["system"], r["fabric"], int(r["gpus"]),
                                       r["model_algorithm"], [], [], r["source"],
                                       r["target"] == "yes", r["note"],
                                       gpus_per_thread=int(r["gpus_per_thread"])
                                       if r["gpus_per_thread"] else None,
                                       tuner=tuner_of(r["nccl_algorithm"]),
                                       buffsize=float(r["nccl_buffsize"])
                                       if r["nccl_buffsize"] else None,
                                       release=r["nccl"],
                                       nccl_chose=nccl_chose(r["nccl_algorithm"]))
        c.sizes.append(float(r["bytes"]))
        c.measured.append(float(r["busbw_GBps"]))
    return list(out.values())


def nccl_chose(nccl_algorithm: str) -> bool:
    """Whether NCCL's own tuner chose the run's algorithm: its nccl_algorithm reads 'auto'
    first (NCCL_ALGO unset; NVLS or CollNet on or off) and names no tuner plugin."""
    return nccl_algorithm.startswith("auto") and tuner_of(nccl_algorithm) is None


def _ops_rows():
    """The rows of nccl_ops_published.csv with each 'same' replaced by the value above."""
    rows, last = _rows(PUBLISHED_OPS), {}
    for r in rows:
        for k in ("source", "note"):
            r[k] = last[k] if r[k] == "same" else r[k]
            last[k] = r[k]
    return rows


def ops_curves() -> list[Curve]:
    """The measured sweeps of nccl_ops_published.csv, one curve per (case, op), each op's
    system named ``system: op``, the model auto over NCCL's algorithms; the run's
    ``gpus_per_thread`` as the all-reduce file's (nccl-tests' timed loop is the same for
    every op: one launch per GPU an iteration)."""
    out: dict = {}
    for r in _ops_rows():
        if r["kind"] != "measured":
            continue
        c = out.get((r["case"], r["op"]))
        if c is None:
            c = out[r["case"], r["op"]] = Curve(
                f"{r['case']}/{r['op']}", f"{r['system']}: {r['op']}", r["fabric"],
                int(r["gpus"]), "auto", [], [], r["source"], note=r["note"], op=r["op"],
                release=r["nccl"],
                gpus_per_thread=int(r["gpus_per_thread"]) if r["gpus_per_thread"] else None)
        c.sizes.append(float(r["bytes"]))
        c.measured.append(float(r["busbw_GBps"]))
    return list(out.values())


# ------------------------------------------------------------------ tables


def _table(head, rows, markdown) -> list[str]:
    if markdown:
        return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + \
            ["| " + " | ".join(r) + " |" for r in rows]
    widths = [max(len(x) for x in col) for col in zip(head, *rows, strict=True)]
    return ["  ".join(x.rjust(w) for x, w in zip(r, widths, strict=True)) for r in [head, *rows]]


def sweep_tables(curves, markdown) -> list[str]:
    """Size by size: measured, model, error and the model's choice, per system."""
    out = []
    for c in curves:
        # who chooses under auto: the tuner nccl where NCCL's own tuner chose (Curve.compute)
        chooser = "the tuner nccl, else auto," if c.nccl_chose and c.tuner is None else "auto"
        out.append(f"**{c.system}**, {c.gpus} GPUs (`{c.fabric}`"
                   + ((", model: the tuner nccl, else auto" if chooser != "auto" else "")
                      if c.algorithm == "auto" else
                      f", model{':' if chooser != 'auto' else ''} {chooser} over {c.algorithm[5:].replace(',', ', ')}"
                      if c.algorithm.startswith("auto:") else f", model algorithm {c.algorithm}")
                   + ("" if c.buffsize is None else
                      f", NCCL_BUFFSIZE {_fmt_size(c.buffsize)} as the run set it")
                   + f", {emulated(c.release)[1]}"
                   + f"). Source: {c.source}." + (f" {c.note}." if c.note else ""))
        rows = [[_fmt_size(n), f"{x:.2f}", f"{m:.2f}", f"{m / x - 1:+.0%}", ch]
                for n, x, m, ch in zip(c.sizes, c.measured, c.model, c.choice, strict=True)]
        head = ["size", "measured", "model", "err", "model choice"]
        if c.harness is not None and c.gpus_per_thread > 1:
            # one thread drove several GPUs: the model with nccl-tests' launch floor beside it
            floor = c.gpus_per_thread * launch_cost()
            out[-1] += (f" One thread drove {c.gpus_per_thread} GPUs: model + launch is the model"
                        f" with nccl-tests' floor of {c.gpus_per_thread} launches"
                        f" ({floor * 1e6:.0f} us) per iteration.")
            for row, h, x in zip(rows, c.harness, c.measured, strict=True):
                row[4:4] = [f"{h:.2f}", f"{h / x - 1:+.0%}"]
            head[4:4] = ["model + launch", "err"]
        out.append("")
        out += _table(head, rows, markdown)
        out.append("")
    return out


def _worst_text(value, kind) -> str:
    """A worst error as the tables show it: a factor (``1.23x``) or a share (``12%``)."""
    return f"{value:.2f}x" if kind == "factor" else f"{value:.0%}"


def _cell(value, bound, kind) -> str:
    if value is None:
        return "-"
    return _worst_text(value, kind) + ("" if value <= bound else " (over)")


def summary_8gpu(curves, markdown) -> list[str]:
    """Worst error per region for the 8-GPU (and smaller) NVLink systems; a curve the data
    file marks as no target (a peak whose size was not published) is shown as such."""
    head = ["system"] + [f"{name} (target {bound:.0%})" if kind == "rel" else
                         f"{name} (target {bound:g}x)" for name, _, _, bound, kind in REGIONS_8GPU]
    rows = [[c.system] + [_cell(c.worst(lo, hi, kind), bound, kind) if c.target else
                          _not_target(c.worst(lo, hi, kind), kind)
                          for _, lo, hi, bound, kind in REGIONS_8GPU] for c in curves]
    return _table(head, rows, markdown)


def summary_launch(curves, markdown) -> list[str]:
    """Worst error per region, the plain model and the model with nccl-tests' launch floor,
    for the curves whose launch is known (:attr:`Curve.gpus_per_thread`)."""
    head = ["system", "GPUs a thread"] + [
        f"{name} (target {bound:.0%})" if kind == "rel" else f"{name} (target {bound:g}x)"
        for name, _, _, bound, kind in REGIONS_8GPU]
    rows = []
    for c in curves:
        if c.harness is None:
            continue
        cells = []
        for _, lo, hi, bound, kind in REGIONS_8GPU:
            plain, adj = c.worst(lo, hi, kind), c.worst(lo, hi, kind, c.harness)
            if plain is None:
                cells.append("-")
            elif c.target:
                cells.append(f"{_cell(plain, bound, kind)} -> {_cell(adj, bound, kind)}")
            else:
                cells.append(f"{_worst_text(plain, kind)} -> {_not_target(adj, kind)}")
        rows.append([c.system, str(c.gpus_per_thread)] + cells)
    return _table(head, rows, markdown)


def _not_target(value, kind) -> str:
    if value is None:
        return "-"
    return _worst_text(value, kind) + " (not a target)"


def summary_multi(curves, markdown) -> list[str]:
    name, lo, hi, bound, kind = REGION_MULTI
    rows = []
    for c in curves:
        w = c.worst(lo, hi, kind)
        rows.append([c.system, str(c.gpus), _cell(w, bound, kind) if c.target else
                     (f"{w:.0%} (not a target)" if w is not None else "-"),
                     ", ".join(dict.fromkeys(c.choice))])
    return _table(["system", "GPUs", f"worst error {name} (target {bound:.0%})",
                   "model choice"], rows, markdown)


def point_table(markdown: bool) -> list[str]:
    """The single points of ../shared/reference: H100 busbw by GPU count, small-message
    times."""
    if not REFERENCE.is_dir():
        return []
    from netmodel.collectives.model import FabricCostModel
    from topologies import single_switch

    lines = []
    for r in _rows(REFERENCE / "nccl_allreduce_h100_by_gpu_count.csv"):
        p = int(r["gpus"])
        alg = "ring" if r["algorithm"].startswith("Ring") else \
            ("in-network" if r["algorithm"] == "NVLS" else None)
        model = FabricCostModel(single_switch(p), algorithms="nccl")
        res = model.cost("all-reduce", 2.0 ** 32, p, alg)
        lines.append((f"{p} H100, {r['algorithm']}, busbw at 4 GiB (GB/s)",
                      float(r["busbw_GBps"]), res.busbw / 1e9,
                      f"{res.algorithm}/{res.protocol}"))
    for r in _rows(REFERENCE / "nccl_small_message_latency.csv"):
        p = int(r["gpus"])
        lo = float(r["bytes"].split("-")[0])
        t_meas = float(r["time_us"].split("-")[0])
        model = FabricCostModel(single_switch(p), algorithms="nccl")
        res = model.cost("all-reduce", lo, p)
        lines.append((f"{p} GPUs all-reduce {int(lo)} B, time (us)", t_meas, res.time * 1e6,
                      f"{res.algorithm}/{res.protocol}"))
    rows = [[c, f"{m:g}", f"{v:.1f}", f"{v / m - 1:+.0%}", a] for c, m, v, a in lines]
    return _table(["case", "measured", "model", "err", "model choice"], rows, markdown)


def ops_table(markdown: bool) -> list[str]:
    """The single large-message points of other ops (``nccl_ops_published.csv``, all but
    its measured sweeps), against the large-message targets: 10% on one NVLink system, 25%
    across nodes."""
    from netmodel.collectives.calibration_files import default_calibration
    from netmodel.collectives.model import FabricCostModel
    from topologies import build

    rows = []
    for r in _ops_rows():
        if r["kind"] == "measured":
            continue
        p = int(r["gpus"])
        cal = default_calibration().with_(nccl_release=emulated(r["nccl"])[0])
        model = FabricCostModel(build(r["fabric"]), algorithms="nccl", validated=True,
                                calibration=cal)
        res = model.cost(r["op"], float(r["bytes"]), p)
        meas, bus = float(r["busbw_GBps"]), res.busbw / 1e9
        bound = REGIONS_8GPU[-1][3] if p <= SYSTEM_GPUS else REGION_MULTI[3]
        rows.append([r["system"], r["op"], _fmt_size(float(r["bytes"])), f"{meas:g}",
                     r["kind"], f"{bus:.1f}", f"{bus / meas - 1:+.0%}"
                     + ("" if abs(bus / meas - 1) <= bound else " (over)"),
                     f"{res.algorithm}/{res.protocol}"])
    return _table(["system", "op", "size", "published", "kind", "model", "err", "model choice"],
                  rows, markdown)


def _by_size(curves: list[Curve]) -> tuple[list[Curve], list[Curve]]:
    """``(curves of one NVLink system, larger ones)`` (:data:`SYSTEM_GPUS`), in order."""
    return ([c for c in curves if c.gpus <= SYSTEM_GPUS],
            [c for c in curves if c.gpus > SYSTEM_GPUS])


def report(markdown: bool) -> list[str]:
    systems, large = _by_size([c.run() for c in shared_curves() + cited_curves()])
    out = ["Worst error by region, NVLink systems of every generation (1 KiB-8 GiB; single "
           "points: 8xB200, 8xB300 and 2 GB200 trays over MNNVL at a published peak, 2 GB300 "
           "trays at 16 GiB, 8xB300 (OCI) at 8 GiB, a GB200 tray (OCI) at 4 and 8 GiB; 'one "
           "process driving 8 GPUs (-g 8)' marks runs whose small-message floor includes one "
           "thread launching every GPU's kernel, next table; the model alone):", ""]
    out += summary_8gpu(systems, markdown) + [""]
    out += [f"The same, for the runs whose launch is known: the plain model -> the model with "
            f"nccl-tests' launch floor (one host thread launches each of its GPUs' kernels in "
            f"turn, {launch_cost() * 1e6:g} us each, NVIDIA/nccl-tests issue 123; an iteration "
            f"takes the longer of the collective and those launches; 'GPUs a thread' 1: one "
            f"process per GPU; tests/netmodel/data/nccl_tests_launch.toml):", ""]
    out += summary_launch(systems, markdown) + [""]
    out += ["Worst error at >= 64 MiB, a large NVLink domain and across nodes:", ""]
    out += summary_multi(large, markdown) + [""]
    points = point_table(markdown)
    if points:
        out += ["Single points (../shared/reference): large-message busbw on H100 by GPU count "
                "and small-message times:", ""] + points + [""]
    ops = [c.run() for c in ops_curves()]
    ops_systems, ops_large = _by_size(ops)
    out += ["Other ops, measured sweeps (tests/netmodel/data/nccl_ops_published.csv; busbw "
            "in GB/s by nccl-tests' definition for the op), worst error by region on one "
            "NVLink system:", ""] + summary_8gpu(ops_systems, markdown) + [""]
    out += ["Other ops, the same for the runs whose launch is known: the plain model -> the "
            "model with nccl-tests' launch floor (as for all-reduce above: the timed loop of "
            "NVIDIA/nccl-tests src/common.cu is the same for every op, one launch per GPU an "
            "iteration; 'GPUs a thread' from the run's -g, blank runs left out):", ""]
    out += summary_launch(ops_systems, markdown) + [""]
    out += ["Other ops, worst error at >= 64 MiB, a large NVLink domain and across nodes:", ""]
    out += summary_multi(ops_large, markdown) + [""]
    out += ["Other ops, single large-message points (a maintainer's figure or closed form; "
            "target 10% on one NVLink system, 25% across nodes):", ""]
    out += ops_table(markdown) + [""]
    out += ["Size by size:", ""] + sweep_tables(systems + large + ops_systems + ops_large,
                                                markdown)
    return out


def main(argv=()) -> None:
    """Print the report (``--markdown``: its tables in Markdown); ``-h`` prints the usage,
    and an unknown argument is argparse's error, exit status 2, before any work."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    markdown = parser.parse_args(list(argv)).markdown
    if not REFERENCE.is_dir():
        print(f"(reference data folder {REFERENCE} is absent: only the cited curves)")
    for line in report(markdown):
        print(line)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main(sys.argv[1:])
