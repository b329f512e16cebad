"""The blast radius re-costs an instance with its own configuration: a mixture-of-experts
model's best instance spreads its experts (EP) and attention (attention DP) over its GPUs,
and a failure's effect is that configuration's on the degraded fabric, its sub-group
collectives (an attention group's all-reduce) on the GPUs that run them."""

import numpy as np
import pytest

from netmodel.study.placed_cost import GroupComm
from netmodel.study.reliability_cluster import build_cluster


@pytest.mark.parametrize("scenario", ["lite-flat", "h100-dgx"])
def test_a_healthy_moe_instance_recosts_to_its_own_step(scenario):
    # Re-costed on the healthy fabric, an instance is the searched best to the last bit.
    # It was costed as plain TP at the same batch: on lite-flat (TP 16 x EP 8 x
    # DP-attention 4) 53.3 ms against the best's 28.3 ms, over the 50 ms SLO, so a lost
    # plane showed 57% of tokens lost and no spare "met the SLO".
    c = build_cluster(scenario, "Mixtral-8x7B", "decode")
    p = c.parallelism
    assert p.ep > 1 and p.attention_dp > 1, p.label
    assert c.instance_gpus == p.tp * p.pp == len(c.instances[0])
    r = c.instance_result(c.graph, c.instances[0])
    assert r.latency == c.best.latency and r.feasible
    assert (r.tp, r.ep, r.attention_dp, r.batch) == (p.tp, p.ep, p.attention_dp, c.batch)


def test_blast_table_names_the_configuration():
    c = build_cluster("lite-flat", "Mixtral-8x7B", "decode")
    from netmodel.study.blast_radius import blast_radius

    head = blast_radius("lite-flat", "Mixtral-8x7B", cluster=c).table().splitlines()[0]
    assert f"{c.parallelism.label} x batch {c.batch}," in head, head
    assert "x EP " in c.parallelism.label


class _Lines:
    """A cost model whose candidates' lines depend on the members: a group holding 'slow'
    pays 10x the per-byte time."""

    def candidates(self, op, members):
        slow = 10.0 if "slow" in members else 1.0
        return [("ring", "Simple", 1e-6 * len(members), 1e-9 * slow),
                ("tree", "Simple", 3e-6, 2e-9 * slow)]

    def tuned(self):   # no tuner plugin: the fastest line (FabricCostModel.tuned)
        return False


def test_sub_group_collectives_run_on_each_slice_the_slowest_sets_the_time():
    comm = GroupComm(_Lines(), ["a", "b", "slow", "d"])
    n = np.array([0.0, 1e3, 1e6])
    # the whole instance: min over candidates of a + b n, with 'slow' in it
    whole = comm.collective_time("all-reduce", n, 4)
    assert whole.tolist() == pytest.approx([0.0, min(4e-6 + 1e-5, 3e-6 + 2e-5),
                                            min(4e-6 + 1e-2, 3e-6 + 2e-2)])
    # pairs (a, b) and (slow, d): the second is slower at every size
    pairs = comm.collective_time("all-reduce", n, 2)
    assert pairs.tolist() == pytest.approx([0.0, 2e-6 + 1e-5, 2e-6 + 1e-2])
    assert comm.collective_time("all-reduce", n, 1).tolist() == [0.0, 0.0, 0.0]


def test_blast_radius_and_availability_take_parallelism_on_the_command_line():
    # --parallelism all lets Llama-3-70B on lite-flat (128 Lites) run TP 16 x PP 2 x
    # DP-attention 2: 128 / (16 x 2) = 4 instances of 32 GPUs; the default (auto: plain TP
    # for a dense model) TP 16, 8 instances. Before, only compare --reliability reached PP.
    import json

    from click.testing import CliRunner

    from netmodel.cli.main import cli

    def run(*args):
        r = CliRunner().invoke(cli, list(args))
        assert r.exit_code == 0, r.output
        return json.loads(r.output)

    base = ("--scenario", "lite-flat", "--model", "Llama-3-70B", "--json")
    b = run("blast-radius", *base, "--parallelism", "all")
    assert (b["config"], b["instances"], b["instance_gpus"]) == \
        ("TP 16 x PP 2 x DP-attention 2", 4, 32)
    assert run("blast-radius", *base)["instances"] == 8
    a = run("availability", *base, "--parallelism", "all", "--trials", "10")
    assert (a["config"], a["instances"], a["instance_gpus"]) == \
        ("TP 16 x PP 2 x DP-attention 2", 4, 32)
