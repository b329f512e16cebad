"""collective --scenario refuses a group larger than the scenario's fabric naming --group.

With --fabric (and a switched scenario) the refusal read "--group '33': group size 33 is
larger than the fabric's 32 GPUs"; with an OCS scenario (lite-ocs) the scenario's model
set the instance's circuits, placing it, before the refusal was put on the flag, so it
read "group size 129 is larger ..." alone, naming no option.
"""

from __future__ import annotations

import pytest

from tests.netmodel.cli_helpers import one_line_error, run_cli


@pytest.mark.parametrize(("source", "size", "gpus"), [
    (["--scenario", "lite-ocs"], 129, 128),
    (["--scenario", "h100-dgx"], 33, 32),      # as before: guards
    (["--fabric", "h100-dgx"], 33, 32),
])
def test_too_large_a_group_names_the_option(source, size, gpus):
    line = one_line_error(run_cli(["collective", "all-reduce", *source, "--group", size]))
    assert line == (f"error: --group '{size}': group size {size} is larger than the "
                    f"fabric's {gpus} GPUs")
