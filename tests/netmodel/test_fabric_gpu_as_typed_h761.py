"""``--gpu`` beside ``--fabric`` reads a GPU as ``--gpu`` reads one anywhere.

An architect's fabric of their own GPU, ``infer --fabric ring:n=8,gpu=half.toml --gpu
half.toml``, was refused: "built for GPU 'Half-H100', not 'half.toml'; name that GPU in
the spec (gpu=half.toml)", advice the spec already followed; ``--gpu lite`` on a fabric of
Lites likewise ("not 'lite'; ... (gpu=lite)"), where a catalog name is read in any case
everywhere else. The GPU as typed is now resolved before it is compared: the catalog's name
in any case, or a GPU file of the fabric's GPU, figures and all. Another GPU is refused as
before, a file of the same name with other figures too.
"""

import pytest

from compute.errors import UserError
from netmodel.study.fabric_ref import fabric_collectives

_HALF = """[gpu."Half-H100"]
derive_from = "H100-SXM"
fraction = 0.5
source = "what-if: half an H100"
"""


def _file(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_a_catalog_name_in_another_case():
    for typed in ("lite", "LITE", "Lite"):
        f = fabric_collectives("ring:n=8,gpu=Lite", gpu=typed)
        assert (f.gpu_type, f.gpu.name) == ("Lite", "Lite")


def test_the_gpu_file_the_fabric_was_built_with(tmp_path):
    half = _file(tmp_path, "half.toml", _HALF)
    f = fabric_collectives(f"ring:n=4,gpu={half}", gpu=half)
    assert f.gpu_type == "Half-H100"
    assert f.gpu.scaleup_bandwidth == pytest.approx(225e9)   # half the H100's 450 GB/s


def test_another_gpu_is_still_refused(tmp_path):
    with pytest.raises(UserError, match="built for GPU 'Lite', not 'H100-SXM'"):
        fabric_collectives("ring:n=8,gpu=Lite", gpu="H100-SXM")
    half = _file(tmp_path, "half.toml", _HALF)
    # the same name, other figures: not the fabric's GPU
    other = _file(tmp_path, "other.toml", _HALF.replace("fraction = 0.5",
                                                        "fraction = 0.5\n"
                                                        "hbm_bandwidth_multiplier = 2.0"))
    with pytest.raises(UserError, match="built for GPU 'Half-H100', not '.*other.toml'"):
        fabric_collectives(f"ring:n=4,gpu={half}", gpu=other)
    with pytest.raises(UserError, match="built for GPU 'Lite', not '.*half.toml'"):
        fabric_collectives("ring:n=8,gpu=Lite", gpu=half)
