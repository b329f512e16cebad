"""`netmodel sweep`: parameter parsing, the swept results, crossovers and bad input."""

import csv
import json

import numpy as np
import pytest
from click.testing import CliRunner

from compute.errors import UserError
from compute.output_paths import MANIFEST
from netmodel.cli.main import cli
from netmodel.study.cost import parameters
from netmodel.study.sweep import SweepParam, SweepResult, SweepRow, parse_param, run_sweep
from tests.netmodel.lite_ocs_ring_h479 import ring_scenario


def test_ranges_are_log_spaced_with_units():
    p = parse_param("adjust.hop_latency=0.1us:10us:5", ["lite-flat"])
    assert p.unit == "s" and not p.integer
    np.testing.assert_allclose(p.values, [1e-7, 10 ** -6.5, 1e-6, 10 ** -5.5, 1e-5])
    bw = parse_param("fabric.bandwidth=100GB/s,400Gb/s", ["lite-flat", "lite-hier"])
    assert bw.values == (50e9, 100e9) and bw.unit == "bytes/s"  # in increasing order
    # integers are rounded and repeats dropped: 2, 2.52, 3.17, 4, 5.04, 6.35, 8
    ports = parse_param("fabric.ports=2:8", ["lite-ocs"])
    assert ports.integer and ports.values == (2.0, 3.0, 4.0, 5.0, 6.0, 8.0)
    assert parse_param("fabric.latency=1us:1us", ["lite-flat"]).values == (1e-6,)


@pytest.mark.parametrize("text, needle", [
    ("adjust.hop_latency=10us:1us", "is empty: HI is below LO"),
    ("adjust.hop_latency=0:1us", "must be positive"),
    ("adjust.bandwidth_scale=-1:2", "must be positive"),
    ("adjust.hop_latency=1us:2us:0", "N in '1us:2us:0' must be a whole number >= 1"),
    ("fabric.colour=1:2", "unknown parameter 'fabric.colour' for scenario 'lite-flat'; "
                          "known: 'adjust.bandwidth_scale'"),
    ("fabric.ports=2:8", "unknown parameter 'fabric.ports' for scenario 'lite-flat'"),
    # the fabric's own names, not all 50 with the cost ones (a one-line wall)
    ("fabric.ports=2:8", "'fabric.planes', 'fabric.radix', and "
                         f"{len(parameters(numeric=True))} cost.* parameters"),
    ("adjust.hop_latency", "must be PATH=LO:HI"),
    ("adjust.hop_latency=", "must be PATH=LO:HI"),
    ("fabric.latency=fast", "fabric.latency 'fast' is not a number with a unit"),
])
def test_bad_parameters(text, needle):
    with pytest.raises(UserError) as err:
        parse_param(text, ["lite-flat"])
    assert needle in str(err.value)


def _crossing_pair(xs) -> SweepResult:
    """a falls from 2 to 1 and b rises from 1 to 2 between the two swept values ``xs``."""
    rows = [SweepRow(label=lab, scenario=lab, gpu="Lite", model="M", phase="decode", x=x,
                     feasible=True, tp=8, batch=1, latency_name="tbt", latency_s=0.01,
                     latency_limit_s=0.05, tokens_per_s_per_sm=v, network_share=0.5)
            for lab, vals in (("a@Lite", (2.0, 1.0)), ("b@Lite", (1.0, 2.0)))
            for x, v in zip(xs, vals, strict=True)]
    return SweepResult(rows=tuple(rows),
                       params=(SweepParam("adjust.hop_latency", tuple(xs), "s"),),
                       labels=("a@Lite", "b@Lite"))


def test_crossover_is_interpolated_log_linearly():
    # a falls from 2 to 1 and b rises from 1 to 2 between x = 1 and x = 100: they cross
    # half-way, which on a log axis is x = 10, at the value 1.5
    (c,) = _crossing_pair((1.0, 100.0)).crossovers()
    assert c["x"] == pytest.approx(10.0) and c["tokens_per_s_per_sm"] == pytest.approx(1.5)
    assert (c["before"], c["after"]) == ("a@Lite", "b@Lite")


def test_crossover_on_a_linear_axis_is_interpolated_linearly():
    # the same two lines between x = 1 and x = 2: under 10x, the figure's x axis is linear
    # (figure_kit.log_axis), so the drawn lines meet half-way in x, at 1.5 (log-linearly
    # the crossing was placed at sqrt(2) = 1.414, off the drawn crossing)
    (c,) = _crossing_pair((1.0, 2.0)).crossovers()
    assert c["x"] == pytest.approx(1.5) and c["tokens_per_s_per_sm"] == pytest.approx(1.5)


def test_sweep_is_monotone_in_hop_latency():
    p = parse_param("adjust.hop_latency=0.1us:20us:6", ["lite-flat", "lite-ocs"])
    r = run_sweep(["h100-dgx", "lite-flat", "lite-ocs"], [p], ["Llama-3-70B"], ["decode"])
    assert len(r.rows) == 3 * 6
    for lab in r.labels:
        x, v = r.curve(lab, "Llama-3-70B", "decode")
        assert list(x) == list(p.values)
        feasible = v[np.isfinite(v)]
        assert np.all(np.diff(feasible) <= 1e-12 * feasible[:-1])
    # the OCS rings pay the most steps, so they lose the largest share
    drop = {lab: 1 - r.curve(lab, "Llama-3-70B", "decode")[1][-1]
            / r.curve(lab, "Llama-3-70B", "decode")[1][0] for lab in r.labels}
    assert max(drop, key=drop.get) == "lite-ocs@Lite"


def test_two_parameters_make_a_grid():
    sc = ["lite-flat"]
    a = parse_param("adjust.hop_latency=1us,4us", sc)
    b = parse_param("adjust.bandwidth_scale=1,2,4", sc)
    r = run_sweep(sc, [a, b], ["Llama-3-8B"], ["decode"])
    assert len(r.rows) == 2 * 3
    for x in a.values:  # more bandwidth never hurts
        vals = [next(row.tokens_per_s_per_sm for row in r.rows if (row.x, row.y) == (x, y))
                for y in b.values]
        assert vals == sorted(vals)
    assert "adjust.bandwidth_scale" in r.to_csv().splitlines()[0]


def test_cli_sweep_end_to_end(tmp_path):
    out = tmp_path / "sw"
    r = CliRunner().invoke(cli, ["sweep", "--scenario", "h100-dgx,lite-flat@Lite+BW",
                                 "--scenario", "lite-hier@Lite+BW", "--param",
                                 "adjust.hop_latency=0.1us:10us", "--points", "5",
                                 "--models", "GPT-3-175B", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST, "sweep.csv", "sweep.json", "sweep.png"]
    rows = list(csv.DictReader((out / "sweep.csv").open()))
    assert len(rows) == 3 * 5 and "adjust.hop_latency" in rows[0]
    d = json.loads((out / "sweep.json").read_text())
    assert d["sweep"] == ["adjust.hop_latency"] and len(d["scenarios"]) == 3
    for c in d["crossovers"]:  # every crossover lies inside the range and is printed
        assert 1e-7 <= c["x"] <= 1e-5
        assert f"{c['after']} overtakes {c['before']}" in r.output


@pytest.mark.parametrize("args, needle", [
    (["--param", "adjust.hop_latency=10us:1us"], "is empty"),
    (["--param", "adjust.hop_latency=0us:1us"], "must be positive"),
    (["--param", "fabric.speed=1:2"], "unknown parameter 'fabric.speed'"),
    (["--param", "adjust.hop_latency=1us:2us", "--param", "adjust.latency_scale=1:2",
      "--param", "adjust.bandwidth_scale=1:2"], "one or two parameters"),
    (["--param", "adjust.hop_latency=1us:2us", "--scenario", "lite-fast"],
     "unknown scenario 'lite-fast'"),
    (["--param", "adjust.hop_latency=1us:2us", "--models", "Llama-9"], "unknown model"),
    (["--param", "adjust.hop_latency=1us:2us", "--points", "0"], "--points"),
    # --points 5 with a list swept the list's 2 values without a word
    (["--param", "adjust.hop_latency=1us,2us", "--points", "5"],
     "--points 5 sets the values of a LO:HI range, and no --param has one "
     "(adjust.hop_latency=1us,2us gives its own values)"),
    (["--param", "adjust.hop_latency=1us:2us:3", "--points", "5"], "no --param has one"),
])
def test_cli_sweep_bad_input(tmp_path, args, needle):
    out = tmp_path / "o"
    scen = [] if "--scenario" in args else ["--scenario", "lite-flat"]
    r = CliRunner().invoke(cli, ["sweep", *scen, "--out", str(out), *args])
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0]
    assert not out.exists()


def test_points_the_fabric_refuses_are_infeasible_not_fatal():
    # lite-flat puts 128 Lites on one switch per plane, so a radix below 128 cannot be built
    p = parse_param("fabric.radix=64,128,256", ["lite-flat"])
    r = run_sweep(["lite-flat"], [p], ["Llama-3-8B"], ["decode"])
    by_x = {row.x: row for row in r.rows}
    assert not by_x[64].feasible and "radix >= 128" in by_x[64].reason
    assert by_x[128].feasible and by_x[256].feasible
    # a radix beyond the GPU count changes nothing on a flat fabric
    assert by_x[128].tokens_per_s_per_sm == pytest.approx(by_x[256].tokens_per_s_per_sm)
    with pytest.raises(UserError, match="no point of the sweep can be built"):
        run_sweep(["lite-flat"], [parse_param("fabric.radix=8,16", ["lite-flat"])],
                  ["Llama-3-8B"], ["decode"])


def test_cost_sweep_figure_with_a_crossover(tmp_path):
    # cost.ocs_price moves lite-ocs's USD per million tokens past lite-flat's; the figure
    # starred the crossing at c["tokens_per_s_per_sm"], a key cost crossovers lack
    # (KeyError, a traceback), and labelled the y axis tokens/s per SM. lite-ocs with its
    # circuits fixed as rings: the shipped one's torus at 16 Lites costs less a token, and
    # its line meets lite-flat's past 1,000 USD/port, outside the decade these checks read
    r = run_sweep(["lite-flat", ring_scenario()], ["cost.ocs_price=100:1000000:5"],
                  ["Llama-3-70B"])
    assert r.metric == "usd_per_mtoken" and r.crossovers()
    seen = _plotted(r, tmp_path)
    assert seen["ylabel"] == "USD per million tokens"
    assert "USD per million tokens" in seen["title"]
    # The crossing, worked: both costs are straight lines in the OCS port price p (a port's
    # price enters the bill once per port; lite-flat has no OCS), read from the library at
    # p = 100 and 1000 USD/port: lite-ocs 0.539 + 1.411e-4 (p - 100) $/Mtok, lite-flat
    # 0.606 flat (with the facility's rent; before it, h284: 0.440, 0.567 against 0.509).
    cost = {(row.label.split("@")[0], row.x): row.usd_per_mtoken for row in r.rows}
    ocs0, ocs1, flat = cost["lite-ocs", 100.0], cost["lite-ocs", 1000.0], cost["lite-flat", 100.0]
    slope = (ocs1 - ocs0) / 900
    # (h356: the three figures and the slope were pins; the lines are the library's, and
    # the check is that they are straight and cross where the sweep says)
    assert slope > 0 and ocs0 < flat < ocs1       # they cross between 100 and 1000
    for p in (10_000.0, 100_000.0, 1_000_000.0):       # straight lines over the whole sweep
        assert cost["lite-ocs", p] == pytest.approx(ocs0 + slope * (p - 100), rel=1e-12)
        assert cost["lite-flat", p] == flat
    # the lines meet at p = 100 + (0.606 - 0.539) / 1.411e-4 = 576 USD/port, and the
    # sweep's crossover (SweepResult.crossovers, linear in p between its points 100 and
    # 1000) is that point (its log-linear interpolation printed 338: 100 x 10^0.5286)
    meet = 100 + (flat - ocs0) / slope
    (c,) = r.crossovers()
    assert c["x"] == pytest.approx(meet, rel=1e-9)
    assert f"* lite-ocs rises above lite-flat at {meet:.3g}" in seen["texts"]
    assert seen["yscale"] == "log"
    # lite-flat's 0.606 $/Mtok runs flat along the bottom past 576: the box, drawn lower
    # left, sat on it; now it is in the first clear corner, upper left
    assert seen["corners"] == [(0.02, 0.97)]


def test_cost_sweep_figure_draws_the_straight_lines_the_star_is_on(tmp_path):
    # a cost is a straight line in the OCS port price (test above: lite-ocs 0.539 +
    # 1.411e-4 (p - 100) $/Mtok, lite-flat 0.606), so the lines meet at 576 USD/port, where
    # the star is; drawn as one straight segment from 100 to 1000 on the log axis, lite-ocs
    # met lite-flat at 338 and passed 576 at 0.539 + 0.127 log10(5.76) = 0.636, 5% high
    # (lite-ocs with rings, as above)
    import numpy as np

    r = run_sweep(["lite-flat", ring_scenario()], ["cost.ocs_price=100:1000000:5"],
                  ["Llama-3-70B"])
    lines = _plotted(r, tmp_path)["lines"]
    xy, every = lines["lite-ocs@Lite"]
    level = next(row.usd_per_mtoken for row in r.rows if row.label == "lite-flat@Lite")
    # the line as drawn between its points, straight on the log axis, at the crossing
    # (576 USD/port when written; h356: 576 and 0.606 were pins)
    (c,) = r.crossovers()
    at = np.interp(np.log10(c["x"]), np.log10(xy[:, 0]), xy[:, 1])
    assert at == pytest.approx(level, rel=1e-3)
    assert at == pytest.approx(c["usd_per_mtoken"], rel=1e-3)
    # the markers stay on the five swept prices, not on the points added between them
    assert list(xy[every, 0]) == [100.0, 1e3, 1e4, 1e5, 1e6]
    flat, _ = lines["lite-flat@Lite"]
    assert np.allclose(flat[:, 1], level, rtol=1e-12)


def _plotted(r, tmp_path):
    from netmodel.study import compare_plots

    seen = {}
    real = compare_plots.figure_kit.save_figure

    def keep(fig, path):
        ax = fig.axes[0]
        seen.update(ylabel=ax.get_ylabel(), title=fig._suptitle.get_text(),
                    yscale=ax.get_yscale(), texts="\n".join(t.get_text() for t in ax.texts),
                    corners=[t.get_position() for t in ax.texts],
                    legend=[t.get_text() for lg in fig.legends for t in lg.get_texts()],
                    lines={ln.get_label(): (ln.get_xydata(), ln.get_markevery())
                           for ln in ax.get_lines()})
        real(fig, path)

    compare_plots.figure_kit.save_figure = keep
    try:
        compare_plots.plot_sweep(r, tmp_path / "sweep.png")
    finally:
        compare_plots.figure_kit.save_figure = real
    assert (tmp_path / "sweep.png").stat().st_size > 0
    return seen


def test_sweep_figure_names_lines_whole_when_gpus_share_a_scenario(tmp_path):
    # with --gpus Lite,Lite+BW two lines are lite-ocs; the corner box said 'lite-ocs falls
    # below h100-dgx at 0.542 us' and '... at 6.7 us' without saying which (lite-ocs with
    # rings: set as the shipped one sets them, lite-ocs@Lite+BW stays above h100-dgx@Lite
    # to 10 us, 7.32 against 4.40 tokens/s/SM there)
    r = run_sweep(["h100-dgx", ring_scenario()], ["adjust.hop_latency=0.1us:10us:5"],
                  ["Llama-3-70B"], gpus=["Lite", "Lite+BW"])
    # the baseline stays on its H100, first, beside its copies on the swept GPUs; no Lite
    # line reaches it here, and the note under the table says so against the H100
    assert r.labels == ("h100-dgx@H100-SXM", "h100-dgx@Lite", "h100-dgx@Lite+BW",
                        "lite-ocs@Lite", "lite-ocs@Lite+BW")
    base = r.curve("h100-dgx@H100-SXM", "Llama-3-70B", "decode", None)[1]
    for lab in r.labels[1:]:
        assert (r.curve(lab, "Llama-3-70B", "decode", None)[1] < base).all(), lab
    assert "h100-dgx@H100-SXM stays above h100-dgx@Lite, h100-dgx@Lite+BW, lite-ocs@Lite " \
        "and lite-ocs@Lite+BW" in "".join(r.no_crossing_lines())
    seen = _plotted(r, tmp_path)
    texts = seen["texts"]
    assert seen["corners"] == [(0.02, 0.03)]  # lower left is clear: it stays there
    # at the sweep's crossovers, in us (0.542 and 6.7 when written; h356: were pins)
    at = {c["before"] if c["after"] == "h100-dgx@Lite" else c["after"]: c["x"]
          for c in r.crossovers() if "h100-dgx@Lite" in (c["before"], c["after"])}
    assert set(at) >= {"lite-ocs@Lite", "lite-ocs@Lite+BW"}
    for lab in ("lite-ocs@Lite", "lite-ocs@Lite+BW"):
        assert f"* {lab} falls below h100-dgx@Lite at {at[lab] * 1e6:.3g} us" in texts


def test_table_columns_never_run_together():
    # cost.electricity_price (USD per J) swept 0.01:10: USD per million tokens 124144.292
    # and 698114.042 were printed in 10-character columns as '124144.292698114.042' (the
    # command line now refuses over a million times the default, 0.023 USD/J; the library
    # takes a SweepParam in SI as it is)
    values = tuple(float(v) for v in np.geomspace(0.01, 10, 5))
    r = run_sweep(["h100-dgx"], [SweepParam("cost.electricity_price", values)], ["Llama-3-70B"])
    row = r.table().splitlines()[2]
    assert row.startswith("h100-dgx@H100-SXM")
    values = row.split()[1:]
    assert len(values) == 5 and all(float(v) > 0 for v in values)


def test_length_takes_its_unit():
    # fabric.length is in metres (parameters() says 'm'), but '20m' was refused: "fabric.length
    # value '20m' is not a number"; only a bare 20 was taken
    p = parse_param("fabric.length=1m,50cm,0.1km", ["lite-flat"])
    assert p.values == (0.5, 1.0, 100.0) and p.unit == "m"
    with pytest.raises(UserError, match="fabric.length '5ft' has unknown unit 'ft'"):
        parse_param("fabric.length=5ft", ["lite-flat"])


def test_a_parameter_that_moves_nothing_is_said():
    # Llama-3.1-405B decode on h100-dgx runs TP 8 inside one NVLink domain, so the NIC
    # bandwidth moves no point: the table printed 4.137 three times and nothing else. Its
    # cost moves (the NICs are bought): 0.759 to 0.930 USD per million tokens with the
    # facility's rent (0.593 to 0.753 without it, h284; 0.641 to 0.802 with the $47k NVSwitch
    # board, h253)
    r = run_sweep(["h100-dgx"], ["fabric.nic_bandwidth=25GB/s,50GB/s,100GB/s"],
                  ["Llama-3.1-405B"])
    (u,) = r.unchanged()
    assert (u["label"], u["model"], u["phase"]) == ("h100-dgx@H100-SXM", "Llama-3.1-405B",
                                                    "decode")
    # the value is compare's (4.137 when written), the cost range the rows' (0.759 to
    # 0.930; h356: all three were pins), rising with the NICs bought
    from netmodel import compare

    row = compare(["Llama-3.1-405B"], ["h100-dgx"], ["decode"]).rows[0]
    assert u["value"] == pytest.approx(row.tokens_per_s_per_sm, rel=1e-12)
    cost = [x.usd_per_mtoken for x in sorted(r.rows, key=lambda x: x.x)]
    assert cost == sorted(cost) and cost[0] < cost[-1]
    assert "note: Llama-3.1-405B, decode: fabric.nic_bandwidth moves no point of " \
           f"h100-dgx@H100-SXM ({u['value']:.3f} tokens/s/SM at every buildable value)" \
           in r.table()
    assert f"USD per million tokens moves: {cost[0]:.3f} to {cost[-1]:.3f}" in r.table()
    assert json.loads(r.to_json())["unchanged"][0]["label"] == "h100-dgx@H100-SXM"
    # a moving curve has no note, and its JSON no "unchanged" key
    moving = run_sweep(["lite-flat"], ["adjust.hop_latency=0.1us,10us"], ["Llama-3-70B"])
    assert moving.unchanged() == [] and "note:" not in moving.table()
    assert "unchanged" not in json.loads(moving.to_json())


def test_a_list_out_of_order_is_swept_in_order():
    # 10us,0.1us,1us was swept in that order: the crossover was interpolated between 10 us
    # and 0.1 us and read 'lite-flat@Lite+BW overtakes h100-dgx@H100-SXM at 2.14 us', the
    # wrong way round; in order it is h100-dgx overtaking at 3.48 us (docs/study.md)
    np.testing.assert_allclose(
        parse_param("adjust.hop_latency=10us,0.1us,1us", ["lite-flat"]).values,
        [1e-7, 1e-6, 1e-5])
    r = run_sweep(["h100-dgx", "lite-flat@Lite+BW"], ["adjust.hop_latency=10us,0.1us,1us"],
                  ["GPT-3-175B"])
    (c,) = r.crossovers()
    assert (c["before"], c["after"]) == ("lite-flat@Lite+BW", "h100-dgx@H100-SXM")
    # between 1 us and 10 us, where the two curves' difference changes sign, log-linearly
    # as the figure's log axis draws them (3.48 us when written; h356: was that pin)
    y = {(row.label, row.x): getattr(row, r.metric) for row in r.rows}
    d1, d2 = (y["lite-flat@Lite+BW", x] - y["h100-dgx@H100-SXM", x] for x in (1e-6, 1e-5))
    assert d1 > 0 > d2
    assert c["x"] == pytest.approx(1e-6 * 10 ** (d1 / (d1 - d2)), rel=1e-9)
    p = SweepParam("adjust.hop_latency", (1e-5, 1e-7, 1e-6), "s")  # from Python, too
    assert run_sweep(["lite-flat"], [p], ["GPT-3-175B"]).params[0].values == (1e-7, 1e-6, 1e-5)


def test_the_second_parameter_is_shown_in_its_unit(tmp_path):
    # the second parameter's values were printed in SI with no unit: 'GPT-3-175B, decode,
    # adjust.hop_latency=1e-07: ...' and the legend 'lite-flat@Lite, adjust.hop_latency=5e-06'
    r = run_sweep(["h100-dgx", "lite-flat"], ["adjust.bandwidth_scale=0.5,1",
                                               "adjust.hop_latency=0.1us,5us"], ["GPT-3-175B"])
    table = r.table()
    assert "GPT-3-175B, decode, adjust.hop_latency=0.1us: tokens/s/SM by " \
           "adjust.bandwidth_scale" in table
    assert "adjust.hop_latency=5us: tokens/s/SM" in table and "e-0" not in table
    assert parse_param("fabric.bandwidth=100GB/s", ["lite-flat"]).show(50e9) == \
        "fabric.bandwidth=50GB/s"
    assert "lite-flat@Lite, adjust.hop_latency=5us" in _plotted(r, tmp_path)["legend"]
