"""The Lite-GPU study: the Python API, its files, and `netmodel study lite-gpu`."""

import csv
import io
import json

import pytest
from click.testing import CliRunner

from compute.comm import NoCommunication, RingAlphaBeta
from compute.errors import UserError
from compute.output_paths import MANIFEST
from compute.phases import Slo
from compute.roofline_options import RooflineOptions
from compute.search import search
from netmodel.cli.main import cli
from netmodel.study.lite_gpu import (
    DEFAULT_GPUS,
    DEFAULT_MODELS,
    STUDY_COLUMNS,
    run_full_study,
    run_lite_gpu_study,
    write_full_study,
    write_study,
)
from netmodel.study.progress import Progress
from netmodel.study.summary import summary_markdown


@pytest.fixture(scope="module")
def small_study():
    ring = run_lite_gpu_study(models=["Llama-3-70B"], gpus=["H100-SXM", "Lite", "Lite+BW"])
    ideal = run_lite_gpu_study(models=["Llama-3-70B"], gpus=["H100-SXM", "Lite", "Lite+BW"],
                               comm_factory=lambda g: NoCommunication(), network="ideal")
    return ring + ideal


def test_defaults_are_the_papers_grid():
    assert DEFAULT_MODELS == ("Llama-3-70B", "GPT-3-175B", "Llama-3.1-405B")
    assert DEFAULT_GPUS[0] == "H100-SXM" and len(DEFAULT_GPUS) == 6


def test_rows_are_the_searches_best(small_study):
    assert len(small_study.rows) == 2 * 3 * 2  # phases x gpus x networks
    for row, s in zip(small_study.rows, small_study.searches, strict=True):
        assert (row.model, row.gpu, row.phase) == (s.model, s.gpu, s.phase)
        assert row.tokens_per_s_per_sm == s.best.tokens_per_s_per_sm
        assert row.compute_s + row.memory_s + row.network_s == pytest.approx(row.latency_s)
    again = search("Llama-3-70B", "Lite", "decode")
    assert small_study.row("Llama-3-70B", "Lite", "decode").batch == again.best.batch


def test_vs_baseline_divides_by_h100_in_the_same_network(small_study):
    for net in ("ring", "ideal"):
        base = small_study.row("Llama-3-70B", "H100-SXM", "prefill", net)
        lite = small_study.row("Llama-3-70B", "Lite", "prefill", net)
        assert base.vs_baseline == 1.0
        assert lite.vs_baseline == pytest.approx(lite.tokens_per_s_per_sm
                                                 / base.tokens_per_s_per_sm)


def test_ideal_network_is_never_below_the_ring(small_study):
    for r in small_study.rows:
        if r.network == "ring":
            ideal = small_study.row(r.model, r.gpu, r.phase, "ideal")
            assert ideal.tokens_per_s_per_sm >= r.tokens_per_s_per_sm * (1 - 1e-12)
            assert ideal.network_s == 0.0


def test_comm_factory_gets_each_gpu():
    seen = []

    def factory(gpu):
        seen.append(gpu.name)
        return RingAlphaBeta(bandwidth=gpu.scaleup_bandwidth * 4)

    s = run_lite_gpu_study(models=["Llama-3-8B"], gpus=["H100-SXM", "Lite"],
                           phases=["decode"], comm_factory=factory, network="fat-ring")
    assert seen == ["H100-SXM", "Lite"] and s.networks == ("fat-ring",)


def test_infeasible_rows_carry_the_reason():
    s = run_lite_gpu_study(models=["Llama-3-70B"], gpus=["H100-SXM"], phases=["decode"],
                           max_batch=4, slo=Slo(tbt=1e-4))
    row = s.rows[0]
    assert not row.feasible and row.tp is None and "meets TBT" in row.reason
    assert "infeasible" in s.table()


def test_bad_study_arguments():
    with pytest.raises(UserError, match="unknown model"):
        run_lite_gpu_study(models=["Llama-9"])
    with pytest.raises(UserError, match="unknown phase"):
        run_lite_gpu_study(phases=["train"])


def test_write_study_files(tmp_path, small_study):
    written = write_study(small_study, tmp_path / "out")
    names = sorted(p.name for p in written)
    assert names == ["study.csv", "study.json", "tokens_per_sm.png"]
    out = tmp_path / "out"
    rows = list(csv.DictReader((out / "study.csv").open()))
    assert tuple(rows[0]) == STUDY_COLUMNS and len(rows) == 12
    d = json.loads((out / "study.json").read_text())
    assert d["study"] == "lite-gpu" and d["baseline"] == "H100-SXM"
    assert d["settings"]["networks"] == ["ring", "ideal"] and len(d["rows"]) == 12
    assert (out / "tokens_per_sm.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in out.iterdir()) == sorted([*names, MANIFEST])  # no temporary files left


def test_failed_plot_leaves_nothing_half_written(tmp_path, small_study, monkeypatch):
    import netmodel.study.lite_gpu_plots as plots

    def boom(*a, **k):
        raise RuntimeError("plot failed")

    monkeypatch.setattr(plots, "plot_tokens_per_sm", boom)
    with pytest.raises(RuntimeError):
        write_study(small_study, tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.fixture(scope="module")
def cli_study(tmp_path_factory):
    """One `study lite-gpu --no-plot` of every part, every scenario and both phases (its
    result and folder): the tests below only read it."""
    # Llama-3-70B: fewer, larger instances than Llama-3-8B's on every fabric, so the blast
    # radius of each scenario (the most of this run) takes a quarter of the time; the
    # smaller runs below take Llama-3-8B
    out = tmp_path_factory.mktemp("cli_study") / "results"
    r = CliRunner().invoke(cli, ["study", "lite-gpu", "--out", str(out), "--models",
                                 "Llama-3-70B", "--gpus", "H100-SXM,Lite", "--no-plot"])
    return r, out


def test_cli_lite_gpu_writes_and_prints(cli_study):
    r, out = cli_study
    assert r.exit_code == 0, r.output
    assert "network: ring; also ideal" in r.output and "Lite" in r.output
    assert "fabric comparison" in r.output and "lite-ocs@Lite" in r.output
    assert sorted(p.name for p in out.iterdir()) == [
        "compare.csv", "compare.json", "compare_moe.csv", "compare_moe.json",
        "compare_packed.csv", "compare_packed.json", "compare_paper.csv", "compare_paper.json",
        "cost.json", "crossovers.csv",
        "crossovers.json", MANIFEST, "reliability.csv", "reliability.json", "serving.csv",
        "serving.json", "study.csv", "study.json", "summary.md", "sweep.csv", "sweep.json"]
    summary = (out / "summary.md").read_text()
    for part in ("## 2b.", "## 2c.", "## 2d.", "## 3.", "## 4.", "## 5.", "## 6.", "## 7."):
        assert part in summary
    rows = json.loads((out / "compare.json").read_text())["rows"]
    # h100-dgx with the H100, every other scenario with the Lite; both phases
    assert sorted({row["label"] for row in rows}) == sorted(
        ["h100-dgx@H100-SXM", "lite-direct@Lite", "lite-flat@Lite", "lite-flat-inr@Lite",
         "lite-hier@Lite", "lite-ocs@Lite"])
    assert len(rows) == 6 * 2
    sweep = json.loads((out / "sweep.json").read_text())
    assert sweep["sweep"] == ["adjust.hop_latency"] and len(sweep["scenarios"]) == 6


def test_cli_lite_gpu_ideal_part_only(tmp_path):
    out = tmp_path / "results"
    r = CliRunner().invoke(cli, ["study", "lite-gpu", "--out", str(out), "--models",
                                 "Llama-3-8B", "--gpus", "H100-SXM,Lite", "--no-plot",
                                 "--no-fabric"])
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST, "study.csv", "study.json", "summary.md"]


@pytest.fixture(scope="module")
def full():
    # the parts its tests read (GPUs alone, fabrics, sweep, summary, figures); the blast
    # radius, packed and MoE parts (two thirds of its time) are read by none of them, and
    # the CLI run above writes and summarizes every part
    return run_full_study(["Llama-3-70B"], ["H100-SXM", "Lite", "Lite+BW"],
                          scenarios=["h100-dgx", "lite-flat", "lite-ocs"],
                          reliability=False, packed=False, moe=None)


def test_full_study_parts(full):
    assert [s.label for s in full.fabric.scenarios] == [
        "h100-dgx@H100-SXM", "lite-flat@Lite", "lite-flat@Lite+BW", "lite-ocs@Lite",
        "lite-ocs@Lite+BW"]
    # the sweep runs the baseline and the Lite+BW scenarios, decode only
    assert full.sweep.labels == ("h100-dgx@H100-SXM", "lite-flat@Lite+BW",
                                 "lite-ocs@Lite+BW")
    assert full.sweep.phases == ("decode",)
    # a fabric costs something: never above the same GPU with free collectives
    for r in full.fabric.rows:
        ideal = full.ideal.row(r.model, r.gpu, r.phase, "ideal")
        assert r.tokens_per_s_per_sm <= ideal.tokens_per_s_per_sm * (1 + 1e-12)
        assert r.ideal_tokens_per_s_per_sm == pytest.approx(ideal.tokens_per_s_per_sm)


def test_summary_states_the_numbers(full):
    text = summary_markdown(full)
    ideal = full.ideal
    lite = [ideal.row("Llama-3-70B", "Lite", p, "ideal").vs_baseline
            for p in ("prefill", "decode")]
    for phase, v in zip(("prefill", "decode"), lite, strict=True):
        assert f"**{phase}**: the plain Lite reaches {v:.2f}x of the H100-SXM" in text
    fab = full.fabric
    for phase in ("prefill", "decode"):
        flat = fab.row("Llama-3-70B", "lite-flat@Lite", phase)
        assert f"{flat.tokens_per_s_per_sm:.3g} ({flat.vs_baseline:.2f}x)" in text
        ocs = fab.row("Llama-3-70B", "lite-ocs@Lite+BW", phase)
        flat_bw = fab.row("Llama-3-70B", "lite-flat@Lite+BW", phase)
        first, second = ("lite-flat", "lite-ocs") if flat_bw.vs_baseline > ocs.vs_baseline \
            else ("lite-ocs", "lite-flat")
        ranking = next(line for line in text.splitlines()
                       if line.startswith(f"- **{phase}, fabrics ranked"))
        assert ranking.index(first) < ranking.index(second)
    assert "setting an instance's circuits takes 10 ms" in text
    for c in full.sweep.crossovers():
        if "h100-dgx@H100-SXM" in (c["before"], c["after"]):
            assert f"{c['before']} leads {c['after']} below {c['x'] * 1e6:.3g} us" in text


def test_failed_figure_leaves_no_partial_study(tmp_path, full, monkeypatch):
    import netmodel.study.compare_plots as plots

    def boom(*a, **k):
        raise RuntimeError("figure failed")

    monkeypatch.setattr(plots, "plot_compare_split", boom)
    out = tmp_path / "new"
    # raised here, or reported by the worker process that drew it
    with pytest.raises((RuntimeError, UserError)):
        write_full_study(full, out)
    assert not out.exists()


def test_progress_bar_only_on_a_terminal_after_the_delay():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    tty = Tty()
    with Progress(4, "work", stream=tty, delay=0.0) as p:
        p.advance("one")
    drawn = tty.getvalue()
    assert drawn.startswith("\rwork [") and "1/4" in drawn and drawn.endswith("\r")
    for kwargs in ({"stream": Tty(), "quiet": True}, {"stream": io.StringIO()},
                   {"stream": Tty(), "delay": 60.0}):
        with Progress(4, "work", **kwargs) as p:
            p.advance("one")
        assert kwargs["stream"].getvalue() == ""


@pytest.mark.parametrize("args, needle", [
    (["--models", "Llama-9"], "unknown model 'Llama-9'"),
    (["--gpus", "H900"], "unknown GPU 'H900'"),
    (["--networks", "carrier-pigeon"], "unknown network 'carrier-pigeon'"),
    (["--phases", ","], "--phases"),
    (["--tbt", "nan"], "--tbt"),
])
def test_cli_lite_gpu_bad_input(tmp_path, args, needle):
    out = tmp_path / "o"
    r = CliRunner().invoke(cli, ["study", "lite-gpu", "--out", str(out), *args])
    assert r.exit_code == 2
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0]
    assert not out.exists()


@pytest.fixture(scope="module")
def ideal_parts():
    """One run on the ideal network of the parts its tests read: the paper's assumption,
    the blast radius and the cost parts (the sweep, crossovers, serving, MoE and packed
    parts, a third of its time, are read by neither; cli_study writes and summarizes every
    part)."""
    return run_full_study(["Llama-3-70B"], ["H100-SXM", "Lite", "Lite+BW"],
                          ["prefill", "decode"], networks=("ideal",),
                          scenarios=["h100-dgx", "lite-flat", "lite-direct"], sweep=False,
                          crossovers=False, serving=False, moe=None, packed=False)


def test_the_papers_assumption_never_reports_less_throughput(ideal_parts):
    r = ideal_parts
    assert r.paper is not None and len(r.paper.rows) == len(r.fabric.rows)
    for d, p in zip(r.fabric.rows, r.paper.rows, strict=True):
        assert (d.label, d.model, d.phase) == (p.label, p.model, p.phase)
        if d.feasible:
            assert p.feasible and p.tokens_per_s_per_sm >= d.tokens_per_s_per_sm * (1 - 1e-12)
    text = summary_markdown(r)
    assert "## 2b. The paper's claims" in text and "Under the paper's" in text


def test_blast_radius_and_cost_parts_are_written_and_summarized(tmp_path, ideal_parts):
    r = ideal_parts
    rel = {s.scenario: s for s in r.reliability.summaries}
    assert set(rel) == {"h100-dgx@H100-SXM", "lite-flat@Lite", "lite-direct@Lite"}
    # a GPU failure takes the GPU's SMs in hardware, its whole instance's in software
    for s in rel.values():
        assert s.sms_down_per_gpu_failure_sw >= s.sms_down_per_gpu_failure_hw
    assert rel["lite-flat@Lite"].sms_down_per_gpu_failure_hw == 33
    assert rel["h100-dgx@H100-SXM"].sms_down_per_gpu_failure_hw == 132
    # the cost part prices each scenario's own-GPU row as compare did
    row = r.fabric.row("Llama-3-70B", "lite-flat@Lite", "decode")
    cost = next(s for s in r.cost.summaries
                if (s.scenario, s.phase) == ("lite-flat@Lite", "decode"))
    assert cost.usd_per_mtoken == pytest.approx(row.usd_per_mtoken, rel=1e-12)
    written = {p.name for p in write_full_study(r, tmp_path / "o")}
    assert {"reliability.csv", "reliability_spares.png", "cost.json",
            "cost_per_scenario.png", "cost_yield_vs_area.png"} <= written
    text = (tmp_path / "o" / "summary.md").read_text()
    assert "## 4. Blast radius and availability" in text and "## 5. Power and cost" in text


def test_parts_run_beside_each_other_give_what_one_process_gives(monkeypatch):
    """The MoE part runs in a forked process from the start, the crossovers and the sweep
    in another beside the paper's run (with the fabric comparison's caches), and the
    packed comparison in the main process after its own parts (h750: so that the
    processes end together, not the crossovers' and the sweep's alone); one process
    gives the same bytes."""
    from netmodel.study.lite_gpu import run_full_study

    def run(jobs: str) -> str:
        monkeypatch.setenv("NETMODEL_JOBS", jobs)
        r = run_full_study(["Llama-3-8B"], ["H100-SXM", "Lite+BW"], ["decode"],
                           networks=("ideal",), scenarios=["h100-dgx", "lite-flat"],
                           reliability=False, cost=False, serving=False)
        assert r.crossovers is not None and r.paper is not None and r.sweep is not None
        assert r.packed is not None and r.moe is not None
        names = set(r.timings)
        assert {"co-design crossovers", "fabrics, paper's assumption",
                "per-hop latency sweep", "fabrics, packed", "mixture of experts"} <= names
        assert ("waiting for the parts beside" in names) == (jobs != "1")
        assert ("waiting for the MoE part" in names) == (jobs != "1")
        if jobs != "1":   # the main process's laps come first, the forked parts' after
            order = list(r.timings)
            assert order.index("fabrics, packed") < order.index("waiting for the parts beside")
            assert order.index("per-hop latency sweep") > order.index(
                "waiting for the parts beside")
        return r.to_json() + repr(r.crossovers.to_dicts()) + r.packed.to_json() \
            + r.moe.to_json()

    assert run("2") == run("1")


def test_figures_drawn_beside_are_the_figures_drawn_at_writing(monkeypatch, tmp_path):
    from netmodel.study.lite_gpu import run_full_study, write_full_study

    def files(jobs: str) -> dict:
        monkeypatch.setenv("NETMODEL_JOBS", jobs)
        # Llama-3-70B: the same parts and figures as Llama-3-8B, its blast radius a
        # quarter of the time
        r = run_full_study(["Llama-3-70B"], ["H100-SXM", "Lite+BW"], ["decode"],
                           networks=("ideal",), scenarios=["h100-dgx", "lite-flat"],
                           cost=False, serving=False, moe=None, packed=False, figures=True)
        if jobs != "1":   # drawn in the run, beside and here
            assert {"compare_tokens_per_sm.png", "sweep.png", "tokens_per_sm.png",
                    "reliability_spares.png"} <= set(r.figures)
        out = tmp_path / jobs
        write_full_study(r, out)
        return {p.name: p.read_bytes() for p in out.iterdir() if p.name != MANIFEST}

    two, one = files("2"), files("1")
    assert sorted(two) == sorted(one) and all(two[k] == one[k] for k in one)


def test_the_study_collects_less_often_and_restores_the_collector(monkeypatch):
    """run_full_study raises the collector's youngest threshold while it runs and puts
    the thresholds back after, also when a part fails."""
    import gc

    import netmodel.study.lite_gpu as lg

    seen = []

    def fail(*args, **kwargs):
        seen.append(gc.get_threshold())
        raise UserError("stop here")

    monkeypatch.setattr(lg, "run_lite_gpu_study", fail)
    before = gc.get_threshold()
    with pytest.raises(UserError, match="stop here"):
        lg.run_full_study(["Llama-3-8B"], ["H100-SXM"], ["decode"], fabric=False)
    assert seen == [(max(before[0], lg.GC_YOUNG), *before[1:])]
    assert gc.get_threshold() == before


def test_writing_the_study_collects_less_often_and_restores_the_collector(monkeypatch,
                                                                        tmp_path):
    """write_full_study (which draws the figures in one process) runs under the study's
    raised youngest threshold and puts the thresholds back after, also when writing
    fails; nothing is written then."""
    import gc

    import netmodel.study.lite_gpu_files as files
    from netmodel.study.lite_gpu import run_full_study

    result = run_full_study(["Llama-3-8B"], ["H100-SXM"], ["decode"], fabric=False)
    seen = []

    def fail(out_dir, files_, **_):
        seen.append(gc.get_threshold())
        raise UserError("stop here")

    monkeypatch.setattr(files, "write_outputs", fail)
    before = gc.get_threshold()
    with pytest.raises(UserError, match="stop here"):
        files.write_full_study(result, tmp_path / "o")
    assert seen == [(max(before[0], files.GC_YOUNG), *before[1:])]
    assert gc.get_threshold() == before
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("phases", ["both", "decode,prefill"])
def test_cli_lite_gpu_phases_both(tmp_path, phases):
    """--help says 'prefill, decode or both': 'both' was refused ("unknown phase 'both'")."""
    out = tmp_path / "o"
    r = CliRunner().invoke(cli, ["study", "lite-gpu", "--out", str(out), "--models",
                                 "Llama-3-8B", "--gpus", "Lite", "--no-fabric", "--no-plot",
                                 "-q", "--phases", phases, "--networks", "ideal"])
    assert r.exit_code == 0, r.output
    rows = json.loads((out / "study.json").read_text())["rows"]
    assert sorted(row["phase"] for row in rows) == ["decode"] * 2 + ["prefill"] * 2


def test_parts_on_own_gpu_fall_back_when_the_run_lacks_it(tmp_path):
    """Parts 2d and 4-7 run each scenario "with its own GPU". With --gpus B200-HGX (no
    Lite) every Lite scenario was dropped from them: reliability, cost, serving and the
    MoE part held only h100-dgx, and summary.md printed "relative to h100-dgx@H100-SXM: ;
    tokens/s/W: ." and "of the Lites'" of a run without Lites. A scenario file's own GPU
    (gb300-nvl72.toml: GB300-NVL72) was never "its own" either (only shipped names were).
    The file is the example's with one rack of its two: the blast radius of two racks was
    three quarters of this test's time, and a rack is the most an instance spans. No
    figure is read: plot=False leaves out the blast radius's spare curves (half of the
    run), which only reliability_spares.png draws (the summaries the same floats,
    test_reliability_part_curves_h746)."""
    text = open("docs/examples/gb300-nvl72.toml").read()
    assert text.count("\nracks = 2\n") == 1
    scenario = tmp_path / "gb300-nvl72.toml"
    scenario.write_text(text.replace("\nracks = 2\n", "\nracks = 1\n"))
    r = run_full_study(["Llama-3-8B"], ["B200-HGX", "GB300-NVL72"], ["prefill", "decode"],
                       scenarios=["h100-dgx", "lite-flat", str(scenario)],
                       sweep=False, crossovers=False, paper=False, plot=False)
    own = ["h100-dgx@H100-SXM", "lite-flat@B200-HGX", "gb300-nvl72@GB300-NVL72"]
    assert [s.scenario for s in r.reliability.summaries] == own
    assert [s.scenario for s in r.cost.summaries] == own * 2
    assert [row["scenario"] for row in r.serving.rows()] == own * 2
    assert list(dict.fromkeys(row.label for row in r.moe.rows)) == own
    assert list(dict.fromkeys(row.label for row in r.packed.rows)) == own
    text = summary_markdown(r)
    assert ": ;" not in text and ": ." not in text and "Lites'" not in text
    assert "the first GPU it runs with: lite-flat@B200-HGX)" in text
    assert "this run has no Lite (B200-HGX and GB300-NVL72), so they are not assessed" in text
    # paper=False: no compare_paper.csv to cite
    assert "## 2b. The paper's claims (compare.csv)\n" in text


@pytest.mark.parametrize("overlap, paper, head, under, cites_paper", [
    (True, True, "under the paper's assumption (compare.csv)", "Under the paper's", False),
    (False, False, "under netmodel's default (compare.csv)", "Under netmodel's default", False),
    (False, True, "under both assumptions (compare.csv, compare_paper.csv)", None, True),
])
def test_claims_name_the_assumption_the_run_made(overlap, paper, head, under, cites_paper):
    """With --overlap-collectives the fabric comparison is the paper's assumption (and no
    compare_paper.csv is written), yet 2b said 'under both assumptions (compare.csv,
    compare_paper.csv)', labelled its numbers 'Under netmodel's default (each tensor-parallel
    collective a stage of its own)' and the notes said the all-reduces are 'stages of their
    own'; --no-paper also cited compare_paper.csv."""
    r = run_full_study(["Llama-3-8B"], ["H100-SXM", "Lite"], ["decode"], networks=("ideal",),
                       scenarios=["h100-dgx", "lite-flat"], sweep=False, crossovers=False,
                       reliability=False, cost=False, serving=False, moe=None, packed=False,
                       paper=paper, options=RooflineOptions(overlap_collectives=overlap))
    text = summary_markdown(r)
    assert f"## 2b. The paper's claims, {head}" in text
    assert ("compare_paper.csv" in text) is cites_paper
    if under:
        assert f"  - {under}" in text and text.count("  - Under ") == 3
    assert ("stages of their own." in text.split("## How it was modelled")[1]) is not overlap


@pytest.mark.parametrize("bad", ["afile/out", "taken"])
def test_cli_lite_gpu_checks_out_before_the_study(tmp_path, monkeypatch, bad):
    """compare and sweep check --out first; study lite-gpu ran the whole study (minutes)
    before refusing an --out under a file or a folder of other files."""
    import netmodel.study.lite_gpu as lite_gpu

    (tmp_path / "afile").write_text("x")
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "mine.txt").write_text("x")

    def never(*args, **kwargs):
        raise AssertionError("the study ran before --out was checked")

    monkeypatch.setattr(lite_gpu, "run_full_study", never)
    r = CliRunner().invoke(cli, ["study", "lite-gpu", "--out", str(tmp_path / bad), "-q"])
    assert r.exit_code == 2, r.output
    assert len(r.output.strip().splitlines()) == 1 and "output folder" in r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "taken"]


def test_the_fabric_baseline_is_always_in_the_study():
    """--scenarios lite-flat made lite-flat@Lite the baseline of every fabric ratio (the
    claims 'within 5% of lite-flat@Lite', 'no feasible Lite row' though it was feasible);
    --scenarios h100-dgx alone printed 'relative to h100-dgx@H100-SXM: .', 'USD per million
    tokens relative to ...: ; tokens/s/W: .' and 'service tokens/s/SM relative to ...: ;'."""
    r = run_full_study(["Llama-3-8B"], ["Lite"], ["decode"], networks=("ideal",),
                       scenarios=["lite-flat"], sweep=False, crossovers=False, paper=False,
                       reliability=False, moe=None, packed=False)
    assert r.fabric.baseline == "h100-dgx@H100-SXM"
    assert [s.label for s in r.fabric.scenarios] == ["h100-dgx@H100-SXM", "lite-flat@Lite"]
    alone = run_full_study(["Llama-3-8B"], ["Lite"], ["decode"], networks=("ideal",),
                           scenarios=["h100-dgx"], sweep=False, crossovers=False,
                           paper=False, reliability=False, moe=None, packed=False)
    text = summary_markdown(alone)
    assert ": ;" not in text and ": ." not in text and ", ;" not in text
    assert "decode GPUs per prefill GPU" in text and "fabrics ranked" not in text


def test_part_one_says_when_the_baseline_has_no_ratio():
    """DeepSeek-V3 does not fit on 8 H100s: summary.md said 'GB300-NVL72 depend on the
    model (GB300-NVL72 -)' and 'keep - of the H100-SXM's tokens/s/SM'."""
    r = run_full_study(["Llama-3-70B", "DeepSeek-V3"], ["GB300-NVL72"], ["decode"],
                       fabric=False)
    assert not r.ideal.row("DeepSeek-V3", "H100-SXM", "decode", "ideal").feasible
    text = summary_markdown(r)
    assert ("- **decode, ideal network**: the H100-SXM has no feasible configuration for "
            "DeepSeek-V3, so no ratio there; GB300-NVL72 matches or beats the H100-SXM for every "
            "model (GB300-NVL72 2.19x).") in text
    assert " -)" not in text and "keep -" not in text and "keep 0.83x of the H100-SXM's" in text


def _cites_only_files_written(out):
    import re

    text = (out / "summary.md").read_text()
    cited = {f for line in text.splitlines() if line.startswith("## ")
             for f in re.findall(r"[\w.]+\.(?:csv|json|png)", line)}
    assert "study.csv" in cited and cited <= {p.name for p in out.iterdir()}


def test_summary_cites_only_files_written(cli_study):
    """With --no-plot the headings still cited tokens_per_sm.png, compare_tokens_per_sm.png,
    ... and with --overlap-collectives (below) compare_paper.csv, none of them written.
    Here the --no-plot run of every part, scenario and phase above: each heading a run of
    one scenario and phase writes, and more."""
    r, out = cli_study
    assert r.exit_code == 0, r.output
    _cites_only_files_written(out)


def test_summary_cites_only_files_written_with_overlap(tmp_path):
    out = tmp_path / "o"
    # Llama-3-70B: the same parts and files as Llama-3-8B, its blast radius a few times faster
    r = CliRunner().invoke(cli, ["study", "lite-gpu", "--out", str(out), "--models",
                                 "Llama-3-70B", "--gpus", "Lite", "--phases", "decode",
                                 "--scenarios", "lite-flat", "-q", "--no-plot",
                                 "--overlap-collectives"])
    assert r.exit_code == 0, r.output
    _cites_only_files_written(out)
