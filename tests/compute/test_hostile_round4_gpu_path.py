"""A GPU given as a file path (``--gpu g.toml``, ``gpu=g.toml`` in a fabric spec) must hold one
GPU; the refusal named a ``--gpu-file`` flag, which fabric specs and the library do not
have (round 4)."""
import pytest

from compute.errors import UserError
from compute.hardware import get_gpu


def test_two_gpu_file_as_a_gpu_is_refused_naming_its_entries(tmp_path):
    p = tmp_path / "g.toml"
    p.write_text('[gpu.X1]\nderive_from = "H100-SXM"\nsource = "test"\nscaleup_reduction = false\n'
                 '[gpu.X2]\nderive_from = "X1"\nsource = "test"\nfraction = 0.5\n')
    with pytest.raises(UserError) as e:
        get_gpu(str(p))
    msg = str(e.value)
    assert "holds 2 GPUs ('X1', 'X2')" in msg and "--" not in msg and "\n" not in msg


def test_many_gpu_file_message_stays_short(tmp_path):
    p = tmp_path / "g.toml"
    p.write_text("".join(f'[gpu.X{i}]\nderive_from = "H100-SXM"\nsource = "test"\n' for i in range(500)))
    with pytest.raises(UserError, match=r"holds 500 GPUs \('X0', 'X1', 'X2', 'X3', \.\.\.\)"):
        get_gpu(str(p))


def test_one_gpu_file_keeps_its_flag_and_derivation(tmp_path):
    p = tmp_path / "g.toml"
    p.write_text('[gpu.Q]\nderive_from = "H100-SXM"\nsource = "test"\nfraction = 0.25\nscaleup_reduction = false\n')
    g = get_gpu(str(p))
    assert (g.sms, g.scaleup_reduction, g.tdp) == (33, False, 175.0)  # 132/4, 700 W / 4
