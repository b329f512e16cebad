"""A derived GPU whose scaled fields fall below a GPU's least (compute/data/limits.toml:
1 GB/s of HBM bandwidth, 0.1 W, ...) is refused since d383f12 checks every GpuSpec, but
the line named only the scaled field ('GPU 'Tiny': hbm_bandwidth must be ... got
335000000.0'), a key the user's derive_from entry does not have, and not the fraction or
multiplier that gave it. It now names them and what to give."""

import pytest

from compute.errors import UserError
from compute.hardware import derive_gpu, get_gpu, load_gpu_file

H100 = get_gpu("H100-SXM")


def test_the_fraction_that_gave_the_field_is_named():
    # 3.35 TB/s x 1e-4 = 0.335 GB/s, below the 1 GB/s least
    with pytest.raises(UserError) as e:
        derive_gpu(H100, "Tiny", fraction=1e-4)
    assert str(e.value) == ("GPU 'Tiny', fraction 0.0001 of 'H100-SXM': hbm_bandwidth must be "
                            "a number from 1,000,000,000 to 100,000,000,000,000,000 bytes/s, "
                            "got 335000000.0; give a larger fraction")


def test_a_multiplier_other_than_1_is_named_too():
    with pytest.raises(UserError, match=r"^GPU 'T', fraction 0\.01 of 'H100-SXM', "
                                        r"hbm_bandwidth_multiplier 0\.01: hbm_bandwidth must"
                                        r".*give a larger fraction or multiplier$"):
        derive_gpu(H100, "T", fraction=0.01, hbm_bandwidth_multiplier=0.01)


def test_a_gpu_files_derive_from_entry_says_the_same(tmp_path):
    f = tmp_path / "g.toml"
    f.write_text('[gpu.Tiny]\nderive_from = "H100-SXM"\nfraction = 0.0001\n')
    with pytest.raises(UserError, match=r"GPU 'Tiny', fraction 0\.0001 of 'H100-SXM': "
                                        r"hbm_bandwidth"):
        load_gpu_file(f)


def test_a_bad_name_or_max_instance_keeps_its_own_line():
    with pytest.raises(UserError, match=r"^a GpuSpec's name must be non-empty text"):
        derive_gpu(H100, "", fraction=0.5)
    assert derive_gpu(H100, "Half", fraction=0.5).hbm_bandwidth == H100.hbm_bandwidth / 2
