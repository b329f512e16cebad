"""compare's circuit-reconfiguration line names the OCS rows in the tables' order (audit
h232): it sorted the labels, so under the study's tables (Lite, Lite+NetBW, Lite+MemBW,
Lite+BW, Lite+BW+FLOPS) it read 'lite-ocs@Lite, lite-ocs@Lite+BW, lite-ocs@Lite+BW+FLOPS,
lite-ocs@Lite+MemBW, lite-ocs@Lite+NetBW'."""

from __future__ import annotations


def test_reconfiguration_line_follows_the_table():
    from netmodel.study.compare import run_compare

    gpus = ["Lite", "Lite+NetBW", "Lite+MemBW"]
    r = run_compare(["Llama-3-8B"], ["lite-ocs"], ["decode"], gpus=gpus, baseline=None)
    line = next(x for x in r.table().splitlines() if x.startswith("circuit reconfiguration"))
    # the OCS's reconfiguration_time, 10 ms (netmodel/data/scenarios/lite-ocs.toml), and
    # the layout circuits = "best" set for each instance size: 2 Lites a ring (no 2D
    # shape), 4 a 2x2 torus (2 x 2 x 1 = 4 steps an all-reduce where a ring of 4 takes 6,
    # on the same 2 circuits to each of 2 neighbours)
    hand = {2: "ring", 4: "torus"}
    sizes = {row.label: row.instance_gpus for row in r.rows}
    assert set(sizes.values()) <= set(hand)
    # the labels with the same time and circuits share one text ('... 10 ms each'), the
    # groups in the order of their first label
    groups: dict[str, list[str]] = {}
    for g in gpus:
        n = sizes[f"lite-ocs@{g}"]
        groups.setdefault(f"(circuits: {hand[n]} at {n} GPUs)", []).append(f"lite-ocs@{g}")
    said = [(" and ".join(labs) + " 10 ms each " if len(labs) == 2 else
             f"{labs[0]} 10 ms ") + text for text, labs in groups.items()]
    assert all(len(labs) <= 2 for labs in groups.values()), groups
    assert line.endswith(": " + "; ".join(said)), line
