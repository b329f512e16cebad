"""A GPU's collective constants come from its generation (netmodel/data/
collective_generations.toml): a GPU derived from another takes its base's generation, and
the study's cache of compiled collective costs (scenario_fabric.network_key) keeps GPUs of
different generations apart, so a result never depends on which GPU was costed first."""

import json
from dataclasses import replace

import pytest

from compute.hardware import get_gpu, load_gpu_file
from netmodel.collectives.calibration_files import default_calibration
from netmodel.study import scenario_collectives, scenario_fabric
from netmodel.study.scenario_catalog import get_scenario


def _gpu_file(tmp_path, entries):
    path = tmp_path / "gpus.json"
    path.write_text(json.dumps({"gpu": entries}))
    return load_gpu_file(path)


@pytest.mark.parametrize("base, generation", [("B200-HGX", "blackwell"),
                                              ("GB300-NVL72", "blackwell"),
                                              ("A100-SXM-80GB", "ampere"),
                                              ("H200-SXM", "hopper")])
def test_a_derived_gpu_takes_its_bases_generation(tmp_path, base, generation):
    # a quarter of a B200 keeps the B200's NVLink5 and NVSwitch: Blackwell's NVLS factor
    # (0.74) and link efficiency, not the default (Hopper) generation's
    name, twice = f"quarter-of-{base}", f"half-of-quarter-of-{base}"
    _gpu_file(tmp_path, {name: {"derive_from": base, "fraction": 0.25, "source": "test"},
                         twice: {"derive_from": name, "fraction": 0.5, "source": "test"}})
    cal = default_calibration()
    assert cal.for_gpu(name).generation == generation
    assert cal.for_gpu(twice).generation == generation
    assert cal.for_gpu(name) == cal.for_gpu(base)


def test_lite_and_gpus_derived_from_none_keep_their_generation():
    cal = default_calibration()
    assert cal.for_gpu("Lite").generation == "hopper"        # derived from the H100
    assert cal.for_gpu("no-such-gpu").generation == "hopper"  # the default


def test_compiled_costs_are_not_shared_across_generations():
    # the A100's figures under another name, not derived from it: the default (Hopper)
    # generation. Costed first, it used to leave its compiled costs in the shared cache
    # under the A100's key, and the A100 then came out with Hopper's constants
    a100 = get_gpu("A100-SXM-80GB")
    twin = replace(a100, name="A100-twin-not-derived")
    nbytes = 16 * 512 * 8192 * 2
    scenario_collectives._SHARED.clear()
    alone = scenario_collectives.ScenarioCollectives(
        get_scenario("h100-dgx").with_gpu(a100)).collective_time("all-reduce", nbytes, 8)
    scenario_collectives._SHARED.clear()
    twin_time = scenario_collectives.ScenarioCollectives(
        get_scenario("h100-dgx").with_gpu(twin)).collective_time("all-reduce", nbytes, 8)
    after = scenario_collectives.ScenarioCollectives(
        get_scenario("h100-dgx").with_gpu(a100)).collective_time("all-reduce", nbytes, 8)
    assert after == alone
    # and the two generations do cost it differently (Ampere's NVLink efficiency 0.80,
    # Hopper's 0.824), so sharing was wrong, not harmless
    assert twin_time < alone
    cal = default_calibration()
    assert scenario_fabric.network_key(get_scenario("h100-dgx").with_gpu(twin), cal) != \
        scenario_fabric.network_key(get_scenario("h100-dgx").with_gpu(a100), cal)
