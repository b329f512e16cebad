"""A config.json's MLA ``v_head_dim`` of 0 is refused, not read as the model file's '0:
head_dim' (hostile round h354): DeepSeek-R1's config with v_head_dim 0 was read with value
heads of head_dim's 192 (674.86B parameters, not an error), since the model file's 0 means
'as head_dim'; in the config a 0 is a value head of no width (HuggingFace's DeepseekV3
builds its v projection of heads x v_head_dim from it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compute.errors import UserError
from compute.hf_config import load_hf_config

R1 = Path(__file__).parent / "data" / "hf_families" / "deepseek-r1.json"


def _config(tmp_path, **changes) -> Path:
    cfg = json.loads(R1.read_text())
    cfg.update(changes)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    return path


def test_mla_v_head_dim_zero_is_refused(tmp_path):
    path = _config(tmp_path, v_head_dim=0)
    with pytest.raises(UserError) as err:
        load_hf_config(path)
    assert str(err.value) == f"{path}: v_head_dim must be a whole number from 1 to 65,536, got 0"


def test_mla_v_head_dim_given_or_absent_still_reads(tmp_path):
    # R1's own 128; absent: head_dim's (qk_nope 128 + qk_rope 64 = 192), as before
    assert load_hf_config(_config(tmp_path)).v_head_dim == 128
    cfg = json.loads(R1.read_text())
    del cfg["v_head_dim"]
    path = tmp_path / "absent.json"
    path.write_text(json.dumps(cfg))
    spec = load_hf_config(path)
    assert (spec.v_head_dim, spec.head_dim) == (0, 192)
