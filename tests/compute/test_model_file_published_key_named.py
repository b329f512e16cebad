"""A model file's unknown key is refused with every key the file may hold, the published
parameter counts' row (read by compute.models, not by the ModelSpec) among them."""

import pytest

from compute.errors import UserError
from compute.models import PUBLISHED_KEY, load_model_file


def test_the_allowed_keys_name_the_published_row(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text("[model.X]\nhidden = 64\nfoo = 1\n", encoding="utf-8")
    with pytest.raises(UserError) as err:
        load_model_file(path)
    msg = str(err.value)
    assert "unknown key(s) foo" in msg
    allowed = msg.split("allowed: ", 1)[1].split(", ")
    assert PUBLISHED_KEY in allowed and "hidden" in allowed and "foo" not in allowed


def test_a_file_holding_the_published_row_reads_it(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text("[model.X]\nlayers = 2\nhidden = 64\nheads = 4\nffn = 128\nvocab = 100\n"
                    "source = 'what-if: a test'\n"
                    f"{PUBLISHED_KEY} = {{total = 1.5e5, active = 1.5e5, source = 'x'}}\n",
                    encoding="utf-8")
    (model,) = load_model_file(path).values()
    assert model.name == "X" and model.hidden == 64
