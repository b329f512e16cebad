"""One pool's chain whose GMRES does not settle is solved by BiCGSTAB before SuperLU.

512 H100 at TP 1 with 34 global spares (GPU failures 1e-3 an hour, one-day repairs) built
a chain of the busy count of 29,647 states whose GMRES stalled at 1.04e-11 of the 1e-11
asked; the one-pool path went straight to SuperLU, 116-170 s, where BiCGSTAB settles it in
0.08 s (the solve 0.54 s CPU, GMRES's iterations first; the availability figures read
agree to 4e-15). Here a smaller pool's chain is made to stall by a GMRES of 4 iterations.
"""

import numpy as np
import pytest

from netmodel.study import availability_busy as ab
from netmodel.study import availability_solve as asv
from netmodel.study.availability_analytic import analytic
from netmodel.study.availability_kinds import event_kinds
from netmodel.study.reliability_catalog import catalog
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.reliability_spares import SparePools


@pytest.fixture(scope="module")
def chain():
    # the 34-spare case's cluster and failures (64 H100 here) with 20 global spares: a
    # GPU failure asks 1 spare, a host's 1..8, the chain of the busy count 2,099 states,
    # captured as availability_busy hands it to the solver
    got = []

    def keep(n, rows, cols, vals, *args, **kw):
        got.append((n, np.asarray(rows), np.asarray(cols), np.asarray(vals)))
        return asv._steady_state(n, rows, cols, vals, *args, **kw)

    cat = catalog().with_(gpu_rate_per_hour=1e-3,
                          repair_hours={"gpu-die": 24, "gpu-package": 24})
    c = build_cluster("h100-dgx", "Llama-3-8B", "decode", gpus=64, catalog_=cat)
    mp = pytest.MonkeyPatch()
    mp.setattr(ab, "_steady_state", keep)
    try:
        analytic(event_kinds(c, "global"), SparePools("global", 20, 1, (20,), 1),
                 c.instances_total)
    finally:
        mp.undo()
    return max(got, key=lambda g: g[0])


def test_a_stalled_gmres_is_settled_by_bicgstab_as_superlu_reads(chain, monkeypatch):
    n, rows, cols, vals = chain
    assert n == 2_099 > asv.DIRECT_STATES
    # the balance equations as _steady_state builds them: GMRES of 4 iterations stalls
    from scipy.sparse import coo_matrix
    v = vals / vals.max()
    out = np.bincount(rows, weights=v, minlength=n)
    qt = (coo_matrix((v, (cols, rows)), shape=(n, n))
          - coo_matrix((out, (range(n), range(n))), shape=(n, n))).tocsc()
    assert asv._solve(-qt[1:, 1:], qt[1:, 0].toarray().ravel(), 4, fill=0) is None
    # SuperLU alone (BiCGSTAB taken out): the old path
    monkeypatch.setattr(asv, "_bicgstab", lambda *a: None)
    lu = asv._steady_state(n, rows, cols, vals, iterations=4)
    monkeypatch.undo()
    # BiCGSTAB settles it, and SuperLU is never reached
    import scipy.sparse.linalg as sla
    called = []
    real = asv._bicgstab
    monkeypatch.setattr(asv, "_bicgstab", lambda *a: called.append(1) or real(*a))
    monkeypatch.setattr(sla, "spsolve", lambda *a, **k: pytest.fail("SuperLU reached"))
    pi = asv._steady_state(n, rows, cols, vals, iterations=4)
    assert called == [1]
    assert pi.sum() == pytest.approx(1.0, abs=1e-12)
    # any probability read from it to 1e-9 (measured: 6.2e-12 in all), each state above
    # 1e-4 to 1e-9 of itself (7.7e-10; the rarest, 1.7e-6, to 1.5e-8: a residual of 1e-11)
    assert np.abs(pi - lu).sum() <= 1e-9
    big = lu > 1e-4
    assert np.abs(pi[big] / lu[big] - 1).max() <= 1e-9
