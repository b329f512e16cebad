"""A saved fabric's GPU type whose ``name`` is not the one it is listed under says what is
allowed (scripts/hostile_round18.py). Before: 'GPU type 'Other' has the name 'Mine'', which
names the clash but not the fix."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from compute.hardware import get_gpu
from topologies.schema_gpu import gpu_spec_from_dict


def test_a_name_apart_from_its_key_says_the_rule():
    fields = get_gpu("H100-SXM").to_dict()
    with pytest.raises(UserError) as err:
        gpu_spec_from_dict("Other", fields, "f.json: gpu_types")
    assert str(err.value) == ("f.json: gpu_types: GPU type 'Other' has the name 'H100-SXM'; a "
                              "GPU type's 'name' must be the one it is listed under ('Other'), "
                              "or be left out")


@pytest.mark.parametrize("fields", [{"name": "H100-SXM"}, {}])
def test_the_same_name_or_none_is_taken(fields):
    base = {k: v for k, v in get_gpu("H100-SXM").to_dict().items() if k != "name"}
    assert gpu_spec_from_dict("H100-SXM", {**base, **fields}) == get_gpu("H100-SXM")
