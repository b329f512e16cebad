"""Parts 6 and 7 of the study's summary (:mod:`netmodel.study.summary`): serving other than
one dense model's instances, disaggregated prefill and decode pools, and a mixture of
experts spread over the fabrics.
"""

from __future__ import annotations

from netmodel.study.run_words import named
from netmodel.study.summary_words import (
    TIE,
    and_list,
    other_gpu_words,
    own_gpu_words,
    ratio_span,
    ratio_x,
    request_lengths,
    sig3,
)


def serving_section(part) -> list[str]:
    """Section 6 of the summary: per workload, each scenario's disaggregated prefill and
    decode pools with the KV cache sent over the fabric, from the study's serving
    ``part``; none without rows."""
    rows = part.rows()
    if not rows:
        return []
    spread = {"tp": f" of tensor parallelism alone (the study's {named('parallelism')} for a "
                    f"dense model; `netmodel serve` without {named('tp_only')} also searches "
                    "pipeline stages and attention data parallelism)",
              "all": " of TP x PP x EP x attention DP"}.get(getattr(part, "dimensions", None), "")
    out = ["## 6. Disaggregated serving (serving.csv, serving.png)", "",
           f"{rows[0]['model']}: a prefill pool and a decode pool, each at its own best "
           f"configuration{spread}, each request's KV cache sent over the fabric from one to "
           "the other "
           "(layer by layer, overlapped with the prefill where it can be); the pools in the "
           "ratio that balances them (Splitwise's coding and conversation medians).", ""]
    for w in dict.fromkeys(r["workload"] for r in rows):
        mine = [r for r in rows if r["workload"] == w]
        base = next((r for r in mine if r["scenario"] == part.baseline), None)
        feas = [r for r in mine if r["feasible"]]
        if not feas:
            out.append(f"- **{mine[0]['model']} served disaggregated, {w}**: nothing "
                       "feasible.")
            continue
        share = max((r["transfer_visible_s"] or 0.0) / r["ttft_s"] for r in feas)
        rest = [r for r in feas if r is not base]
        line = (f"- **{mine[0]['model']} served disaggregated, {w}** ("
                f"{request_lengths(mine[0]['prompt'], mine[0]['output'])}): ")
        if rest:
            line += (f"service tokens/s/SM relative to {part.baseline}: " + ", ".join(
                f"{r['scenario']} {ratio_x(r['vs_baseline'])}" for r in rest) + "; ")
        if base and base["feasible"]:
            line += (f"decode GPUs per prefill GPU {base['decode_gpus_per_prefill_gpu']:.3g} "
                     f"on {base['scenario']}" + "".join(
                         f", {r['decode_gpus_per_prefill_gpu']:.3g} on {r['scenario']}"
                         for r in rest) + "; ")
        # the TTFT without a load is the steps' alone (serve --load adds the mean wait)
        of = "a TTFT " + ("(of the steps, with no queueing)" if all(
            r.workload.load is None for r in getattr(part, "results", ())) else
                            "(with the mean wait for a prefill batch)")
        line += (f"the KV transfer is at most {share:.1%} of {of}." if share >= 0.0005
                 else f"the KV transfer is under 0.05% of {of}.")   # not "at most 0.0%"
        out.append(line)
    return out + [""]


def moe_section(moe) -> list[str]:
    """Section 7 of the summary: a mixture of experts' best configuration (TP, EP,
    attention DP, PP) per scenario and phase, from the comparison ``moe``; none without
    rows."""
    if not moe.rows:
        return []
    model = moe.rows[0].model
    staged = any(r.pp > 1 for r in moe.rows if r.feasible)   # a PP column only then
    pp = " | PP" if staged else ""
    how = moe.settings.get("parallelism")
    spread = (f"by tensor parallelism alone ({named('parallelism')} tp: each expert split "
              "over the TP group, no all-to-alls)" if how == "tp" else
              "with expert and attention data parallelism as well as tensor parallelism"
              + (f" and pipeline stages ({named('parallelism')} all)" if how == "all" else "")
              + " (dispatch and combine all-to-alls costed on the fabric)")
    out = [f"## 7. A mixture of experts: {model} (compare_moe.csv)", "",
           own_gpu_words(moe.scenarios, "Each scenario with its own GPU") + f"; the search spreads "
           f"the model {spread}.", "",
           f"| scenario | phase | TP{pp} | EP | attention DP | GPUs | batch | tokens/s/SM | "
           f"vs {moe.baseline} | network share |",
           "|---|---|---|---|---|---|---|---|---|---|" + "---|" * staged]
    for r in moe.rows:
        if not r.feasible:
            out.append(f"| {r.label} | {r.phase} | - | - | - | - | - |{' - |' * staged} "
                       f"infeasible | - | - |")
            continue
        out.append(f"| {r.label} | {r.phase} | {r.tp} | " + (f"{r.pp} | " if staged else "")
                   + f"{r.ep} | {r.attention_dp} | "
                   f"{r.instance_gpus} | {r.batch} | {sig3(r.tokens_per_s_per_sm)} | "
                   f"{ratio_x(r.vs_baseline)} | {r.network_share:.0%} |")
    out.append("")
    for phase in moe.phases:
        rows = [r for r in moe.rows if r.phase == phase and r.label != moe.baseline
                and r.vs_baseline is not None]
        if rows:
            best = max(rows, key=lambda r: r.vs_baseline)
            tied = [r.label for r in rows if r is not best
                    and r.vs_baseline >= best.vs_baseline * (1 - TIE)]
            them = other_gpu_words(r.gpu for r in rows)
            out.append(f"- **{model} {phase}**: the {them['fabrics']} reach "
                       f"{ratio_span([r.vs_baseline for r in rows])}"
                       f" of {moe.baseline}; best {best.label} ("
                       + (f"PP {best.pp}, " if best.pp > 1 else "")
                       + f"EP {best.ep}, attention DP {best.attention_dp})"
                       + (f", tied within {TIE:.1%} by {and_list(tied)}" if tied else "") + ".")
    limit = moe.settings.get("max_batch")
    capped = [r for r in moe.rows if r.feasible and r.batch == limit]
    if capped:   # the search's cap, not an optimum: say so beside the ratios it bounds
        phases = sorted({r.phase for r in capped})
        out.append(f"- {len(capped)} of {len(moe.rows)} rows ({', '.join(phases)}) "
                   f"{'sits' if len(capped) == 1 else 'sit'} at the "
                   f"search's largest batch ({limit}): each could serve more tokens/s/SM "
                   f"with a larger one (`{named('max_batch')}` of `netmodel compare`), so "
                   f"these ratios compare the fabrics at that cap.")
    return [*out, ""]
