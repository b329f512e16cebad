"""topology show prints bandwidths with the one formatter of rates
(compute.units.format_quantity): its own copy of the ladder printed '1.25e+05 B/s' below
1 MB/s, '1000 GB/s' for 999.96 GB/s and '1000 TB/s' for 1 PB/s."""

from __future__ import annotations

import pytest

from tests.netmodel.cli_helpers import run_cli


@pytest.mark.parametrize(("bandwidth", "link", "bisection"), [
    # a single switch of 8 GPUs: each GPU injects its link's rate; the bisection is the
    # 4 links of one half, 4 x the link
    ("125kB/s", "125 kB/s", "500 kB/s"),          # link_bandwidth's least: 1 Mb/s
    ("999.96GB/s", "1 TB/s", "4 TB/s"),           # 3.99984 TB/s to 4 digits
    ("1PB/s", "1 PB/s", "4 PB/s"),                # link_bandwidth's most
    ("450GB/s", "450 GB/s", "1.8 TB/s"),
])
def test_show_rates(bandwidth, link, bisection):
    r = run_cli(["topology", "show", f"single-switch:n=8,bandwidth={bandwidth}"])
    assert r.exit_code == 0, r.output
    lines = {ln.split(":", 1)[0]: ln for ln in r.output.splitlines()}
    assert lines["injection"] == (f"injection:   {link} per GPU per direction (switch tier 0: "
                                  f"{link})")
    assert lines["bisection"] == f"bisection:   {bisection} per direction (closed form)"
