"""topology show writes a count of cables grouped and exactly, never in exponent form: a
fabric file may give a link part of a cable (``links`` is a float), and a sum of such counts
past a million was written by ``.6g``: three full-mesh edges of 700,000.25 cables each read
``cables: copper 2.1e+06`` (a reader takes it for 2,100,000) where they are 2,100,000.75."""

from __future__ import annotations

import json

from tests.netmodel.cli_helpers import run_cli


def test_a_fractional_count_past_a_million_is_written_whole(tmp_path):
    built = tmp_path / "mesh.json"
    assert run_cli(["topology", "export", "full-mesh:n=3", "-o", str(built)]).exit_code == 0
    doc = json.loads(built.read_text())
    for key in ("spec", "builder", "args"):   # a file of its own, not the builder's
        doc["graph"].pop(key, None)
    assert len(doc["edges"]) == 3
    for edge in doc["edges"]:
        edge["links"] = 700000.25
    path = tmp_path / "parts.json"
    path.write_text(json.dumps(doc))
    r = run_cli(["topology", "show", str(path)])
    assert r.exit_code == 0, r.output
    links = next(line for line in r.output.splitlines() if line.startswith("links:"))
    assert links == "links:       3 edges; cables: copper 2,100,000.75"   # 3 x 700,000.25
