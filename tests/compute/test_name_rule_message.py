"""compute.validate.name refuses a name with a blank at either end (``value.strip() ==
value``); its line must say so, not only name control characters and '$', which such a
name does not hold."""

import pytest

from compute import validate
from compute.errors import UserError
from compute.hardware import load_gpu_file


@pytest.mark.parametrize("value", [" H100", "H100 ", "\u00a0H100"])
def test_a_name_with_a_blank_at_an_end_is_told_why(value):
    with pytest.raises(UserError) as err:
        validate.name("g.toml", "GPU", value)
    assert str(err.value).endswith("and no blank at either end")


def test_a_gpu_file_name_with_a_leading_blank(tmp_path):
    path = tmp_path / "g.toml"
    path.write_text('[gpu." A"]\nderive_from = "H100-SXM"\nsource = "t"\n')
    with pytest.raises(UserError, match="GPU name ' A' must be .* and no blank at either end"):
        load_gpu_file(path)


def test_a_blank_inside_a_name_is_allowed():
    assert validate.name("g.toml", "GPU", "my H100") == "my H100"
