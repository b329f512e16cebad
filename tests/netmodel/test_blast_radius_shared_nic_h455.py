"""netmodel blast-radius on servers that share NICs: a failed GPU leaves its NIC up.

``rail-optimized:domains=2,nics_per_server=1``: 2 servers of 8 H100 (132 SMs each), one
NIC each, held by gpu0 and gpu8. Hand-derived hardware radius of one GPU failure (die or
package, every GPU failing alike): before, a NIC holder's failure also cut its 7 partners
off the network, (2 x 8 + 14 x 1) / 16 = 1.875 GPUs and 247.5 SMs a failure, 8 at most;
now 1 GPU, 132 SMs, 1 at most. A NIC failure still cuts its server's 8 GPUs (1,056 SMs)
off. With a NIC a GPU (nics_per_server=8) nothing changes: 1 GPU a GPU failure, a NIC
failure none.
"""

from __future__ import annotations

import json

import pytest

from tests.netmodel.cli_helpers import run_cli


def _rows(nics: int) -> dict:
    r = run_cli(["blast-radius", "--fabric", f"rail-optimized:domains=2,nics_per_server={nics}",
                 "--model", "Llama-3-8B", "--json"])
    assert r.exit_code == 0, r.output
    return {row["cls"]: row for row in json.loads(r.output)["rows"]}


@pytest.mark.parametrize("cls", ["gpu-die", "gpu-package"])
def test_one_nic_server(cls):
    rows = _rows(1)
    assert (rows[cls]["gpus_mean"], rows[cls]["gpus_max"]) == (1.0, 1)   # were 1.875, 8
    assert rows[cls]["sms_mean"] == 132.0                                 # was 247.5
    assert (rows["nic"]["gpus_mean"], rows["nic"]["sms_mean"]) == (8.0, 1056.0)


def test_a_nic_a_gpu_unchanged():
    rows = _rows(8)
    assert (rows["gpu-die"]["gpus_mean"], rows["gpu-die"]["gpus_max"]) == (1.0, 1)
    assert rows["nic"]["gpus_mean"] == 0.0
