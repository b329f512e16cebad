"""``netmodel infer``/``search`` and ``netmodel serve`` write their tokens/s/SM (and serve's
requests/s/SM, output tokens/s/SM) by sig3, the one rule for a figure of merit said in
words: three significant figures, trailing zeros kept. They wrote .4g ('7.562 tokens/s/SM',
'0.03135 requests/s/SM'). Each printed figure is checked against the same command's --json
(the unrounded value) and, independently of sig3, for its count of significant figures.
"""

import json
import re

import pytest
from click.testing import CliRunner

from netmodel.cli.main import cli
from netmodel.study.summary_words import sig3


def run(*args):
    out = CliRunner().invoke(cli, list(args))
    assert out.exit_code == 0, out.output
    return out.output


def figures(text: str) -> int:
    """Significant figures of a printed number below 1,000 ("7.56" 3, "0.0314" 3)."""
    return len(text.replace(".", "").lstrip("0"))


def test_infer_text_writes_tokens_per_sm_by_sig3():
    args = ["infer", "--model", "Llama-3-70B", "--gpu", "Lite", "--tp", "16", "--batch", "165",
            "--phase", "decode"]
    doc = json.loads(run(*args, "--json"))
    # the figure is tokens/s over the instance's SMs: 16 Lites
    assert doc["tokens_per_s_per_sm"] == pytest.approx(doc["tokens_per_s"] / doc["sms"], rel=1e-12)
    got = re.search(r"; (\S+) tokens/s/SM \((\d+) SMs\)", run(*args))
    assert got[1] == sig3(doc["tokens_per_s_per_sm"])     # the old code wrote '7.562'
    assert figures(got[1]) == 3 and int(got[2]) == doc["sms"]


def test_search_best_line_and_per_tp_column_by_sig3():
    args = ["search", "--model", "Llama-3-70B", "--gpu", "H100-SXM", "--phase", "prefill"]
    doc = json.loads(run(*args, "--json"))
    text = run(*args)
    best = re.search(r"; (\S+) tokens/s/SM \(", text)[1]
    assert best == sig3(doc["best"]["tokens_per_s_per_sm"])
    table = text.split("best per TP degree:\n")[1].splitlines()[1:]
    rows = {int(line.split()[0]): line.split()[-1] for line in table if line.strip()}
    assert len(rows) == len(doc["by_tp"]) >= 2
    for p in doc["by_tp"]:
        assert rows[p["tp"]] == sig3(p["tokens_per_s_per_sm"])   # old: '49.43', '42.33', ...
        assert figures(rows[p["tp"]]) == 3


def test_serve_pools_line_by_sig3():
    args = ["serve", "--scenario", "lite-flat", "--model", "Llama-3-70B"]
    doc = json.loads(run(*args, "--json"))
    line = next(x for x in run(*args).splitlines() if x.strip().startswith("pools:"))
    got = re.search(r"; (\S+) requests/s/SM, (\S+) tokens/s/SM \((\S+) output tokens/s/SM\)",
                    line).groups()
    keys = ("requests_per_s_per_sm", "tokens_per_s_per_sm", "output_tokens_per_s_per_sm")
    assert got == tuple(sig3(doc[k]) for k in keys), line   # old: '0.03135', '47.43', '0.4076'
    assert [figures(g) for g in got] == [3, 3, 3]
