"""The last two true/false parameters hostile round 32 left unchecked: each refuses a value
that is not true or false before any work, naming the parameter (before: plot='no' drew the
availability figures, keep_grid='no' kept every search's grid)."""

import pytest

from compute.errors import UserError
from netmodel.study.availability import availability_files
from netmodel.study.fabric_search import fabric_search


@pytest.mark.parametrize("value", ["no", 0, 1, None])
def test_availability_files_plot_is_a_flag(value):
    with pytest.raises(UserError, match=r"^availability_files: plot must be true or false, "):
        availability_files(None, plot=value)


@pytest.mark.parametrize("value", ["no", 0, 1, None])
def test_fabric_search_keep_grid_is_a_flag(value):
    with pytest.raises(UserError, match=r"^fabric_search: keep_grid must be true or false, "):
        fabric_search("h100-dgx", "Llama-3-8B", "decode", keep_grid=value)
