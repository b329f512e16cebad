"""A typed ``--seed`` is refused where the placement is not random (h394).

Only ``random`` placement draws by the seed (:func:`netmodel.collectives.placement.partition`);
``costs --fabric ring:n=8 --seed 5 --placement contiguous`` and ``collective all-reduce
--fabric ring:n=8 --size 1M --seed 5`` (placement contiguous by default) exited 0 as if
the seed had been used. Now one line naming --seed and the placement, exit 2, nothing
written; the default seed stays silent, and with random placement a typed seed is taken."""

from __future__ import annotations

import pytest

from netmodel.collectives.names import PLACEMENTS
from tests.netmodel.cli_helpers import one_line_error, run_cli

FABRIC = "rail-optimized:domains=2"   # rail labels: every placement can place on it
NOT_SEEDED = [p for p in PLACEMENTS if p != "random"]


@pytest.mark.parametrize("placement", NOT_SEEDED)
@pytest.mark.parametrize("command", [["costs", "--sizes", "1M", "--groups", "4"],
                                     ["collective", "all-reduce", "--size", "1M",
                                      "--group", "4"]])
def test_a_typed_seed_with_a_placement_that_draws_nothing_is_refused(command, placement,
                                                                     tmp_path):
    out = tmp_path / "t.csv"
    extra = ["-o", out] if command[0] == "costs" else []
    r = run_cli([*command, "--fabric", FABRIC, "--placement", placement, "--seed", "5",
                 *extra])
    assert one_line_error(r) == (f"error: --seed 5 draws --placement random only; "
                                 f"--placement {placement} takes no seed: give --placement "
                                 f"random, or drop --seed")
    assert not out.exists()


def test_the_default_placement_is_named_as_the_default():
    r = run_cli(["collective", "all-reduce", "--fabric", "ring:n=8", "--size", "1M",
                 "--seed", "5"])
    assert one_line_error(r) == ("error: --seed 5 draws --placement random only; the "
                                 "placement is contiguous (--placement's default), which "
                                 "takes no seed: give --placement random, or drop --seed")
    r = run_cli(["costs", "--fabric", "ring:n=8", "--seed", "0"])   # typed, though the default
    one_line_error(r, "--seed 0 draws --placement random only")


def test_a_scenarios_own_placement_is_named():
    r = run_cli(["collective", "all-reduce", "--scenario", "h100-dgx", "--size", "1M",
                 "--seed", "5"])
    assert one_line_error(r) == ("error: --seed 5 draws --placement random only; scenario "
                                 "'h100-dgx@H100-SXM' places contiguous, which takes no "
                                 "seed: give --placement random, or drop --seed")


def test_the_default_seed_and_random_placement_still_run():
    base = ["collective", "all-reduce", "--fabric", "ring:n=8", "--size", "1M", "--group",
            "4"]
    r = run_cli(base)
    assert r.exit_code == 0, r.output
    assert "(gpu0, gpu1, gpu2, gpu3)" in r.output.splitlines()[0]   # contiguous
    groups = set()
    for seed in range(4):
        r = run_cli([*base, "--placement", "random", "--seed", seed])
        assert r.exit_code == 0, r.output
        groups.add(r.output.splitlines()[0])
    assert len(groups) > 1   # the seed draws the group
    r = run_cli(["costs", "--fabric", "ring:n=8", "--placement", "random", "--seed", "5"])
    assert r.exit_code == 0, r.output
