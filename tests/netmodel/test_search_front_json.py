"""``search --front --json``: --front adds the Pareto front to the text; --json always
carries it (docs/output-formats.md's shape has ``front`` without the flag), so the flag did
nothing there and the run went ahead as if it were not given. Refused in one line now."""

import json

from tests.netmodel.cli_helpers import one_line_error, run_cli

ARGS = ["search", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--phase", "decode",
        "--max-batch", "8", "--tp", "1"]


def test_front_with_json_is_refused():
    one_line_error(run_cli([*ARGS, "--front", "--json"]), "--front", "--json")


def test_json_alone_carries_the_front_and_text_front_prints_it():
    r = run_cli([*ARGS, "--json"])
    assert r.exit_code == 0, r.output
    front = json.loads(r.output)["front"]
    assert front and all(p["tp"] == 1 for p in front)
    r = run_cli([*ARGS, "--front"])
    assert r.exit_code == 0 and f"Pareto front ({len(front)} points)" in r.output
