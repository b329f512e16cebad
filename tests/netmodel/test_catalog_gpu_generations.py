"""Every catalog GPU is costed with its own generation's collective constants.

A GPU's generation (NVLink payload efficiency, NVLS factor and ceiling, LL caps, channel
counts: ``netmodel/data/collective_generations.toml``) is the one whose ``gpus`` list names
it or the GPU it derives from; a GPU that no list names and that derives from none takes
the default generation, Hopper's, without a word. That default is right for a user's GPU
file (docs/collectives.md), but a catalog GPU added to ``compute/data/gpus.toml`` and
forgotten here (a Blackwell part, say) would be costed with Hopper's NVLink rate and NVLS
figures, every number it gave a little wrong. So the two files are held to each other:
each catalog GPU that derives from none is listed, each listed name is a catalog GPU."""

from __future__ import annotations

from compute.gpu_facts import root_gpu
from compute.hardware import catalog, get_gpu, gpu_names
from netmodel.collectives.calibration_files import default_calibration


def _listed() -> dict[str, str]:
    """GPU name -> the generation whose ``gpus`` names it."""
    return {gpu: g.name for g in default_calibration().generations for gpu in g.gpus}


def test_every_catalog_gpu_derived_from_none_is_listed_by_a_generation():
    listed = _listed()
    roots = {root_gpu(get_gpu(name)).name for name in gpu_names()}
    missing = sorted(roots - set(listed))
    assert not missing, (
        f"catalog GPUs {missing} are listed by no generation of "
        "netmodel/data/collective_generations.toml: name each in its generation's gpus")


def test_every_listed_gpu_is_a_catalog_gpu():
    # a name that matches no GPU (a typo) leaves the GPU it meant on the default generation
    assert set(_listed()) <= set(catalog())


def test_the_catalog_generations_by_hand():
    # NCCL picks its constants by compute capability: A100 8.0, H100/H200 9.0, B200 and
    # GB200 10.0, B300 and GB300 10.3 (SM100's constants); the Lites derive from the H100
    gen = default_calibration().generation_of
    assert [gen(n).name for n in ("A100-SXM-80GB", "H100-SXM", "H200-SXM", "B200-HGX",
                                  "GB200-NVL72", "B300-HGX", "GB300-NVL72", "Lite",
                                  "Lite+BW+FLOPS")] == \
        ["ampere", "hopper", "hopper", "blackwell", "blackwell", "blackwell", "blackwell",
         "hopper", "hopper"]
