"""Does the fabric-aware search cost each instance as the blast radius re-costs it?

For every shipped scenario x catalog model x phase, with parallelism ``auto`` and ``all``:
the cluster's searched configuration (:func:`~netmodel.study.reliability_cluster.
build_cluster`) and its first instance re-costed on the healthy fabric as placed
(:meth:`~netmodel.study.instance_cost.InstanceCosting.rebalanced` of ``recost_graph(())``,
the path a failure's re-costing takes). Prints each pair whose step time (to the bit) or
batch differ, then the count that agree. Exit status 1 if any differ.

    python scripts/check_search_as_placed.py [--parallelism auto|all ...]
"""

from __future__ import annotations

import argparse
import sys
import time

from compute.errors import NothingFeasible
from compute.models import model_names
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.scenario_catalog import scenario_names


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parallelism", nargs="+", default=["auto", "all"],
                    choices=["tp", "auto", "all"])
    args = ap.parse_args(argv)
    start = time.perf_counter()
    same = differ = none = 0
    for parallelism in args.parallelism:
        for scenario in scenario_names():
            for model in model_names():
                for phase in ("prefill", "decode"):
                    try:
                        c = build_cluster(scenario, model, phase=phase,
                                          parallelism=parallelism)
                    except NothingFeasible:
                        none += 1
                        continue
                    inst = c.instances[0]
                    placed = c.rebalanced(c.recost_graph((), inst), inst)
                    b = c.best
                    if placed is not None and (placed.batch, placed.latency) == (
                            b.batch, b.latency):
                        same += 1
                        continue
                    differ += 1
                    got = "none" if placed is None else \
                        f"batch {placed.batch}, {placed.latency!r} s"
                    print(f"{parallelism} {scenario} {model} {phase}: {c.parallelism} searched "
                          f"batch {b.batch}, {b.latency!r} s; placed {got}")
    print(f"searched == placed re-cost: {same} of {same + differ} "
          f"({none} with nothing feasible), {time.perf_counter() - start:.1f} s")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
