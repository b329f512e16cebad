"""The joint splits' linear programmes of one algorithm's steps, sized before any is solved
(:func:`netmodel.collectives.route_joint.check_joint_work`): past NETMODEL_MAX_JOINT_WORK
the collective is refused in one line, exit 2 (a pairwise all-to-all on an 8x4x4 torus
solved its programmes for 299 s)."""

from __future__ import annotations

from netmodel.collectives.route_joint import MAX_JOINT_WORK
from tests.netmodel.cli_helpers import one_line_error, run_cli

ARGS = ["collective", "all-to-all", "--fabric", "torus:dims=4x4", "--group", "16",
        "--size", "1MiB", "--algorithm", "pairwise"]
# pairwise on 16 GPUs, i -> i + k for k = 1..15: k = 4 and 12 join every pair by a cable
# (a column neighbour of the 4x4 torus), the 13 others each a programme of 16 destinations
# over the torus's 32 cables, 64 directed links
WORK = 13 * 16 * 64


def test_refused_past_the_limit_in_one_line():
    r = run_cli(ARGS, env={"NETMODEL_MAX_JOINT_WORK": str(WORK - 1)})
    assert one_line_error(r) == (
        "error: pairwise all-to-all on 16 GPUs: about 13,312 flow variables of the joint "
        "splits of its 13 steps (destinations x 64 links a step, a linear programme each), "
        "over the limit of 13,311; use a smaller group or fabric, or raise "
        "NETMODEL_MAX_JOINT_WORK")


def test_runs_at_the_limit():
    r = run_cli(ARGS, env={"NETMODEL_MAX_JOINT_WORK": str(WORK)})
    assert r.exit_code == 0, r.output
    assert "algorithm: pairwise" in r.output


def test_the_8x4x4_all_to_all_is_refused_before_solving():
    """125 of its 127 steps, 128 destinations x 768 links each: 12,288,000, past the
    default 4,000,000 (a 4x4x4 torus's 1,499,136 run in about 2 s)."""
    assert MAX_JOINT_WORK == 4_000_000
    r = run_cli(["collective", "all-to-all", "--fabric", "torus:dims=8x4x4", "--group", "128",
                 "--size", "1MiB"])
    assert "about 12,288,000 flow variables" in one_line_error(r, "NETMODEL_MAX_JOINT_WORK")
