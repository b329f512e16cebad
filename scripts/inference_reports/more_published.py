"""The further published figures: gpt-fast's batch-1 decode rates of Llama-2-70B on A100,
MLPerf Inference v5.1's Offline results on DGX B200 and GB200 / GB300 NVL72 and TensorRT-LLM's
gpt-oss-120b tech blog on B200 (``tests/compute/data/published_serving_more.csv``) against the
roofline, through the TensorRT-LLM report's conversions, and the calibrated profile beside it as
an extrapolation.
"""

from __future__ import annotations

import csv

from inference_reports.common import PROFILE, ROOT
from inference_reports.tables import left_out_lines, margin_lines, render
from inference_reports.trtllm import profile_comm, trtllm_prediction

#: The data file (in the repository; tests/compute/test_published_more.py reads it too).
MORE = ROOT / "tests" / "compute" / "data" / "published_serving_more.csv"
#: The phases (both measured in output tokens/s), converted as ``trtllm_prediction`` does.
PHASES = ("throughput", "decode_rate")


def more_rows() -> list[dict]:
    """The rows of :data:`MORE` (its header documents the columns and readings)."""
    with open(MORE) as fh:
        return list(csv.DictReader(line for line in fh if not line.startswith("#")))


def profile_scope(row: dict) -> str:
    """How far ``row`` is from what the profile was fitted on (vLLM FP16, Llama-2-70B, TP 8,
    one DGX-H100): every row is another engine on another GPU."""
    parts = ["engine", "GPU"]
    if row["model"] != "Llama-2-70B":
        parts.append("model")
    return "extrapolation: " + ", ".join(parts)


def _system(row: dict) -> str:
    par = f"TP {row['tp']}"
    if row["ep"] != "1":
        par += f" EP {row['ep']} DP-attn {row['attention_dp']}"
    return f"{row['gpu_measured']}, {par}"


def _what(row: dict) -> str:
    """``decode b1 ctx 6`` / ``Offline 1/265 (prompt a floor)`` / ``max load 1024/2048``."""
    if row["phase"] == "decode_rate":
        return f"decode b{row['batch']} ctx {row['context']}"
    if row["id"].startswith("mlperf"):
        return f"Offline {row['prompt']}/{row['output']} (prompt a floor)"
    return f"max load {row['prompt']}/{row['output']}"


#: The report's groups of rows, by source.
GROUPS = (
    ("gpt-fast, Llama-2-70B on A100 at batch 1", lambda r: r["id"].startswith("gf-")),
    ("MLPerf Inference v5.1 Offline, Llama-2-70B (prompt length a 1-token floor)",
     lambda r: r["id"].startswith("mlperf51-l2-")),
    ("MLPerf Inference v5.1 Offline, DeepSeek-R1 (prompt length a 1-token floor)",
     lambda r: r["id"].startswith("mlperf51-r1-")),
    ("TensorRT-LLM's gpt-oss-120b blog on B200", lambda r: r["id"].startswith("trtblog9-")),
)


def more_published(markdown: bool) -> list[str]:
    """Every row: measured, roofline and margin (roofline / measured: >= 1 where the bound
    holds), the profile's figure and error (every row an extrapolation); the excluded rows
    with their reason; a summary by source."""
    from compute.profiles import get_profile
    from compute.roofline_options import RooflineOptions

    rows = more_rows()
    used = [r for r in rows if r["status"] == "used"]
    options = RooflineOptions(profile=get_profile(PROFILE))
    head = ["row", "system", "what", "measured tok/s", "roofline", "margin", PROFILE, "error",
            "profile scope"]
    table_rows, margins, errors = [], [], []
    for r in used:
        roof, mine = trtllm_prediction(r), float(r["measured"])
        cal = trtllm_prediction(r, options, profile_comm(r))
        margins.append((roof / mine, r))
        errors.append((cal / mine - 1, r))
        table_rows.append([r["id"], _system(r), _what(r), f"{mine:,.2f}", f"{roof:,.2f}",
                           f"{roof / mine:.2f}x", f"{cal:,.2f}", f"{cal / mine - 1:+.1%}",
                           profile_scope(r)])
    out = render(head, table_rows, markdown)
    summary = margin_lines(used, margins, GROUPS)
    ring = [r for r in used if not r["fabric"] and r["tp"] != "1"]
    if ring:
        pairs = ", ".join(
            f"{r['id']} {trtllm_prediction(r) / float(r['measured']):.2f}x -> "
            f"{trtllm_prediction(r, None, profile_comm(r)) / float(r['measured']):.2f}x"
            for r in ring)
        summary.append(
            f"The {len(ring)} rows at TP > 1 without a fabric are costed with netmodel's default "
            "GPU-only collectives, a lower bound over the scale-up switch's algorithms, as "
            "netmodel infer costs them without --fabric or --scenario; with the h100-dgx "
            "scenario's collectives on the row's GPU (NCCL's algorithms, one-shot for small "
            f"messages) the margins are: {pairs}. The bound charges a small all-reduce one "
            "0.6 us step and its bytes, less than the scenario's one-shot: at batch 1 the "
            "scenario's margins are the tighter.")
    worst = max(errors, key=lambda p: abs(p[0]))
    summary.append(
        f"{PROFILE} (fitted on 2023 vLLM FP16, Llama-2-70B, TP 8 on one DGX-H100) on the "
        f"{len(errors)} rows: every one an extrapolation (another engine on another GPU), so "
        f"no target applies; worst {worst[0]:+.1%} ({worst[1]['id']}), "
        f"{sum(p[0] < 0 for p in errors)} of {len(errors)} below measured.")
    summary += left_out_lines(rows, 2)
    return out + ([f"- {s}" for s in summary] if markdown else summary)
