"""A profile's [profile] gpu names the run's GPU regardless of case, as the catalogs read
a GPU name: 'h100-sxm' used on H100-SXM is no other GPU. A label naming another GPU (a
typo among them) is still noted where the profile is applied."""
import re

from click.testing import CliRunner

from netmodel.cli.main import cli
from tests.netmodel.cli_helpers import ROOT

# renamed: a file of the shipped profile's name and other values is refused
SHIPPED = (ROOT / "compute/data/profiles/vllm-dgx-h100.toml").read_text().replace(
    'name = "vllm-dgx-h100"', 'name = "vllm-copy"', 1)
LABEL = '\ngpu = "H100-SXM"'   # the [profile] table's, the first; measurement rows follow


def _infer(tmp_path, label: str) -> str:
    assert SHIPPED.count(LABEL) > 1 and re.search(r"\[profile\][^\[]*" + LABEL, SHIPPED)
    f = tmp_path / "p.toml"
    f.write_text(SHIPPED.replace(LABEL, f'\ngpu = "{label}"', 1))
    out = CliRunner().invoke(cli, ["infer", "--model", "Llama-2-70B", "--gpu", "H100-SXM",
                                   "--tp", "8", "--batch", "1", "--profile", str(f)])
    assert out.exit_code == 0, out.output
    return out.output


def test_a_label_differing_only_in_case_is_the_same_gpu(tmp_path):
    # was: "note: profile vllm-copy was fitted on h100-sxm and is used here on H100-SXM"
    # (the model is the one it was fitted on: no note at all)
    assert "was fitted on" not in _infer(tmp_path, "h100-sxm")


def test_a_typo_in_the_label_is_noted(tmp_path):
    assert ("note: profile vllm-copy was fitted on model Llama-2-70B on GPU H100-SMX; this is "
            "model Llama-2-70B on GPU H100-SXM: an extrapolation (on H100-SXM its efficiencies "
            "and fixed overheads are H100-SMX's") in _infer(tmp_path, "H100-SMX")
