"""What the send/recv tests on ``lite-direct``'s two Lites share: the catalog's flagship GPUs
(every one whose own NVLinks NCCL's per-channel figures were measured on), the mesh link's
route latency (the pair's cost model: conftest.py's ``lite_pair``)."""

from __future__ import annotations

#: The catalog GPUs with NVLinks of their own (no Lite).
FLAGSHIPS = ("H100-SXM", "H200-SXM", "A100-SXM-80GB", "B200-HGX", "GB200-NVL72", "B300-HGX",
             "GB300-NVL72")
#: lite-direct's mesh link: 1 m of fibre (5 ns) and 2 optical chiplets (5 ns each).
ROUTE = 5e-9 + 2 * 5e-9

