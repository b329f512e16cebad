"""netmodel.evaluate() took options.dense_mlp_tp on a configuration without attention data
parallelism (plain TP) and ignored it, returning the plain-TP step as if it were not given;
``infer --dense-mlp-tp 1`` refuses the same. Refused now, naming the parameters; search
(whose re-evaluation of a row without attention DP keeps its dense MLPs over TP) and a
configuration with attention DP still run."""

import pytest

import netmodel
from compute.errors import UserError
from compute.roofline_options import RooflineOptions

DENSE_DP = RooflineOptions(dense_mlp_tp=1)


@pytest.mark.parametrize("extra", [{}, {"ep": 8}, {"pp": 2}])
def test_plain_attention_is_refused_naming_parameters(extra):
    with pytest.raises(UserError) as e:
        netmodel.evaluate("DeepSeek-V3", "H200-SXM", "decode", tp=8, batch=8,
                          options=DENSE_DP, **extra)
    msg = str(e.value)
    assert "dense_mlp_tp" in msg and "attention_dp" in msg and "--" not in msg


def test_with_attention_dp_it_is_honoured():
    on = netmodel.evaluate("DeepSeek-V3", "H200-SXM", "decode", tp=8, ep=8, attention_dp=8,
                           batch=64, options=DENSE_DP)
    off = netmodel.evaluate("DeepSeek-V3", "H200-SXM", "decode", tp=8, ep=8, attention_dp=8,
                            batch=64)
    assert on.dense_mlp_tp == 1 and off.dense_mlp_tp is None
    assert on.latency != off.latency


def test_search_still_runs_with_it():
    r = netmodel.search("DeepSeek-V3", "H200-SXM", "decode", options=DENSE_DP, max_batch=64)
    assert r.best is not None and r.best.attention_dp > 1 and r.best.dense_mlp_tp == 1
