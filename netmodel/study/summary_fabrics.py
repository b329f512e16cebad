"""Parts 1, 2 and 2d of the study's summary (:mod:`netmodel.study.summary`): tokens/s/SM of
the GPUs alone, of each GPU on each fabric, and of the instances packed into the cluster.
"""

from __future__ import annotations

import statistics

from netmodel.study.summary_words import (
    TIE,
    and_list,
    cases,
    config_label,
    geomean,
    other_gpu_words,
    own_gpu_words,
    plain_tp,
    ratio_span,
    ratio_x,
    sig3,
    verb_for,
)

# ------------------------------------------------------------------ part 1

def ideal_section(ideal, models, gpus, phases) -> list[str]:
    """Section 1 of the summary: per phase, each GPU's tokens/s/SM and ratio to the
    baseline with the ideal network (free collectives; where the study ``ideal`` did not
    run it, its first network), what the ratios say, and what rings keep of it."""
    nets = ideal.networks
    net = "ideal" if "ideal" in nets else nets[0]
    base = ideal.baseline
    out = [f"## 1. GPUs alone: {net} network (study.csv, tokens_per_sm.png)", "",
           f"Cells: tokens/s/SM (ratio to {base}) with the {net} network"
           + (" (free collectives)." if net == "ideal" else ".") + " " + _tie_words(f"the {base}"),
           ""]
    for phase in phases:
        out += [f"**{phase}**", "", "| GPU | " + " | ".join(models) + " |",
                "|---|" + "---|" * len(models)]
        for g in gpus:
            cells = [f"{sig3(r.tokens_per_s_per_sm)} ({ratio_x(r.vs_baseline)})"
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
        lines = [f"the {base} has no feasible configuration for {and_list(none)}, so no ratio "
                 f"there"] if none else []
        if ok:
            lines.append(f"{and_list(ok)} {verb_for(ok, 'matches or beats', 'match or beat')} "
                         f"the {base} for every model "
                         f"({'; '.join(f'{g} {ratio_span(ratios[g])}' for g in ok)})")
        if short:
            lines.append(f"{and_list(short)} {verb_for(short, 'falls', 'fall')} short for every "
                         f"model "
                         f"({'; '.join(f'{g} {ratio_span(ratios[g])}' for g in short)})")
        mixed = [g for g in ratios if g not in ok and g not in short]
        if mixed:
            lines.append(f"{and_list(mixed)} {verb_for(mixed, 'depends', 'depend')} on the model "
                         f"({'; '.join(f'{g} {ratio_span(ratios[g])}' for g in mixed)})")
        out.append(f"- **{phase}, {net} network**: " + "; ".join(lines) + ".")
        if "Lite" in ratios and ratio_span(ratios["Lite"]) != "-":
            out.append(f"- **{phase}**: the plain Lite reaches {ratio_span(ratios['Lite'])} of the "
                       f"{base}'s tokens/s/SM.")
    them = other_gpu_words(gpus, base)
    if "ring" in nets and "ideal" in nets:
        for phase in phases:
            loss = {g: [_keep(ideal, m, g, phase) for m in models] for g in gpus}
            kept = [f"{ratio_span(loss[base])} of the {base}'s tokens/s/SM",
                    f"{ratio_span([v for g in lites for v in loss[g]])} of the {them['many']}'"]
            kept = [k for k in kept[:1 + bool(lites)] if not k.startswith("-")]
            if kept:   # '-': nothing feasible on both networks
                out.append(f"- **{phase}**: rings over the scale-up bandwidth instead of free "
                           f"collectives keep {' and '.join(kept)}.")
    return out + [""]


def _tie_words(base: str) -> str:
    """The rule the bullets below a table read its ratios by: a GPU matching ``base`` (its
    name as the bullets write it: "the H100-SXM", "h100-dgx@H100-SXM") is at
    most TIE below it (0.9993x is a match, 0.986x falls short), where part 2b's claims let
    the plain Lite fall short only further below (summary_claims.MATCH); said where the
    words are used, so "falls short" at 0.99x is not read as a contradiction of 2b."""
    return (f"In the bullets, a GPU matches or beats {base} when at most {TIE:.1%} below "
            f"it, and falls short when further below.")


def _keep(ideal, model, gpu, phase):
    a, b = ideal.row(model, gpu, phase, "ring"), ideal.row(model, gpu, phase, "ideal")
    if a.feasible and b.feasible:
        return a.tokens_per_s_per_sm / b.tokens_per_s_per_sm
    return None


# ------------------------------------------------------------------ part 2

def fabric_section(fab) -> list[str]:
    """Section 2 of the summary: per phase and model, each scenario's tokens/s/SM of the
    best configuration on its fabric with each GPU, ratio to the baseline, from the
    comparison ``fab``, and what the ratios say."""
    base = fab.baseline
    names = list(dict.fromkeys(s.name for s in fab.scenarios))
    gpus = list(dict.fromkeys(s.gpu for s in fab.scenarios))
    labels = set(fab.labels)
    out = ["## 2. On fabrics (compare.csv, compare_tokens_per_sm.png, compare_time_split.png)",
           "", f"Cells: tokens/s/SM of the best configuration on the fabric (ratio to {base}); "
           f"'.' where the scenario is not run with that GPU. {_tie_words(base)}", ""]
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
                    cells.append(f"{sig3(r.tokens_per_s_per_sm)} ({ratio_x(r.vs_baseline)})")
                out.append(f"| {n} | " + " | ".join(cells) + " |")
            out.append("")
    others = [n for n in names if n != base.split("@")[0]]
    for phase in fab.phases:
        rows = [r for r in fab.rows if r.phase == phase and r.label != base]
        rank = sorted(((geomean([r.vs_baseline for r in rows if r.scenario == n]), n)
                       for n in others), key=lambda t: -(t[0] or 0))
        unrated = [n for v, n in rank if v is None]   # no feasible row with a ratio
        rank = [(v, n) for v, n in rank if v is not None]
        if rank:   # --scenarios h100-dgx: nothing to rank against it
            out.append(f"- **{phase}, fabrics ranked** by the geometric mean of tokens/s/SM "
                       f"over models and GPUs, relative to {base}: "
                       + ", ".join(f"{n} {ratio_x(v)}" for v, n in rank)
                       + (f"; no ratio on {and_list(unrated)}" if unrated else "") + ".")
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
                by.setdefault(r.model, []).append(f"{r.label} {ratio_x(r.vs_baseline)}")
            out.append(f"- **{phase}, match or beat {base}**: "
                       + "; ".join(f"{m}: {', '.join(v)}" for m, v in by.items()) + ".")
        else:
            best = max((r for r in rows if r.vs_baseline), key=lambda r: r.vs_baseline,
                       default=None)
            if best:
                out.append(f"- **{phase}**: no {other_gpu_words(gpus)['one']} configuration on any "
                           f"fabric matches "
                           f"{base}; the closest is {best.label} for {best.model} at "
                           f"{ratio_x(best.vs_baseline)}.")
        for n in others:
            mine = [r for r in rows if r.scenario == n and r.feasible]
            if mine:
                shares = [r.network_share for r in mine]
                out.append(f"- **{phase}, {n}**: keeps {ratio_span([r.vs_ideal for r in mine])} "
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
                if len({config_label(r) for r in rows}) > 1:
                    tp_differ.append((model, g, phase, rows))
                elif len({r.batch for r in rows}) > 1:
                    batch_differ += 1
    if not total:
        return []
    what = "TP degree" if plain_tp(seen) else "configuration"
    line = (f"- The best {what} depends on the fabric in {len(tp_differ)} of "
            f"{cases(total, 'model x GPU x phase ')}, and only the batch in {batch_differ} more")
    if tp_differ:
        model, g, phase, rows = tp_differ[0]
        line += (f" (e.g. {model} {phase} on {g}: "
                 + ", ".join(f"{r.scenario} {config_label(r)} batch {r.batch}" for r in rows) + ")")
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
                   f"{r.phase} on {r.gpu}, {_count(r.tokens_per_s)} tokens/s) "
                   f"{r.reconfiguration_s * 1e3:g} ms is the time of "
                   f"{_count(r.reconfiguration_s * r.tokens_per_s)} tokens.")
    return out


def _count(v: float) -> str:
    """A count as the tables write one: whole with thousands separators from 100 up
    ('11,865', where .4g wrote '1.187e+04'), three significant figures below."""
    return f"{v:,.0f}" if v >= 100 else f"{v:.3g}"


# ------------------------------------------------------------------ part 2d

def packed_section(alone, packed) -> list[str]:
    """Section 2d of the summary: what changes when instances are packed into the cluster
    (the comparison ``packed``) rather than run alone (``alone``)."""
    alone_rows = {(r.model, r.label, r.phase): r for r in alone.rows}
    pairs = [(alone_rows[(p.model, p.label, p.phase)], p) for p in packed.rows
             if (p.model, p.label, p.phase) in alone_rows]
    pairs = [(a, p) for a, p in pairs if a.feasible and p.feasible]
    if not pairs:
        return []
    out = ["## 2d. Packed into the cluster (compare_packed.csv)", "",
           "Parts 2-2c cost each instance alone, placed where the scenario puts the first, "
           "and divide by the instance's own SMs. Here, for "
           + own_gpu_words(packed.scenarios, "each scenario on its own GPU") + ", "
           "every instance the fabric holds "
           "(floor(GPUs / instance)) runs its collectives at the same time, sharing links, and "
           "tokens/s/SM divides the cluster's tokens/s by every SM, stranded GPUs included.",
           ""]
    ratio = [p.tokens_per_s_per_sm / a.tokens_per_s_per_sm for a, p in pairs]
    out.append(f"- Packed tokens/s/SM is {ratio_span(ratio)} of the alone figure (geometric mean "
               f"{ratio_x(geomean(ratio))}).")
    moved = [(a, p) for a, p in pairs if config_label(a) != config_label(p)]
    if moved:
        out.append(f"- The best configuration changes in {len(moved)} of {cases(len(pairs))}: "
                   + "; ".join(f"{a.model} {a.phase} on {a.label}: {config_label(a)} -> "
                               f"{config_label(p).removeprefix('TP ') if plain_tp([a, p]) else config_label(p)} "
                               f"({p.instances} instances, {p.packed_fraction:.0%} of the "
                               f"GPUs)" for a, p in moved[:6])
                   + ("; ..." if len(moved) > 6 else "") + ".")
    else:
        out.append(f"- The best configuration is the same in all {len(pairs)} cases."
                   if len(pairs) > 1 else "- The best configuration is the same in the one case.")
    stranded = [(a, p) for a, p in pairs if p.packed_fraction < 1]
    if stranded:
        least = min(p.packed_fraction for _, p in stranded)
        # every case at the least use, not the first of a tie (TP 24 of 128 Lites strands
        # 8 on lite-flat, lite-flat-inr, lite-hier and lite-ocs alike)
        where: dict = {}
        for _, p in stranded:
            if p.packed_fraction <= least * (1 + 1e-9):
                where.setdefault((p.model, p.phase), []).append(p.label)
        named = "; ".join(f"{m} {ph} on {and_list(labels)}" for (m, ph), labels in where.items())
        out.append(f"- Stranded GPUs: {cases(len(stranded))} "
                   f"{'leaves' if len(stranded) == 1 else 'leave'} part of the cluster idle "
                   f"(least used: {named}, {least:.0%}).")
    base = packed.baseline
    for phase in packed.phases:
        rows = [p for _, p in pairs if p.phase == phase and p.label != base
                and p.vs_baseline is not None]
        if rows:
            them = other_gpu_words(r.gpu for r in rows)
            out.append(f"- **{phase}**, packed, relative to {base}: {them['fabrics']} "
                       f"{ratio_span([r.vs_baseline for r in rows])}.")
    return out + [""]
