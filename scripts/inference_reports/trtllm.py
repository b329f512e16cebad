"""The TensorRT-LLM report: NVIDIA's published TensorRT-LLM throughputs that
``published_serving.csv`` does not hold (``tests/compute/data/published_serving_trtllm.csv``:
0.6.1's static batches, the v1.0 overview's NVFP4 and FP8 rows, the DeepSeek-R1 guide's
8-GPU runs with expert parallelism and MTP, four MLPerf v4.1 Offline results) against the
roofline, and the calibrated profile
beside it as an extrapolation.
"""

from __future__ import annotations

import csv

from inference_reports.common import PROFILE, ROOT, scenario_comm
from inference_reports.published import published_model
from inference_reports.tables import left_out_lines, margin_lines, render

#: The data file (in the repository; tests/compute/test_published_trtllm.py reads it too).
TRTLLM = ROOT / "tests" / "compute" / "data" / "published_serving_trtllm.csv"
#: The phases (every one measured in output tokens/s).
PHASES = ("throughput", "static", "decode_rate")


def trtllm_rows() -> list[dict]:
    """The rows of :data:`TRTLLM` (its header documents the columns and conversions)."""
    with open(TRTLLM) as fh:
        return list(csv.DictReader(line for line in fh if not line.startswith("#")))


def row_comm(row: dict):
    """The collective model of ``row``: its ``--fabric`` as ``netmodel infer`` resolves it, or
    None (the default GPU-only lower bound) where the row names none."""
    if not row["fabric"]:
        return None
    from netmodel.cli.resolve import resolve_collectives

    return resolve_collectives(None, row["fabric"], None, None)[1]


def trtllm_prediction(row: dict, options=None, comm=None, batch: int | None = None) -> float:
    """Output tokens/s the roofline (``options`` None) or a profile gives ``row``, by its
    phase's conversion (the data file's header); ``comm`` None: :func:`row_comm`;
    ``batch``: another batch than the row's (a check that the batch no longer matters)."""
    from compute.evaluate_one import evaluate

    m, gpu, tp = published_model(row), row["gpu"], int(row["tp"])
    b = batch or int(row["batch"])
    kw = {"ep": int(row["ep"]), "attention_dp": int(row["attention_dp"]),
          "comm": row_comm(row) if comm is None else comm, "options": options}
    if row["phase"] == "decode_rate":
        step = evaluate(m, gpu, tp, b, "decode", context=int(row["context"]), **kw).latency
        return int(row["emitted"]) * b / step
    prompt, out = int(row["prompt"]), int(row["output"])
    first = evaluate(m, gpu, tp, b, "prefill", prompt=prompt, **kw).latency
    if row["phase"] == "static":   # the prefill gives the first token (e2e_latency's count)
        step = evaluate(m, gpu, tp, b, "decode", context=prompt + out // 2, **kw).latency
        return b * out / (first + (out - 1) * step)
    seconds = first + out * evaluate(m, gpu, tp, b, "decode", context=prompt + out // 2,
                                     **kw).latency
    return b * out / seconds


def mtp_rate(row: dict) -> float:
    """Output tokens/s of a ``decode_rate`` row whose source drafts ``emitted - 1`` tokens a
    step, costed through ``--mtp-tokens`` at the default acceptance (the verification pass
    and the drafts' passes counted; the acceptance of a chain of drafts is an estimate,
    compute/data/mtp.toml): not a bound."""
    from compute.evaluate_one import evaluate
    from compute.roofline_options import RooflineOptions

    r = evaluate(published_model(row), row["gpu"], int(row["tp"]), int(row["batch"]),
                 "decode", context=int(row["context"]), ep=int(row["ep"]),
                 attention_dp=int(row["attention_dp"]), comm=row_comm(row),
                 options=RooflineOptions(mtp_tokens=int(row["emitted"]) - 1))
    return r.tokens_per_step / r.latency


def profile_scope(row: dict) -> str:
    """How far ``row`` is from what the profile was fitted on (vLLM FP16, Llama-2-70B, TP 8,
    one DGX-H100): every row here is another engine, so every one is an extrapolation."""
    parts = ["engine"]
    if row["gpu"] != "H100-SXM":
        parts.append("GPU")
    if row["model"] != "Llama-2-70B":
        parts.append("model")
    return "extrapolation: " + ", ".join(parts)


def profile_comm(row: dict):
    """The profile's collectives for ``row``: the row's fabric where it names one (expert
    parallelism), else the fitted scenario's with the row's GPU (``h100-dgx@GPU``)."""
    if row["fabric"]:
        return row_comm(row)

    class _M:   # scenario_comm looks up the measurement's GPU
        gpu = row["gpu"]

    return scenario_comm()(_M)


def trtllm(markdown: bool) -> list[str]:
    """Every row: measured, roofline and margin (roofline / measured: >= 1 where the bound
    holds), the profile's figure and error (every row an extrapolation, said how); excluded
    rows with their reason; a summary by source."""
    from compute.profiles import get_profile
    from compute.roofline_options import DEFAULT_ACCEPTANCE, RooflineOptions

    rows = trtllm_rows()
    used = [r for r in rows if r["status"] == "used"]
    options = RooflineOptions(profile=get_profile(PROFILE))
    head = ["row", "system", "what", "measured tok/s", "roofline", "margin", PROFILE, "error",
            "profile scope"]
    table_rows, margins, errors = [], [], []
    for r in used:
        roof = trtllm_prediction(r)
        mine = float(r["measured"])
        margins.append((roof / mine, r))
        cal = trtllm_prediction(r, options, profile_comm(r)) if r["emitted"] == "1" else None
        err = "" if cal is None else f"{cal / mine - 1:+.1%}"
        if cal is not None:
            errors.append((cal / mine - 1, r))
        table_rows.append([r["id"], f"{r['gpu_measured']}, TP {r['tp']}"
                           + (f" EP {r['ep']}" if r["ep"] != "1" else "")
                           + (f" DP-attn {r['attention_dp']}" if r["attention_dp"] != "1"
                              else ""), _what(r), f"{mine:,.1f}", f"{roof:,.1f}",
                           f"{margins[-1][0]:.2f}x", "" if cal is None else f"{cal:,.1f}", err,
                           profile_scope(r) if cal is not None else
                           "not costed (speculative decoding)"])
    out = render(head, table_rows, markdown)
    summary = margin_lines(used, margins, _GROUPS)
    for r in (r for r in used if int(r["emitted"]) > 1):
        summary.append(
            f"{r['id']} runs MTP speculative decoding ({int(r['emitted']) - 1} drafts a step): "
            f"the bound takes {r['emitted']} tokens a step at the step of one "
            f"({trtllm_prediction(r):,.0f} tokens/s); costed with --mtp-tokens "
            f"{int(r['emitted']) - 1} at acceptance {DEFAULT_ACCEPTANCE:.2f} a draft (an "
            f"estimate) it is {mtp_rate(r):,.0f}, against {float(r['measured']):,.1f} "
            f"measured.")
    if errors:
        worst = max(errors, key=lambda p: abs(p[0]))
        h100 = [p for p in errors if p[1]["gpu"] == "H100-SXM"]
        summary.append(
            f"{PROFILE} (fitted on 2023 vLLM FP16, Llama-2-70B, TP 8 on one DGX-H100) on the "
            f"{len(errors)} rows without speculative decoding: every one an extrapolation "
            f"(another engine; {len(errors) - len(h100)} on other GPUs), so no target applies "
            f"(the issue's 30% is for a held-out model on the fitted system); worst "
            f"{worst[0]:+.1%} ({worst[1]['id']}), {sum(p[0] < 0 for p in errors)} of "
            f"{len(errors)} below measured"
            + (f"; on H100 worst {max(h100, key=lambda p: abs(p[0]))[0]:+.1%}" if h100
               else "") + ". Its overheads, fitted on an engine of 2023 at batches up to 64, "
            "cap what it gives a maximum-load TensorRT-LLM run: a profile is fitted per "
            "engine (netmodel calibrate).")
    summary += left_out_lines(rows, 1)
    return out + ([f"- {s}" for s in summary] if markdown else summary)


#: The report's groups of rows, by source and kind.
_GROUPS = (
    ("TensorRT-LLM 0.6.1 static batches (Llama-2-70B)",
     lambda r: r["phase"] == "static"),
    ("TensorRT-LLM 1.0 NVFP4 (B200, GB200)",
     lambda r: r["id"].startswith("trt10-") and "fp4" in r["overrides"]),
    ("TensorRT-LLM 1.0 FP8 (H100, H200)",
     lambda r: r["id"].startswith("trt10-") and "fp4" not in r["overrides"]),
    ("DeepSeek-R1 guide (8 GPUs, EP)", lambda r: r["id"].startswith("trtds-")),
    ("MLPerf Inference v4.1 Offline (prompt length a 1-token floor: the bound only)",
     lambda r: r["id"].startswith("mlperf41-")),
)


def _what(row: dict) -> str:
    """``max load 1000/2000`` / ``static batch 64 2048/2048`` / ``decode b1 ctx 2048, <= 4
    tok/step``."""
    if row["phase"] == "decode_rate":
        return f"decode b{row['batch']} ctx {row['context']}, <= {row['emitted']} tok/step"
    if row["phase"] == "static":
        return f"static batch {row['batch']} {row['prompt']}/{row['output']}"
    at = "" if row["batch"] == "65536" else f" at {row['batch']}"
    return f"max load {row['prompt']}/{row['output']}{at}"
