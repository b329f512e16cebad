"""The message sizes a collective cost model takes: how many one call may cost
(:data:`MAX_SIZES`, :func:`check_size_count`) and what is a size at all
(:func:`check_sizes`).

:mod:`netmodel.collectives.model` imports them for its entry points and keeps them
importable from there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from compute.limits import check

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["MAX_SIZES", "check_size_count", "check_sizes"]

#: The most message sizes one call costs at once (``NETMODEL_MAX_MESSAGE_SIZES``
#: overrides; :func:`check_size_count`). Measured with tracemalloc, 10**6 sizes on a
#: k=8 fat tree and a 4-server B200 rail-optimized fabric: ``collective_time`` peaks at
#: 24-33 bytes a size (all-reduce, all-to-all, all-gather, send-recv), ``sweep`` at 8
#: bytes a size per candidate (algorithm x protocol) and a size's names: 48-352 (an
#: all-reduce's candidates), so at most about 1.4 GB at this limit; 10**8 sizes raised
#: MemoryError. A search's grid asks at most
#: ``NETMODEL_MAX_SEARCH_CONFIGURATIONS`` (2,000,000) sizes a call.
MAX_SIZES = 4_000_000


def check_size_count(count: int, param: str = "nbytes") -> None:
    """Refuse ``count`` message sizes given as ``param`` above :data:`MAX_SIZES` (or
    ``NETMODEL_MAX_MESSAGE_SIZES``), before any is costed. Up to 1,000 sizes are never
    refused (the setting is not read on the hot path of a search's few sizes).

    >>> check_size_count(10 ** 8, "sizes")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: sizes: about 100,000,000 message sizes, over the limit of 4,000,000; cost fewer sizes a call (about 350 bytes each while costed), or raise NETMODEL_MAX_MESSAGE_SIZES
    """
    if count > 1000:   # the hot path (a search's one size, a grid's few) reads no setting
        check(param, "message sizes", count, MAX_SIZES, "NETMODEL_MAX_MESSAGE_SIZES",
              "cost fewer sizes a call (about 350 bytes each while costed)")


def check_sizes(nbytes: ArrayLike, *, bounded: bool = False, param: str = "nbytes"
                ) -> np.ndarray:
    """``nbytes`` as a float array, refusing zero, negative, NaN or infinite sizes and what is
    not a number of bytes (compute.comm.check_nbytes: bools, strings, complex, dates), and,
    ``bounded``, sizes above 1 PiB (:data:`compute.units.MAX_MESSAGE_BYTES`: more than any
    GPU's memory holds). The entry points that cost sizes a user gives
    (:meth:`FabricCostModel.cost <netmodel.collectives.model.FabricCostModel.cost>`,
    ``sweep``, ``curves``, :func:`netmodel.api.collective_time`, ``cost_table``,
    :func:`~netmodel.collectives.concurrent.concurrent_cost`) bound them; the collective-cost
    protocol that compute calls (:meth:`FabricCostModel.collective_time
    <netmodel.collectives.model.FabricCostModel.collective_time>`,
    ``moe_all_to_all_time``, and
    :func:`~netmodel.collectives.concurrent.concurrent_own_makespan`, which a scenario of
    instances = all charges a search with) does not: a search's grid costs every batch at
    once, including batches that fit in no GPU's memory (left out afterwards), whose messages
    may be larger. Every one refuses more than :data:`MAX_SIZES` sizes (``param``: the
    argument's name, said in the message; :func:`check_size_count`).

    Raises :class:`~compute.errors.UserError` (one line) for any size refused.

    >>> check_sizes([1e6, 2 ** 20])
    array([1000000., 1048576.])
    >>> check_sizes(2.0 ** 60, bounded=True)
    Traceback (most recent call last):
    ...
    compute.errors.UserError: message size 1.15292e+18 B is above 1 PiB (1,125,899,906,842,624 B), more than any GPU's memory holds
    """
    from compute.comm import check_nbytes

    if isinstance(nbytes, np.ndarray):   # counted before any copy
        check_size_count(nbytes.size, param)
    elif isinstance(nbytes, list | tuple):
        check_size_count(len(nbytes), param)
    n = np.asarray(check_nbytes(nbytes, positive=True), dtype=float)
    check_size_count(n.size, param)
    if bounded:
        from compute.units import check_message_bytes

        check_message_bytes(n)
    return n
