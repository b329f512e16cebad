"""Hostile round 15 (compute): what helper 155's driver found in compute's boundaries. Each
test fails on the code before its fix: an OverflowError or numpy's ambiguous-truth
ValueError raised through a check, a refusal of hundreds of kilobytes (every name of a
user's file listed), or a GPU file of many entries read in quadratic time."""

from __future__ import annotations

import time

import numpy as np
import pytest

from compute.errors import KNOWN_LENGTH, UserError, known
from compute.hardware import derive_gpu, get_gpu, load_gpu_file
from compute.phases import Slo
from compute.roofline import check_skew
from compute.roofline_options import RooflineOptions
from compute.validate import is_finite

HUGE = 10**400   # an exact integer no float holds: math.isfinite(HUGE) raised OverflowError


@pytest.mark.parametrize(("make", "needle"), [
    (lambda: Slo(ttft=HUGE), "ttft SLO an integer of 401 digits (in s), outside the 1 us to 600 s allowed for a prefill SLO (TTFT, time to first token)"),
    (lambda: Slo(tbt=-HUGE), "tbt SLO must be a finite number of seconds > 0, got a negative integer of 401 digits"),
    (lambda: RooflineOptions(flops_efficiency=HUGE), "flops_efficiency must be a fraction from 0.0001 to 1, got an integer of 401 digits"),
    (lambda: RooflineOptions(memory_efficiency=HUGE), "memory_efficiency must be a fraction from 0.0001 to 1, got an integer of 401 digits"),
    (lambda: derive_gpu(get_gpu("H100-SXM"), "X", fraction=HUGE), "GPU 'X': fraction must be a number from 1e-06 to 1, got an integer of 401 digits"),
    (lambda: derive_gpu(get_gpu("H100-SXM"), "X", flops_multiplier=HUGE), "GPU 'X': flops_multiplier must be a number from 0.001 to 1,000, got an integer of 401 digits"),
    (lambda: RooflineOptions(mode=np.zeros(3)), "unknown mode an array of shape (3,); known: 'overlap', 'serial'"),
    (lambda: RooflineOptions(compute_dtype=np.zeros(3)), "unknown compute dtype an array of shape (3,); known:"),
    (lambda: RooflineOptions(dense_mlp_tp=np.ones(3)), "dense_mlp_tp) must be 1 (SGLang's --moe-dense-tp-size 1) or unset (the stage's TP), got an array of shape (3,)"),
])
def test_big_or_array_values_refused_by_name(make, needle):
    with pytest.raises(UserError) as e:
        make()
    assert needle in str(e.value)


def test_is_finite_is_exact_for_integers():
    """The one finiteness rule: an integer of any size is finite (compared with bounds
    exactly by the caller); floats that are NaN or infinite, bools, text, complex are not."""
    assert [is_finite(v) for v in (HUGE, -HUGE, 0, np.int64(3), 0.5, np.float32(2), 1e308)] == [True] * 7
    assert [is_finite(v) for v in (float("nan"), float("inf"), np.float64("-inf"), True,
                                   "1", None, 1j, np.timedelta64(1, "s"))] == [False] * 8
    # the checks it serves still take what they took: the skew check, its bounds exact
    assert check_skew(1) == 1.0 and check_skew(np.float32(2)) == 2.0
    with pytest.raises(UserError, match="got an integer of 401 digits"):
        check_skew(HUGE)


def test_known_lists_a_bounded_number_of_names():
    """A user's file of 50,000 GPUs named them all in one refusal (about 450 kB); now the
    first 40, and how many more."""
    text = known(f"G{i:05}" for i in range(50_000))
    assert text.startswith("'G00000', 'G00001', ") and text.endswith("'G00039' and 49,960 more")
    assert len(text) < KNOWN_LENGTH + 100
    assert known(["b", "a"]) == "'a', 'b'"
    long_names = [c * 190 for c in "abcdefghij"]   # 10 names of 192 characters with quotes
    shown = known(long_names)
    assert shown.endswith(" and 5 more") and shown.count("'") == 10


def test_many_gpus_in_a_file_read_in_linear_time(tmp_path):
    """Each entry was read against a fresh copy of every GPU before it ({**base, **out}):
    20,000 entries copied 200 million dictionary items (minutes); now a live view. The
    bound is generous (the read itself takes about 1.4 s of CPU) and counts this process's
    CPU time, not the wall clock, so a loaded machine does not fail it (24.6 s wall at
    load 20)."""
    n = 20_000
    path = tmp_path / "many.toml"
    path.write_text("".join(f'[gpu."G{i}"]\nderive_from = "{"H100-SXM" if i == 0 else f"G{i - 1}"}"\n'
                            f'source = "x"\n' for i in range(n)))
    start = time.process_time()
    gpus = load_gpu_file(path)
    assert time.process_time() - start < 20
    assert len(gpus) == n and gpus[f"G{n - 1}"].sms == get_gpu("H100-SXM").sms


class RaisingRepr:
    def __repr__(self):
        raise RuntimeError("repr")


@pytest.mark.parametrize(("kw", "needle"), [
    ({"memory_reserve": RaisingRepr()}, "memory reserve must be a fraction in [0, 1), got a RaisingRepr"),
    ({"overlap_collectives": RaisingRepr()}, "overlap_collectives must be true or false, got a RaisingRepr"),
])
def test_roofline_options_show_values_by_describe(kw, needle):
    """Two refusals showed the value by repr: a __repr__ that raises raised RuntimeError
    through them; now compute.validate.describe (and the reserve's finiteness is is_finite)."""
    with pytest.raises(UserError) as e:
        RooflineOptions(**kw)
    assert needle in str(e.value)
    assert RooflineOptions(memory_reserve=0.25).memory_reserve == 0.25
