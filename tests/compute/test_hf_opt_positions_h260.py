"""OPT's position table as a family-table value, not an OPT branch (h260 review of h252's
fc952d5): ``position_offset`` 2 rows beside ``max_position_embeddings``, whose OPTConfig
default 2048 is the family's ``config_defaults`` (as Gemma-3's are), and a
``word_embed_proj_dim`` other than the hidden size refused by its key in any family.

Before: an OPT config without ``max_position_embeddings`` got its 2,050-row table but a
``max_context`` of 0 (no limit), though OPTConfig builds 2048; a ``word_embed_proj_dim``
was refused only where ``model_type`` was ``opt``, so a config of another type carrying one
(an OPT fork's own type) was read as if its embedding were hidden wide.
"""

import json
from pathlib import Path

import pytest

from compute.errors import UserError
from compute.models import load_hf_config

DATA = Path(__file__).parent / "data" / "hf_families"


def write(tmp_path, cfg: dict):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    return load_hf_config(path, name="m")


def opt_13b() -> dict:
    return json.loads((DATA / "opt-13b.json").read_text())


def test_opt_without_max_position_embeddings_is_opt_configs_2048(tmp_path):
    cfg = {k: v for k, v in opt_13b().items() if k != "max_position_embeddings"}
    m = write(tmp_path, cfg)
    assert (m.learned_positions, m.max_context) == (2048 + 2, 2048)


def test_opt_13b_positions_unchanged(tmp_path):
    assert opt_13b()["max_position_embeddings"] == 2048
    m = write(tmp_path, opt_13b())
    assert (m.learned_positions, m.max_context) == (2050, 2048)


@pytest.mark.parametrize("model_type", [None, "gpt2"])
def test_a_projected_embedding_is_refused_in_any_family(tmp_path, model_type):
    # None: a config naming no model_type, read from its keys (h321: an unknown type such
    # as "opt_fork" is refused as such first)
    cfg = {**opt_13b(), "model_type": model_type, "word_embed_proj_dim": 512}
    with pytest.raises(UserError) as e:
        write(tmp_path, cfg)
    assert str(e.value).endswith("word_embed_proj_dim 512 differs from hidden_size 5120 (an "
                                 "embedding projected in and out, OPT-350m) and is not "
                                 "modelled; allowed: null or 5120")


def test_a_projection_as_wide_as_hidden_is_read(tmp_path):
    m = write(tmp_path, {**opt_13b(), "word_embed_proj_dim": 5120})
    assert m.hidden == 5120
