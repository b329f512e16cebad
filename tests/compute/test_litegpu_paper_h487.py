"""The Lite family (compute/data/gpus.toml) held to what of the Lite-GPU paper's text is
quoted in public.

The paper is arXiv 2501.10187 (Canakci et al., Microsoft; v1 17 Jan 2025, v2 29 Apr 2025,
HotOS '25). Its Table 1 (the Lite configurations) and its evaluation's numbers could not
be obtained, so the family is reconstructed from its text. Import AI 397
(importai.substack.com/p/import-ai-397-deepseek-means-ai-proliferation) quotes v1:

* "bandwidth-to-compute can increase to 2X of H100": no Lite may have more than twice the
  H100's bytes/s per FLOP/s, of HBM or of network;
* "the basic Lite-GPU with no additional networking support": the plain Lite has the
  H100's ratios, no more;
* the workloads are Llama3-70B, GPT3-175B and Llama3-405B: the study's models.

These pin the reconstruction to those sentences; no number of the paper's own is
available to compare a model output with (none is tuned to one).
"""

import math

import pytest

from compute.hardware import get_gpu
from compute.models import get_model
from netmodel.study.defaults import BASELINE, DEFAULT_GPUS, DEFAULT_MODELS

H100 = get_gpu("H100-SXM")
LITES = [g for g in DEFAULT_GPUS if g != BASELINE]
#: bandwidth fields of a GpuSpec, each against the bf16 peak it feeds (bytes/s per FLOP/s)
BANDWIDTHS = ("hbm_bandwidth", "scaleup_bandwidth", "scaleout_bandwidth")
#: the paper's "can increase to 2X of H100"
PAPER_BOUND = 2.0


def ratio_to_h100(gpu, field):
    """The GPU's bytes/s per bf16 FLOP/s in ``field``, over the H100's."""
    g = get_gpu(gpu)
    return (getattr(g, field) / g.flops_bf16) / (getattr(H100, field) / H100.flops_bf16)


def test_the_study_compares_the_h100_with_the_lite_family():
    assert BASELINE == "H100-SXM"
    assert len(LITES) == 5 and all(g.startswith("Lite") for g in LITES)


@pytest.mark.parametrize("gpu", LITES)
@pytest.mark.parametrize("field", BANDWIDTHS)
def test_no_lite_exceeds_twice_the_h100s_bandwidth_to_compute(gpu, field):
    assert ratio_to_h100(gpu, field) <= PAPER_BOUND * (1 + 1e-12)


@pytest.mark.parametrize("field", BANDWIDTHS)
def test_the_plain_lite_has_the_h100s_ratios(field):
    # a quarter of an H100 in everything: the same bandwidth per FLOP/s
    assert math.isclose(ratio_to_h100("Lite", field), 1.0, rel_tol=1e-12)


def test_the_customized_lites_reach_the_bound_where_they_add_bandwidth():
    # Lite+NetBW doubles the network, Lite+MemBW the HBM; Lite+BW+FLOPS spends 1.2x of
    # compute against its doubled bandwidth, so 2 / 1.2 of the H100's ratio
    for field in ("scaleup_bandwidth", "scaleout_bandwidth"):
        assert math.isclose(ratio_to_h100("Lite+NetBW", field), PAPER_BOUND, rel_tol=1e-12)
        assert math.isclose(ratio_to_h100("Lite+MemBW", field), 1.0, rel_tol=1e-12)
    assert math.isclose(ratio_to_h100("Lite+MemBW", "hbm_bandwidth"), PAPER_BOUND,
                        rel_tol=1e-12)
    assert math.isclose(ratio_to_h100("Lite+NetBW", "hbm_bandwidth"), 1.0, rel_tol=1e-12)
    for field in BANDWIDTHS:
        assert math.isclose(ratio_to_h100("Lite+BW", field), PAPER_BOUND, rel_tol=1e-12)
        assert math.isclose(ratio_to_h100("Lite+BW+FLOPS", field), PAPER_BOUND / 1.2,
                            rel_tol=1e-12)


def test_the_studys_models_are_the_papers_workloads():
    # the paper's names -> the catalog's; Llama 3's only 405B release is Llama 3.1
    paper = {"Llama3-70B": ("Llama-3-70B", 70e9), "GPT3-175B": ("GPT-3-175B", 175e9),
             "Llama3-405B": ("Llama-3.1-405B", 405e9)}
    assert sorted(DEFAULT_MODELS) == sorted(name for name, _ in paper.values())
    for name, size in paper.values():
        # the nominal size within 2% (Llama 3 70B has 70.6e9 parameters)
        assert get_model(name).parameters == pytest.approx(size, rel=0.02)
