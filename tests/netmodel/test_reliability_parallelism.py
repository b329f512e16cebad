"""Reliability of instances beyond plain TP: the healthy instance re-costed on its own
fabric is the searched best to the last bit on every kind of fabric (an OCS fabric's
sub-group collectives on circuits set for the group, as the search sets them), and a
spare loads one GPU's share of the weights under EP / attention DP."""

import pytest

from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.reliability_timings import recovery_times


@pytest.fixture(scope="module")
def ocs_moe():
    return build_cluster("lite-ocs", "Mixtral-8x7B", "decode")


def test_an_ocs_moe_instance_recosts_to_its_own_step(ocs_moe):
    # TP 16 x EP 8 x DP-attention 4 on lite-ocs: the attention group's all-reduce (4 GPUs)
    # was costed on a 4-GPU slice of the instance's 16-GPU ring (a path, not a ring):
    # 34.41 ms against the search's 33.20 ms, so every failure that touched an instance
    # (a CPO engine, an OCS plane) also charged that 3.5% artefact.
    c = ocs_moe
    p = c.parallelism
    assert p.attention_dp > 1 and c.instance_gpus == 16, p.label
    r = c.instance_result(c.graph, c.instances[0])
    assert r.feasible and r.latency == c.best.latency


def test_a_spare_loads_one_gpus_share_under_ep(ocs_moe):
    # Mixtral-8x7B, TP 16 x EP 8 x DP-attention 4, by hand: attention TP 4 (8 of 32 heads,
    # 2 of 8 KV heads, head_dim 128, hidden 4096); one of 8 experts at expert TP 2 (FFN
    # 14336 / 2); router 4096 x 8; two norms. Embedding + LM head split over the attention
    # group's 4 GPUs (vocab 32000), one final norm; bf16.
    h = 4096
    attn = h * (8 + 2 * 2) * 128 + 8 * 128 * h
    expert = 3 * h * (14336 // 2)
    layer = attn + expert + h * 8 + 2 * h
    weights = 2 * (32 * layer + 2 * (32000 // 4) * h + h)
    c = ocs_moe
    rt = recovery_times(c)
    assert weights == 6_441_934_848 == c.best.memory.weights == rt.shard_bytes
    cat = c.catalog   # loading from a peer over the fabric: the host's size plays no part
    assert rt.swap_s() == pytest.approx(cat.detection_s + rt.reconfiguration_s
                                       + weights / (cat.load_bandwidth(c.gpu, 8) * _efficiency(c))
                                       + cat.warmup_s)


def test_search_without_attention_dp_hints_that_wider_stages_need_it():
    # DeepSeek-V3 on H100-SXM with EP and up to 16 GPUs but no attention DP: an attention
    # group of 16 GPUs is wider than the GPU's largest instance (8), so nothing past 8 GPUs
    # is tried and the weights (85.0 GB per GPU at TP 8 > 77.0 GB usable) fit nowhere; the
    # line said 'up to 8 GPUs' without saying why. With attention DP TP 16 x EP 16 fits.
    from compute.search import search

    r = search("DeepSeek-V3", "H100-SXM", "decode", ep=True, max_gpus=16)
    assert r.best is None
    assert "(up to 8 GPUs); wider stages need attention data parallelism;" in r.reason
    with_dp = search("DeepSeek-V3", "H100-SXM", "decode", ep=True, attention_dp=True,
                     max_gpus=16)
    assert with_dp.best is not None and with_dp.best.gpus == 16


def test_a_pipelined_ocs_instance_recosts_to_its_own_step():
    # compare --parallelism all --reliability on lite-ocs: Llama-3-70B's best at TP 16 is
    # TP 16 x PP 2 x DP-attention 4, an instance of 32 GPUs whose circuits are set as one
    # ring of 32; its stages' and attention groups' collectives were costed on slices of
    # that ring: 64.39 ms against the search's 49.91 ms, over the 50 ms SLO, so every
    # instance a failure touched was re-balanced. Its circuits are now one layout for the
    # instance (each stage's ring on the ports its stage links leave,
    # placed_graph.pipeline_circuits), on which TP 16 x PP 2 is no longer the best at TP
    # 16; at TP 8 the best is TP 8 x PP 2, 16 GPUs.
    from netmodel.study.fabric_search import fabric_search

    f = fabric_search("Llama-3-70B", "lite-ocs", "decode", tp=8, parallelism="all")
    c = build_cluster("lite-ocs", "Llama-3-70B", "decode", search=f)
    p = c.parallelism
    assert (p.tp, p.pp) == (8, 2) and c.instance_gpus == 16 == len(c.instances[0])
    r = c.instance_result(c.graph, c.instances[0])
    assert r.feasible and r.latency == c.best.latency < 0.050
    # a failure takes the instance's 16 GPUs: 16 x 33 SMs in software per GPU failure
    from netmodel.study.reliability_summary import _gpu_radius

    assert _gpu_radius(c)[1] == 16 * 33 == 16 * c.gpu.sms


def test_reliability_json_names_the_configuration():
    # 'tp' alone read as plain TP: TP 16 x PP 2 (32 GPUs an instance) with 4 instances
    # looked like 64 GPUs in service out of 128. Now the configuration and the instance's
    # GPUs are given: instances x instance_gpus + idle = gpus.
    from netmodel.study.availability import availability
    from netmodel.study.blast_radius import blast_radius
    from netmodel.study.fabric_search import fabric_search

    f = fabric_search("Llama-3-70B", "lite-flat", "decode", tp=16, parallelism="all")
    c = build_cluster("lite-flat", "Llama-3-70B", "decode", search=f)
    for d in (blast_radius("lite-flat", "Llama-3-70B", cluster=c).to_dict(),
              availability(None, None, cluster=c, spares=0, trials=2, horizon="1d",
                           seed=0).to_dict()):
        assert d["config"] == c.parallelism.label and " x PP 2" in d["config"]
        assert d["instance_gpus"] == 32
        assert d["instances"] * d["instance_gpus"] + len(c.idle) * c.cells == d["gpus"] == 128


def _efficiency(cluster) -> float:
    """The scale-up payload share the collective model reads for the cluster's GPU
    (netmodel/data/collective_defaults.toml: 0.824 on NVLink4), at which a spare loads its
    shard from a peer."""
    from netmodel.collectives.calibration_files import default_calibration

    return default_calibration().for_gpu(cluster.gpu.name).scaleup_efficiency
