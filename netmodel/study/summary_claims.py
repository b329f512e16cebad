"""Part 2b of the study's summary (:mod:`netmodel.study.summary`): the Lite-GPU paper's
claims checked against the fabric comparison, under netmodel's assumption and the
paper's.
"""

from __future__ import annotations

import statistics

from netmodel.study.run_words import named
from netmodel.study.summary_words import (
    TIE,
    and_list,
    cases,
    config_label,
    geomean,
    ran_overlapped,
    ratio_span,
    ratio_x,
)

#: A plain Lite "falls short" of the H100 when more than this below it (5%: the model's own
#: resolution).
MATCH = 0.05
#: The fabric "decides" when the best and worst fabric differ by at least this factor.
DECIDES = 1.10


def _ratios(fab, gpu: str) -> dict:
    """``{(fabric name, model, phase): vs_baseline}`` of one GPU's feasible rows."""
    return {(r.scenario, r.model, r.phase): r.vs_baseline for r in fab.rows
            if r.gpu == gpu and r.label != fab.baseline and r.vs_baseline is not None}


def _claim_plain(fab, lite: str) -> str:
    """The paper's first claim (issue 2: the plain Lite can fall short of the H100): it
    holds where the plain Lite, on its best fabric, falls more than :data:`MATCH` short of
    the baseline in some model x phase case."""
    ratios = _ratios(fab, lite)
    if not ratios:
        return f"no feasible {lite} row"
    names = sorted({k[0] for k in ratios})
    cells = sorted({k[1:] for k in ratios})
    per = {n: [ratios.get((n, *c)) for c in cells] for n in names}
    best = max(names, key=lambda n: geomean(per[n]) or 0)
    vals = [v for v in per[best] if v is not None]
    mean = geomean(vals)
    short = sum(v < 1 - MATCH for v in vals)
    verdict = "holds" if short else "does not hold"
    return (f"{verdict}: on its best fabric ({best}) a plain {lite} falls short in {short} of "
            f"{cases(len(vals), 'model x phase ')} and reaches {ratio_x(mean)} of the baseline "
            f"(geometric mean over models and phases; {ratio_span(vals)})")


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
            return (f"not assessed: this run has no customized Lite ({named('gpus')} names "
                    f"only the "
                    f"baseline's GPU and the plain {lite})")
        return "no customized Lite is feasible"
    met = [b for b in best if b[0] >= 1 - TIE]
    verdict = "holds" if len(met) == len(best) else \
        ("holds in part" if met else "does not hold")
    worst = min(best)
    text = (f"{verdict}: the best customized Lite matches or beats the baseline in "
            f"{len(met)} of {cases(len(best), 'model x phase ')}")
    if met:
        top = max(met)
        text += f" (best: {top[3]} in {top[1]} {top[2]}, {ratio_x(top[0])})"
    if len(met) < len(best):
        text += (f"; the furthest behind is {worst[1]} {worst[2]} at {ratio_x(worst[0])} "
                 f"({worst[3]})")
    return text


def _claim_fabric(fab, lite: str) -> str:
    spreads, flips, n = [], 0, 0
    gpus = sorted({r.gpu for r in fab.rows if r.label != fab.baseline})
    for g in gpus:
        ratios = _ratios(fab, g)
        for cell in {k[1:] for k in ratios}:
            vals = [v for k, v in ratios.items() if k[1:] == cell]
            if len(vals) < 2:
                continue
            n += 1
            spreads.append(max(vals) / min(vals))
            if max(vals) >= 1 - TIE > min(vals):
                flips += 1
    if not spreads:   # one fabric, or fewer than two feasible rows with a ratio
        return "not assessed: no GPU has rows with a ratio to the baseline on two fabrics"
    spreads.sort()
    median = statistics.median(spreads)
    verdict = "holds" if median >= DECIDES else "does not hold"
    return (f"{verdict}: for the same GPU, model and phase the best fabric gives "
            f"{median:.2f}x the worst's tokens/s/SM (median of {cases(n)}; up to "
            f"{spreads[-1]:.2f}x), and in {flips} of them the fabric decides whether the Lite "
            f"matches the baseline")


def claims_section(study) -> list[str]:
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
                f"variants; this run has no Lite ({and_list(lites)}), so they are not "
                f"assessed.", ""]
    plain = "Lite"
    papers = "the paper's (each collective overlapped with the GEMM that feeds it)"
    if ran_overlapped(fab):   # --overlap-collectives: the comparison itself is the paper's
        parts = [(papers, fab)]
    else:
        parts = [("netmodel's default (each tensor-parallel collective a stage of its own)",
                  fab)] + ([(papers, paper)] if paper is not None else [])
    head = ("under both assumptions (compare.csv, compare_paper.csv)" if len(parts) == 2
            else "under the paper's assumption (compare.csv)" if ran_overlapped(fab)
            else "under netmodel's default (compare.csv)")
    asked = (f" unless asked; this run asks ({named('overlap_collectives')})"
             if ran_overlapped(fab) else " unless asked")
    out = [f"## 2b. The paper's claims, {head}", "",
           f"The Lite-GPU paper (arXiv 2501.10187, section 4) overlaps network I/O with "
           f"compute and memory inside each stage; netmodel charges the collectives as stages "
           f"of their own{asked}. Falling short means more than {MATCH:.0%} below "
           f"{fab.baseline} for the plain Lite; matching, within {TIE:.1%} for the others.", ""]
    claims = [(f"A plain {plain} (no extra bandwidth) can fall short of the H100 cluster",
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
            moved = sum((config_label(d), d.batch) != (config_label(p), p.batch) for d, p in both)
            out.append(f"- Overlapping the collectives gives {ratio_span(gain)} the tokens/s/SM of "
                       f"serializing them (never less: no configuration's step gets longer; "
                       f"the best configuration or batch moves in {moved} of {len(both)} "
                       f"rows).")
    return out + [""]
