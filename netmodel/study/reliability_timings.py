"""How long recovery from a failure takes on a cluster: the timings the availability
models (:mod:`netmodel.study.availability`) and the blast-radius table's recovery paths
(:mod:`netmodel.study.blast_radius`) read, apart from what a failure takes down
(:mod:`netmodel.study.reliability_cluster`).

A spare (or a repaired GPU) loads its instance's weight shard before it serves
(:attr:`RecoveryTimes.reload_s`): from a peer over the fabric or from storage, as the
failure catalog says (:meth:`~netmodel.study.reliability_catalog.Catalog.load_bandwidth`).
A hot spare serves after detection, circuit reconfiguration (OCS), the reload and warm-up
(:meth:`RecoveryTimes.swap_s`); an instance without one waits for detection, the part's
repair, the reload and warm-up (:meth:`RecoveryTimes.repair_down_s`); a spare that stood
in returns to the pool once the part is repaired (:meth:`RecoveryTimes.hold_s`).

>>> from netmodel.study.reliability_cluster import build_cluster
>>> r = recovery_times(build_cluster("lite-flat", "Llama-3-70B", "decode"))
>>> r.shard_bytes / 1e9, round(r.reload_s, 4), r.reconfiguration_s
(8.989458432, 0.097, 0.0)
>>> round(r.swap_s(), 4), round(r.hold_s("gpu-die") / 3600, 4)
(90.097, 24.0083)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from compute.errors import UserError
from compute.validate import describe
from netmodel.study.reliability_catalog import Catalog

__all__ = ["RecoveryTimes", "recovery_times"]


@dataclass(frozen=True)
class RecoveryTimes:
    """A cluster's recovery timings (build it with :func:`recovery_times`)."""

    catalog: Catalog           #: the cluster's failure and repair figures
    reconfiguration_s: float   #: seconds to re-set circuits (the slowest OCS; 0 without OCS)
    shard_bytes: float         #: weight bytes per GPU of an instance (what a spare loads)
    load_bandwidth: float      #: bytes/s a spare loads its shard at (:func:`recovery_times`)

    @property
    def reload_s(self) -> float:
        """Seconds a spare (or a repaired GPU) takes to load its weight shard."""
        return self.shard_bytes / self.load_bandwidth

    def swap_s(self) -> float:
        """Seconds from a failure to a hot spare serving: detection, circuit
        reconfiguration (OCS), loading the weight shard (:attr:`reload_s`), warm-up."""
        c = self.catalog
        return c.detection_s + self.reconfiguration_s + self.reload_s + c.warmup_s

    def repair_down_s(self, cls: str) -> float:
        """Seconds an instance waits without a spare: detection, repair, reload, warm-up."""
        c = self.catalog
        return c.detection_s + c.repair_s(cls) + self.reload_s + c.warmup_s

    def hold_s(self, cls: str) -> float:
        """Seconds a spare stands in before the repaired part returns to the pool."""
        return self.catalog.detection_s + self.catalog.repair_s(cls)

    def restart_s(self) -> float:
        """Seconds an instance a failure slows is out before it serves degraded, where the
        failure took a link of its communicator (a member's own link, port or circuit:
        :func:`~netmodel.study.reliability_recovery.restarts`): NCCL has no failover, so
        the communicator aborts and the serving engine restarts on the links left
        (detection, the circuits re-set on an OCS fabric, the weight reload, warm-up: the
        same span as :meth:`swap_s`, the one figure both read)."""
        return self.swap_s()

    def slowed_s(self, cls: str) -> float:
        """Seconds an instance a failure of ``cls`` slows stays slow where no spare is
        swapped in: detection and the part's repair (it keeps serving, so there is no
        shard to reload and no warm-up); the same span as :meth:`hold_s`, both ending
        with the repair."""
        return self.hold_s(cls)


def recovery_times(cluster: Any) -> RecoveryTimes:
    """The recovery timings of ``cluster`` (a
    :class:`~netmodel.study.reliability_cluster.Cluster`), worked out once per cluster (a
    cluster under other figures,
    :meth:`~netmodel.study.reliability_cluster.Cluster.with_catalog`, has its own).

    The load bandwidth: from a peer over the fabric (the catalog's ``load_from =
    "fabric"``) a copy moves at the scale-up link's line rate times the share of it the
    collective model gives payload on that link, read where the collective model reads it
    (the scenario's calibration resolved for this fabric's GPUs: ``scaleup_efficiency``,
    20.6 of NVLink4's 25 GB/s in NCCL's tuning); from storage, the catalog's storage
    bandwidth of a host over the GPUs of the cell's largest host
    (:meth:`~netmodel.study.reliability_catalog.Catalog.host_size`: a spare shares its
    host's storage ports with the host's other GPUs).

    >>> from netmodel.study.reliability_cluster import build_cluster
    >>> c = build_cluster("lite-flat", "Llama-3-70B", "decode")
    >>> c.gpu.scaleup_bandwidth / 1e9, round(recovery_times(c).load_bandwidth / 1e9, 2)
    (112.5, 92.7)
    """
    if not isinstance(getattr(cluster, "catalog", None), Catalog):   # a Cluster has one
        raise UserError(f"cluster must be a netmodel.study.reliability_cluster.Cluster "
                        f"(build_cluster), got {describe(cluster)}")
    out = cluster.__dict__.get("_recovery_times")
    if out is None:
        cat = cluster.catalog
        bw = cat.load_bandwidth(cluster.gpu, cat.host_size(cluster.graph, cluster.gpu))
        if cat.load_from == "fabric":
            bw *= cluster.calibration.resolve(cluster.graph).scaleup_efficiency
        out = RecoveryTimes(
            catalog=cat,
            reconfiguration_s=max((d["reconfiguration_time"]
                                   for _, d in cluster.graph.nodes(data=True)
                                   if d["kind"] == "ocs"), default=0.0),
            shard_bytes=float(cluster.best.memory.weights),
            load_bandwidth=bw)
        cluster.__dict__["_recovery_times"] = out
    return out
