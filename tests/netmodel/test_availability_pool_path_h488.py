"""The availability JSON's recovery path of a kind speaks of the spares the pool holds.

lite-flat's host takes down 2 TP-16 instances (32 GPUs) and the fabric has 16 free ports,
so the fabric's path (:func:`~netmodel.study.reliability_recovery.recovery`, which assumes
the pool has the spares) re-creates 1 of the 2 on 16 spares. A pool of 15 spares re-creates
none (the closed form's blocking of the host is 1), yet the JSON said "re-create 1 of 2 on
16 spares" whatever the pool. Hand counts: floor(15 / 16) = 0 instances back, floor(16 / 16)
= 1, and a pool of 40 still reaches only the fabric's 16 ports: 1.
"""

from __future__ import annotations

import pytest

from netmodel.study.availability import availability


def _host(spares):
    a = availability("lite-flat", "Llama-3-70B", spares=spares, trials=10, seed=0)
    (host,) = [k for k in a.to_dict()["kinds"] if k["cls"] == "host"]
    (b,) = [b for k, b in zip(a.kinds, a.analytic.blocking, strict=True) if k.cls == "host"]
    return host, b


@pytest.mark.parametrize("spares, back", [(15, 0), (16, 1), (40, 1)])
def test_host_path_counts_the_instances_the_pool_brings_back(spares, back):
    host, b = _host(spares)
    assert host["down"] == 2 and host["per"] == 16
    reachable = min(spares, 16)
    assert host["path"].startswith(f"re-create {back} of 2")
    assert f"{reachable} reachable" in host["path"]
    if back == 0:
        assert b == 1.0   # the model grants the host nothing, as the path now says
        assert "all repair" in host["path"]
    else:
        assert f"on {16 * back} spares" in host["path"]


def test_an_all_or_nothing_ask_larger_than_the_pool_says_none():
    # global spares re-create a failed GPU's whole TP-16 instance: 16 spares, which a pool
    # of 8 never holds (the closed form refuses it every time)
    a = availability("lite-flat", "Llama-3-70B", spares=8, placement="global", trials=10,
                     seed=0)
    rows = {k["cls"]: k for k in a.to_dict()["kinds"]}
    b = dict(zip([k.cls for k in a.kinds], a.analytic.blocking, strict=True))
    assert b["gpu-die"] == 1.0
    assert rows["gpu-die"]["path"].startswith("none: 16 spares asked, 8 reachable")
