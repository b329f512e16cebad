"""A profile's [profile] gpu names the run's GPU regardless of case, as the catalogs read
a GPU name: 'h100-sxm' used on H100-SXM is no other GPU. A label naming another GPU (a
typo among them) over rows measured on another GPU is refused (hostile round 34)."""
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


def test_a_typo_in_the_label_is_refused(tmp_path):
    # was noted as "fitted on ... GPU H100-SMX; ... an extrapolation (on H100-SXM its
    # efficiencies and fixed overheads are H100-SMX's", of rows measured on H100-SXM: a
    # label naming other GPUs than the profile's measurements is refused (hostile round 34)
    assert SHIPPED.count(LABEL) > 1
    f = tmp_path / "p.toml"
    f.write_text(SHIPPED.replace(LABEL, '\ngpu = "H100-SMX"', 1))
    out = CliRunner().invoke(cli, ["infer", "--model", "Llama-2-70B", "--gpu", "H100-SXM",
                                   "--tp", "8", "--batch", "1", "--profile", str(f)])
    assert out.exit_code == 2 and out.output.strip().splitlines() == [
        f"error: {f}: [profile]: gpu 'H100-SMX' must name the GPUs its "
        f"[[measurement]] tables were measured on (H100-SXM): a profile run on another GPU is "
        f"said to be carried over from them"], out.output
