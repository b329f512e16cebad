"""A GPU file's ``die`` table is checked when the file is read (compute.dies, called by
compute.hardware), not only when the GPU is priced: ``netmodel hardware --gpu-file F``,
``netmodel infer --gpu F`` and ``--gpu-file F --gpu NAME`` refuse a bad table with one line
naming the file, the GPU and the row, exit status 2. Before, they printed the GPU (or its
roofline) and exit 0; only ``cost`` refused it. A good table reads, and prices exactly as
the catalog's own tables do."""

import json

import pytest
from click.testing import CliRunner

from compute.errors import UserError
from compute.gpu_facts import die_table, logic_dies
from compute.hardware import load_gpu_file
from compute.yield_model import gpu_dies, gpu_price, package_cost, price_basis
from netmodel.cli.main import cli
from tests.compute.test_hostile_round5_dies import gpu_file

# (row override, what the one line says); the GPU of gpu_file is A100-shaped: 108 SMs on
# one N7 die of 128
BAD = {
    "nan-area": ({"area": ("nan", "mm^2")}, "[area] value must be a finite number >= 0, got nan"),
    "inf-area": ({"area": ("inf", "mm^2")}, "[area] value must be a finite number >= 0, got inf"),
    "sm-mismatch": ({"sms_enabled": ("100", "1")},
                    "1 dies x 100 enabled SMs = 100, but GPU '{name}' has 108 SMs"),
    "two-dies": ({"dies": ("2", "1")},
                 "2 dies x 108 enabled SMs = 216, but GPU '{name}' has 108 SMs"),
    "unknown-process": ({"process": ('"N1"', "name")},
                        "process 'N1' has no wafer price; known: '4N', 'N3', 'N3E', 'N3P', 'N4', 'N4P', 'N5', 'N5P', 'N7'"),
    "negative-price": ({"list_price": ("-1", "USD")},
                       "[list_price] value must be a finite number >= 0, got -1"),
    "zero-price": ({"list_price": ("0", "USD")},
                   "list_price must be a finite number > 0 and <= 1e+07, got 0"),
    "tiny-area": ({"area": ("1e-9", "mm^2")}, "area must be a finite number >= 1e-09"),
}


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def refused(r, *needles):
    assert r.exit_code == 2, r.output
    assert r.output.count("\n") == 1 and "Traceback" not in r.output, r.output
    for needle in needles:
        assert needle in r.output, r.output


@pytest.mark.parametrize("case", list(BAD))
def test_load_gpu_file_refuses_a_bad_die_table(tmp_path, case):
    over, needle = BAD[case]
    name = f"H60-{case}"
    path = gpu_file(tmp_path, name, **over)
    with pytest.raises(UserError) as e:
        load_gpu_file(path)
    text = str(e.value)
    assert "\n" not in text
    assert text.startswith(f"{path}: GPU {name!r} die"), text
    assert needle.format(name=name) in text
    assert logic_dies(name) is None and die_table(name) is None   # nothing half-kept


@pytest.mark.parametrize("case", list(BAD))
def test_hardware_gpu_file_refuses_a_bad_die_table(tmp_path, case):
    over, needle = BAD[case]
    name = f"H60-hw-{case}"
    path = gpu_file(tmp_path, name, **over)
    refused(run("hardware", "--gpu-file", path), f"{path}: GPU {name!r} die",
            needle.format(name=name))
    refused(run("hardware", name, "--gpu-file", path), f"{path}: GPU {name!r} die")


@pytest.mark.parametrize("case", ["nan-area", "sm-mismatch", "unknown-process",
                                  "negative-price"])
def test_infer_refuses_a_bad_die_table(tmp_path, case):
    over, needle = BAD[case]
    name = f"H60-infer-{case}"
    path = gpu_file(tmp_path, name, **over)
    args = ("--model", "Llama-3-8B", "--phase", "decode", "--tp", "1", "--batch", "1")
    refused(run("infer", "--gpu", path, *args), f"{path}: GPU {name!r} die",
            needle.format(name=name))
    refused(run("infer", "--gpu-file", path, "--gpu", name, *args),
            f"{path}: GPU {name!r} die", needle.format(name=name))


def test_a_good_die_table_reads_and_infers(tmp_path):
    name = "H60-good"
    path = gpu_file(tmp_path, name)
    r = run("hardware", name, "--gpu-file", path)
    assert r.exit_code == 0 and name in r.output, r.output
    r = run("infer", "--gpu", path, "--model", "Llama-3-8B", "--phase", "decode", "--tp", 1,
            "--batch", 1)
    assert r.exit_code == 0, r.output
    d = logic_dies(name)
    assert (round(d.area * 1e6), d.dies, d.sms_physical, d.sms_enabled) == (826, 1, 128, 108)
    assert d.wafer_price == 9346.0 and d.basis == f"{path}: GPU {name!r} die"


# ------------------------------------------------------------------ pricing unchanged

# Package costs and prices of the catalog's die-table GPUs computed by compute.yield_model
# before the check moved to read time (commit 8f379d8): the move changes no bit of them.
# The logic cost's last digits moved once since, when a die area in mm^2 became read exactly
# (826 mm^2 = 0.000826 m^2, not 826 * 1e-6 = 0.0008259999999999999; h237): A100
# 162.43402323017648 -> ...645, B200 601.1602965759271 -> ...273 (2 ulp, 4e-16 relative);
# and when a wafer's good dies became its whole dies x the yield (A100 62 of 62.39 gross,
# B200 64 of 64.80): logic 162.434 -> 163.450, 601.160 -> 608.631.
BEFORE = {"A100-SXM-80GB": (3255.110792751008, 163.45033836727092, 12500.0),
          "B200-HGX": (6731.8028414257315, 608.6311079554903, 35000.0)}


@pytest.mark.parametrize("gpu", list(BEFORE))
def test_catalog_die_tables_price_as_before(gpu):
    p = package_cost(gpu)
    # to an ulp or two: numpy's releases round differently (the A100's logic cost is
    # ...648 on numpy 1.26.0, ...645 on 2.4)
    assert (p.total, p.logic, gpu_price(gpu)) == pytest.approx(BEFORE[gpu], rel=1e-15, abs=0)
    assert price_basis(gpu) == "list price"
    assert gpu_dies(gpu) == logic_dies(gpu)   # the dies checked at catalog load, as priced


@pytest.mark.parametrize("gpu", list(BEFORE))
def test_a_file_copy_of_a_catalog_die_prices_identically(tmp_path, gpu):
    # the catalog GPU at fraction 1 with its own die table, written to a JSON GPU file:
    # the same SMs, HBM and dies, so the same package cost and list price to the last bit
    name = f"H60-copy-{gpu}"
    table = die_table(gpu)[0]
    path = tmp_path / "copy.json"
    path.write_text(json.dumps({"gpu": {name: {"derive_from": gpu, "fraction": 1.0,
                                               "die": table, "source": "test"}}}))
    spec = load_gpu_file(path)[name]
    mine, theirs = package_cost(spec), package_cost(gpu)
    expected = theirs.to_dict()
    assert expected["die"]["gpu"] == gpu   # the die names its GPU (yield --gpu)
    assert mine.to_dict() == {**expected, "gpu": name, "die": {**expected["die"], "gpu": name}}
    assert gpu_price(spec) == gpu_price(gpu) == BEFORE[gpu][2]
    r = run("cost", "--scenario", f"h100-dgx@{path}", "--model", "Llama-3-70B", "--phase",
            "decode", "--json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.output)["summaries"][0]
    assert (s["gpu_package_cost_usd"], s["gpu_price_usd"], s["gpu_price_basis"]) == \
        (BEFORE[gpu][0], BEFORE[gpu][2], "list price")
