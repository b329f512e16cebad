"""A number below the smallest float (``1e-320``: it underflows) is told to write 0 for zero
only where its value may be 0; where 0 is refused the line says what the value must be, in
the words of the parser that knows its range. Before, every such refusal ended 'write 0 for
zero': a measurements CSV's tp and batch, a workload's prompt, output and rate, --rate,
--ttft, --flops-efficiency, --expert-skew and a fabric's bandwidth and lanes, none of which
may be 0."""

from __future__ import annotations

import json

import pytest

from compute.errors import UserError
from compute.measurements import read_measurements
from compute.validate import read_number
from netmodel.study.serving import MAX_RATE, MAX_TOKENS, MIN_RATE, load_workload
from tests.netmodel.cli_helpers import one_line_error, run_cli
from topologies import build
from topologies.io import read_graph, write_graph

HEAD = "below the smallest number netmodel reads (2.225e-308)"
ZERO = f"{HEAD}; write 0 for zero"
CSV = "model,gpu,tp,phase,batch,prompt,context,latency_s\n" \
      "Llama-2-70B,H100-SXM,8,prefill,1,2048,,0.1\n"


@pytest.mark.parametrize("column, says", [
    ("tp", "tp must be a whole number from 1 to 1,000,000, got '1e-320'"),
    ("batch", "batch must be a whole number from 1 to 10,000,000, got '1e-320'"),
    ("latency_s", "latency_s must be a number from 1e-09 to 1,000,000 s, got '1e-320'"),
])
def test_measurement_column_says_its_range(tmp_path, column, says):
    head, row = CSV.splitlines()
    cells = row.split(",")
    cells[head.split(",").index(column)] = "1e-320"
    path = tmp_path / "m.csv"
    path.write_text(f"{head}\n{','.join(cells)}\n")
    with pytest.raises(UserError) as err:
        read_measurements(path)
    assert str(err.value) == f"{path}: row 2: {says}"


@pytest.mark.parametrize("key, allowed", [
    ("prompt", f"a whole number from 1 to {MAX_TOKENS:,}"),
    ("output", f"a whole number from 1 to {MAX_TOKENS:,}"),
    ("rate", f"a number from {MIN_RATE:g} to {MAX_RATE:,.0f} requests/s"),
])
def test_workload_number_says_its_range(tmp_path, key, allowed):
    doc = {"prompt": 100, "output": 10, "rate": 1.0}
    text = "\n".join(f"{k} = {'1e-320' if k == key else v}" for k, v in doc.items()) + "\n"
    path = tmp_path / "w.toml"
    path.write_text(text)
    with pytest.raises(UserError) as err:
        load_workload(path)
    line = list(doc).index(key) + 1
    assert str(err.value) == (f"{path} holds the number 1e-320 at line {line} ({key}), "
                              f"{HEAD}, and {key} may not be 0: it must be {allowed}")


@pytest.mark.parametrize("argv, says", [
    (["infer", "--ttft", "1e-320"],
     "--ttft '1e-320' is " + HEAD + ", and --ttft may not be 0: it must be a time from 1 us to 600 s"),
    (["infer", "--flops-efficiency", "1e-320"],
     "--flops-efficiency '1e-320' is " + HEAD + ", and --flops-efficiency may not be 0: it "
     "must be a fraction from 0.0001 to 1"),
    (["infer", "--reserve", "1e-320"],   # [0, 1): 0 is allowed, its range said
     "--reserve '1e-320' is " + HEAD + "; --reserve must be a fraction in [0, 1)"),
])
def test_option_says_its_range(argv, says):
    r = run_cli([*argv, "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "1",
                 "--batch", "1"])
    assert r.exit_code == 2
    assert one_line_error(r) == f"error: {says}"


def test_rate_option_says_the_workload_range():
    r = run_cli(["serve", "--scenario", "lite-flat", "--model", "Llama-3-8B", "--rate",
                 "1e-320"])
    assert r.exit_code == 2
    assert one_line_error(r) == (f"error: --rate '1e-320' is {HEAD}, and --rate may not be 0: "
                                 f"it must be a number from {MIN_RATE:g} to {MAX_RATE:,.0f} "
                                 "requests/s")


@pytest.mark.parametrize("key, said", [
    # in compute.validate.range_words' words, as every other reader's range (1e30 by its
    # shortest decimal, not the float's own int 1,000,000,000,000,000,019,884,624,838,656)
    ("bandwidth", f"{HEAD}, and bandwidth may not be 0: it must be a number from 1e-09 to "
                  "1,000,000,000,000,000,000,000,000,000,000 bytes/s"),
    ("lanes", f"{HEAD}, and lanes may not be 0: it must be a number from 1 to 1,000,000 "
              "lanes"),
    ("latency", f"{HEAD}; latency must be a number from 0 to 10,000,000 s"),   # 0 allowed
])
@pytest.mark.parametrize("suffix", [".json", ".graphml"])
def test_fabric_value_says_its_range(tmp_path, key, said, suffix):
    path = tmp_path / f"f{suffix}"
    write_graph(build("ring:n=4"), path)
    if suffix == ".json":
        doc = json.loads(path.read_text())
        doc["edges"][0][key] = "TINY"
        path.write_text(json.dumps(doc).replace('"TINY"', "1e-320"))
    else:
        if key == "lanes":   # a GraphML 'long': not a float, 'not a whole number' instead
            pytest.skip("lanes are whole in GraphML")
        text = path.read_text()
        kid = text.split(f'attr.name="{key}"')[0].rsplit('id="', 1)[1].split('"')[0]
        value = text.split(f'<data key="{kid}">', 1)[1].split("<", 1)[0]
        path.write_text(text.replace(f'<data key="{kid}">{value}<',
                                     f'<data key="{kid}">1e-320<', 1))
    with pytest.raises(UserError) as err:
        read_graph(path)
    assert str(err.value).endswith(said), str(err.value)


def test_zero_allowed_is_the_default():
    with pytest.raises(UserError) as err:
        read_number("x", "1e-320")
    assert str(err.value) == f"x '1e-320' is {ZERO}"


def test_threshold_says_its_share():
    r = run_cli(["availability", "--scenario", "lite-flat", "--model", "Llama-3-8B",
                 "--threshold", "1e-320"])
    assert r.exit_code == 2
    assert one_line_error(r) == (f"error: --threshold '1e-320' is {HEAD}, and --threshold may "
                                 "not be 0: it must be a share in (0, 100%]")
