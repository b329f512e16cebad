"""The servers a token's routed experts sit on, and the bytes of an MoE all-to-all that
crosses the network once a server (DeepEP's normal kernels, which DeepSeek's prefill runs),
by hand and against DeepEP's published normal-kernel figures."""

import dataclasses
import json
import math

import pytest

from compute.errors import UserError
from compute.models import get_model, load_hf_config
from compute.moe_routing import expected_units_touched, node_dedup_traffic

V3 = get_model("DeepSeek-V3")
H, FP8 = 7168, 1 + 4 / 128          # hidden; fp8 with an fp32 scale per 128 elements


def _missed(pool, part, k):
    """C(pool - part, k) / C(pool, k) as the product a hand writes."""
    return math.prod((pool - part - i) / (pool - i) for i in range(k))


def test_deepseek_v3_routing_groups_read_from_its_config(tmp_path):
    # config.json: n_group 8, topk_group 4 (the catalog entry and the HF reader agree)
    assert (V3.expert_groups, V3.groups_per_token) == (8, 4)
    from tests.compute.test_hf_configs import DEEPSEEK_V3

    path = tmp_path / "config.json"
    path.write_text(json.dumps(DEEPSEEK_V3))
    m = load_hf_config(path, name="v3")
    assert (m.expert_groups, m.groups_per_token) == (8, 4)
    # a config without groups (Mixtral) routes uniformly
    assert get_model("Mixtral-8x7B").expert_groups == 0


@pytest.mark.parametrize("bad, why", [
    (dict(expert_groups=8), "needs both expert_groups and groups_per_token"),
    (dict(expert_groups=7, groups_per_token=4), "expert_groups (7) must divide the experts (256)"),
    (dict(expert_groups=8, groups_per_token=9), "groups_per_token (9) exceeds expert_groups (8)"),
    (dict(expert_groups=64, groups_per_token=1), "experts_per_token (8) exceeds the 4 experts"),
])
def test_bad_groups_refused_in_one_line(bad, why):
    with pytest.raises(UserError, match=None) as exc:
        dataclasses.replace(V3, **{"groups_per_token": 0, **bad})
    assert why in str(exc.value) and "\n" not in str(exc.value)


def test_servers_reached_by_hand_group_limited():
    # DeepSeek-V3: a token picks 4 of 8 groups (32 experts each), each picked group gets one
    # of its 8 experts at least. 2 servers (4 groups each): missed only when all 4 picked
    # groups are the other server's, 1 / C(8,4) = 1/70; 4 servers (2 groups each): C(6,4) /
    # C(8,4) = 15/70; 8 servers (a group each): exactly the 4 picked; 16 servers (half a
    # group, 16 experts, each): 2 experts a picked group, a half missed C(16,2)/C(32,2).
    assert expected_units_touched(V3, 2) == pytest.approx(2 * (1 - 1 / 70), rel=1e-12)
    assert expected_units_touched(V3, 4) == pytest.approx(4 * (1 - 15 / 70), rel=1e-12)
    assert expected_units_touched(V3, 8) == pytest.approx(4.0, rel=1e-12)
    assert expected_units_touched(V3, 16) == pytest.approx(8 * (1 - 120 / 496), rel=1e-12)
    assert expected_units_touched(V3, 1) == 1.0


def test_servers_reached_by_hand_uniform():
    # no groups: N (1 - C(E - E/N, k) / C(E, k)); Mixtral (8 experts, top-2) on 2 servers:
    # 2 (1 - C(4,2)/C(8,2)) = 2 (1 - 6/28); DeepSeek-V3's experts without its groups on 4
    # servers: 4 (1 - C(192,8)/C(256,8)) = 3.614 (8 copies a token, 3.6 servers)
    assert expected_units_touched(get_model("Mixtral-8x7B"), 2) == pytest.approx(
        2 * (1 - 6 / 28), rel=1e-12)
    flat = dataclasses.replace(V3, expert_groups=0, groups_per_token=0)
    assert expected_units_touched(flat, 4) == pytest.approx(4 * (1 - _missed(256, 64, 8)),
                                                             rel=1e-12)
    assert expected_units_touched(flat, 4) == pytest.approx(3.614, abs=5e-4)
    # all groups picked (topk_group = n_group) is no limit: uniform
    both = dataclasses.replace(V3, expert_groups=2, groups_per_token=2)
    assert expected_units_touched(both, 2) == pytest.approx(2 * (1 - _missed(256, 128, 8)),
                                                            rel=1e-12)


@pytest.mark.parametrize("ep, servers", [(16, 2 * (1 - 1 / 70)), (32, 4 * (1 - 15 / 70)),
                                         (64, 4.0)])
def test_dispatch_bytes_once_a_server_against_every_copy(ep, servers):
    # 4096 tokens a GPU, fp8 dispatch: every copy sends 8 x (ep - 8)/ep of a token's 8
    # copies to other servers; once a server sends D(N) x (N - 1)/N.
    n = ep // 8
    net, nvl = node_dedup_traffic(V3, 4096, ep, 8, FP8)
    assert net == pytest.approx(4096 * servers * (n - 1) / n * H * FP8, rel=1e-12)
    every = 4096 * 8 * (ep - 8) / ep * H * FP8
    # EP 16: 30.0 MB against 121.1 MB (4.06x less); EP 32: 71.4 against 181.7 (2.55x);
    # EP 64: 105.9 against 211.9 (2.0x)
    assert every / net == pytest.approx({16: 4.058, 32: 2.545, 64: 2.0}[ep], abs=5e-4)
    # the fan-out inside a server: a token once to each GPU of its experts, 7/8 of them
    # from another GPU of the server
    gpus = expected_units_touched(V3, ep)
    assert nvl == pytest.approx(4096 * gpus * 7 / 8 * H * FP8, rel=1e-12)


def test_a_server_size_that_does_not_divide_ep_is_refused():
    with pytest.raises(UserError, match="EP group of 12 GPUs does not split into servers of 8"):
        node_dedup_traffic(V3, 1, 12, 8, 1.0)


# DeepEP's normal kernels, deepseek-ai/DeepEP docs/legacy.md (the README before V2),
# "Normal kernels with NVLink and RDMA forwarding": H800 (~160 GB/s NVLink), one CX7 400
# Gb/s NIC a GPU (~50 GB/s), 4096 tokens a batch, hidden 7168, top-4 groups, top-8
# experts, FP8 dispatch, BF16 combine; bottleneck bandwidth (GB/s) of dispatch, combine.
DEEPEP_NORMAL_GBPS = {16: (43, 43), 32: (58, 57), 64: (51, 50)}


@pytest.mark.parametrize("ep", sorted(DEEPEP_NORMAL_GBPS))
def test_deepep_normal_kernel_figures_are_once_a_server_traffic(ep):
    # DeepEP's tests/test_internode.py routes over one group a server (scores.view(tokens,
    # num_nodes, -1)), picks min(servers, 4) of them, and counts as RDMA bytes each token
    # once a server it reaches, its own included (num_rdma_token_sent x hidden x (1 +
    # 4/128) for fp8): the published bandwidth is those bytes over the kernel's time.
    n = ep // 8
    routing = dataclasses.replace(V3, expert_groups=n, groups_per_token=min(n, 4))
    d = expected_units_touched(routing, n)
    assert d == pytest.approx({2: 2 * (1 - _missed(256, 128, 8)),
                               4: 4 * (1 - _missed(256, 64, 8)), 8: 4.0}[n], rel=1e-12)
    bw_d, bw_c = DEEPEP_NORMAL_GBPS[ep]
    t_dispatch = 4096 * d * H * FP8 / (bw_d * 1e9)
    t_combine = 4096 * d * H * 2 / (bw_c * 1e9)
    # the kernels' times: 1.403/2.722, 1.887/3.723 and 2.375/4.698 ms at EP 16, 32, 64
    assert (t_dispatch * 1e3, t_combine * 1e3) == pytest.approx(
        {16: (1.403, 2.722), 32: (1.887, 3.723), 64: (2.375, 4.698)}[ep], abs=5e-4)
    net, nvl = node_dedup_traffic(routing, 4096, ep, 8, FP8)
    nic = net / t_dispatch / 1e9      # what one NIC carried: only the other servers' share
    fan = nvl / t_dispatch / 1e9      # what one GPU forwarded over NVLink
    if ep == 16:
        # 2 servers: half the bytes cross (21.5 GB/s a NIC); the kernel is bound by the
        # NVLink fan-out, 6.52 GPUs a token: 123 GB/s of the H800's ~160
        assert nic == pytest.approx(21.5, abs=0.05)
        assert fan == pytest.approx(123.1, abs=0.05)
    else:
        # 4 and 8 servers: each NIC at 43.5 and 44.6 GB/s, 87-89% of its 50 GB/s
        # (netmodel runs a NIC at ~94%: the low-latency kernels' test)
        assert nic == pytest.approx({32: 43.5, 64: 44.6}[ep], abs=0.05)
        assert 0.85 <= nic / 50 <= 0.90
