"""Every catalog GPU is costed with its own generation's collective constants.

A GPU's generation (NVLink payload efficiency, NVLS factor and ceiling, LL caps, channel
counts: the tables of ``netmodel/data/collective_generations.toml``) is the one its own
entry names (``collective_generation`` in ``compute/data/gpus.toml``), else the one of the
GPU it derives from; a GPU whose lineage names none takes the default generation, Hopper's,
without a word. That default is right for a user's GPU file (docs/collectives.md), but a
catalog GPU added without the key (a Blackwell part, say) would be costed with Hopper's
NVLink rate and NVLS figures, every number it gave a little wrong. So each catalog GPU that
derives from none names a generation the file defines, and its compute capability (by which
NCCL enables LL128: ``ll128_off_capabilities``)."""

from __future__ import annotations

import pytest

from compute.gpu_facts import derivation, named_fact, stated_fact
from compute.hardware import catalog, gpu_names
from netmodel.collectives.calibration_files import default_calibration


def _roots() -> list[str]:
    """The catalog GPUs derived from none (the Lite family derives from the H100)."""
    return [n for n in gpu_names() if derivation(n) is None]


@pytest.mark.parametrize("gpu", _roots())
def test_every_catalog_gpu_derived_from_none_names_a_generation_and_capability(gpu):
    names = [g.name for g in default_calibration().generations]
    assert stated_fact(gpu, "collective_generation") in names, (
        f"catalog GPU {gpu!r} names no generation of netmodel/data/collective_generations.toml:"
        f" give it collective_generation = one of {names} in compute/data/gpus.toml")
    assert stated_fact(gpu, "compute_capability") is not None


def test_catalog_gpus_derived_from_another_keep_their_bases():
    # the Lite family states neither: each keeps the H100's
    for gpu in gpu_names():
        if gpu.startswith("Lite"):
            assert stated_fact(gpu, "collective_generation") is None
            assert named_fact(gpu, "collective_generation") == ("hopper", "H100-SXM")
            assert named_fact(gpu, "compute_capability") == ("9.0", "H100-SXM")


def test_each_generations_flagship_is_a_catalog_gpu_of_it():
    for g in default_calibration().generations:
        assert g.flagship_gpu in catalog()
        assert stated_fact(g.flagship_gpu, "collective_generation") == g.name


def test_the_catalog_generations_by_hand():
    # NCCL picks its constants by compute capability: A100 8.0, H100/H200 9.0, B200 and
    # GB200 10.0, B300 and GB300 10.3 (SM100's constants); the Lites derive from the H100
    gen = default_calibration().generation_of
    assert [gen(n).name for n in ("A100-SXM-80GB", "H100-SXM", "H200-SXM", "B200-HGX",
                                  "GB200-NVL72", "B300-HGX", "GB300-NVL72", "Lite",
                                  "Lite+BW+FLOPS")] == \
        ["ampere", "hopper", "hopper", "blackwell", "blackwell", "blackwell", "blackwell",
         "hopper", "hopper"]
    assert [named_fact(n, "compute_capability")[0] for n in (
        "A100-SXM-80GB", "H100-SXM", "H200-SXM", "B200-HGX", "GB200-NVL72", "B300-HGX",
        "GB300-NVL72")] == ["8.0", "9.0", "9.0", "10.0", "10.0", "10.3", "10.3"]
