"""The ASTRA-sim export's refusal of fewer NICs than GPUs a server says what it exports."""

import pytest

from compute.errors import UserError
from topologies import build
from topologies.astra_sim import astra_sim_network


def test_fewer_nics_refusal_names_what_is_allowed():
    with pytest.raises(UserError, match=r"^rail-optimized with fewer NICs than GPUs a server "
                                        r"\(nics_per_server 2\) .*; it exports nics_per_server "
                                        r"4 \(gpus_per_server: a NIC a GPU\) or domains 1$"):
        astra_sim_network(build("rail-optimized:domains=2,domain_size=4,gpus_per_server=4,"
                                "nics_per_server=2"))
    # what it names is exported: 2 dimensions (scale-up, scale-out) and 1 (scale-up alone)
    assert astra_sim_network(build("rail-optimized:domains=2,domain_size=4,gpus_per_server=4,"
                                   "nics_per_server=4")).npus_count == (4, 2)
    assert astra_sim_network(build("rail-optimized:domains=1,domain_size=4,gpus_per_server=4,"
                                   "nics_per_server=2")).npus_count == (4,)
