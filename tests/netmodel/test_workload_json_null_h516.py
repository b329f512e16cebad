"""A workload JSON file's ``null`` is refused as the file spells it (h516): ``"prompt":
null`` was 'prompt must be a whole number from 1 to 100,000,000, got None'."""

from __future__ import annotations

import json

import pytest

from compute.errors import UserError
from netmodel.study.serving import load_workload


@pytest.mark.parametrize("key, said", [
    ("prompt", "workload 'w': prompt must be a whole number from 1 to 100,000,000, got null"),
    ("output", "workload 'w': output must be a whole number from 1 to 100,000,000, got null"),
])
def test_a_workload_null_is_said_as_null(tmp_path, key, said):
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"prompt": 1500, "output": 13, key: None}))
    with pytest.raises(UserError) as err:
        load_workload(path)
    assert str(err.value) == f"{path}: {said}"
