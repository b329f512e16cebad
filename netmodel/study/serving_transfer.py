"""The KV-cache transfer of disaggregated serving (:mod:`netmodel.study.serving`): seconds to
send a prefill batch's caches between a prefill and a decode GPU over the scenario's
fabric, one linear fit of the pair's ``send-recv`` per scenario and pair of instance sizes.
"""

from __future__ import annotations

import numpy as np

from compute.errors import UserError

__all__ = ["KvTransfer"]


class KvTransfer:
    """Seconds to send ``nbytes`` between a prefill and a decode GPU (see the docstring of
    :mod:`netmodel.study.serving`), elementwise; one linear fit per scenario and pair of
    instance sizes."""

    def __init__(self, collectives, override=None):
        self.collectives, self.override, self._fits = collectives, override, {}
        self.sides = None   # (prefill's, decode's) collectives where the pools' GPUs differ

    def time(self, nbytes: float | np.ndarray, prefill_gpus: int, decode_gpus: int,
             sides: tuple | None = None) -> np.ndarray:
        """Seconds to move ``nbytes`` a pair; with ``sides`` (the bytes a prefill GPU sends,
        the bytes a decode GPU receives) and pools of two GPU types, the slower of each
        side's bytes at its own pair's rate (an H100 sending to 8 Lites is limited by its
        own 50 GB/s NIC, not by a Lite's 12.5 GB/s times the H100's bytes)."""
        n = np.asarray(nbytes, dtype=float)
        if self.override is not None:
            return np.asarray(self.override.collective_time("send-recv", n, 2), dtype=float)
        from netmodel.collectives.cost import lines_time

        out = np.zeros_like(n)
        if sides is not None and self.sides is not None:
            for coll, b in zip(self.sides, sides, strict=True):
                b = np.asarray(b, dtype=float)
                out = np.maximum(out, lines_time(*self._fit(coll, prefill_gpus, decode_gpus), b))
            return np.where(n > 0, out, 0.0)
        for coll in self.collectives:
            out = np.maximum(out, lines_time(*self._fit(coll, prefill_gpus, decode_gpus), n))
        return np.where(n > 0, out, 0.0)

    def _fit(self, coll, gp: int, gd: int):
        """``(a, b, lo, hi)`` of the pair's ``send-recv`` candidates (``time = a + b
        bytes`` at the sizes ``lo < bytes <= hi`` each runs at: NCCL's send/recv picks LL or
        Simple by size; :func:`~netmodel.collectives.cost.lines_time`). The
        pools sit on the two halves of the fabric (the scenario's placement of two groups
        of half its GPUs): the pair is the first GPU of each. On an optical circuit-switched
        fabric a circuit is set between the pair (the scenario's circuits of a 2-GPU
        group)."""
        key = coll.scenario.label
        hit = self._fits.get(key)
        if hit is None:
            from netmodel.collectives.cost import GroupCut
            from netmodel.collectives.model import candidate_lines
            from netmodel.collectives.placement import partition

            model = coll.model(2)
            if coll.scenario.is_ocs:
                pair = model.group(2)
            else:
                halves = partition(model.graph, coll.gpus // 2, coll.scenario.placement,
                                   gpus=model.router.gpu_list)
                pair = (halves[0][0], halves[1][0])
            try:
                cands = model.candidates("send-recv", tuple(pair))
            except GroupCut as exc:
                raise UserError(f"scenario {coll.scenario.label!r}: no path between the prefill "
                                f"and the decode pool ({exc})") from None
            hit = candidate_lines(model, cands)
            self._fits[key] = hit
        return hit
