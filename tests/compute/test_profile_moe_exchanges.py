"""An engine profile names the MoE exchanges its engine runs (``moe_exchanges``): an
expert-parallel cell takes the cheapest of those only. Left out, every exchange, as the
roofline (no figure moves); the shipped vLLM profiles name vLLM's, not SGLang's
DP-attention gather; anything else is refused in one line naming the allowed ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from compute.errors import UserError
from compute.evaluate_one import evaluate
from compute.hardware import get_gpu
from compute.moe_exchange import EXCHANGES
from compute.profiles import EngineProfile, get_profile, read_profile
from compute.roofline import bound_comm
from compute.roofline_options import RooflineOptions
from tests.netmodel.cli_helpers import run_cli

VLLM = ("all-to-all", "all-reduce", "vllm-gather")
ROOT = Path(__file__).resolve().parents[2]


def _step(batch, profile=None):
    """DeepSeek-V3 decode on 8 H200, TP 8 x EP 8 x DP-attention 8, the roofline's
    collectives (the scale-up lower bound), under ``profile`` (every efficiency 1)."""
    opts = RooflineOptions() if profile is None else RooflineOptions(profile=profile)
    return evaluate("DeepSeek-V3", "H200-SXM", 8, batch, ep=8, attention_dp=8,
                    comm=bound_comm(get_gpu("H200-SXM")), options=opts)


@pytest.mark.parametrize(("batch", "roofline_ms", "vllm_ms"), [
    # 24138637's figures: with SGLang's gather (its shared expert split over TP 8) and
    # before it (vLLM's gather or the all-to-alls, the cheaper)
    (1, 3.518, 4.000), (64, 18.200, 18.616), (256, 21.767, 22.032)])
def test_a_profile_takes_the_cheapest_of_its_engines_exchanges(batch, roofline_ms, vllm_ms):
    plain = _step(batch)
    every = _step(batch, EngineProfile("every"))
    vllm = _step(batch, EngineProfile("vllm-like", moe_exchanges=VLLM))
    assert plain.latency * 1e3 == pytest.approx(roofline_ms, abs=5e-4)
    assert every.latency == plain.latency            # left out: every exchange
    assert plain.moe_exchange == every.moe_exchange == "sglang-dp-gather"
    assert vllm.latency * 1e3 == pytest.approx(vllm_ms, abs=5e-4)
    assert vllm.moe_exchange in ("all-to-all", "vllm-gather")


def test_the_shipped_vllm_profiles_name_vllms_exchanges():
    for name in ("vllm-dgx-h100", "vllm-h100-2024"):
        p = get_profile(name)
        assert p.moe_exchanges == VLLM
        assert 'moe_exchanges = ["all-to-all", "all-reduce", "vllm-gather"]' in p.to_toml()
    assert EngineProfile("x").moe_exchanges == ()   # default: every one


def test_the_key_reads_back_in_the_registrys_order(tmp_path):
    text = get_profile("vllm-dgx-h100").to_toml().replace(
        'name = "vllm-dgx-h100"', 'name = "mine"').replace(
        '["all-to-all", "all-reduce", "vllm-gather"]', '["vllm-gather", "all-to-all"]')
    f = tmp_path / "p.toml"
    f.write_text(text)
    p = read_profile(f)
    assert p.moe_exchanges == ("all-to-all", "vllm-gather")
    assert read_profile(_written(tmp_path, p.to_toml())) == p


def _written(tmp_path, text):
    f = tmp_path / "again.toml"
    f.write_text(text)
    return f


ALLOWED = ", ".join(repr(x) for x in sorted(EXCHANGES))


@pytest.mark.parametrize("value", ['["all-to-all", "deepep"]', '["vllm-gather"]',
                                   '["all-to-all", "all-to-all"]', '[]', '"all-to-all"'])
def test_bad_values_are_refused_in_one_line(tmp_path, value):
    text = get_profile("vllm-dgx-h100").to_toml().replace(
        'name = "vllm-dgx-h100"', 'name = "mine"').replace(
        '["all-to-all", "all-reduce", "vllm-gather"]', value)
    f = tmp_path / "p.toml"
    f.write_text(text)
    with pytest.raises(UserError, match=rf"moe_exchanges must be a list of {ALLOWED}, each at "
                                        r"most once, 'all-to-all' among them; got "):
        read_profile(f)
    r = run_cli(["infer", "--model", "DeepSeek-V3", "--gpu", "H100-SXM", "--tp", "8",
                 "--batch", "1", "--profile", f], cwd=ROOT)
    assert r.exit_code == 2 and r.stdout == "", (r.output, r.exception)
    line, = r.stderr.strip().splitlines()
    assert f"moe_exchanges must be a list of {ALLOWED}" in line


def test_a_profile_made_in_code_is_checked_alike():
    with pytest.raises(UserError, match=r"^profile 'x': moe_exchanges must be a list of "):
        EngineProfile("x", moe_exchanges=("sglang-dp-gather",))
