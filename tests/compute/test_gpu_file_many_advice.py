"""A GPU given as a file path that holds several GPUs is refused with advice that works
wherever a GPU path is taken (a scenario's gpu, a fabric spec's gpu=, --gpu): a file of the
one GPU meant. The advice followed gives that GPU."""

import json
import tomllib
from pathlib import Path

import pytest

from compute.errors import UserError
from compute.hardware import get_gpu, load_gpu_file

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "outside-gpus.toml"


def test_the_advice_followed_gives_the_gpu_meant(tmp_path):
    with pytest.raises(UserError) as err:
        get_gpu(str(EXAMPLE))
    msg = str(err.value)
    many = load_gpu_file(EXAMPLE)
    assert f"holds {len(many)} GPUs" in msg and "a file of its own" in msg
    assert "pick one by name" not in msg          # no way to from a scenario or a spec
    table = tomllib.loads(EXAMPLE.read_text(encoding="utf-8"))["gpu"]
    name = "H20"
    own = tmp_path / "h20.json"     # the same table, as a JSON GPU file holds it
    own.write_text(json.dumps({"gpu": {name: table[name]}}), encoding="utf-8")
    assert get_gpu(str(own)) == many[name]
