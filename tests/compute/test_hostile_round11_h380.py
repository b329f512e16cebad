"""Hostile input, round 11 (h380): numbers in data files read by the one number grammar.

A float in a TOML or JSON data file (profile, scenario, GPU, model, workload) or in a JSON
or GraphML fabric that is not zero but below the smallest normal float was read as 0.0
(``1e-400``) or as a subnormal that has lost its digits (``1e-310``), where the same text
typed on the command line is refused (:func:`compute.validate.read_number`, c048980): a
profile's ``layer_overhead_s = 1e-400`` ran as no overhead, exit 0. Now each is refused in
one line naming the file and the number, as typed.
"""

from __future__ import annotations

import math

import pytest

from compute.config_files import FloatOverflow, finite_float, parse_table
from compute.errors import UserError
from compute.validate import SMALLEST_NUMBER, below_smallest

BELOW = ("below the smallest number netmodel reads (2.225e-308); write 0 for zero")


@pytest.mark.parametrize("text", ["1e-400", "1E-400", "-1e-400", "1e-310", "4.9e-324",
                                  "2.2e-308", "0.000001e-303"])
def test_a_float_below_the_smallest_is_refused_as_typed(text):
    assert 0 <= abs(float(text)) < SMALLEST_NUMBER   # what Python reads: 0 or a subnormal
    with pytest.raises(FloatOverflow) as err:
        finite_float(text)
    assert err.value.message("f.toml") == f"f.toml holds the number {text}, {BELOW}"


@pytest.mark.parametrize("text, value", [("0.0", 0.0), ("-0.0", -0.0), ("0e-400", 0.0),
                                         ("0.000e99999", 0.0), ("2.2250738585072014e-308",
                                                                SMALLEST_NUMBER),
                                         ("1e-300", 1e-300), ("nan", math.nan),
                                         ("-inf", -math.inf)])
def test_zero_spelt_and_normal_floats_are_read(text, value):
    got = finite_float(text)
    assert got == value or (math.isnan(value) and math.isnan(got))
    assert math.copysign(1, got) == math.copysign(1, value)


def test_the_rule_is_the_command_lines():
    for text in ["1e-400", "1e-310", "0e0", "1e-300", "-0.0"]:
        assert below_smallest(text, float(text)) == (text in ("1e-400", "1e-310"))


@pytest.mark.parametrize("fmt, text, number, key", [
    ("toml", "x = 1e-400\n", "1e-400", "x"), ("toml", "x = 1_0e-310\n", "1_0e-310", "x"),
    ("json", '{"x": 1e-400}', "1e-400", '"x"'), ("json", '{"x": [1, 5e-324]}', "5e-324", '"x"')])
def test_a_data_file_names_the_number(fmt, text, number, key):
    """Before: {'x': 0.0} or a subnormal, read without a word. With its line and key
    since h502."""
    with pytest.raises(UserError) as err:
        parse_table(text, fmt, "f")
    assert str(err.value) == f"f holds the number {number} at line 1 ({key}), {BELOW}"



# A profile's [[measurement]] tables had no bound, where a measurements file holds at most
# MAX_MEASUREMENTS rows (calibrate refuses more): a profile of 100,000 copies of one row
# (12 MB, under the 16 MiB and 1,000,000-value file limits) ran infer in 12.0 s and 181 MB
# (exit 0); now refused in one line after parsing (7.6 s, 162 MB, exit 2).

def _profile_of(tmp_path, rows: int):
    from compute.profiles import _shipped

    # renamed: a file of the shipped profile's name and other values is refused
    text = (_shipped() / "vllm-dgx-h100.toml").read_text().replace(
        'name = "vllm-dgx-h100"', 'name = "vllm-copy"', 1)
    head = text[:text.index("[[measurement]]")].replace("points = 6", f"points = {rows}")
    row = ('[[measurement]]\nmodel = "Llama-2-70B"\ngpu = "H100-SXM"\ntp = 8\nphase = '
           '"decode"\nbatch = 1\ncontext = 576\nlatency_s = 0.0298\n')
    path = tmp_path / f"p{rows}.toml"
    path.write_text(head + row * rows)
    return path


def test_a_profile_holds_at_most_the_measurements_a_file_holds(tmp_path):
    from compute.measurements import MAX_MEASUREMENTS
    from compute.profiles import read_profile

    assert len(read_profile(_profile_of(tmp_path, MAX_MEASUREMENTS)).measurements) == 10_000
    path = _profile_of(tmp_path, MAX_MEASUREMENTS + 1)
    with pytest.raises(UserError) as err:
        read_profile(path)
    assert str(err.value) == (f"{path} holds more than 10,000 measurements, the most a "
                              f"measurements file or a profile holds")


def test_a_measurements_file_is_told_alike(tmp_path):
    from compute.measurements import read_measurements

    path = tmp_path / "m.csv"
    path.write_text("model,gpu,tp,batch,phase,context,latency_s\n"
                    + "Llama-2-70B,H100-SXM,8,1,decode,576,0.0298\n" * 10_001)
    with pytest.raises(UserError) as err:
        read_measurements(path)
    assert str(err.value) == (f"{path} holds more than 10,000 measurements, the most a "
                              f"measurements file or a profile holds")


# A profile's [fit] record took points up to 10,000,000 (where a fit has at most
# MAX_MEASUREMENTS), points other than the [[measurement]] tables it lists, and a worst
# relative error below the RMS one: records no fit writes, read and shown (exit 0).

@pytest.mark.parametrize("old, new, said", [
    ("points = 6", "points = 6000000", "points must be a whole number from 1 to 10,000, got "
                                       "6000000"),
    ("points = 6", "points = 7", "points 7 must be the number of [[measurement]] tables the "
                                 "profile lists (6)"),
    ("max_relative_error = 0.3013065399329733", "max_relative_error = 0.01",
     "max_relative_error 0.01 must be at least rms_relative_error 0.178979 (a root mean "
     "square is at most the largest of its values)"),
])
def test_a_fit_record_no_fit_writes_is_refused(tmp_path, old, new, said):
    from compute.profiles import _shipped, read_profile

    text = (_shipped() / "vllm-dgx-h100.toml").read_text()
    assert text.count(old) == 1
    path = tmp_path / "p.toml"
    path.write_text(text.replace(old, new))
    with pytest.raises(UserError) as err:
        read_profile(path)
    assert str(err.value) == f"{path}: [fit]: {said}"


def test_a_fit_record_of_equal_errors_and_no_listed_rows_is_read(tmp_path):
    """All errors equal: RMS = max (to rounding); a profile without its rows keeps its count."""
    from compute.profiles import _shipped, read_profile

    text = (_shipped() / "vllm-dgx-h100.toml").read_text().replace(
        'name = "vllm-dgx-h100"', 'name = "vllm-copy"', 1)
    text = text.replace("max_relative_error = 0.3013065399329733",
                        "max_relative_error = 0.17897904774235976")
    path = tmp_path / "p.toml"
    path.write_text(text[:text.index("[[measurement]]")])
    assert read_profile(path).fit[1:] == (6, 0.17897904774235976, 0.17897904774235976)


def test_a_fitted_profile_reads_back(tmp_path):
    """What calibrate writes passes the checks: a fit of the docs' rows, written and read."""
    from compute.measurements import read_measurements
    from compute.profile_fit import fit_profile
    from compute.profiles import read_profile

    root = __import__("pathlib").Path(__file__).resolve().parents[2]
    doc = (root / "docs" / "compute.md").read_text()
    csv = doc.split("<!-- file: measured.csv -->\n```csv\n")[1].split("```")[0]
    (tmp_path / "m.csv").write_text(csv)
    result = fit_profile(read_measurements(tmp_path / "m.csv"), fit=["layer_overhead_s"])
    path = tmp_path / "fitted.toml"
    path.write_text(result.profile.to_toml())
    back = read_profile(path)
    assert back.fit[1] == len(back.measurements) == 6
    assert back.fit[2] <= back.fit[3]


# A measurement's token count of the other phase (a prefill row's context, a decode row's
# prompt) was read and never used: the fit ran as if the cell were empty (calibrate: exit
# 0), where infer refuses --context with --phase prefill. Now refused, file and row named.

_HEADER = "model,gpu,tp,batch,phase,prompt,context,latency_s\n"


@pytest.mark.parametrize("row, said", [
    ("Llama-2-70B,H100-SXM,8,1,prefill,2048,576,0.1368",
     "a prefill measurement takes prompt, not context (576: a decode step reads context, "
     "the tokens in the KV cache); leave out its context"),
    ("Llama-2-70B,H100-SXM,8,1,decode,512,576,0.0298",
     "a decode measurement takes context, not prompt (512: a prefill reads prompt, the "
     "tokens of each prompt); leave out its prompt"),
])
def test_a_token_count_of_the_other_phase_is_refused(tmp_path, row, said):
    from compute.measurements import read_measurements

    path = tmp_path / "m.csv"
    path.write_text(_HEADER + row + "\n")
    with pytest.raises(UserError) as err:
        read_measurements(path)
    assert str(err.value) == f"{path}: row 2: {said}"


def test_a_profile_row_of_the_other_phase_is_refused(tmp_path):
    from compute.profiles import _shipped, read_profile

    text = (_shipped() / "vllm-dgx-h100.toml").read_text()
    old = 'phase = "prefill"\nbatch = 1\nprompt = 2048\n'
    assert text.count(old) == 1
    path = tmp_path / "p.toml"
    path.write_text(text.replace(old, old + "context = 576\n"))
    with pytest.raises(UserError, match=r": measurement 1: a prefill measurement takes prompt, "
                                        r"not context \(576: "):
        read_profile(path)


def test_each_phase_with_its_own_count_is_read(tmp_path):
    from compute.measurements import read_measurements

    path = tmp_path / "m.csv"
    path.write_text(_HEADER + "Llama-2-70B,H100-SXM,8,1,prefill,2048,,0.1368\n"
                    "Llama-2-70B,H100-SXM,8,1,decode,,576,0.0298\n")
    a, b = read_measurements(path)
    assert (a.prompt, a.context, b.prompt, b.context) == (2048, None, None, 576)


# A measurement's expert_skew at EP 1 (a dense model's only degree) was read and costed at
# 1: the row claimed a skew the fit never used (calibrate: exit 0), where infer refuses
# --expert-skew without --ep N > 1 and on a dense model.

@pytest.mark.parametrize("model", ["Llama-2-70B", "Mixtral-8x7B"])
def test_an_expert_skew_at_ep_1_is_refused(tmp_path, model):
    from compute.measurements import read_measurements

    path = tmp_path / "m.csv"
    path.write_text("model,gpu,tp,batch,phase,context,latency_s,expert_skew\n"
                    f"{model},H100-SXM,8,1,decode,576,0.0298,2\n")
    with pytest.raises(UserError) as err:
        read_measurements(path)
    assert str(err.value) == (f"{path}: row 2: expert_skew 2 weighs the busiest of the EP "
                              f"groups; with ep 1 there is one group, costed at 1: give ep N "
                              f"> 1, or leave out expert_skew")


def test_an_expert_skew_of_1_or_at_ep_2_is_read(tmp_path):
    from compute.measurements import read_measurements

    path = tmp_path / "m.csv"
    path.write_text("model,gpu,tp,batch,phase,context,latency_s,ep,expert_skew\n"
                    "Llama-2-70B,H100-SXM,8,1,decode,576,0.0298,,1\n"
                    "Mixtral-8x7B,H100-SXM,8,1,decode,576,0.0298,2,2\n")
    assert [(m.ep, m.expert_skew) for m in read_measurements(path)] == [(1, 1.0), (2, 2.0)]
