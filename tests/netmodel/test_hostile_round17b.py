"""Hostile input, round 17b: public functions of netmodel.study and netmodel.collectives
that took any object and raised AttributeError, TypeError or numpy's 'truth value ... is
ambiguous' ValueError deep inside, or read a wrong type as something else (a string of
GPUs cut into its letters, True as group 1). Now each refuses in one line naming the
parameter and what is allowed; valid inputs give what they gave. Also two command-line
values taken silently: ``--mtp-tokens 1e-400`` read as 0 (MTP off), and ``calibrate
--engine ''`` / ``--system ''``."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from compute.errors import UserError

ARRAY = np.array([1.0, 2.0])


@pytest.fixture(scope="module")
def graph():
    import netmodel

    return netmodel.build_fabric("single-switch:n=8")


@pytest.mark.parametrize("bad", [1.0, "x", [], ARRAY, np.array(5)],
                         ids=["float", "str", "list", "array", "0-d"])
def test_serve_collectives_must_be_a_dict(bad):
    from netmodel.study.serving import serve

    with pytest.raises(UserError, match=r"^collectives must be a builtins\.dict \(e\.g\. \{\}\) "
                                        r"or None for the defaults, got "):
        serve("Llama-3-70B", "h100-dgx", collectives=bad)


@pytest.mark.parametrize("bad", [None, 0, "x", ARRAY], ids=["None", "0", "str", "array"])
def test_availability_progress_must_have_an_advance_method(bad):
    from netmodel.study.availability import availability

    with pytest.raises(UserError, match=r"^progress must be an object with an advance\(what, n\) "
                                        r"method"):
        availability("lite-direct", "Llama-3-70B", "decode", trials=5, progress=bad)


@pytest.mark.parametrize("bad", [None, "x", float("inf"), 10**400, 0, 64.5, ARRAY,
                                 np.timedelta64(5, "s")],
                         ids=["None", "str", "inf", "10**400", "0", "64.5", "array", "timedelta"])
def test_parse_spares_gpus_must_be_a_whole_count(bad):
    from netmodel.study.availability import parse_spares

    with pytest.raises(UserError, match=r"^gpus must be a whole number from 1 to "):
        parse_spares("1%", bad)


def test_parse_spares_of_valid_counts():
    from netmodel.study.availability import parse_spares

    # 1% of 64 GPUs is 0.64, rounded up to 1; 2% of 16,384 is 327.68 -> 328
    assert parse_spares("1%", 64) == 1
    assert parse_spares("2%", np.int64(16384)) == 328


@pytest.mark.parametrize("bad", [None, float("nan"), 1e308, True, "gpu1"],
                         ids=["None", "nan", "1e308", "True", "str"])
def test_degraded_cost_group_must_be_a_size_or_gpus(graph, bad):
    from netmodel.collectives.degraded import degraded_cost

    with pytest.raises(UserError, match=r"^group must be a size \(int\) or a list of GPU nodes"):
        degraded_cost(graph, "all-reduce", 1e6, bad, nodes=["gpu7"])


@pytest.mark.parametrize("bad", [None, 1.0, "single-switch:n=8"], ids=["None", "float", "str"])
def test_degrade_graph_must_be_a_networkx_graph(bad):
    from netmodel.collectives.degraded import degrade, degraded_cost

    for call in (lambda: degrade(bad, nodes=["gpu7"]),
                 lambda: degraded_cost(bad, "all-reduce", 1e6, 8, nodes=["gpu7"])):
        with pytest.raises(UserError, match=r"^graph must be a networkx Graph \(e\.g\. "):
            call()


def test_degraded_cost_of_a_numpy_size_is_the_int_size(graph):
    from netmodel.collectives.degraded import degraded_cost

    a = degraded_cost(graph, "all-reduce", 1e6, 8, nodes=["gpu7"])
    b = degraded_cost(graph, "all-reduce", 1e6, np.int64(8), nodes=["gpu7"])
    assert a.lost == b.lost == ("gpu7",) and a.degraded.time == b.degraded.time


@pytest.mark.parametrize("bad", ["aaaa", b"ab", 5, ARRAY], ids=["str", "bytes", "int", "array"])
def test_partition_and_place_gpus_must_be_a_list(graph, bad):
    from netmodel.collectives.placement import partition, place

    for call in (lambda: partition(graph, 4, "spread", gpus=bad),
                 lambda: place(graph, 4, "spread", gpus=bad)):
        with pytest.raises(UserError, match=r"^gpus must be a list of the fabric's GPU nodes"):
            call()


@pytest.mark.parametrize("bad", [None, True, 1.0, "1", ARRAY, 2, -1],
                         ids=["None", "True", "float", "str", "array", "2", "-1"])
def test_place_index_must_be_a_group_number(graph, bad):
    from netmodel.collectives.placement import place

    with pytest.raises(UserError, match=r"^group index must be a whole number from 0 to 1 "
                                        r"\(spread placement makes 2 group\(s\) of 4\), got "):
        place(graph, 4, "spread", index=bad)


def test_place_of_valid_indices(graph):
    from netmodel.collectives.placement import place

    # spread over 8 GPUs in groups of 4: every 2nd GPU, from gpu0 and from gpu1
    assert place(graph, 4, "spread", index=np.int64(1)) == ("gpu1", "gpu3", "gpu5", "gpu7")
    assert place(graph, 4, "spread") == ("gpu0", "gpu2", "gpu4", "gpu6")


@pytest.mark.parametrize("bad", [ARRAY, np.array("spread")], ids=["array", "0-d"])
def test_an_array_as_a_placement_or_algorithm_is_refused(graph, bad):
    from netmodel.collectives.degraded import degraded_cost
    from netmodel.collectives.placement import partition
    from netmodel.study.availability import availability

    with pytest.raises(UserError, match=r"^unknown placement "):
        partition(graph, 4, bad)
    with pytest.raises(UserError, match=r"^unknown spare placement "):
        availability("lite-direct", "Llama-3-70B", "decode", trials=5, placement=bad)
    with pytest.raises(UserError, match=r"^unknown algorithm "):
        degraded_cost(graph, "all-reduce", 1e6, 8, nodes=["gpu7"], algorithm=bad)


def test_cost_rows_refuses_wrong_types_by_name(graph):
    from netmodel.collectives.cost_table import cost_rows
    from netmodel.collectives.model import FabricCostModel

    m = FabricCostModel(graph)
    cases = [
        (r"^model must be a netmodel\.collectives\.model\.FabricCostModel",
         lambda: cost_rows(None, ["all-reduce"], [1e6], [8])),
        (r"^ops must be a list of collective operations, got 'all-reduce'",
         lambda: cost_rows(m, "all-reduce", [1e6], [8])),
        (r"^ops must be a list of collective operations, got None",
         lambda: cost_rows(m, None, [1e6], [8])),
        (r"^sizes must be a list of message sizes in bytes, got 'x'",
         lambda: cost_rows(m, ["all-reduce"], "x", [8])),
        (r"^sizes must be a list of message sizes in bytes, got True",
         lambda: cost_rows(m, ["all-reduce"], True, [8])),
        (r"^message size must be a number of bytes",
         lambda: cost_rows(m, ["all-reduce"], ["1e6"], [8])),
        (r"^message size must be a finite number of bytes > 0",
         lambda: cost_rows(m, ["all-reduce"], [10**400], [8])),
        (r"^groups must be a list of group sizes", lambda: cost_rows(m, ["all-reduce"], [1e6], 8)),
        (r"^group sizes must be whole numbers of GPUs >= 2, got nan",
         lambda: cost_rows(m, ["all-reduce"], [1e6], [float("nan")])),
        (r"^group sizes must be whole numbers of GPUs >= 2, got None",
         lambda: cost_rows(m, ["all-reduce"], [1e6], [None])),
        (r"^algorithm must be a name, 'auto', 'all' or None",
         lambda: cost_rows(m, ["all-reduce"], [1e6], [8], ARRAY)),
    ]
    for pattern, call in cases:
        with pytest.raises(UserError, match=pattern):
            call()


def test_cost_rows_of_valid_input(graph):
    from netmodel.collectives.cost_table import cost_rows
    from netmodel.collectives.model import FabricCostModel

    m = FabricCostModel(graph)
    rows = cost_rows(m, ("all-reduce",), np.array([1e3, 1e6]), np.array([8]))
    assert [(r["group_size"], r["bytes"]) for r in rows] == [(8, 1000), (8, 1000000)]
    # algbw = bytes / time; busbw = algbw x 2 (p - 1) / p for all-reduce on 8 GPUs
    for r in rows:
        assert r["algbw_GBps"] == pytest.approx(r["bytes"] / r["seconds"] / 1e9, rel=1e-12)
        assert r["busbw_GBps"] == pytest.approx(r["algbw_GBps"] * 2 * 7 / 8, rel=1e-12)


@pytest.mark.parametrize("bad", [None, "Lite", 1.0], ids=["None", "str", "float"])
def test_host_power_gpu_must_be_a_gpu_spec(bad):
    from netmodel.study.host_bill import host_power

    with pytest.raises(UserError, match=r"^gpu must be a compute\.hardware\.GpuSpec"):
        host_power(bad, 534.0)


def test_expand_scenarios_refuses_text_and_numbers_for_its_lists():
    from netmodel.study.scenario_catalog import expand_scenarios

    for kwargs, pattern in (({"scenarios": "lite-flat"}, r"^scenarios must be a list of scenario"),
                            ({"scenarios": None}, r"^scenarios must be a list of scenario"),
                            ({"scenarios": ["lite-flat"], "gpus": "Lite"},
                             r"^gpus must be a list of GPU names"),
                            ({"scenarios": ["lite-flat"], "gpus": 1.0},
                             r"^gpus must be a list of GPU names"),
                            ({"scenarios": ["lite-flat"], "gpus": ARRAY},
                             r"^a GPU is a catalog name, a GPU file path or a GpuSpec, got 1\.0")):
        with pytest.raises(UserError, match=pattern):
            expand_scenarios(**kwargs)
    got = expand_scenarios(("lite-flat",), gpus=["Lite", "Lite"])
    assert [s.label for s in got] == ["lite-flat@Lite"]


def test_compare_refuses_an_mtp_token_count_that_rounds_to_a_whole_one():
    from netmodel.cli.main import cli

    r = CliRunner().invoke(cli, ["compare", "--models", "DeepSeek-V3", "--scenarios",
                                 "lite-flat", "--phase", "decode", "--mtp-tokens", "1e-400"])
    assert r.exit_code == 2, r.output
    # 1e-400 is not zero typed and no float holds it: refused as below the smallest number
    assert r.output == ("error: --mtp-tokens '1e-400' is below the smallest number netmodel "
                        "reads (2.225e-308); write 0 for zero\n")


@pytest.mark.parametrize("option", ["--engine", "--system"])
@pytest.mark.parametrize("value", ["", "  "])
def test_calibrate_refuses_an_empty_engine_or_system(option, value, tmp_path, monkeypatch):
    from netmodel.cli import main as cli_main

    monkeypatch.setitem(cli_main._COMMANDS, "calibrate",
                        ("netmodel.cli.calibrate", "calibrate", "Fit an engine profile."))
    (tmp_path / "m.csv").write_text("model,gpu,tp,batch,phase,prompt,context,latency_s\n")
    r = CliRunner().invoke(cli_main.cli, ["calibrate", "--measurements", str(tmp_path / "m.csv"),
                                          "-o", str(tmp_path / "p.toml"), option, value])
    assert r.exit_code == 2, r.output
    assert f"{option} {value!r} is empty; give a name such as" in r.output
    assert not (tmp_path / "p.toml").exists()
