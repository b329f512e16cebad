"""The HGX H100 NVSwitch baseboard is priced without the GPUs on it (h253).

Epoch AI's $5,875 per GPU (P27: SemiAnalysis's DGX H100 at $269,010 less $190,000 gross
profit less the $32,010 non-GPU bill of materials, over 8) is the H100 *and* its share of
the baseboard; network_costs.toml took it for the board alone ($47,000 a board), so a
cluster paid for each GPU twice: once at its price, once inside the board.
"""

from __future__ import annotations

import pytest

from netmodel.study.cost import cost_summary
from netmodel.study.network_bill import network_bill
from netmodel.study.scenario_fabric import build_fabric

DGX_H100_PRICE = 269_010            # SemiAnalysis via Epoch AI (P27)
GPU_AND_BOARD_PER_GPU = 5_875       # (269,010 - 190,000 - 32,010) / 8 (P27)
H100_COST = 3_320                   # Raymond James, the GPU alone, HBM included (P20)


def test_baseboard_is_the_gpu_and_board_figure_less_the_gpu():
    b = network_bill(build_fabric("h100-dgx"))
    board = next(i for i in b.items if i.what.startswith("tier-0"))
    assert board.count == 4
    # (5,875 - 3,320) x 8 = $20,440 a board; $46,944 before (the GPU counted in it)
    assert board.capex / 4 == pytest.approx((GPU_AND_BOARD_PER_GPU - H100_COST) * 8, rel=1e-5)


def test_a_dgx_h100_costs_its_published_price():
    # one DGX H100 as the model prices it: 8 GPUs at their price, 8 hosts' non-GPU bill of
    # materials and the NVSwitch board; 8 x 27,500 + 8 x 4,001 + 20,440 = $272,448, 1.3%
    # over the published $269,010 (the board at production cost, the GPUs at their price).
    # Before: $299,008, 11% over.
    s = cost_summary("h100-dgx", "Llama-3-70B", "decode")
    b = network_bill(build_fabric("h100-dgx"))
    board = next(i for i in b.items if i.what.startswith("tier-0")).capex / 4
    server = 8 * (s.capex_gpu + s.capex_host) / s.gpus + board
    assert server == pytest.approx(272_448, rel=1e-4)
    assert server == pytest.approx(DGX_H100_PRICE, rel=0.02)
