"""A scenario's GPU tokens were substituted whatever the key: ``bandwidth = "$nvlinks"``
on lite-flat built a fabric whose links carry 18 bytes/s and ran it (exit 0; hostile round
16). A token of one kind given for a builder parameter of another is refused in one line
now; the shipped scenarios (every token in its place) build as before."""

import pytest

from compute.errors import UserError
from netmodel.study.scenario_files import load_scenario
from tests.netmodel.cli_helpers import ROOT, one_line_error, run_cli

FLAT = (ROOT / "netmodel/data/scenarios/lite-flat.toml").read_text()
DGX = (ROOT / "netmodel/data/scenarios/h100-dgx.toml").read_text()


@pytest.mark.parametrize(("text", "old", "new", "words"), [
    (FLAT, 'bandwidth = "$scaleup"', 'bandwidth = "$nvlinks"', "flat's bandwidth takes a bandwidth"),
    (FLAT, 'bandwidth = "$scaleup"', 'bandwidth = "$reduction"', "flat's bandwidth takes a bandwidth"),
    (DGX, 'nvlinks = "$nvlinks"', 'nvlinks = "2*$scaleup"', "nvlinks takes a whole number"),
    (DGX, 'nvlinks = "$nvlinks"', 'nvlinks = "$reduction"', "nvlinks takes a whole number"),
    (DGX, 'in_network_reduction = "$reduction"', 'in_network_reduction = "$nvlinks"',
     "in_network_reduction takes true or false"),
])
def test_token_of_another_kind_is_refused(tmp_path, text, old, new, words):
    assert old in text
    path = tmp_path / "s.toml"
    path.write_text(text.replace(old, new))
    line = one_line_error(run_cli(["topology", "show", path]), words)
    assert new.split(" = ")[1].strip('"') in line
    with pytest.raises(UserError, match=words):
        load_scenario(path).fabric_params()


def test_shipped_tokens_still_resolve():
    for name in ("h100-dgx@A100-SXM-80GB", "lite-direct@Lite+BW", "lite-flat@Lite",
                 "lite-ocs@Lite"):
        assert run_cli(["topology", "show", name]).exit_code == 0
