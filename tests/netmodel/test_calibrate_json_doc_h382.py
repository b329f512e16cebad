"""docs/output-formats.md names every top-level key of ``netmodel calibrate --json``: the
page listed ``parameters``, ``fitted``, the errors and ``points`` but not ``profile``,
``out``, ``collectives`` or ``notes``, which the command prints too."""

import json
import re
from pathlib import Path

from click.testing import CliRunner

from compute.profiles import get_profile
from netmodel.cli import main as cli_main

DOC = Path(__file__).resolve().parents[2] / "docs" / "output-formats.md"


def _documented_keys() -> set[str]:
    """The backticked names of the paragraph that describes ``calibrate --json``, up to
    the per-measurement keys (``latency_s`` and after, which describe a point)."""
    text = DOC.read_text()
    start = text.index("`calibrate --json`")
    para = text[start:text.index("\n\n", start)]
    head = para[:para.index("`latency_s`")]
    return set(re.findall(r"`([a-z_]+)`", head))


def test_every_calibrate_json_key_is_documented(tmp_path, monkeypatch):
    monkeypatch.setitem(cli_main._COMMANDS, "calibrate",
                        ("netmodel.cli.calibrate", "calibrate",
                         "Fit an engine profile to measured latencies."))
    rows = get_profile("vllm-dgx-h100").measurements
    lines = ["model,gpu,tp,batch,phase,prompt,context,latency_s"] + [
        f"{m.model},{m.gpu},{m.tp},{m.batch},{m.phase},{m.prompt or ''},"
        f"{m.context or ''},{m.latency_s}" for m in rows]
    f = tmp_path / "m.csv"
    f.write_text("\n".join(lines) + "\n")
    r = CliRunner().invoke(cli_main.cli, ["calibrate", "--measurements", str(f), "-o",
                                          str(tmp_path / "p.toml"), "--json"])
    assert r.exit_code == 0, r.output
    keys = set(json.loads(r.stdout))
    assert keys <= _documented_keys(), sorted(keys - _documented_keys())
