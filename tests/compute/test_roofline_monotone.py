"""Invariants of a step over every parallelism (TP, PP, EP, attention DP), both modes,
overlapped collectives, two-batch overlap and engine profiles (hypothesis):

* a larger batch, a longer prompt (prefill) or context (decode) never shortens the step,
  and never makes a batch fit that did not;
* a faster GPU (FLOP/s, HBM bandwidth, network bandwidth) is never slower;
* a calibrated profile is never faster than the roofline it calibrates.

``tests/compute/test_properties.py`` checks the plain-TP roofline; these add the other
configurations and options. The audit ran 10,000 random cases (4 seeds) with one
violation, two-batch overlap with ``overlap_collectives``
(``test_two_batch_full_collectives.py``).
"""

from __future__ import annotations

import os
from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compute.errors import UserError
from compute.evaluate_one import evaluate
from compute.hardware import catalog, derive_gpu, get_gpu
from compute.models import get_model, model_names
from compute.parallel import configurations
from compute.profiles import get_profile, profile_names
from compute.roofline_options import RooflineOptions
from tests.compute.step_helpers import dp_gather_ops

RUN = settings(max_examples=int(os.environ.get("NETMODEL_INVARIANT_EXAMPLES", "15")),
               deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def steps(draw):
    """(model, gpu, phase, configuration, options, batch, length keyword)."""
    model = get_model(draw(st.sampled_from(model_names())))
    gpu = get_gpu(draw(st.sampled_from(sorted(catalog()))))
    phase = draw(st.sampled_from(["prefill", "decode"]))
    try:
        cfgs = configurations(model, gpu.max_instance, pp=[1, 2, 4], ep=True,
                              attention_dp=True, max_gpus=4 * gpu.max_instance)
    except UserError:
        cfgs = configurations(model, gpu.max_instance)
    c = cfgs[draw(st.integers(0, len(cfgs) - 1))]
    mode = draw(st.sampled_from(["overlap", "serial"]))
    extra = draw(st.sampled_from(["none", "overlap_collectives", "two_batch", "profile"]))
    kw: dict = {"mode": mode}
    if mode == "overlap" and extra in ("overlap_collectives", "two_batch"):
        kw["overlap_collectives"] = draw(st.booleans()) or extra == "overlap_collectives"
    if extra == "two_batch" and c.pp == 1:
        kw["two_batch_overlap"] = True
    if extra == "profile":
        kw["profile"] = get_profile(draw(st.sampled_from(profile_names())))
    batch = draw(st.integers(1, 512))
    length = draw(st.sampled_from([64, 500, 1500, 4000, 16000]))
    key = "prompt" if phase == "prefill" else "context"
    return model, gpu, phase, c, RooflineOptions(**kw), batch, {key: length}


def _step(model, gpu, phase, c, options, batch, length):
    try:
        return evaluate(model, gpu, c.tp, batch, phase, pp=c.pp, ep=c.ep,
                        attention_dp=c.attention_dp, options=options, **length)
    except UserError:   # a context beyond the model's, a profile for another parallelism
        return None


@RUN
@given(case=steps(), more=st.sampled_from([1, 2, 5, 100]), longer=st.sampled_from([1, 64, 2000]))
def test_more_batch_or_tokens_never_shorter_nor_fits_better(case, more, longer):
    model, gpu, phase, c, options, batch, length = case
    a = _step(model, gpu, phase, c, options, batch, length)
    if a is None:
        return
    b = _step(model, gpu, phase, c, options, batch + more, length)
    if b is not None:
        if dp_gather_ops(b) == dp_gather_ops(a):   # (SGLang's padding mode held)
            assert b.latency >= a.latency * (1 - 1e-12), (case, more)
        assert a.memory.fits or not b.memory.fits, (case, more)
    (key, n), = length.items()
    d = _step(model, gpu, phase, c, options, batch, {key: n + longer})
    if d is not None:
        assert d.latency >= a.latency * (1 - 1e-12), (case, longer)
        assert a.memory.fits or not d.memory.fits, (case, longer)


@RUN
@given(case=steps(), mf=st.floats(1.0, 4.0), mh=st.floats(1.0, 4.0), mn=st.floats(1.0, 4.0))
def test_faster_gpu_never_slower(case, mf, mh, mn):
    model, gpu, phase, c, options, batch, length = case
    a = _step(model, gpu, phase, c, options, batch, length)
    if a is None:
        return
    fast = derive_gpu(gpu, "faster", flops_multiplier=mf, hbm_bandwidth_multiplier=mh,
                      network_bandwidth_multiplier=mn)
    b = _step(model, fast, phase, c, options, batch, length)
    assert b.latency <= a.latency * (1 + 1e-12), (case, mf, mh, mn)


@RUN
@given(case=steps(), name=st.sampled_from(profile_names()))
def test_a_profile_is_never_faster_than_the_roofline(case, name):
    model, gpu, phase, c, options, batch, length = case
    if options.two_batch_overlap:
        return   # modelled on the roofline only
    calibrated = _step(model, gpu, phase, c, replace(options, profile=get_profile(name)),
                       batch, length)
    if calibrated is None:
        return
    roof = _step(model, gpu, phase, c, replace(options, profile=None), batch, length)
    assert calibrated.latency >= roof.latency * (1 - 1e-12), (case, name)
