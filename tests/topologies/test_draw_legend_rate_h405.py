"""The picture's legend gives a link's bandwidth as the fabric has it: a Lite's 112.5 GB/s
over 4 planes or OCS ports is 28.125 GB/s a link, which ``.4g`` printed '28.12' (half-even
on an exact binary value), a figure a reader re-deriving 112.5 / 4 takes for a different
link. Figures with no short exact form keep four significant figures (450 / 7 = 64.29)."""

from __future__ import annotations

import pytest

from topologies import build
from topologies.draw import figure


def _rate_labels(spec: str) -> list[str]:
    ax = figure(build(spec)).axes[0]
    return [h.get_label() for h in ax.get_legend().legend_handles
            if h.get_label().startswith(("thinnest", "widest", "every"))]


@pytest.mark.parametrize(("spec", "labels"), [
    # 112.5 GB/s of a Lite over 4 planes / 4 OCS ports: 28.125 GB/s a link
    ("flat:n=16,gpu=Lite", ["every link: 28.125 GB/s per direction"]),
    ("ocs:gpus=16,gpu=Lite", ["every link: 28.125 GB/s per direction"]),
    # a full mesh of 8 H100: 450 / 7 GB/s has no short exact form
    ("full-mesh:n=8", ["every link: 64.29 GB/s per direction"]),
    # a Lite group on a fat tree of H200: NIC share 50 / 4 = 12.5, whole H200 NIC 50
    ("lite-groups:base=[fat-tree:k=4,gpu=H200-SXM],lites=4",
     ["thinnest: 12.5 GB/s per direction", "widest: 50 GB/s per direction"]),
])
def test_legend_bandwidth_is_the_links_own(spec, labels):
    assert _rate_labels(spec) == labels


@pytest.mark.parametrize(("spec", "head"), [
    # a 2-GPU ring on 4 ports: one pair joined by two circuits (one through each of 2 OCS)
    ("ocs:gpus=2,logical=ring", "ocs-circuit (2 circuits on 1 GPU pair),"),
    # one port each, one pair set by hand: one circuit
    ("ocs:gpus=2,ports=1,logical=0-1", "ocs-circuit (1 circuit on 1 GPU pair),"),
    # a 16-GPU ring: 16 pairs, one circuit each
    ("ocs:gpus=16,logical=ring", "ocs-circuit (16 circuits on 16 GPU pairs),"),
])
def test_circuit_legend_counts_in_words(spec, head):
    """Was '(2 circuits on 1 GPU pairs)' and '(1 circuits on 1 GPU pairs)'."""
    ax = figure(build(spec)).axes[0]
    (label,) = [h.get_label() for h in ax.get_legend().legend_handles
                if h.get_label().startswith("ocs-circuit")]
    assert label.split("\n")[0] == head
