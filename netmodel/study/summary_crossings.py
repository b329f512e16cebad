"""Parts 2c and 3 of the study's summary (:mod:`netmodel.study.summary`): the co-design
crossovers (the network bandwidth a GPU needs to match the baseline) and the per-hop
latency sweep, with the points where one scenario overtakes another.
"""

from __future__ import annotations

import bisect
import math

from compute.errors import UserError
from netmodel.study.summary_words import TIE, and_list, sig3

# ------------------------------------------------------------------ part 2c

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


def crossovers_section(cross, ideal=None) -> list[str]:
    """Section 2c of the summary: the network bandwidth at which each Lite variant matches
    the baseline, from the study's crossovers ``cross``; none without rows. ``ideal``: the
    study's GPUs-alone result, which tells whether a variant that matches at no bandwidth
    in the range is held back by memory or compute (it falls short even on the ideal
    network) or by the fabric (latency, hops)."""
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
                who = and_list(gpus)
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
                    names = ["every fabric" if len(e) == len(have) > 1 else and_list(e)
                             for e in ends]
                    text = f"{who} {verb} {_bw_text_short(lo)} ({names[0]})"
                    if len(ends) > 1:
                        text += f" to {_bw_text_short(hi)} ({names[1]})"
                    if never:
                        text += (f" and {'does' if len(gpus) == 1 else 'do'} not match on "
                                 f"{and_list(never)} even at {BANDWIDTH_RANGE[1]:g}x")
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
    """A bandwidth multiple at three significant figures, trailing zeros kept (sig3:
    "4.00x" and "5.10x" as crossovers.csv and crossovers.png give 4.00 and 5.10; .3g wrote
    "4x" and "5.1x" beside "2.59x"), "<" where the match lies below the searched range."""
    text = f"{sig3(r.bandwidth_to_match)}x"
    return "<" + text if r.bandwidth_bound == "below range" else text


# ------------------------------------------------------------------ part 3

def sweep_section(sw) -> list[str]:
    """Section 3 of the summary: per model and phase, what the sweep ``sw``'s parameter
    (per-hop latency) costs each fabric in the best configuration's tokens/s/SM, where a
    fabric stops meeting the SLO, and where it crosses the baseline."""
    p = sw.params[0]
    lo, hi = p.values[0], p.values[-1]
    unit = p.display()
    out = ["## 3. Per-hop latency (sweep.csv, sweep.png)", "",
           f"{p.path} from {lo * unit[0]:g} to {hi * unit[0]:g} {unit[1]} added to every link "
           f"of every fabric; decode tokens/s/SM of the best configuration.", ""]
    cross = sw.crossovers()
    apart = None   # sw.no_crossings(), read where no crossing is said
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
            else:   # those on the higher side at every value both are feasible at
                apart = sw.no_crossings() if apart is None else apart
                above = [n["above"] for n in apart
                         if (n["model"], n["phase"], n["below"]) == (model, phase, base)]
                line += (f"No scenario crosses {base} in this range"
                         + (f" ({and_list(above)} {'stays' if len(above) == 1 else 'stay'} above "
                            f"it)." if above else "."))
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
