"""Refusals of command-line values that named neither the flag nor the value typed
(scripts/hostile_round19.py).

Before: ``netmodel yield --gpu H100-SXM --wafer-diameter 5`` said ``reference die
(compute/data/economics.toml): die area 814 mm^2 is larger than the usable wafer (20 mm^2 on
a 5 mm wafer)``, as if the data file were wrong; ``netmodel search ... --attention-dp 5``
listed the TP, PP and EP degrees searched but not the attention DP degree that left none.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from compute.errors import UserError
from compute.models import get_model
from compute.parallel import configurations
from netmodel.cli.main import cli


@pytest.mark.parametrize("gpu, diameter, die, wafer", [
    # the usable wafer: pi (d - 2 x 3 mm edge)^2 / 4; the dies: economics.toml, gpus.toml,
    # and a quarter of the H100's 814 mm^2 for a Lite
    ("H100-SXM", "5", "814 mm^2", "(20 mm^2 on a 5 mm wafer)"),
    ("B200-HGX", "30mm", "800 mm^2", "(707 mm^2 on a 30 mm wafer)"),
    ("Lite", "10", "203.5 mm^2", "(79 mm^2 on a 10 mm wafer)"),
])
def test_a_wafer_too_small_for_the_gpu_die_is_said_with_the_flag(gpu, diameter, die, wafer):
    r = CliRunner().invoke(cli, ["yield", "--gpu", gpu, "--wafer-diameter", diameter])
    assert r.exit_code == 2
    line, = r.output.splitlines()
    assert line.startswith(f"error: --wafer-diameter '{diameter}': ")
    assert line.endswith(f"die area {die} is larger than the usable wafer {wafer}")


def test_a_wafer_the_die_fits_still_gives_the_table():
    r = CliRunner().invoke(cli, ["yield", "--gpu", "H100-SXM", "--wafer-diameter", "300",
                                 "--json"])
    assert r.exit_code == 0, r.output
    assert '"gpu": "H100-SXM"' in r.output


def test_no_configuration_names_the_attention_dp_degrees_asked_for():
    # Llama-3-8B's 32 heads on 8 GPUs: TP 1, 2, 4, 8, none a multiple of 5 or 3
    with pytest.raises(UserError) as refused:
        configurations(get_model("Llama-3-8B"), 8, attention_dp=[3, 5])
    assert str(refused.value) == ("no configuration to search: TP 1, 2, 4, 8, PP 1, EP 1, "
                                  "attention DP 3, 5 (EP and attention DP must divide TP)")


def test_no_configuration_without_attention_dp_says_none():
    with pytest.raises(UserError, match=r"EP 3 \(EP and attention DP must divide TP\)"):
        configurations(get_model("Mixtral-8x7B"), 8, ep=[3])
