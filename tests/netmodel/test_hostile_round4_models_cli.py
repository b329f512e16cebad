"""netmodel models on a small model file (round 4): weights under 10 GB printed as '0 GB'
(a 0.27 GB model) and one fp8 MLP layer as '(1 layers)'."""
from click.testing import CliRunner

from netmodel.cli.main import cli

TINY = ('[model.Tiny]\nlayers = 4\nhidden = 1024\nheads = 8\nkv_heads = 8\nhead_dim = 128\n'
        'ffn = 4096\nvocab = 32000\ngated_mlp = true\nsource = "test"\n')


def _first_line(tmp_path, extra=""):
    p = tmp_path / "m.toml"
    p.write_text(TINY + extra)
    r = CliRunner().invoke(cli, ["models", "Tiny", "--model-file", str(p)])
    assert r.exit_code == 0, r.output
    return r.output.splitlines()[0]


def test_small_weights_shown_to_three_figures(tmp_path):
    # per layer: MLP 3 x 1024 x 4096 = 12,582,912, attention 4 x 1024^2 = 4,194,304, two
    # RMSNorms 2,048; 4 layers + untied embeddings 2 x 32000 x 1024 + final norm 1024
    # = 132,654,080 parameters x 2 B = 0.265 GB
    assert "weights 0.265 GB bf16" in _first_line(tmp_path)


def test_one_fp8_mlp_layer(tmp_path):
    # one MLP (12,582,912 parameters) at 1 B instead of 2: 265,308,160 - 12,582,912 B
    line = _first_line(tmp_path, 'mlp_weight_dtype = "fp8"\nmlp_dtype_layers = 1\n')
    assert line.endswith("weights 0.253 GB bf16, MLP fp8 (1 layer)")
