"""``summary.md`` of the Lite-GPU study: tables and findings written from the numbers.

Every sentence is generated from the study's results (ratios, rankings, crossovers and
ranges are computed here), so the summary changes when the model, the catalogs or the
scenarios do; nothing in it is a hard-coded claim. Only the "how it was modelled" notes at
the end are fixed text.

>>> from netmodel.study.lite_gpu import FullStudy, ideal_network, run_lite_gpu_study
>>> s = run_lite_gpu_study(["Llama-3-8B"], ["H100-SXM", "Lite"], ["decode"],
...                        comm_factory=ideal_network, network="ideal")
>>> text = summary_markdown(FullStudy(s))
>>> text.splitlines()[0], "Lite reaches" in text
('# Lite-GPU study: findings', True)
"""

from __future__ import annotations

import bisect
import math
import re
import statistics
from typing import Any

from compute.errors import UserError

__all__ = ["summary_markdown"]

#: Ratios within this of 1 count as "matching".
TIE = 0.005


def _x(v) -> str:
    return "-" if v is None else f"{v:.2f}x"


def _v(v) -> str:
    return "infeasible" if v is None else f"{v:.3g}"


def _span(values) -> str:
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    lo, hi = min(values), max(values)
    return f"{lo:.2f}x" if abs(hi - lo) < 0.005 else f"{lo:.2f}x-{hi:.2f}x"


def _geomean(values) -> float | None:
    values = [v for v in values if v]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def _others(gpus, baseline: str = "H100-SXM") -> dict:
    """How the text names the GPUs other than the baseline: the Lites in the default study,
    one other GPU by its name, several by "other" (a B200 is no Lite)."""
    gpus = [g for g in dict.fromkeys(gpus) if g != baseline]
    if all(g.startswith("Lite") for g in gpus):
        return {"one": "Lite", "many": "Lites", "fabrics": "Lite fabrics"}
    if len(gpus) == 1:
        return {"one": gpus[0], "many": f"{gpus[0]}s", "fabrics": f"{gpus[0]} fabrics"}
    return {"one": "non-baseline GPU", "many": "other GPUs", "fabrics": "other fabrics"}


def _own(scenarios, lead: str = "each scenario with its own GPU") -> str:
    """``lead``, and which scenarios ran on another GPU because the run lacks their own
    (:func:`~netmodel.study.lite_gpu_parts.own_gpu_scenarios`)."""
    from netmodel.study.lite_gpu_parts import own_gpu_scenarios

    swapped = [s.label for s in own_gpu_scenarios(scenarios)
               if s.home_gpu is not None and s.gpu != s.home_gpu]
    return lead + (f" (where this run lacks it, the first GPU it runs with: {_list(swapped)})"
                   if swapped else "")


def _config(r) -> str:
    """A row's configuration as compute spells it: ``TP 8``, ``TP 3 x PP 8``,
    ``TP 8 x EP 8 x DP-attention 8``."""
    from compute.parallel import Parallelism

    return Parallelism.of(r).label


def _plain(rows) -> bool:
    """Whether every feasible row of ``rows`` is plain tensor parallelism."""
    return all(r.pp == 1 and r.ep == 1 and r.attention_dp == 1
               for r in rows if r.feasible)


def _verb(items, one: str, many: str) -> str:
    """``one`` after a single subject, ``many`` after several ("Lite falls short",
    "Lite and Lite+BW fall short")."""
    return one if len(list(items)) == 1 else many


def _list(items) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def summary_markdown(study: Any, written: set[str] | None = None) -> str:
    """The study's ``summary.md`` (a :class:`~netmodel.study.lite_gpu.FullStudy`).
    ``written``: the names of the files written beside it; a section's heading cites only
    those (``--no-plot`` writes no figure). None: every file it names."""
    ideal = study.ideal
    st = ideal.settings
    models = list(dict.fromkeys(r.model for r in ideal.rows))
    gpus = list(dict.fromkeys(r.gpu for r in ideal.rows))
    phases = list(dict.fromkeys(r.phase for r in ideal.rows))
    out = ["# Lite-GPU study: findings", "",
           f"Models: {', '.join(models)}. GPUs: {', '.join(gpus)} (baseline "
           f"{ideal.baseline}). SLOs: TTFT <= {st['slo']['ttft_s'] * 1e3:g} ms (prefill of "
           f"{st['prompt_tokens']}-token prompts), TBT <= {st['slo']['tbt_s'] * 1e3:g} ms "
           f"(decode at {st['context_tokens']} tokens of context). Score: tokens/s per SM of "
           f"the best {_searched(study)} and batch that fit in memory and meet the SLO (equal "
           "silicon: an H100 has 4x the SMs of a Lite).", ""]
    out += _ideal_part(ideal, models, gpus, phases)
    if study.fabric is not None:
        out += _fabric_part(study.fabric)
        out += _claims_part(study)
        if getattr(study, "crossovers", None) is not None:
            out += _crossovers_part(study.crossovers, ideal)
        if getattr(study, "packed", None) is not None:
            out += _packed_part(study.fabric, study.packed)
    if study.sweep is not None:
        out += _sweep_part(study.sweep)
    if getattr(study, "reliability", None) is not None:
        out += _reliability_part(study.reliability, study.fabric)
    if getattr(study, "cost", None) is not None:
        out += _cost_part(study.cost, study.fabric)
    if getattr(study, "serving", None) is not None:
        out += _serving_part(study.serving)
    if getattr(study, "moe", None) is not None:
        out += _moe_part(study.moe)
    out += _notes(study)
    if written is not None:
        out = [_cite_written(line, written) if line.startswith("## ") else line
               for line in out]
    return "\n".join(out) + "\n"


def _cite_written(heading: str, written: set[str]) -> str:
    """``heading`` with its cited files, "(a.csv, b.png)" at its end, cut to ``written``."""
    m = re.fullmatch(r"(.*?) \(([^()]*\.(?:csv|json|png|md)[^()]*)\)", heading)
    if m is None:
        return heading
    kept = [f for f in m.group(2).split(", ") if f in written]
    return m.group(1) + (f" ({', '.join(kept)})" if kept else "")


# ------------------------------------------------------------------ part 1

def _searched(study) -> str:
    """What the score's search picks: the TP degree where every fabric row is plain tensor
    parallelism (part 1 always is), else the configuration, saying part 1 searched TP only
    and how far the fabric parts spread a model (``--parallelism``)."""
    fabric_rows = [r for part in (study.fabric, study.packed) if part is not None
                   for r in part.rows]
    if _plain(fabric_rows):
        return "TP degree"
    how = (study.fabric.settings.get("parallelism") if study.fabric is not None else None)
    spread = ("pipeline stages" + (", expert and attention data parallelism" if any(
        r.ep > 1 or r.attention_dp > 1 for r in fabric_rows if r.feasible) else "")
              if how == "all" else "expert and attention data parallelism")
    return (f"configuration (part 1: the TP degree alone; the fabric parts: the TP degree "
            f"and, where it pays, {spread}, --parallelism {how})")


def _ideal_part(ideal, models, gpus, phases) -> list[str]:
    nets = ideal.networks
    net = "ideal" if "ideal" in nets else nets[0]
    base = ideal.baseline
    out = [f"## 1. GPUs alone: {net} network (study.csv, tokens_per_sm.png)", "",
           f"Cells: tokens/s/SM (ratio to {base}) with the {net} network"
           + (" (free collectives)." if net == "ideal" else "."), ""]
    for phase in phases:
        out += [f"**{phase}**", "", "| GPU | " + " | ".join(models) + " |",
                "|---|" + "---|" * len(models)]
        for g in gpus:
            cells = [f"{_v(r.tokens_per_s_per_sm)} ({_x(r.vs_baseline)})"
                     for r in (ideal.row(m, g, phase, net) for m in models)]
            out.append(f"| {g} | " + " | ".join(cells) + " |")
        out.append("")
    lites = [g for g in gpus if g != base]
    for phase in phases:
        # no ratio where the baseline itself is infeasible (DeepSeek-V3 on 8 H100s)
        none = [m for m in models if not ideal.row(m, base, phase, net).feasible]
        rated = [m for m in models if m not in none]
        ratios = {g: [ideal.row(m, g, phase, net).vs_baseline for m in rated] for g in lites}
        ratios = {g: rs for g, rs in ratios.items() if rs}
        ok = [g for g, rs in ratios.items() if all(r is not None and r >= 1 - TIE for r in rs)]
        short = [g for g, rs in ratios.items() if all(r is not None and r < 1 - TIE
                                                      for r in rs)]
        lines = [f"the {base} has no feasible configuration for {_list(none)}, so no ratio "
                 f"there"] if none else []
        if ok:
            lines.append(f"{_list(ok)} {_verb(ok, 'matches or beats', 'match or beat')} "
                         f"the {base} for every model "
                         f"({'; '.join(f'{g} {_span(ratios[g])}' for g in ok)})")
        if short:
            lines.append(f"{_list(short)} {_verb(short, 'falls', 'fall')} short for every "
                         f"model "
                         f"({'; '.join(f'{g} {_span(ratios[g])}' for g in short)})")
        mixed = [g for g in ratios if g not in ok and g not in short]
        if mixed:
            lines.append(f"{_list(mixed)} {_verb(mixed, 'depends', 'depend')} on the model "
                         f"({'; '.join(f'{g} {_span(ratios[g])}' for g in mixed)})")
        out.append(f"- **{phase}, {net} network**: " + "; ".join(lines) + ".")
        if "Lite" in ratios and _span(ratios["Lite"]) != "-":
            out.append(f"- **{phase}**: the plain Lite reaches {_span(ratios['Lite'])} of the "
                       f"{base}'s tokens/s/SM.")
    them = _others(gpus, base)
    if "ring" in nets and "ideal" in nets:
        for phase in phases:
            loss = {g: [_keep(ideal, m, g, phase) for m in models] for g in gpus}
            kept = [f"{_span(loss[base])} of the {base}'s tokens/s/SM",
                    f"{_span([v for g in lites for v in loss[g]])} of the {them['many']}'"]
            kept = [k for k in kept[:1 + bool(lites)] if not k.startswith("-")]
            if kept:   # '-': nothing feasible on both networks
                out.append(f"- **{phase}**: rings over the scale-up bandwidth instead of free "
                           f"collectives keep {' and '.join(kept)}.")
    return out + [""]


def _keep(ideal, model, gpu, phase):
    a, b = ideal.row(model, gpu, phase, "ring"), ideal.row(model, gpu, phase, "ideal")
    if a.feasible and b.feasible:
        return a.tokens_per_s_per_sm / b.tokens_per_s_per_sm
    return None


# ------------------------------------------------------------------ part 2

def _fabric_part(fab) -> list[str]:
    base = fab.baseline
    names = list(dict.fromkeys(s.name for s in fab.scenarios))
    gpus = list(dict.fromkeys(s.gpu for s in fab.scenarios))
    labels = set(fab.labels)
    out = ["## 2. On fabrics (compare.csv, compare_tokens_per_sm.png, compare_time_split.png)",
           "", f"Cells: tokens/s/SM of the best configuration on the fabric (ratio to {base}); "
           "'.' where the scenario is not run with that GPU.", ""]
    for phase in fab.phases:
        for model in fab.models:
            out += [f"**{model}, {phase}**", "", "| scenario | " + " | ".join(gpus) + " |",
                    "|---|" + "---|" * len(gpus)]
            for n in names:
                cells = []
                for g in gpus:
                    if f"{n}@{g}" not in labels:
                        cells.append(".")
                        continue
                    r = fab.row(model, f"{n}@{g}", phase)
                    cells.append(f"{_v(r.tokens_per_s_per_sm)} ({_x(r.vs_baseline)})")
                out.append(f"| {n} | " + " | ".join(cells) + " |")
            out.append("")
    others = [n for n in names if n != base.split("@")[0]]
    for phase in fab.phases:
        rows = [r for r in fab.rows if r.phase == phase and r.label != base]
        rank = sorted(((_geomean([r.vs_baseline for r in rows if r.scenario == n]), n)
                       for n in others), key=lambda t: -(t[0] or 0))
        unrated = [n for v, n in rank if v is None]   # no feasible row with a ratio
        rank = [(v, n) for v, n in rank if v is not None]
        if rank:   # --scenarios h100-dgx: nothing to rank against it
            out.append(f"- **{phase}, fabrics ranked** by the geometric mean of tokens/s/SM "
                       f"over models and GPUs, relative to {base}: "
                       + ", ".join(f"{n} {_x(v)}" for v, n in rank)
                       + (f"; no ratio on {_list(unrated)}" if unrated else "") + ".")
        elif unrated:
            out.append(f"- **{phase}**: no fabric has a {phase} row with a ratio to {base} "
                       f"(nothing meets the SLO there, or {base} itself does not).")
        wins = _best_fabrics(fab, phase, others)
        total = sum(wins.values()) and len([1 for m in fab.models for g in gpus
                                            if any(f"{n}@{g}" in labels for n in others)])
        if total:
            out.append(f"- **{phase}, best fabric** (within 1%) per model x GPU: "
                       + ", ".join(f"{n} in {c} of {total}" for n, c in wins.items() if c)
                       + ".")
        beat = [r for r in rows if r.vs_baseline is not None and r.vs_baseline >= 1 - TIE]
        if beat:
            by = {}
            for r in beat:
                by.setdefault(r.model, []).append(f"{r.label} {_x(r.vs_baseline)}")
            out.append(f"- **{phase}, match or beat {base}**: "
                       + "; ".join(f"{m}: {', '.join(v)}" for m, v in by.items()) + ".")
        else:
            best = max((r for r in rows if r.vs_baseline), key=lambda r: r.vs_baseline,
                       default=None)
            if best:
                out.append(f"- **{phase}**: no {_others(gpus)['one']} configuration on any "
                           f"fabric matches "
                           f"{base}; the closest is {best.label} for {best.model} at "
                           f"{_x(best.vs_baseline)}.")
        for n in others:
            mine = [r for r in rows if r.scenario == n and r.feasible]
            if mine:
                shares = [r.network_share for r in mine]
                out.append(f"- **{phase}, {n}**: keeps {_span([r.vs_ideal for r in mine])} "
                           f"of the same GPU's ideal-network tokens/s/SM; the network bounds "
                           f"{statistics.median(shares):.0%} of a step (median).")
    out += _tp_dependence(fab, others, gpus)
    out += _reconfiguration(fab)
    return out + [""]


def _best_fabrics(fab, phase, names) -> dict:
    wins = dict.fromkeys(names, 0)
    for model in fab.models:
        for g in dict.fromkeys(s.gpu for s in fab.scenarios):
            vals = {n: fab.row(model, f"{n}@{g}", phase).tokens_per_s_per_sm
                    for n in names if f"{n}@{g}" in fab.labels}
            vals = {n: v for n, v in vals.items() if v}
            if not vals:
                continue
            top = max(vals.values())
            for n, v in vals.items():
                if v >= top * 0.99:
                    wins[n] += 1
    return wins


def _tp_dependence(fab, names, gpus) -> list[str]:
    tp_differ, batch_differ, total, seen = [], 0, 0, []
    for phase in fab.phases:
        for model in fab.models:
            for g in gpus:
                rows = [fab.row(model, f"{n}@{g}", phase) for n in names
                        if f"{n}@{g}" in fab.labels]
                rows = [r for r in rows if r.feasible]
                if len(rows) < 2:
                    continue
                total += 1
                seen.extend(rows)
                if len({_config(r) for r in rows}) > 1:
                    tp_differ.append((model, g, phase, rows))
                elif len({r.batch for r in rows}) > 1:
                    batch_differ += 1
    if not total:
        return []
    what = "TP degree" if _plain(seen) else "configuration"
    line = (f"- The best {what} depends on the fabric in {len(tp_differ)} of {total} "
            f"model x GPU x phase cases, and only the batch in {batch_differ} more")
    if tp_differ:
        model, g, phase, rows = tp_differ[0]
        line += (f" (e.g. {model} {phase} on {g}: "
                 + ", ".join(f"{r.scenario} {_config(r)} batch {r.batch}" for r in rows) + ")")
    return [line + "."]


def _reconfiguration(fab) -> list[str]:
    out = []
    for name in dict.fromkeys(s.name for s in fab.scenarios):
        rows = [r for r in fab.rows if r.scenario == name and r.reconfiguration_s > 0]
        if not rows:
            continue
        r = max(rows, key=lambda r: r.tokens_per_s)
        times = sorted({x.reconfiguration_s for x in rows})
        span = f"{times[0] * 1e3:g} ms" if len(times) == 1 else \
            f"{times[0] * 1e3:g}-{times[-1] * 1e3:g} ms"
        out.append(f"- **{name}**: setting an instance's circuits takes {span}, paid once per "
                   f"re-provisioning (not per token); at its fastest rate ({r.model} "
                   f"{r.phase} on {r.gpu}, {r.tokens_per_s:.4g} tokens/s) "
                   f"{r.reconfiguration_s * 1e3:g} ms is the time of "
                   f"{r.reconfiguration_s * r.tokens_per_s:.3g} tokens.")
    return out


# ------------------------------------------------------------------ the paper's claims

#: A plain Lite "matches" when within this of the H100 (5%: the model's own resolution).
MATCH = 0.05
#: The fabric "decides" when the best and worst fabric differ by at least this factor.
DECIDES = 1.10


def _ratios(fab, gpu: str) -> dict:
    """``{(fabric name, model, phase): vs_baseline}`` of one GPU's feasible rows."""
    return {(r.scenario, r.model, r.phase): r.vs_baseline for r in fab.rows
            if r.gpu == gpu and r.label != fab.baseline and r.vs_baseline is not None}


def _claim_plain(fab, lite: str) -> str:
    ratios = _ratios(fab, lite)
    if not ratios:
        return f"no feasible {lite} row"
    names = sorted({k[0] for k in ratios})
    cells = sorted({k[1:] for k in ratios})
    per = {n: [ratios.get((n, *c)) for c in cells] for n in names}
    best = max(names, key=lambda n: _geomean(per[n]) or 0)
    vals = [v for v in per[best] if v is not None]
    worst, mean = min(vals), _geomean(vals)
    if worst >= 1 - MATCH and len(vals) == len(cells):
        verdict = "holds"
    elif mean and mean >= 1 - MATCH:
        verdict = "holds on average only"
    else:
        verdict = "does not hold"
    return (f"{verdict}: on its best fabric ({best}) a plain {lite} reaches {_x(mean)} of the "
            f"baseline (geometric mean over models and phases; {_span(vals)})")


def _claim_custom(fab, lite: str) -> str:
    cells = sorted({(r.model, r.phase) for r in fab.rows})
    best = []
    for model, phase in cells:
        rows = [r for r in fab.rows if (r.model, r.phase) == (model, phase)
                and r.gpu != lite and r.label != fab.baseline and r.vs_baseline is not None]
        if rows:
            top = max(rows, key=lambda r: r.vs_baseline)
            best.append((top.vs_baseline, model, phase, top.label))
    if not best:
        if not any(r.gpu != lite and r.label != fab.baseline for r in fab.rows):
            return (f"not assessed: this run has no customized Lite (--gpus names only the "
                    f"baseline's GPU and the plain {lite})")
        return "no customized Lite is feasible"
    met = [b for b in best if b[0] >= 1 - TIE]
    verdict = "holds" if len(met) == len(best) else \
        ("holds in part" if met else "does not hold")
    worst = min(best)
    text = (f"{verdict}: the best customized Lite matches or beats the baseline in "
            f"{len(met)} of {len(best)} model x phase cases")
    if met:
        top = max(met)
        text += f" (best: {top[3]} in {top[1]} {top[2]}, {_x(top[0])})"
    if len(met) < len(best):
        text += f"; the furthest behind is {worst[1]} {worst[2]} at {_x(worst[0])} ({worst[3]})"
    return text


def _claim_fabric(fab, lite: str) -> str:
    spreads, flips, cases = [], 0, 0
    gpus = sorted({r.gpu for r in fab.rows if r.label != fab.baseline})
    for g in gpus:
        ratios = _ratios(fab, g)
        for cell in {k[1:] for k in ratios}:
            vals = [v for k, v in ratios.items() if k[1:] == cell]
            if len(vals) < 2:
                continue
            cases += 1
            spreads.append(max(vals) / min(vals))
            if max(vals) >= 1 - TIE > min(vals):
                flips += 1
    if not spreads:   # one fabric, or fewer than two feasible rows with a ratio
        return "not assessed: no GPU has rows with a ratio to the baseline on two fabrics"
    spreads.sort()
    median = statistics.median(spreads)
    verdict = "holds" if median >= DECIDES else "does not hold"
    return (f"{verdict}: for the same GPU, model and phase the best fabric gives "
            f"{median:.2f}x the worst's tokens/s/SM (median of {cases} cases; up to "
            f"{spreads[-1]:.2f}x), and in {flips} of them the fabric decides whether the Lite "
            f"matches the baseline")


def _claims_part(study) -> list[str]:
    """Each claim of the paper's section 4 under netmodel's default assumption (collectives
    serialized) and the paper's (collectives overlapped), with the numbers."""
    fab, paper = study.fabric, study.paper
    lites = [g for g in dict.fromkeys(r.gpu for r in fab.rows) if g != study.ideal.baseline]
    if not lites:
        return []
    if "Lite" not in lites:   # the claims are the plain Lite's and its variants'
        return ["## 2b. The paper's claims (compare.csv"
                + (", compare_paper.csv)" if paper is not None else ")"), "",
                f"The Lite-GPU paper's claims are about the plain Lite and its customized "
                f"variants; this run has no Lite ({_list(lites)}), so they are not "
                f"assessed.", ""]
    plain = "Lite"
    papers = "the paper's (each collective overlapped with the GEMM that feeds it)"
    if _overlapped(fab):   # --overlap-collectives: the comparison itself is the paper's
        parts = [(papers, fab)]
    else:
        parts = [("netmodel's default (each tensor-parallel collective a stage of its own)",
                  fab)] + ([(papers, paper)] if paper is not None else [])
    head = ("under both assumptions (compare.csv, compare_paper.csv)" if len(parts) == 2
            else "under the paper's assumption (compare.csv)" if _overlapped(fab)
            else "under netmodel's default (compare.csv)")
    asked = (" unless asked; this run asks (--overlap-collectives)" if _overlapped(fab)
             else " unless asked")
    out = [f"## 2b. The paper's claims, {head}", "",
           f"The Lite-GPU paper (arXiv 2501.10187, section 4) overlaps network I/O with "
           f"compute and memory inside each stage; netmodel charges the collectives as stages "
           f"of their own{asked}. Matching means within {MATCH:.0%} of "
           f"{fab.baseline} for the plain Lite, within {TIE:.1%} for the others.", ""]
    claims = [(f"A plain {plain} matches the H100 cluster without extra network",
               lambda f: _claim_plain(f, plain)),
              ("Customized Lites (more bandwidth, more FLOP/s) match or beat it",
               lambda f: _claim_custom(f, plain)),
              ("The fabric decides", lambda f: _claim_fabric(f, plain))]
    for title, fn in claims:
        out.append(f"- **{title}.**")
        for name, result in parts:
            out.append(f"  - Under {name}: {fn(result)}.")
    if paper is not None:
        gain = [p.tokens_per_s_per_sm / d.tokens_per_s_per_sm
                for d, p in zip(fab.rows, paper.rows, strict=True)
                if d.feasible and p.feasible and d.tokens_per_s_per_sm]
        if gain:
            # each configuration's steps are no longer overlapped, so the best cannot lose;
            # the best itself may move (a larger batch fits the SLO)
            both = [(d, p) for d, p in zip(fab.rows, paper.rows, strict=True)
                    if d.feasible and p.feasible]
            moved = sum((_config(d), d.batch) != (_config(p), p.batch) for d, p in both)
            out.append(f"- Overlapping the collectives gives {_span(gain)} the tokens/s/SM of "
                       f"serializing them (never less: no configuration's step gets longer; "
                       f"the best configuration or batch moves in {moved} of {len(both)} "
                       f"rows).")
    return out + [""]


def _overlapped(result) -> bool:
    """Whether ``result`` (a comparison or study) ran with ``--overlap-collectives``."""
    return bool(result.settings.get("options", {}).get("overlap_collectives"))


def _packed_part(alone, packed) -> list[str]:
    """What changes when instances are packed into the cluster."""
    alone_rows = {(r.model, r.label, r.phase): r for r in alone.rows}
    pairs = [(alone_rows[(p.model, p.label, p.phase)], p) for p in packed.rows
             if (p.model, p.label, p.phase) in alone_rows]
    pairs = [(a, p) for a, p in pairs if a.feasible and p.feasible]
    if not pairs:
        return []
    out = ["## 2d. Packed into the cluster (compare_packed.csv)", "",
           "Parts 2-2c cost each instance alone, placed where the scenario puts the first, "
           "and divide by the instance's own SMs. Here, for "
           + _own(packed.scenarios, "each scenario on its own GPU") + ", "
           "every instance the fabric holds "
           "(floor(GPUs / instance)) runs its collectives at the same time, sharing links, and "
           "tokens/s/SM divides the cluster's tokens/s by every SM, stranded GPUs included.",
           ""]
    ratio = [p.tokens_per_s_per_sm / a.tokens_per_s_per_sm for a, p in pairs]
    out.append(f"- Packed tokens/s/SM is {_span(ratio)} of the alone figure (geometric mean "
               f"{_x(_geomean(ratio))}).")
    moved = [(a, p) for a, p in pairs if _config(a) != _config(p)]
    if moved:
        out.append(f"- The best configuration changes in {len(moved)} of {len(pairs)} cases: "
                   + "; ".join(f"{a.model} {a.phase} on {a.label}: {_config(a)} -> "
                               f"{_config(p).removeprefix('TP ') if _plain([a, p]) else _config(p)} "
                               f"({p.instances} instances, {p.packed_fraction:.0%} of the "
                               f"GPUs)" for a, p in moved[:6])
                   + ("; ..." if len(moved) > 6 else "") + ".")
    else:
        out.append(f"- The best configuration is the same in all {len(pairs)} cases.")
    stranded = [(a, p) for a, p in pairs if p.packed_fraction < 1]
    if stranded:
        a, p = min(stranded, key=lambda ap: ap[1].packed_fraction)
        out.append(f"- Stranded GPUs: {len(stranded)} cases leave part of the cluster idle "
                   f"(least used: {p.model} {p.phase} on {p.label}, {p.packed_fraction:.0%}).")
    base = packed.baseline
    for phase in packed.phases:
        rows = [p for _, p in pairs if p.phase == phase and p.label != base
                and p.vs_baseline is not None]
        if rows:
            them = _others(r.gpu for r in rows)
            out.append(f"- **{phase}**, packed, relative to {base}: {them['fabrics']} "
                       f"{_span([r.vs_baseline for r in rows])}.")
    return out + [""]


def _network_free_short(ideal, model: str, phase: str, gpus, target: float) -> bool:
    """Whether every GPU of ``gpus`` falls short of ``target`` tokens/s/SM even on the ideal
    network (free collectives): then memory or compute, not the network, holds it back.
    False when the study has no ideal-network row to tell."""
    if ideal is None or "ideal" not in ideal.networks:
        return False
    for g in gpus:
        try:
            r = ideal.row(model, g, phase, "ideal")
        except UserError:
            return False
        if r is None or not r.tokens_per_s_per_sm or r.tokens_per_s_per_sm >= target:
            return False
    return True


def _crossovers_part(cross, ideal=None) -> list[str]:
    """Part 2c. ``ideal``: the study's GPUs-alone result, which tells whether a variant
    that matches at no bandwidth in the range is held back by memory or compute (it falls
    short even on the ideal network) or by the fabric (latency, hops)."""
    from netmodel.study.crossovers import BANDWIDTH_RANGE, LATENCY_RANGE

    rows = list(cross.rows)
    if not rows:
        return []
    base = rows[0].baseline
    out = ["## 2c. Co-design crossovers (crossovers.csv, crossovers.png)", "",
           f"The network bandwidth per Lite (as a multiple of the plain Lite's, every link of "
           f"the fabric scaled with it) at which each Lite variant matches {base}'s "
           f"tokens/s/SM, found by root finding on the SLO search within "
           f"{BANDWIDTH_RANGE[0]:g}x-{BANDWIDTH_RANGE[1]:g}x; and, where a variant already "
           f"matches, the per-hop latency it tolerates (up to "
           f"{LATENCY_RANGE[1] * 1e6:g} us added to every link).", ""]
    for model in dict.fromkeys(r.model for r in rows):
        for phase in dict.fromkeys(r.phase for r in rows):
            mine = [r for r in rows if (r.model, r.phase) == (model, phase)]
            if not mine:
                continue
            # variants whose needs are the same on every fabric are said together
            groups: dict = {}
            for g in dict.fromkeys(r.gpu for r in mine):
                sig = tuple((r.fabric, r.bandwidth_bound, round(r.bandwidth_to_match or 0, 2))
                            for r in mine if r.gpu == g)
                groups.setdefault(sig, []).append(g)
            parts = []
            for gpus in groups.values():
                have = [r for r in mine if r.gpu == gpus[0]]
                found = [r for r in have if r.bandwidth_bound != "never"]
                never = [r.fabric for r in have if r.bandwidth_bound == "never"]
                who = _list(gpus)
                verb = "needs" if len(gpus) == 1 else "need"
                if found:
                    lo = min(found, key=lambda r: r.bandwidth_to_match)
                    hi = max(found, key=lambda r: r.bandwidth_to_match)
                    # every fabric at each end (within 0.5%), not the first of a tie
                    ends = [[r.fabric for r in found if r.bandwidth_to_match
                             <= lo.bandwidth_to_match * 1.005]]
                    if hi.bandwidth_to_match > lo.bandwidth_to_match * 1.005:
                        ends.append([r.fabric for r in found if r.bandwidth_to_match
                                     >= hi.bandwidth_to_match / 1.005])
                    names = ["every fabric" if len(e) == len(have) > 1 else _list(e)
                             for e in ends]
                    text = f"{who} {verb} {_bw_text_short(lo)} ({names[0]})"
                    if len(ends) > 1:
                        text += f" to {_bw_text_short(hi)} ({names[1]})"
                    if never:
                        text += (f" and {'does' if len(gpus) == 1 else 'do'} not match on "
                                 f"{_list(never)} even at {BANDWIDTH_RANGE[1]:g}x")
                elif all(r.tokens_per_s_per_sm and r.tokens_per_s_per_sm
                         >= r.baseline_tokens_per_s_per_sm * (1 - TIE)
                         for r in mine if r.gpu in gpus):
                    # within TIE already: part 2 lists it as matching; say both
                    text = (f"{who} {'is' if len(gpus) == 1 else 'are'} within {TIE:.1%} of "
                            f"it already (a match in part 2) but never above it, even at "
                            f"{BANDWIDTH_RANGE[1]:g}x")
                elif _network_free_short(ideal, model, phase, gpus,
                                         have[0].baseline_tokens_per_s_per_sm):
                    text = (f"{who} never match{'es' if len(gpus) == 1 else ''} it: memory or "
                            f"compute, not the network, holds "
                            f"{'it' if len(gpus) == 1 else 'them'} back")
                else:
                    text = (f"{who} {'does' if len(gpus) == 1 else 'do'} not match it even at "
                            f"{BANDWIDTH_RANGE[1]:g}x")
                parts.append(text)
            line = f"- **{model}, {phase}**: " + "; ".join(parts)
            tol = [r for r in mine if r.latency_bound in ("found", "above range")]
            if tol:
                best = max(tol, key=lambda r: r.hop_latency_to_match)
                # 'above range': it still matches at the range's top, so more than that
                most = "more than" if best.latency_bound == "above range" else "up to"
                line += (f". Where a variant matches already, it tolerates {most} "
                         f"{best.hop_latency_to_match * 1e6:.3g} us added per hop ({best.gpu} "
                         f"on {best.fabric})")
            out.append(line + ".")
    return out + [""]


def _bw_text_short(r) -> str:
    return f"<{r.bandwidth_to_match:.3g}x" if r.bandwidth_bound == "below range" else \
        f"{r.bandwidth_to_match:.3g}x"


# ------------------------------------------------------------------ part 3

def _sweep_part(sw) -> list[str]:
    p = sw.params[0]
    lo, hi = p.values[0], p.values[-1]
    unit = p.display()
    out = ["## 3. Per-hop latency (sweep.csv, sweep.png)", "",
           f"{p.path} from {lo * unit[0]:g} to {hi * unit[0]:g} {unit[1]} added to every link "
           f"of every fabric; decode tokens/s/SM of the best configuration.", ""]
    cross = sw.crossovers()
    base = sw.labels[0]
    for model in sw.models:
        for phase in sw.phases:
            drops, lost = [], []
            for lab in sw.labels:
                x, v = sw.curve(lab, model, phase)
                if math.isfinite(v[0]) and math.isfinite(v[-1]) and v[0] > 0:
                    drops.append((1 - v[-1] / v[0], lab, v[0], v[-1]))
                elif math.isfinite(v[0]):
                    # the swept values bracket where it stops: it meets the SLO at the
                    # last finite point, not at the next, and between them nobody looked
                    last = max(k for k in range(len(v)) if math.isfinite(v[k]))
                    lost.append(f"{lab} meets the SLO at {x[last] * unit[0]:.3g} {unit[1]} "
                                f"but not at {x[last + 1] * unit[0]:.3g} {unit[1]}")
                else:
                    lost.append(f"{lab} meets the SLO nowhere in the range")
            drops.sort()
            mine = [c for c in cross if (c["model"], c["phase"]) == (model, phase)
                    and base in (c["before"], c["after"])]
            line = f"- **{model}, {phase}**: "
            if drops:
                line += ("tokens/s/SM falls by " + ", ".join(
                    f"{d:.0%} on {lab}" for d, lab, _, _ in drops) + ". ")
            if lost:
                line += "; ".join(lost) + ". "
            if mine:
                line += " ".join(_crossing_text(c, x, unit) for c in mine)
            else:
                v0 = {lab: sw.curve(lab, model, phase)[1] for lab in sw.labels}
                above = [lab for lab, v in v0.items() if lab != base
                         and all(x > y for x, y in zip(v, v0[base], strict=True))]
                line += (f"No scenario crosses {base} in this range"
                         + (f" ({_list(above)} stay above it)." if above else "."))
            out.append(line)
    return out + [""]


def _crossing_text(c: dict, x, unit: tuple) -> str:
    """One sweep crossover in words. ``c['x']`` is interpolated between the two swept
    values around the sign change, so the sentence names them and says who leads at each,
    claiming no more than the sweep evaluated."""
    k = bisect.bisect_left(list(x), c["x"])
    lo, hi = x[max(k - 1, 0)] * unit[0], x[min(k, len(x) - 1)] * unit[0]
    u = unit[1]
    return (f"{c['before']} leads {c['after']} below {c['x'] * unit[0]:.3g} {u} (by "
            f"interpolation between the swept {lo:.3g} {u}, where it leads, and {hi:.3g} {u}, "
            f"where {c['after']} leads).")


# ------------------------------------------------------------------ parts 4 and 5

def _reliability_part(rel, fab) -> list[str]:
    if not rel.summaries:
        return []
    s0 = rel.summaries[0]
    out = ["## 4. Blast radius and availability (reliability.csv, reliability_spares.png)", "",
           f"{s0.model}, {s0.phase}, {_own(fab.scenarios)} and one copy of its fabric; "
           "failure and repair rates from netmodel/data/failures.toml (a source per number); "
           "closed forms. SMs down per GPU failure: hardware (the GPU) and software (every "
           "GPU of its instance).", "",
           "| scenario | GPUs | TP | SMs down (hw) | SMs down (sw) | GPU failures/yr | "
           f"availability | with spares | spares to keep >= {100 * s0.threshold:.4g}% of "
           f"capacity {100 * s0.quantile:.4g}% of the time |",
           "|---|---|---|---|---|---|---|---|---|"]
    for s in rel.summaries:
        need = "none reaches it" if s.spares_needed is None else \
            f"{s.spares_needed} ({s.spares_needed_placement})"
        out.append(f"| {s.scenario} | {s.gpus} | {s.tp} | {s.sms_down_per_gpu_failure_hw:.0f} "
                   f"| {s.sms_down_per_gpu_failure_sw:.0f} | {s.gpu_failures_per_year:.2f} | "
                   f"{s.availability:.5f} | {s.availability_with_spares:.5f} "
                   f"({s.spares} {s.spare_placement}) | {need} |")
    out.append("")
    base = next((s for s in rel.summaries if s.scenario == fab.baseline), None)
    lites = [s for s in rel.summaries if s is not base]
    if base and lites:
        them = _others(s.scenario.split("@")[-1] for s in lites)
        hw = [s.sms_down_per_gpu_failure_hw / base.sms_down_per_gpu_failure_hw for s in lites]
        sw = [s.sms_down_per_gpu_failure_sw / base.sms_down_per_gpu_failure_sw for s in lites]
        # failures per SM of silicon: equal-silicon clusters compared
        rate = [(s.gpu_failures_per_year / (s.gpus * s.sms_down_per_gpu_failure_hw))
                / (base.gpu_failures_per_year / (base.gpus * base.sms_down_per_gpu_failure_hw))
                for s in lites]
        verdict = "smaller, as the paper expects" if max(hw) < 1 else "not smaller"
        out.append(f"- **Hardware blast radius**: a {them['one']} failure takes {_span(hw)} "
                   f"the SMs of "
                   f"an H100 failure ({verdict}).")
        out.append(f"- **Software blast radius**: an instance goes down whole, so a GPU "
                   f"failure takes {_span(sw)} the SMs it takes on {base.scenario}, "
                   f"and for the same silicon the {them['many']} have {_span(rate)} as many GPU "
                   f"failures a year "
                   + ("(the paper's expectation of a smaller radius does not hold in "
                      "software)." if min(sw) >= 1 - TIE else "(smaller in software too)."))
        worse = [s for s in lites if s.availability < base.availability]
        out.append(f"- **Availability without spares**: {base.scenario} {base.availability:.5f}; "
                   + ", ".join(f"{s.scenario} {s.availability:.5f}" for s in lites)
                   + (f" ({len(worse)} of {len(lites)} {them['fabrics']} below the baseline)."
                      if worse else "."))
    helped = [s for s in rel.summaries if s.availability_with_spares > s.availability]
    flat = [s for s in rel.summaries if s not in helped]
    if helped:
        out.append("- **Hot spares**: the reference pool raises availability on "
                   + _list(f"{s.scenario} ({s.availability:.5f} to "
                           f"{s.availability_with_spares:.5f} with {s.spares} "
                           f"{s.spare_placement})" for s in helped)
                   + (("; on " + _list(s.scenario for s in flat) + " the fabric has no free "
                       "port to reach a spare, so only whole spare instances (global) help")
                      if flat else "") + ".")
    for label, why in rel.notes.items():
        out.append(f"- {label}: not computed ({why}).")
    return out + [""]


def _cost_part(cost, fab) -> list[str]:
    if not cost.summaries:
        return []
    s0 = cost.summaries[0]
    out = ["## 5. Power and cost (cost.json, cost_per_scenario.png, cost_yield_vs_area.png)",
           "", f"{s0.model}, {_own(fab.scenarios)} at its best configuration; prices, "
           "power and yield defaults in compute/data/economics.toml and "
           "netmodel/data/network_costs.toml (a source and confidence tag per number; "
           "estimates say so).", "",
           "| scenario | phase | tokens/s/W | USD per Mtoken | network share of capex | "
           "of power |", "|---|---|---|---|---|---|"]
    for s in cost.summaries:
        out.append(f"| {s.scenario} | {s.phase} | {_v(s.tokens_per_s_per_w)} | "
                   f"{_v(s.usd_per_mtoken)} | {s.network_share_capex:.0%} | "
                   f"{s.network_share_power:.0%} |")
    out.append("")
    h, lite = cost.marks.get("H100-SXM"), cost.marks.get("Lite")
    if h and lite:
        logic = lite.die.cost_per_good_sm / h.die.cost_per_good_sm
        whole = lite.per_sm / h.per_sm
        # the plain Lite against the H100, the paper's question: said to be a reference
        # where the rows above price no plain Lite (--gpus B200-HGX, or Lite+BW alone)
        priced = {s.gpu for s in cost.summaries}
        ref = "" if "Lite" in priced else (
            f" (for reference: the rows above price no plain Lite, but "
            f"{_list(sorted(priced - {'H100-SXM'})) or 'the H100-SXM alone'})")
        out.append(f"- **Per good SM**{ref}, a Lite die costs {_x(logic)} an H100 die "
                   f"(yield falls with area) and a Lite package {_x(whole)} an H100 package "
                   f"(per-package HBM, packaging and test).")
    for phase in dict.fromkeys(s.phase for s in cost.summaries):
        rows = [s for s in cost.summaries if s.phase == phase and s.usd_per_mtoken]
        base = next((s for s in rows if s.scenario == fab.baseline), None)
        others = [s for s in rows if s is not base]
        if base and others:
            out.append(f"- **{base.model} {phase}, cost**: USD per million tokens relative "
                       f"to {base.scenario}: "
                       + ", ".join(f"{s.scenario} {_x(s.usd_per_mtoken / base.usd_per_mtoken)}"
                                   for s in others) + "; tokens/s/W: "
                       + ", ".join(f"{s.scenario} "
                                   f"{_x(s.tokens_per_s_per_w / base.tokens_per_s_per_w)}"
                                   for s in others) + ".")
    return out + [""]


def _serving_part(part) -> list[str]:
    rows = part.rows()
    if not rows:
        return []
    out = ["## 6. Disaggregated serving (serving.csv, serving.png)", "",
           f"{rows[0]['model']}: a prefill pool and a decode pool, each at its own best "
           "configuration, each request's KV cache sent over the fabric from one to the other "
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
        line = (f"- **{mine[0]['model']} served disaggregated, {w}** (prompt "
                f"{mine[0]['prompt']}, output {mine[0]['output']} tokens): ")
        if rest:
            line += (f"service tokens/s/SM relative to {part.baseline}: " + ", ".join(
                f"{r['scenario']} {_x(r['vs_baseline'])}" for r in rest) + "; ")
        if base and base["feasible"]:
            line += (f"decode GPUs per prefill GPU {base['decode_gpus_per_prefill_gpu']:.3g} "
                     f"on {base['scenario']}" + "".join(
                         f", {r['decode_gpus_per_prefill_gpu']:.3g} on {r['scenario']}"
                         for r in rest) + "; ")
        line += (f"the KV transfer is at most {share:.1%} of a TTFT." if share >= 0.0005
                 else "the KV transfer is under 0.05% of a TTFT.")   # not "at most 0.0%"
        out.append(line)
    return out + [""]


def _moe_part(moe) -> list[str]:
    if not moe.rows:
        return []
    model = moe.rows[0].model
    staged = any(r.pp > 1 for r in moe.rows if r.feasible)   # a PP column only then
    pp = " | PP" if staged else ""
    how = moe.settings.get("parallelism")
    spread = ("by tensor parallelism alone (--parallelism tp: each expert split over the TP "
              "group, no all-to-alls)" if how == "tp" else
              "with expert and attention data parallelism as well as tensor parallelism"
              + (" and pipeline stages (--parallelism all)" if how == "all" else "")
              + " (dispatch and combine all-to-alls costed on the fabric)")
    out = [f"## 7. A mixture of experts: {model} (compare_moe.csv)", "",
           _own(moe.scenarios, "Each scenario with its own GPU") + f"; the search spreads "
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
                   f"{r.instance_gpus} | {r.batch} | {_v(r.tokens_per_s_per_sm)} | "
                   f"{_x(r.vs_baseline)} | {r.network_share:.0%} |")
    out.append("")
    for phase in moe.phases:
        rows = [r for r in moe.rows if r.phase == phase and r.label != moe.baseline
                and r.vs_baseline is not None]
        if rows:
            best = max(rows, key=lambda r: r.vs_baseline)
            tied = [r.label for r in rows if r is not best
                    and r.vs_baseline >= best.vs_baseline * (1 - TIE)]
            them = _others(r.gpu for r in rows)
            out.append(f"- **{model} {phase}**: the {them['fabrics']} reach "
                       f"{_span([r.vs_baseline for r in rows])}"
                       f" of {moe.baseline}; best {best.label} ("
                       + (f"PP {best.pp}, " if best.pp > 1 else "")
                       + f"EP {best.ep}, attention DP {best.attention_dp})"
                       + (f", tied within {TIE:.1%} by {_list(tied)}" if tied else "") + ".")
    limit = moe.settings.get("max_batch")
    capped = [r for r in moe.rows if r.feasible and r.batch == limit]
    if capped:   # the search's cap, not an optimum: say so beside the ratios it bounds
        phases = sorted({r.phase for r in capped})
        out.append(f"- {len(capped)} of {len(moe.rows)} rows ({', '.join(phases)}) "
                   f"{'sits' if len(capped) == 1 else 'sit'} at the "
                   f"search's largest batch ({limit}): each could serve more tokens/s/SM "
                   f"with a larger one (`--max-batch` of `netmodel compare`), so these "
                   f"ratios compare the fabrics at that cap.")
    return [*out, ""]


def _notes(study) -> list[str]:
    out = ["## How it was modelled", "",
           "- Per-stage roofline (compute/): stage time = max(compute, memory, network); the "
           "tensor-parallel all-reduces after attention and MLP are "
           + ("each hidden behind the GEMM that produces its input (--overlap-collectives), "
              "as the paper assumes." if _overlapped(study.ideal)
              else "stages of their own."),
           "- Collectives (netmodel/): alpha-beta costs routed over each fabric graph, the "
           "fastest algorithm per message size, NCCL-sourced latencies and efficiencies.",
           "- Each instance is costed alone, placed where the scenario's placement puts the "
           "first one, except in part 2d, where every instance runs at once and stranded "
           "GPUs are charged."]
    if study.fabric is None:   # --no-fabric: part 1's networks are all that ran
        nets = {"ring": "ring (alpha-beta rings over each GPU's own scale-up bandwidth)",
                "ideal": "ideal (every collective free)"}
        out[3:] = ["- Collectives: part 1's networks only (no fabric ran): "
                   + " and ".join(nets.get(n, n) for n in study.ideal.networks) + "."]
    elif getattr(study, "packed", None) is None:
        out[4] = ("- Each instance is costed alone, placed where the scenario's placement "
                  "puts the first one.")
    profile = study.ideal.settings.get("options", {}).get("profile")
    if profile:   # --profile: the roofline's peaks are not what ran
        out.insert(3, f"- Calibrated mode (--profile {profile['name']}): every part's step "
                      f"times take the engine profile's GEMM and attention efficiencies, "
                      f"achievable HBM bandwidth and fixed overheads instead of the GPUs' "
                      f"peak figures (fitted on {profile['fitted_on']}).")
    if study.fabric is not None:
        out.append("- Scenarios (netmodel/data/scenarios/*.toml, sources in each file): "
                   + "; ".join(f"{s.name}: {s.description}" for s in
                               {s.name: s for s in study.fabric.scenarios}.values()) + ".")
    return out
