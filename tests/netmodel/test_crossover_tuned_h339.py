"""The crossovers re-score a tuned scenario's collectives with its tuner plugin (h339).

The crossovers (study lite-gpu's co-design part) re-score a scenario's candidate lines with
every link's bandwidth scaled (:class:`netmodel.study.adjusted_comm.AdjustedComm`), taking the
fastest line per size: a scenario's ``[collective] tuner`` (which compare, infer, search
and collective --scenario charge, c2618d1) was dropped there. On h100-dgx@Lite with
aws-ofi-nccl:p5, an all-reduce on 32 GPUs (4 servers of 8: the plugin chooses) at 1 MiB:
compare 0.2794 ms, the crossovers' at scale 1 0.1268 ms (auto's line); 512 MiB 12.354 vs
10.383 ms. Now the plugin's (algorithm, protocol) per size, as compare charges it; with the
links scaled, that pair's scaled line, equal to the scenario re-built with
``adjust.bandwidth_scale`` (the plugin reads sizes, ranks and nodes, not bandwidth).
"""

from dataclasses import replace

import numpy as np
import pytest

from netmodel.study.adjusted_comm import AdjustedComm
from netmodel.study.scenario_catalog import get_scenario
from netmodel.study.scenario_collectives import ScenarioCollectives

SIZES = np.array([2.0 ** 10, 2.0 ** 20, 2.0 ** 26, 2.0 ** 29])


def _tuned():
    return replace(get_scenario("h100-dgx@Lite"), name="tuned", tuner="aws-ofi-nccl:p5")


@pytest.mark.parametrize("scale", [1.0, 2.0, 0.5])
def test_rescored_tuned_all_reduce_is_the_rebuilt_scenarios(scale):
    s = _tuned()
    coll = ScenarioCollectives(s)
    got = AdjustedComm(coll, scale).collective_time("all-reduce", SIZES, 32)
    want = ScenarioCollectives(s.with_param("adjust.bandwidth_scale", scale)) \
        .collective_time("all-reduce", SIZES, 32)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    if scale == 1.0:
        assert np.array_equal(got, coll.collective_time("all-reduce", SIZES, 32))


def test_the_plugin_changes_what_is_rescored():
    # the plugin's choice is not auto's here: 2.2x auto's time at 1 MiB
    tuned = AdjustedComm(ScenarioCollectives(_tuned())).collective_time("all-reduce",
                                                                        SIZES, 32)
    plain = AdjustedComm(ScenarioCollectives("h100-dgx@Lite")).collective_time(
        "all-reduce", SIZES, 32)
    assert (tuned >= plain).all() and (tuned[1] > 2 * plain[1])


def test_sweep_of_a_tuned_scenarios_link_scale_is_compares_figure(tmp_path):
    # sweep re-scores adjust.bandwidth_scale points with AdjustedComm too: at x = 1 it gave
    # batch 22, 0.4207 tokens/s/SM (auto's lines) where compare gives batch 8, 0.1536
    import json

    from click.testing import CliRunner

    from netmodel.cli.main import cli
    from netmodel.study.scenario_files import save_scenario

    path = tmp_path / "tuned.toml"
    save_scenario(replace(get_scenario("h100-dgx"), name="tuned", tuner="aws-ofi-nccl:p5"),
                  path)
    common = ["--models", "Llama-3.1-405B", "--phases", "decode", "--parallelism", "tp",
              "--json"]

    def run(*args):
        r = CliRunner().invoke(cli, list(args))
        assert r.exit_code == 0, r.output
        return json.loads(r.output)["rows"]

    swept = run("sweep", "--scenarios", f"{path}@Lite", "--param",
                "adjust.bandwidth_scale=1", *common)
    compared = run("compare", "--scenarios", f"{path}@Lite", *common)
    assert (swept[0]["tp"], swept[0]["batch"]) == (compared[0]["tp"], compared[0]["batch"])
    assert swept[0]["tokens_per_s_per_sm"] == compared[0]["tokens_per_s_per_sm"]
