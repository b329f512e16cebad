"""The published-serving report: NVIDIA NIM, vLLM and TensorRT-LLM measurements beyond
Splitwise (``tests/compute/data/published_serving.csv``) against the roofline, and on H100 the
calibrated mode.
"""

from __future__ import annotations

import csv
from dataclasses import replace

from inference_reports.common import PROFILE, ROOT, TARGET, scenario_comm
from inference_reports.tables import render

#: Published serving measurements beyond Splitwise (in the repository; the test reads it too).
PUBLISHED = ROOT / "tests" / "compute" / "data" / "published_serving.csv"
#: Its phases measured in output tokens/s (the others in seconds).
RATES = ("throughput", "decode_throughput")


def published_rows() -> list[dict]:
    """The rows of :data:`PUBLISHED` (its header documents the columns and conversions)."""
    with open(PUBLISHED) as fh:
        return list(csv.DictReader(line for line in fh if not line.startswith("#")))


def published_model(row: dict):
    """The row's catalog model with its dtype overrides (``key=value`` separated by spaces;
    an empty value clears a field, an all-digit one is an int)."""
    from compute.models import get_model

    kw = {}
    for item in row["overrides"].split():
        key, value = item.split("=", 1)
        kw[key] = int(value) if value.isdigit() else value
    return replace(get_model(row["model"]), **kw)


def published_prediction(row: dict, options=None, comm=None) -> float:
    """Seconds (prefill, decode, e2e) or output tokens/s (throughput, decode_throughput) the
    roofline (``options`` None) or a profile gives for ``row``; a throughput row is batch x
    output / (prefill + output x the decode step at the mean context), a decode_throughput
    row batch / the decode step, an e2e row :func:`e2e_latency`: the data file's
    conversions."""
    from compute.evaluate_one import evaluate

    m, gpu, tp, b = published_model(row), row["gpu"], int(row["tp"]), int(row["batch"])
    kw = {"comm": comm, "options": options}
    if row["phase"] == "prefill":
        return evaluate(m, gpu, tp, b, "prefill", prompt=int(row["prompt"]), **kw).latency
    if row["phase"] == "decode":
        return evaluate(m, gpu, tp, b, "decode", context=int(row["context"]), **kw).latency
    if row["phase"] == "e2e":
        return e2e_latency(m, gpu, tp, b, int(row["prompt"]), int(row["output"]), **kw)
    if row["phase"] == "decode_throughput":
        step = evaluate(m, gpu, tp, b, "decode", context=int(row["context"]), **kw).latency
        return b / step
    prompt, out = int(row["prompt"]), int(row["output"])
    seconds = evaluate(m, gpu, tp, b, "prefill", prompt=prompt, **kw).latency + \
        out * evaluate(m, gpu, tp, b, "decode", context=prompt + out // 2, **kw).latency
    return b * out / seconds


def e2e_latency(model, gpu: str, tp: int, batch: int, prompt: int, output: int, *,
                comm=None, options=None) -> float:
    """Seconds from submitting ``batch`` prompts of ``prompt`` tokens at once to the last of
    ``output`` tokens each: the prefill, which gives every sequence its first token, then
    ``output - 1`` decode steps of ``batch`` at the mean context ``prompt + output // 2``
    (the steps run at contexts ``prompt + 1`` to ``prompt + output - 1``). A roofline step
    is convex in the context (a max of linear functions), so the steps at the mean context
    sum to no more than the steps themselves: for the roofline a lower bound."""
    from compute.evaluate_one import evaluate

    kw = {"comm": comm, "options": options}
    first = evaluate(model, gpu, tp, batch, "prefill", prompt=prompt, **kw).latency
    if output <= 1:
        return first
    step = evaluate(model, gpu, tp, batch, "decode", context=prompt + output // 2, **kw)
    return first + (output - 1) * step.latency


def _measured(row: dict) -> str:
    v = float(row["measured"])
    return f"{v:,.1f} tok/s" if row["phase"] in RATES else f"{v * 1e3:.2f} ms"


def _what(row: dict) -> str:
    """``decode b25 ctx 5250`` / ``prefill b1 p5000`` / ``max load 2048/128``."""
    if row["phase"] == "decode_throughput":
        return f"peak decode b<={row['batch']} ctx>={row['context']}"
    if row["phase"] == "throughput":
        if "static batch" in row["engine"]:
            return f"static batch {row['batch']} {row['prompt']}/{row['output']}"
        return f"max load {row['prompt']}/{row['output']}"
    if row["phase"] == "e2e":
        return f"e2e b{row['batch']} {row['prompt']}/{row['output']}"
    tokens = f"p{row['prompt']}" if row["phase"] == "prefill" else f"ctx {row['context']}"
    return f"{row['phase']} b{row['batch']} {tokens}"


def published(markdown: bool) -> list[str]:
    """Every published row: measured, roofline, margin (measured / roofline for times,
    roofline / measured for throughputs: >= 1 where the bound holds) and, on H100 rows, the
    calibrated mode with its error; excluded rows with their reason; a summary."""
    from compute.profiles import get_profile
    from compute.roofline_options import RooflineOptions

    rows = published_rows()
    used = [r for r in rows if r["status"] == "used"]
    options = RooflineOptions(profile=get_profile(PROFILE))
    comm = scenario_comm()(None)
    head = ["row", "system", "engine", "what", "measured", "roofline", "margin",
            f"{PROFILE}", "error"]
    table_rows, margins, vllm_err, other_err, rate_err = [], [], [], [], []
    for r in used:
        roof = published_prediction(r)
        thr = r["phase"] in RATES
        mine = float(r["measured"])
        margins.append((roof / mine if thr else mine / roof, r))
        cal = err = ""
        if r["gpu"] == "H100-SXM":
            c = published_prediction(r, options, comm)
            e = c / mine - 1
            (rate_err if thr else vllm_err if r["engine"].startswith("vLLM") else
             other_err).append((e, r, margins[-1][0]))
            cal = f"{c:,.1f} tok/s" if thr else f"{c * 1e3:.2f} ms"
            err = f"{e:+.1%}"
        shown = f"{roof:,.1f} tok/s" if thr else f"{roof * 1e3:.2f} ms"
        table_rows.append([r["id"], f"{r['gpu_measured']}, TP {r['tp']}", r["engine"],
                           _what(r), _measured(r), shown, f"{margins[-1][0]:.2f}x", cal,
                           err])
    out = render(head, table_rows, markdown)
    low, high = min(margins, key=lambda p: p[0]), max(margins, key=lambda p: p[0])
    summary = [
        f"Roofline on the safe side of all {len(used)} rows used "
        f"({sum(m >= 1 for m, _ in margins)} of {len(used)}): by {low[0]:.2f}x "
        f"({low[1]['id']}) to {high[0]:.2f}x ({high[1]['id']}).",
    ]
    if vllm_err:
        worst = max(vllm_err, key=lambda p: abs(p[0]))
        tps = sorted({int(p[1]["tp"]) for p in vllm_err})
        engines: dict = {}
        for p in vllm_err:
            engines.setdefault(p[1]["engine"], []).append(p)
        by_engine = "; ".join(
            f"{eng}: worst {max(ps, key=lambda p: abs(p[0]))[0]:+.1%}, "
            f"{sum(abs(p[0]) <= TARGET for p in ps)} of {len(ps)} within {TARGET:.0%}"
            for eng, ps in engines.items())
        summary.append(
            f"{PROFILE} (fitted on 2023 vLLM, Llama-2-70B TP 8) on the {len(vllm_err)} vLLM "
            f"rows on H100 (other models, later engine versions, TP "
            f"{', '.join(map(str, tps))}): worst "
            f"{worst[0]:+.1%} ({worst[1]['id']}), {sum(abs(p[0]) <= TARGET for p in vllm_err)}"
            f" of {len(vllm_err)} within {TARGET:.0%} (the target is for a model on the "
            f"system fitted on). By engine: {by_engine}. Its fixed overheads (per layer, per "
            f"decode sequence), fitted on 2023 vLLM at TP 8, hold for the vLLM of January "
            f"2024 and overstate the later ones, which run at "
            f"{min(p[2] for p in vllm_err):.2f}x to {max(p[2] for p in vllm_err):.2f}x the "
            f"roofline; a profile is fitted per engine (vllm-h100-2024 for the vLLM of autumn "
            f"2024, below; netmodel calibrate).")
        prof = options.profile
        for e, r, _ in (p for p in vllm_err if p[1]["phase"] == "e2e" and abs(p[0]) > TARGET):
            m = published_model(r)
            fixed = m.layers * prof.layer_overhead_s + prof.step_overhead_s + \
                int(r["batch"]) * prof.decode_sequence_overhead_s
            bound = float(r["measured"]) / (int(r["output"]) - 1)
            summary.append(
                f"{r['id']} ({r['model']}, TP {r['tp']}, {_what(r)}): {e:+.1%}; the profile's "
                f"fixed time a decode step ({m.layers} layers x "
                f"{prof.layer_overhead_s * 1e3:.3f} ms + {r['batch']} sequences x "
                f"{prof.decode_sequence_overhead_s * 1e3:.3f} ms = {fixed * 1e3:.2f} ms) "
                f"{'exceeds' if fixed > bound else 'is below'} the measured "
                f"{float(r['measured']) * 1e3:,.1f} ms over its {int(r['output']) - 1} decode "
                f"steps ({bound * 1e3:.2f} ms a step, the prefill counted in).")
    if other_err:
        worst = max(other_err, key=lambda p: abs(p[0]))
        engines = sorted({p[1]["engine"].split(" (")[0] for p in other_err})
        summary.append(
            f"On the {len(other_err)} rows of other engines on H100 ({', '.join(engines)}; "
            f"not vLLM; shown for reference): worst {worst[0]:+.1%} ({worst[1]['id']}).")
    if rate_err:
        worst = max(rate_err, key=lambda p: abs(p[0]))
        ceiling = 1 / options.profile.decode_sequence_overhead_s
        engines = sorted({p[1]["engine"].split(" (")[0] for p in rate_err})
        summary.append(
            f"On the {len(rate_err)} throughput rows on H100 ({', '.join(engines)}; shown "
            f"for reference, not refitted): worst {worst[0]:+.1%} ({worst[1]['id']}), "
            f"{sum(abs(p[0]) <= TARGET for p in rate_err)} of {len(rate_err)} within "
            f"{TARGET:.0%}, {sum(p[0] < 0 for p in rate_err)} below measured. A maximum-load "
            f"row is evaluated at the roofline's batch, where the profile's throughput is the "
            f"most it gives at any batch (it grows with the batch), yet its per-sequence decode "
            f"overhead ({options.profile.decode_sequence_overhead_s * 1e3:.3f} ms, fitted on "
            f"2023 vLLM at batches up to 64) caps an instance's decode at {ceiling:,.0f} "
            f"tokens/s whatever the model: a profile for maximum-load serving is fitted on "
            f"such an engine's measurements (netmodel calibrate).")
    for r in rows:
        if r["status"] != "used":
            summary.append(f"Left out: {r['id']} ({_measured(r)}), {r['note']}.")
    return out + ([f"- {s}" for s in summary] if markdown else summary)
