"""serving.json's rows carry the ratio to the baseline that serving.csv has (vs_baseline:
serving.csv and every other part's JSON had it, serving.json had none)."""

from __future__ import annotations

import csv
import io
import json


def test_serving_json_has_the_csv_ratio():
    from netmodel.study.compare import run_compare
    from netmodel.study.lite_gpu_files import _serving_files
    from netmodel.study.lite_gpu_parts import serving_part

    fab = run_compare(["Llama-3-8B"], ["h100-dgx", "lite-flat"], ["decode"], max_batch=64)
    part = serving_part(fab, "Llama-3-8B", workloads=["coding"])
    files = _serving_files(part, plot=False)
    rows = list(csv.DictReader(io.StringIO(files["serving.csv"].decode())))
    doc = json.loads(files["serving.json"])
    assert [r["scenario"] for r in doc["serving"]] == [r["scenario"] for r in rows]
    for r, j in zip(rows, doc["serving"], strict=True):
        assert float(r["vs_baseline"]) == j["vs_baseline"]
        base = next(x for x in doc["serving"] if x["scenario"] == doc["baseline"])
        # by hand: the row's service tokens/s/SM over the baseline's
        assert j["vs_baseline"] == j["tokens_per_s_per_sm"] / base["tokens_per_s_per_sm"]
    assert doc["serving"][0]["scenario"] == doc["baseline"] == "h100-dgx@H100-SXM"
    assert doc["serving"][0]["vs_baseline"] == 1.0
