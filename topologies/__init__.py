"""Fabrics as networkx graphs: direct-connect, flat and hierarchical switched, optical
circuit-switched. See :mod:`topologies.schema` for the graph schema every builder obeys."""

from topologies.schema import EDGE_KEYS, MEDIA, NODE_KINDS, gpu_nodes, validate

__all__ = ["EDGE_KEYS", "MEDIA", "NODE_KINDS", "gpu_nodes", "validate"]
