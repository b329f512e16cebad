"""A scenario swapped to another GPU follows that GPU's in-switch reduction.

``h100-dgx`` is 8 GPUs per NVSwitch domain with NVLS (in-switch all-reduce), which the H100's
third-generation NVSwitch does; the A100's second-generation NVSwitch only switches
(compute/data/gpus.toml: ``scaleup_reduction = false``; NCCL's nvlsEfficiency for Ampere is 0).
The scenario said ``in_network_reduction = true`` outright, so ``h100-dgx@A100-SXM-80GB`` (what
``infer --gpu A100-SXM-80GB --scenario h100-dgx`` and ``calibrate --scenario h100-dgx`` on A100
rows cost with) kept NVLS on a switch without it: an 8 x 16 x 512-token Llama-2-70B prefill came
out 586.4 ms instead of the 613.9 ms of the same fabric without NVLS. Now the file says
``"$reduction"``, the GPU's own.
"""

from compute.evaluate_one import evaluate
from compute.hardware import get_gpu
from netmodel.cli.resolve import resolve_collectives
from netmodel.study.fabric_table import parse_gpu_token
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_collectives import ScenarioCollectives


def _reduces(scenario) -> set[bool]:
    graph = ScenarioCollectives(scenario).graph
    return {d["in_network_reduction"] for _, d in graph.nodes(data=True)
            if d.get("kind") == "switch" and d.get("tier") == 0}


def test_the_token_is_the_gpus_scaleup_reduction():
    for name in ("H100-SXM", "H200-SXM", "B200-HGX", "A100-SXM-80GB"):
        gpu = get_gpu(name)
        assert parse_gpu_token("$reduction", gpu) is bool(gpu.scaleup_reduction)
    assert get_gpu("A100-SXM-80GB").scaleup_reduction is False


def test_h100_dgx_on_an_a100_has_no_nvls():
    scen = get_scenario("h100-dgx")
    assert _reduces(scen) == {True}                       # H100: NVLS, as before
    assert _reduces(scen.with_gpu("A100-SXM-80GB")) == {False}
    # the spec written for H100 is what it was (the study's outputs name it)
    assert "in_network_reduction=true," in scen.fabric_spec()
    assert "in_network_reduction=false," in scen.with_gpu("A100-SXM-80GB").fabric_spec()


def test_an_a100_prefill_costs_as_the_same_fabric_without_nvls():
    """The scenario swapped to the A100 costs a TP 8 prefill's all-reduces as the same
    scenario told outright that its switch does not reduce (before: 586.4 ms with NVLS,
    613.9 ms without)."""
    a100 = get_scenario("h100-dgx").with_gpu("A100-SXM-80GB")
    plain = a100.with_param("fabric.in_network_reduction", False)
    a, b = (evaluate("Llama-2-70B", "A100-SXM-80GB", 8, 16, "prefill", prompt=512,
                     comm=ScenarioCollectives(s)).latency for s in (a100, plain))
    assert a == b
    assert 0.6 < a < 0.62                                 # 613.9 ms
    _, comm, _, _ = resolve_collectives("h100-dgx", None, "A100-SXM-80GB", None)
    assert comm.scenario.label == "h100-dgx@A100-SXM-80GB" and _reduces(comm.scenario) == {False}


def test_a_swapped_scenarios_text_says_whose_description_it_is():
    # compare --show h100-dgx@A100-SXM-80GB printed the H100's description and sources
    # ("8 H100 per NVSwitch domain (NVLS ...)", "NVLink4 18 x 25 GB/s") as the A100's
    from netmodel.study.scenario_files import load_scenario_text

    swapped = get_scenario("h100-dgx@A100-SXM-80GB")
    text = swapped.to_toml()
    assert text.splitlines()[0] == (
        "# h100-dgx swapped from H100-SXM to A100-SXM-80GB: the description and [sources] "
        "describe H100-SXM; the fabric's $ tokens follow A100-SXM-80GB")
    assert load_scenario_text(text, "shown") == swapped
    assert not get_scenario("h100-dgx").to_toml().startswith("#")
