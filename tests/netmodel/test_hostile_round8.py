"""Hostile input, round 8, on what changed on 2 Dec 2026: the collective-cost protocol checks
(``compute.comm.check_group_size`` / ``check_nbytes``) through the Python API, fabric
arguments that take a scenario (``topology show|plot|export|compare``, ``collective
--fabric``, ``costs --fabric``, ``infer/search --fabric``), the ``[host_power_per_gpu]`` rows,
calibrate's pp/ep/attention_dp/expert_skew columns and ``study lite-gpu``'s options. Every bad
input: one line naming the value and what is allowed, exit status 2 (CLI) or UserError
(API), no traceback, nothing written; valid input never crashes."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from compute.comm import FunctionComm, RingAlphaBeta, check_group_size, check_nbytes
from compute.errors import UserError
from tests.netmodel.cli_helpers import one_line_error, run_cli

ROOT = Path(__file__).resolve().parents[2]

# ------------------------------------------------------------- protocol checks (API)

RING = RingAlphaBeta(bandwidth=100e9, step_latency=1e-6, efficiency=1.0)
#: numpy's own repr of its True, as the messages show it: np.True_ from numpy 2, True before
NP_TRUE = repr(np.True_)
FUNC = FunctionComm(lambda op, n, p: n / 1e9)

# (value, words the one line must hold). Before: np.bool_(True) and bool arrays were 1 byte,
# complex, string, date and time arrays were taken as sizes, None was reported as 'nan', an
# int beyond a float raised OverflowError, np.timedelta64 as a group raised TypeError, a
# group of 10**400 GPUs raised OverflowError in the formulas.
BAD_NBYTES = [
    (np.bool_(True), f"got {NP_TRUE}"),
    (np.array([True, False]), "must be a number of bytes"),
    (np.complex128(1), "must be a number of bytes"),
    (np.array([1 + 2j]), "must be a number of bytes"),
    (np.array(["1"]), "must be a number of bytes"),
    (np.datetime64("2020"), "must be a number of bytes"),
    (np.timedelta64(5, "s"), "must be a number of bytes"),
    (None, "got None"),
    (np.array([None]), "must be a number of bytes"),
    ([1, None], "got [1, None]"),
    (10**400, "finite number of bytes >= 0, got an integer of 401 digits"),
    (-(10**400), "got a negative integer of 401 digits"),
    ([1, 10**400], "got an integer of 401 digits"),
    ([10**5000, None], "got a list of 2 items"),
    (True, "got True"), ("1", "got '1'"), (b"1", "got b'1'"),
    (float("nan"), "got nan"), (np.float32("nan"), "got nan"), (-math.inf, "got -inf"),
    (np.float16("inf"), "got inf"), (np.int8(-1), "got -1.0"), (-1e-300, ">= 0"),
]


@pytest.mark.parametrize("model", [RING, FUNC], ids=["ring", "function"])
@pytest.mark.parametrize("value,needle", BAD_NBYTES, ids=[f"nbytes{i}" for i in range(len(BAD_NBYTES))])
def test_bad_message_size_is_one_user_error(model, value, needle):
    with pytest.raises(UserError) as e:
        model.collective_time("all-reduce", value, 8)
    msg = str(e.value)
    assert "\n" not in msg and len(msg) < 200 and msg.startswith("message size must be"), msg
    assert needle in msg, (needle, msg)


BAD_GROUPS = [
    (np.timedelta64(5, "s"), f"got {np.timedelta64(5, 's')!r}"),
    (10**400, "from 1 to 9,007,199,254,740,992 (2**53, the largest a float counts exactly), "
              "got an integer of 401 digits"),
    (2**53 + 1, "got 9007199254740993"),
    (np.uint64(2**63), "from 1 to 9,007,199,254,740,992"),
    ([10**5000, None], "got a list of 2 items"),
    (-(10**400), ">= 1, got a negative integer of 401 digits"),
    (np.bool_(True), f"got {NP_TRUE}"), (True, "got True"), (0, "got 0"), (-0.0, "got -0.0"),
    (8.0, "got 8.0"), (np.float64(8), "got 8.0"), (float("nan"), "got nan"),
    (math.inf, "got inf"), ("16", "got '16'"), (None, "got None"), (np.int64(-3), "-3"),
]


@pytest.mark.parametrize("model", [RING, FUNC], ids=["ring", "function"])
@pytest.mark.parametrize("value,needle", BAD_GROUPS, ids=[f"group{i}" for i in range(len(BAD_GROUPS))])
def test_bad_group_size_is_one_user_error(model, value, needle):
    with pytest.raises(UserError) as e:
        model.collective_time("all-reduce", 1e6, value)
    msg = str(e.value)
    assert "\n" not in msg and len(msg) < 200 and msg.startswith("group_size must be"), msg
    assert needle in msg, (needle, msg)


def test_valid_numpy_and_edge_sizes_still_work():
    # 2(p-1) alpha + 2(p-1)/p n / B for p = 8, n = 8e9, B = 1e11: 14 us + 0.14 s
    for n in (8e9, np.float64(8e9), np.int64(8_000_000_000), np.uint64(8_000_000_000),
              np.float32(8e9), 8_000_000_000, [8e9], np.array([8e9])):
        for p in (8, np.int64(8), np.uint8(8), np.int16(8)):
            t = RING.collective_time("all-reduce", n, p)
            assert np.allclose(t, 0.140014, rtol=1e-7), (n, p, t)
    assert float(RING.collective_time("all-reduce", -0.0, 8)) == 14e-6   # -0.0 bytes is 0 bytes
    assert float(RING.collective_time("all-reduce", 10**30, 8)) == pytest.approx(1.75e19)
    assert check_group_size(2**53) == 2**53
    assert check_nbytes([]).shape == (0,)


# ------------------------------------------------------------- fabric arguments (CLI)

INFER = ["infer", "--model", "Llama-3-8B", "--tp", "8", "--batch", "4"]


@pytest.mark.parametrize("args,needle", [
    # an OCS scenario's fabric as built has no circuits: every group is cut apart. Before: a
    # traceback (ValueError: collective model returned a negative or non-finite time ...)
    # (since a3623db the OCS case is refused up front, naming the way out)
    (INFER + ["--fabric", "lite-ocs@H100-SXM"],
     "is an OCS fabric with no circuits set, so no collective can run on it; give "
     "--scenario lite-ocs@H100-SXM"),
    (["search", "--model", "Llama-3-8B", "--fabric", "lite-ocs"],
     "give --scenario lite-ocs "),
    (INFER + ["--fabric", "ocs:gpus=16,gpu=H100-SXM"],
     "set them in the spec: ocs:gpus=16,gpu=H100-SXM,logical=ring"),
])
def test_a_cut_fabric_is_one_line_not_a_traceback(args, needle):
    one_line_error(run_cli(args), needle)


@pytest.mark.parametrize("fabric,advice", [
    # before: "name that GPU in the spec (gpu=H100-SXM)" for every source, which for a
    # scenario name or file gives 'unknown fabric' or is not possible at all
    ("lite-ocs", "give the scenario with that GPU (lite-ocs@H100-SXM)"),
    ("lite-flat@Lite+BW", "(lite-flat@H100-SXM)"),
    ("docs/examples/gb300-nvl72.toml", "(docs/examples/gb300-nvl72.toml@H100-SXM)"),
    ("ring:n=8,gpu=Lite", "name that GPU in the spec (gpu=H100-SXM)"),
])
def test_fabric_built_for_another_gpu_gives_advice_that_works(fabric, advice):
    line = one_line_error(run_cli(INFER + ["--fabric", fabric, "--gpu", "H100-SXM"]), advice)
    if "@" in advice:   # the advice itself runs (on a fabric that is not cut apart)
        ref = advice.rpartition("(")[2].rstrip(")")
        if not ref.startswith("lite-ocs"):
            r = run_cli(INFER + ["--fabric", ref, "--gpu", "H100-SXM"])
            assert r.exit_code == 0, (line, r.output)


# ------------------------------------------------------------- host power rows and overrides

SWEEP = ["sweep", "--models", "Llama-3-8B", "--phase", "decode"]


@pytest.mark.parametrize("scenarios,needle", [
    # before: every point the same (USD/Mtoken 0.016 at 0, 534 and 2,000 W), exit 0
    (["h100-dgx@B200-HGX"], "(B200-HGX 716 W per GPU)"),
    (["h100-dgx@B200-HGX", "lite-flat@GB300-NVL72"], "(B200-HGX 716 W, GB300-NVL72 186 W per GPU)"),
    (["h100-dgx@A100-SXM-80GB"], "A100-SXM-80GB 386 W"),
])
def test_a_host_power_sweep_that_moves_nothing_is_refused(scenarios, needle):
    args = SWEEP + [a for s in scenarios for a in ("--scenario", s)]
    line = one_line_error(run_cli(args + ["--param", "cost.host_power_per_h100=0,534,2000"]),
                           "cost.host_power_per_h100 moves no scenario", needle)
    assert "H100-SXM, H200-SXM, Lite" in line


def test_a_mixed_host_power_sweep_moves_the_rule_gpus_only():
    from netmodel.study.cost import cost_summary

    # H100: 32 GPUs x 534 W x 0.75 = 12,816 W as given; 32 x 2,000 x 0.75 = 48,000 W
    h100 = [cost_summary("h100-dgx", "Llama-3-8B", "decode", host_power_per_h100=w).power_host
            for w in (534, 2000)]
    assert h100 == [12_816.0, 48_000.0]
    # B200 on the same fabric: its DGX B200 row, 32 x 716 W x 0.75 = 17,184 W, whatever it is
    b200 = cost_summary("h100-dgx@B200-HGX", "Llama-3-8B", "decode", host_power_per_h100=2000)
    assert b200.power_host == 17_184.0
    r = run_cli(SWEEP + ["--scenario", "h100-dgx@B200-HGX", "--scenario", "h100-dgx", "--param",
                      "cost.host_power_per_h100=534,2000"])
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize("value,needle", [
    ("2", "'2' is outside the range a sweep takes, from 0 to 1"),
    ("1.0000001", "'1.0000001' is outside the range a sweep takes, from 0 to 1"),
    ("-1", "'-1' is outside the range a sweep takes, from 0 to 1"),
    ("nan", "'nan'"), ("1e400", "'1e400'"),
])
def test_host_load_fraction_above_one_is_refused(value, needle):
    # before: 2 was taken (a host drawing twice its max: 25,632 W for h100-dgx)
    one_line_error(run_cli(SWEEP + ["--scenario", "h100-dgx", "--param",
                                  f"cost.host_load_fraction={value}"]), needle)


@pytest.mark.parametrize("value,needle", [
    ("-1", "'-1' is outside the range a sweep takes, from 0 to 5.35e+08W"), ("nan", "'nan'"),
    ("inf", "'inf'"),
    ("1e400", "'1e400'"), ("abc", "'abc' is not a number"), ("0x10", "not a number"),
    ("1e3,-5", "'-5'"),
])
def test_host_power_per_h100_bad_values(value, needle):
    one_line_error(run_cli(SWEEP + ["--scenario", "h100-dgx", "--param",
                                  f"cost.host_power_per_h100={value}"]), needle)


ROW = {"value": 716, "unit": "W", "source": "s", "ref": "", "confidence": "derived"}


@pytest.mark.parametrize("row,needle", [
    # before: OverflowError: int too large to convert to float (a TOML integer has no bound)
    (dict(ROW, value=10**400), "value must be a finite number >= 0, got an integer of 401 digits"),
    (dict(ROW, value=-(10**400)), "got a negative integer of 401 digits"),
    (dict(ROW, value="716"), "got '716'"), (dict(ROW, value=True), "got True"),
    (dict(ROW, value=math.inf), "got inf"), (dict(ROW, value=math.nan), "got nan"),
    (dict(ROW, value=-1), "got -1"), (dict(ROW, value=[716]), "got [716]"),
    (dict(ROW, unit="kW"), "unit 'kW' is not known"), (dict(ROW, unit="USD"), "unit must be 'W'"),
    ({k: v for k, v in ROW.items() if k != "source"}, "must hold exactly the keys"),
    (dict(ROW, extra=1), "must hold exactly the keys"), (5, "must hold exactly the keys"),
    (dict(ROW, confidence="sure"), "confidence 'sure' is not allowed"),
    (dict(ROW, source=" "), "needs a non-empty source"),
])
def test_hostile_host_power_rows(row, needle):
    from compute.rows import read_host_powers

    with pytest.raises(UserError) as e:
        read_host_powers({"B200-HGX": row}, "economics.toml", ["B200-HGX"])
    msg = str(e.value)
    assert "\n" not in msg and len(msg) < 400 and needle in msg, msg


@pytest.mark.parametrize("table,needle", [
    (5, "must be a table of rows by GPU name"), ([ROW], "must be a table"),
    ({"": ROW}, "[] is not a GPU of the catalog"), ({"B200-HGX ": ROW}, "[B200-HGX ] is not"),
    ({"b200-hgx": ROW}, "[b200-hgx] is not a GPU"), ({"Lité": ROW}, "[Lité] is not"),
])
def test_hostile_host_power_tables(table, needle):
    from compute.rows import read_host_powers

    with pytest.raises(UserError, match=None) as e:
        read_host_powers(table, "economics.toml", ["B200-HGX"])
    assert needle in str(e.value), str(e.value)


# ------------------------------------------------------------- calibrate: the new columns

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

HEADER = "model,gpu,tp,batch,phase,latency_s,prompt,context,pp,ep,attention_dp,expert_skew"


@st.composite
def _rows(draw):
    """A valid measured step: Llama-3-8B (dense) or Mixtral-8x7B (8 experts) on H100-SXM at a
    configuration infer takes, its latency 1.05-3x its roofline (a plausible engine)."""
    from compute.measurements import Measurement
    from compute.profile_fit import _Components, roofline

    model = draw(st.sampled_from(["Llama-3-8B", "Mixtral-8x7B"]))
    tp = draw(st.sampled_from([1, 2, 4, 8]))
    ep = draw(st.sampled_from([1, 2, 4, 8])) if model == "Mixtral-8x7B" else 1
    skew = draw(st.sampled_from([1.0, 1.25, 2.0])) if ep > 1 else 1.0
    phase = draw(st.sampled_from(["decode", "prefill"]))
    batch = draw(st.integers(1, 64))
    tokens = draw(st.integers(16, 4096))
    m = Measurement(model, "H100-SXM", tp, phase, batch, 1.0,
                    prompt=tokens if phase == "prefill" else None,
                    context=tokens if phase == "decode" else None, ep=ep, expert_skew=skew)
    try:
        _Components(m)   # calibrate's own check that the step could have run
        floor = roofline(m)
    except UserError:   # does not fit the GPUs (memory): not a valid measurement
        return None
    lat = floor * draw(st.floats(1.05, 3.0))
    return (f"{model},H100-SXM,{tp},{batch},{phase},{lat!r},"
            f"{tokens if phase == 'prefill' else ''},{tokens if phase == 'decode' else ''},"
            f"1,{ep},1,{skew!r}")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# unique: a row twice is refused (compute.profile_fit's repeat check); a step measured
# again at another latency stays a valid file
@given(rows=st.lists(_rows(), min_size=2, max_size=5, unique=True))
def test_random_valid_rows_round_trip_through_a_profile(rows, tmp_path_factory):
    from compute.measurements import read_measurements
    from compute.profile_fit import fit_profile
    from compute.profiles import read_profile

    rows = [r for r in rows if r is not None]
    if len(rows) < 2:
        return
    d = tmp_path_factory.mktemp("cal")
    (d / "m.csv").write_text(HEADER + "\n" + "\n".join(rows) + "\n")
    ms = read_measurements(d / "m.csv")
    fit = fit_profile(ms, fit=["layer_overhead_s"], name="mine")
    (d / "p.toml").write_text(fit.profile.to_toml())
    back = read_profile(d / "p.toml")
    assert back.measurements == ms                   # every column, ep and skew included
    assert back.layer_overhead_s == fit.profile.layer_overhead_s
    again = fit_profile(back.measurements, fit=["layer_overhead_s"], name="mine")
    assert again.profile.layer_overhead_s == pytest.approx(fit.profile.layer_overhead_s,
                                                           rel=1e-9, abs=1e-15)


CAL_BASE = "Mixtral-8x7B,H100-SXM,8,64,decode,0.006,,1000"


@pytest.mark.parametrize("cells,needle", [
    ("0,1,1,1", "pp must be a whole number from 1 to 1,000,000, got 0"),
    ("-0,1,1,1", "pp must be a whole number from 1 to 1,000,000, got '-0'"),
    ("1e400,1,1,1", "pp must be a whole number"), ("1.5,1,1,1", "pp must be a whole number"),
    ("1,3,1,1", "(Mixtral-8x7B TP 8 x EP 3 decode batch 64 context 1000 on H100-SXM): EP degree 3 "
                "does not divide"),
    ("1,0x8,1,1", "ep must be a whole number from 1 to 1,000,000, got '0x8'"),
    ("1,two,1,1", "got 'two'"), ("1,8,-1,1", "attention_dp must be a whole number"),
    ("1,8,1,0.5", "expert_skew must be a number from 1 to 1,000,000, got 0.5"),
    ("1,8,1,nan", "got nan"), ("1,8,1,inf", "got inf"), ("1,8,1,1e7", "got '1e7'"),
    ("1,8,1,True", "expert_skew must be a number from 1 to 1,000,000, got 'True'"),
    ("1,8,1,1e-400", "expert_skew must be a number from 1 to 1,000,000, got '1e-400'"),
    ("1,8,1,1,9", "more cells than the header"),
    ("1,8,1", "fewer cells than the header"),
])
def test_calibrate_bad_new_columns(cells, needle, tmp_path):
    (tmp_path / "m.csv").write_text(f"{HEADER}\n{CAL_BASE},{cells}\n")
    out = tmp_path / "p.toml"
    one_line_error(run_cli(["calibrate", "--measurements", tmp_path / "m.csv", "-o", out,
                          "--fit", "layer_overhead_s"]), needle)
    assert not out.exists()


# ------------------------------------------------------------- output paths

LONG = "é" * 300   # 600 bytes: over the 255-byte limit of a name


@pytest.mark.parametrize("args", [
    ["study", "lite-gpu", "-q", "--no-fabric", "--models", "Llama-3-70B", "--out", "{d}/" + LONG],
    ["sweep", "--scenario", "h100-dgx", "--param", "adjust.hop_latency=0.1us,1us", "--models",
     "Llama-3-8B", "--out", "{d}/" + LONG],
    ["topology", "export", "lite-ocs", "-o", "{d}/" + LONG + ".json"],
    ["topology", "plot", "h100-dgx@Lite", "-o", "{d}/" + LONG + ".png"],
    ["topology", "export", "ring:n=4", "-o", "{d}/" + "a/" * 3000 + "x.json"],
])
def test_an_output_name_too_long_is_one_line(args, tmp_path):
    # before: OSError: [Errno 36] File name too long (a traceback, exit 1)
    r = run_cli([a.replace("{d}", str(tmp_path)) for a in args])
    line = one_line_error(r, "File name too long (at most 255 bytes a name")
    assert len(line) < 300 and "..." in line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("suffix", [".json", ".graphml"])
@pytest.mark.parametrize("cmd", [["topology", "show"], ["topology", "compare", "ring:n=4"]])
def test_a_fabric_file_name_too_long_is_one_line(cmd, suffix, tmp_path):
    # before (.json): OSError: [Errno 36] File name too long from topologies.io._read_bytes
    one_line_error(run_cli(cmd + [f"{tmp_path}/{LONG}{suffix}"]), "cannot read fabric file",
                    "File name too long")


@pytest.mark.parametrize("ref,advice", [
    # before: "ring: n must be an integer, got '4@Lite'" (the GPU read as part of n)
    ("ring:n=4@Lite", "(ring:n=4,gpu=Lite)"),
    ("ring@Lite", "(ring:gpu=Lite)"),
    ("flat:n=8@B200-HGX", "(flat:n=8,gpu=B200-HGX)"),
    ("lite-groups:lites=4@Lite+BW", "(lite-groups:lites=4,lite=Lite+BW)"),
])
@pytest.mark.parametrize("cmd", [["topology", "show"], ["collective", "all-reduce", "--fabric"],
                                 ["costs", "--fabric"]])
def test_a_spec_with_at_gpu_says_how_to_give_the_gpu(cmd, ref, advice):
    one_line_error(run_cli(cmd + [ref]), "'@GPU' re-types a scenario", advice)
    fixed = advice.strip("()")
    assert run_cli(["topology", "show", fixed]).exit_code == 0   # the advice works


# every fabric argument, hostile names: (ref, words of the one line)
def _fabric_refs(d):
    (d / "empty.toml").write_text("")
    (d / "bin.toml").write_bytes(bytes(range(256)) * 8)
    (d / "huge.toml").write_text('a = "' + "x" * (17 * 2**20) + '"\n')
    (d / "nested.toml").write_text("[" * 100_000)
    (d / "hostile.toml").write_text('[fabric]\nbuilder = "ring"\nn = -4\n')
    (d / "dir.toml").mkdir()
    return [
        ("lite-ocs@", "names no GPU after '@'"),
        ("lite-ocs@unknown", "unknown GPU 'unknown'; known:"),
        ("lite-ocs@Lité", "unknown GPU 'Lité'"),
        ("lite-ocs@@Lite", "unknown GPU '@Lite'; known:"),
        ("lite-ocs@Lite@Lite", "unknown GPU 'Lite@Lite'"),
        ("@@", "unknown fabric '@@'"), ("@", "unknown fabric '@'"), ("@Lite", "'@Lite'"),
        ("lite ocs", "unknown fabric 'lite ocs'"), ("lité-ocs", "'lité-ocs'"),
        ("H100-DGZ", "nor a scenario (known: 'h100-dgx'"),   # H100-DGX is h100-dgx
        (" ", "a fabric must be a spec string"), ("", "a fabric must be a spec string"),
        ("x" * 10_000, "unknown fabric 'xxxx"),
        ("lite-ocs@" + "x" * 10_000, "unknown GPU 'xxxx"),
        (f"{d}/missing.toml", "does not exist"), (f"{d}/missing.toml@", "names no GPU"),
        (f"{d}/empty.toml", "missing key(s) name, description, gpu, fabric"),
        (f"{d}/bin.toml", "is not a UTF-8 text file"),
        (f"{d}/huge.toml", "larger than the 16,777,216-byte limit"),
        (f"{d}/nested.toml", "nests deeper than 32 levels"),
        (f"{d}/hostile.toml", "missing key(s)"),
        (f"{d}/dir.toml", "it is a folder, not a file"),
        (f"{d}/empty.toml@Lite", "missing key(s)"),
        (f"{d}/missing.json", "fabric file"), ("ring:n=4@", "'@GPU' re-types a scenario"),
    ]


FABRIC_CMDS = {
    "show": lambda r: ["topology", "show", r],
    "compare": lambda r: ["topology", "compare", r, "ring:n=4"],
    "collective": lambda r: ["collective", "all-reduce", "--fabric", r, "--size", "1M"],
    "costs": lambda r: ["costs", "--fabric", r],
    "infer": lambda r: INFER + ["--fabric", r],
    "search": lambda r: ["search", "--model", "Llama-3-8B", "--fabric", r],
    "export": lambda r: ["topology", "export", r, "-o", "{out}/f.json"],
    "plot": lambda r: ["topology", "plot", r, "-o", "{out}/f.png"],
}


@pytest.mark.parametrize("cmd", sorted(FABRIC_CMDS))
def test_hostile_fabric_names_everywhere(cmd, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    for ref, needle in _fabric_refs(tmp_path):
        args = [a.replace("{out}", str(out)) for a in FABRIC_CMDS[cmd](ref)]
        one_line_error(run_cli(args), needle)
        assert list(out.iterdir()) == [], (cmd, ref)


@pytest.mark.parametrize("ref", ["h100-dgx", "lite-direct", "lite-flat", "lite-flat-inr",
                                 "lite-hier", "lite-ocs", "lite-flat@B200-HGX",
                                 " lite-hier@Lite+BW ", "H100-DGX", f"{ROOT}/docs/examples/gb300-nvl72.toml@Lite"])
def test_valid_scenario_fabrics_never_crash(ref):
    for args in (["topology", "show", ref], ["collective", "all-reduce", "--fabric", ref,
                                              "--size", "1M", "--group", "4"]):
        r = run_cli(args)
        assert r.exit_code == 0 and r.exception is None, (args, r.output)


# ------------------------------------------------------------- study lite-gpu options

STUDY = ["study", "lite-gpu", "-q", "--no-plot", "--models", "Llama-3-70B"]


@pytest.mark.parametrize("opts,needle", [
    (["--phases", ""], "--phases '' is empty"), (["--phases", ","], "is empty"),
    (["--phases", "Both"], "unknown phase 'Both'; known: 'decode', 'prefill'"),
    (["--phases", "prefill,both"], "unknown phase 'both'"),
    (["--phases", "decode,decode"], "names decode more than once"),
    (["--phases", "prefill;decode"], "unknown phase 'prefill;decode'"),
    (["--scenarios", ""], "--scenarios '' is empty"),
    (["--scenarios", "lite-flat@"], "names no GPU after '@'"),
    (["--scenarios", "lite-flat@@Lite"], "unknown GPU '@Lite'"),
    (["--scenarios", "ring:n=4@Lite"], "unknown scenario 'ring:n=4'"),
    (["--scenarios", "h100-dgx,h100-dgx"], "names h100-dgx more than once"),
    (["--scenarios", "lite flat"], "unknown scenario 'lite flat'"),
    (["--scenarios", "lite-flat@unknown"], "unknown GPU 'unknown'"),
    (["--scenarios", "nope.toml"], "scenario file 'nope.toml' does not exist"),
])
def test_study_bad_options_fail_before_any_work(opts, needle, tmp_path):
    out = tmp_path / "study"
    one_line_error(run_cli(STUDY + opts + ["--out", out]), needle)
    assert not out.exists()


@pytest.mark.parametrize("out,needle", [
    ("", "output folder must not be empty"), (" ", "must not be empty"),
    ("{d}/afile/sub", "'{d}/afile' is a file, not a folder"),
    ("{d}/full", "holds files netmodel did not write"),
    ("{d}/no/such/x", "its parent folder '{d}/no/such' does not exist"),
])
def test_study_bad_out(out, needle, tmp_path):
    (tmp_path / "afile").write_text("hi")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "other.txt").write_text("x")
    d = str(tmp_path)
    one_line_error(run_cli(STUDY + ["--no-fabric", "--out", out.replace("{d}", d)]),
                    needle.replace("{d}", d))
    assert (tmp_path / "afile").read_text() == "hi"
    assert sorted(p.name for p in (tmp_path / "full").iterdir()) == ["other.txt"]


def test_study_without_h100_dgx_and_both_phases_runs(tmp_path):
    out = tmp_path / "s"
    r = run_cli(STUDY[:4] + ["--models", "Llama-3-8B", "--gpus", "Lite", "--scenarios",
                          "lite-flat", "--phases", "both", "--no-sweep", "--no-reliability",
                          "--no-cost", "--no-crossovers", "--no-serving", "--no-packed",
                          "--moe-model", "none", "--out", out])
    assert r.exit_code == 0 and r.exception is None, r.output
    compare = (out / "compare.csv").read_text()
    assert "h100-dgx" in compare and "lite-flat" in compare   # h100-dgx added as baseline
    assert {"prefill", "decode"} <= set(compare.replace("\n", ",").split(","))


@pytest.mark.parametrize("value,needle", [
    # before: np.bool_(True) costed as 1 byte, '1e6' as 1e6 bytes, 10**400 OverflowError
    (np.bool_(True), f"must be a number of bytes, got {NP_TRUE}"),
    ("1e6", "must be a number of bytes, got '1e6'"),
    (np.array(["1"]), "must be a number of bytes"), (1 + 0j, "got (1+0j)"),
    (10**400, "finite number of bytes > 0, got an integer of 401 digits"),
    (0, "> 0, got 0.0"), (-0.0, "> 0, got -0.0"), ([1e6, 0], "got 0.0"),
    (math.nan, "got nan"), (None, "got None"),
])
@pytest.mark.parametrize("fabric", ["h100-dgx", "ring:n=8"])
def test_api_collective_time_sizes(fabric, value, needle):
    from netmodel import api

    with pytest.raises(UserError) as e:
        api.collective_time(fabric, "all-reduce", value, 8)
    assert needle in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_api_collective_time_numpy_sizes_still_work():
    from netmodel import api

    a = api.collective_time("ring:n=8", "all-reduce", np.float64(1e6), np.int64(8))
    for n in (1e6, 1_000_000, np.int32(1_000_000), np.float32(1e6), [1e6], np.array([1e6])):
        assert np.allclose(api.collective_time("ring:n=8", "all-reduce", n, 8), a), n


def test_calibrate_names_the_file_line_after_comments(tmp_path):
    # before: 'row 3: pp must be ...' for the bad step on line 7 (comments, a blank line and
    # the header before it; line 3 is the header)
    (tmp_path / "m.csv").write_text(
        f"# measured on vLLM\n\n{HEADER}\n# first\n{CAL_BASE},1,8,1,1\n# second\n"
        f"{CAL_BASE},0,8,1,1\n")
    one_line_error(run_cli(["calibrate", "--measurements", tmp_path / "m.csv", "-o",
                          tmp_path / "p.toml"]),
                    "m.csv: row 3 (line 7 of the file): pp must be a whole number")
    # no comments: rows are lines, named as before
    (tmp_path / "m.csv").write_text(f"{HEADER}\n{CAL_BASE},1,8,1,1\n{CAL_BASE},0,8,1,1\n")
    line = one_line_error(run_cli(["calibrate", "--measurements", tmp_path / "m.csv", "-o",
                                 tmp_path / "p.toml"]), "m.csv: row 3: pp must be")
    assert "line" not in line
    assert not (tmp_path / "p.toml").exists()
    # a quoted cell over two lines: a source is one line of text (round 18), so its row is
    # refused, before the bad step after it
    (tmp_path / "m.csv").write_text(f"{HEADER},source\n{CAL_BASE},1,8,1,1,\"two\nlines\"\n"
                                    f"{CAL_BASE},0,8,1,1,x\n")
    one_line_error(run_cli(["calibrate", "--measurements", tmp_path / "m.csv", "-o",
                          tmp_path / "p.toml"]),
                   "m.csv: row 2: source 'two\\nlines' holds a control character")
    assert not (tmp_path / "p.toml").exists()


@pytest.mark.parametrize("where", ["a@b/gb.toml", "gb@2.toml"])
def test_a_scenario_file_whose_path_holds_an_at(where, tmp_path):
    # before: 'unknown fabric '.../a@b/gb.toml': neither a fabric builder ...' (split at '@'
    # as if NAME@GPU), while '.../a@b/gb.toml@Lite' worked
    path = tmp_path / where
    path.parent.mkdir(exist_ok=True)
    path.write_text((ROOT / "docs" / "examples" / "gb300-nvl72.toml").read_text())
    for ref, gpu in ((str(path), "GB300-NVL72"), (f"{path}@Lite", "Lite")):
        r = run_cli(["topology", "show", ref])
        assert r.exit_code == 0, r.output
        assert f"scenario:    gb300-nvl72@{gpu} (its fabric)" in r.output
        r = run_cli(["compare", "--scenarios", ref, "--models", "Llama-3-8B", "--phase", "decode"])
        assert r.exit_code == 0 and f"gb300-nvl72@{gpu}" in r.output, r.output
    line = one_line_error(run_cli(INFER + ["--fabric", str(path), "--gpu", "H100-SXM"]))
    assert f"({path}@H100-SXM)" in line


# ------------------------------------------------------------- what a comm model returns

class _Returns:   # an object with collective_time: no FunctionComm wrapper checks it first
    def __init__(self, f):
        self.f = f

    def collective_time(self, op, nbytes, group_size):
        return self.f(op, nbytes, group_size)


RETURNS = {
    # before: complex times lost their imaginary part (a ComplexWarning), bools were 1 s
    # (Llama-3-8B TP 8 decode 66.0 s), and from an object a string or object array raised
    # numpy's bare ValueError / TypeError
    "complex": (lambda op, n, p: np.asarray(n) * 1j, "returned an array of shape ("),
    "bool": (lambda op, n, p: np.ones(np.shape(n), dtype=bool), "returned an array of shape ("),
    "None": (lambda op, n, p: None, "returned None for all-gather"),
    "str": (lambda op, n, p: "x", "returned 'x' for all-gather"),
    "objects": (lambda op, n, p: np.array([object()] * np.size(n)), "returned an array of shape ("),
    "bigint": (lambda op, n, p: [10**400] * np.size(n), "returned a list of "),
}


@pytest.mark.parametrize("wrap", ["function", "object"])
@pytest.mark.parametrize("kind", sorted(RETURNS))
def test_a_comm_model_returning_no_seconds_is_one_user_error(kind, wrap):
    from compute.evaluate_one import evaluate
    from compute.roofline import evaluate_grid, make_workload

    f, needle = RETURNS[kind]
    comm = f if wrap == "function" else _Returns(f)
    for call in (lambda: evaluate("Llama-3-8B", "H100-SXM", 8, 1, comm=comm),
                 lambda: evaluate_grid("Llama-3-8B", "H100-SXM", [8], [1, 2],
                                       make_workload("decode"), comm=comm)):
        with pytest.raises(UserError) as e:
            call()
        msg = str(e.value)
        assert needle in msg and "must return seconds" in msg and "\n" not in msg, msg


@pytest.mark.parametrize("wrap", ["function", "object"])
def test_a_comm_model_returning_ints_lists_or_numpy_still_runs(wrap):
    from compute.evaluate_one import evaluate

    ref = evaluate("Llama-3-8B", "H100-SXM", 8, 1, comm=lambda op, n, p: np.zeros(np.shape(n)))
    for f in (lambda op, n, p: 0, lambda op, n, p: [0] * np.size(n),
              lambda op, n, p: np.zeros(np.shape(n), dtype=np.float32),
              lambda op, n, p: np.zeros(np.shape(n), dtype=np.int64)):
        comm = f if wrap == "function" else _Returns(f)
        assert evaluate("Llama-3-8B", "H100-SXM", 8, 1, comm=comm).latency == ref.latency


def test_a_gpu_file_whose_path_holds_an_at(tmp_path):
    # before: "unknown scenario 'lite-flat@.../my'" (split at the last '@')
    gpu = tmp_path / "my@gpu.toml"
    gpu.write_text('[gpu."MyLite"]\nderive_from = "Lite"\nhbm_bandwidth_multiplier = 2.0\n'
                   'source = "test: a Lite with twice the HBM bandwidth"\n')
    r = run_cli(["topology", "show", f"lite-flat@{gpu}"])
    assert r.exit_code == 0 and "scenario:    lite-flat@MyLite (its fabric)" in r.output, r.output
