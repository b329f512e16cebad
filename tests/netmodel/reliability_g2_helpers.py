"""Clusters the reliability tests read and never change, built once per test process.

``build_cluster`` runs a fabric search (cached by the library) and gives a new
:class:`~netmodel.study.reliability_cluster.Cluster` each call, whose failure effects, event
kinds and recovery times are worked out again on first read (0.2-1.5 s CPU a shipped
scenario). Tests that only read a shipped scenario's cluster share this one; a test that
patches what a cluster is built from (monkeypatch) or asks for a fresh one builds its own.
"""

import functools

from netmodel.study.reliability_cluster import build_cluster


@functools.cache
def shipped_cluster(name: str, model: str = "Llama-3-70B", phase: str = "decode",
                    gpus: int | None = None):
    """``build_cluster(name, model, phase, gpus=gpus)``, built once per process."""
    return build_cluster(name, model, phase, gpus=gpus)
