"""Every option naming a GPU says, from the GPU catalog, the ways a GPU is given (h242, item
3): a catalog name or a GPU file (.toml or .json). Before, infer and search's --gpu said
'GPU from the catalog (netmodel hardware) or from --gpu-file', though --gpu takes a GPU
file's path itself; compare and sweep's --gpus, serve's --prefill-gpu/--decode-gpu said
'GPU types' (files are taken too); topology compare's said 'not files' of its fabrics,
which read as of its GPU."""

from __future__ import annotations

import re

import click
import pytest

from compute.hardware import gpu_names
from netmodel.cli.main import cli
from tests.netmodel.cli_helpers import run_cli

#: (command, option) of every option that takes a GPU (or a list of them)
GPU_OPTIONS = [("infer", "--gpu"), ("search", "--gpu"), ("compare", "--gpus"),
               ("sweep", "--gpus"), ("study lite-gpu", "--gpus"), ("serve", "--prefill-gpu"),
               ("serve", "--decode-gpu"), ("topology compare", "--gpu")]


def _option_help(command: str, option: str) -> str:
    out = run_cli([*command.split(), "--help"]).output
    block = re.search(rf"^  {re.escape(option)}\b.*?(?=^  -)", out, re.S | re.M)
    assert block, out
    return " ".join(block.group(0).split())


@pytest.mark.parametrize("command, option", GPU_OPTIONS)
def test_a_gpu_option_names_the_catalog_and_gpu_files(command, option):
    text = _option_help(command, option)
    # wrapped lines rejoin with a space: compare with the spaces taken out
    flat = text.replace(" ", "")
    assert all(name in flat for name in gpu_names()), text
    assert "GPU file" in text and ".toml or .json" in text, text
    assert "GPU type" not in text and "not files" not in text, text


def test_every_option_taking_a_gpu_is_listed():
    # an option of a name with 'gpu' that is not a count, a file or an area share
    found = set()

    def walk(cmd, path, ctx):
        if isinstance(cmd, click.Group):
            for n in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, n)
                yield from walk(sub, [*path, n], click.Context(sub, parent=ctx, info_name=n))
        else:
            yield " ".join(path), cmd

    for path, cmd in walk(cli, [], click.Context(cli)):
        for p in cmd.params:
            for o in p.opts:   # the shown names (a list option's singular is an alias)
                if o not in getattr(p, "aliases", ()) and isinstance(p, click.Option) and re.fullmatch(r"--((prefill|decode)-)?gpus?", o) and \
                        path not in ("availability", "blast-radius", "yield"):
                    found.add((path, o))
    # availability/blast-radius --gpus is a cluster size; yield --gpu a die (catalog or file)
    assert found == set(GPU_OPTIONS)


def test_the_gpu_options_take_a_gpu_file(tmp_path):
    path = tmp_path / "g.toml"
    path.write_text('[gpu.Half]\nderive_from = "H100-SXM"\nfraction = 0.5\n'
                    'source = "what-if: half an H100"\n')
    r = run_cli(["infer", "--model", "Llama-3-8B", "--gpu", path, "--tp", "1", "--batch", "1"])
    assert r.exit_code == 0 and "on 1 x Half" in r.output, r.output
    r = run_cli(["topology", "compare", "ring:n=8", "leaf-spine:leaves=2", "--gpu", path])
    assert r.exit_code == 0 and "Half" in r.output, r.output


#: (command, option) of every option that takes an LLM (yield's --model is its yield model)
MODEL_OPTIONS = [("infer", "--model"), ("search", "--model"), ("compare", "--models"),
                 ("sweep", "--models"), ("study lite-gpu", "--models"), ("serve", "--model"),
                 ("cost", "--model"), ("blast-radius", "--model"), ("availability", "--model")]


@pytest.mark.parametrize("command, option", MODEL_OPTIONS)
def test_a_model_option_names_the_catalog_and_model_files(command, option):
    # before: 'Comma-separated models.', 'LLM model name.', 'Model name or file.', 'Model
    # from the catalog (netmodel models) or from --model-file.' (--model takes a file too)
    from compute.models import model_names

    text = _option_help(command, option)
    flat = text.replace(" ", "")
    assert all(name.replace(" ", "") in flat for name in model_names()), text
    assert "model file" in text and "(.toml or .json" in text, text
    assert "HuggingFace config.json" in text, text
