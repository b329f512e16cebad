"""An unknown GPU or model name says that a file's path is taken too (h234): the line listed
the catalog only ('unknown GPU 'MI300X'; known: 'A100-SXM-80GB', ...'), so a user with their
own GPU or model learned from the manual, not from the error, that a path works wherever a
name does (compute.md, 'Adding a GPU or a model'; api.md's argument table)."""

from __future__ import annotations

import pytest

import netmodel
from compute.errors import UserError
from compute.hardware import get_gpu
from compute.models import get_model
from topologies import build


def test_unknown_gpu_names_gpu_files():
    with pytest.raises(UserError, match=r"^unknown GPU 'MI300X'; known: 'A100-SXM-80GB', .*"
                       r"'Lite\+NetBW'; or the path of a GPU file \(\.toml or \.json\)$"):
        get_gpu("MI300X")
    # a builder's gpu parameter says the same, after the builder and parameter
    with pytest.raises(UserError, match=r"^ring: gpu: unknown GPU 'MI300X'; known: .*; or the "
                       r"path of a GPU file \(\.toml or \.json\)$"):
        build("ring:n=4,gpu=MI300X")


def test_unknown_model_names_model_files_and_hf_configs():
    with pytest.raises(UserError, match=r"^unknown model 'Qwen2\.5-72B'; known: .*'gpt-oss-20b'; "
                       r"or the path of a model file \(\.toml or \.json\) or of a HuggingFace config "
                       r"\(\.json\)$"):
        netmodel.evaluate("Qwen2.5-72B", "H100-SXM", "decode", tp=1, batch=1)
    with pytest.raises(UserError, match="or the path of a model file"):
        get_model("Llama-9")
