"""What the reports of ``scripts/accuracy_inference.py`` share beyond the data: a table as
Markdown or aligned text (:func:`render`), a profile's fit and held-out table
(:func:`fit_table`), the held-out sets of :data:`~inference_reports.common.GROUPS` as tables
(:func:`held_out_tables`), a profile's error on a row and the summaries of many
(:func:`phase_summary`, :func:`verdict`).
"""

from __future__ import annotations

from inference_reports.common import FIT, GROUPS, SCENARIO, TARGET


def relative_error(profile, m, comm) -> float:
    """``profile``'s relative error on the measured row ``m`` (collectives from ``comm``)."""
    from compute.profile_fit import predict

    return predict(profile, m, comm(m)) / m.latency_s - 1


def refit_on_llama8(rows, base_profile, name: str, comm, fit) -> tuple[int, list]:
    """A profile fitted on every Llama-2-70B TP 8 row of ``rows`` (BLOOM-176B still held
    out; ``fit`` says which rows the shown profile was fitted on): ``(rows fitted on,
    [(error, row)] of BLOOM-176B, the first set of :data:`GROUPS`)``."""
    from compute.profile_fit import fit_profile

    llama8 = [m for m in rows if m.model == "Llama-2-70B" and m.tp == 8]
    refit = fit_profile(llama8, fit=FIT, base=base_profile, comm_for=comm, name=name).profile
    return len(llama8), [(relative_error(refit, m, comm), m) for m in rows if GROUPS[0][1](m, fit)]


def _worst(points):
    """(error, measurement) of the largest error in magnitude."""
    return max(points, key=lambda p: abs(p[0]))


def phase_summary(points) -> str:
    """``prefill worst -34.5% (batch 16 prompt 512), 9 of 13 within 30%; decode ...``."""
    parts = []
    for phase in ("prefill", "decode"):
        pts = [(e, m) for e, m in points if m.phase == phase]
        if not pts:
            continue
        e, m = _worst(pts)
        where = f"batch {m.batch} " + (f"prompt {m.prompt}" if phase == "prefill"
                                       else f"context {m.context}")
        inside = sum(abs(x) <= TARGET for x, _ in pts)
        parts.append(f"{phase} worst {e:+.1%} ({where}), {inside} of {len(pts)} within "
                     f"{TARGET:.0%}")
    return "; ".join(parts)


def verdict(points) -> str:
    """``missed in prefill (worst -31.1%), met in decode (worst -7.9%)`` against
    :data:`TARGET`."""
    verdict = []
    for phase in ("prefill", "decode"):
        e, _ = _worst([(e, m) for e, m in points if m.phase == phase])
        verdict.append(f"{'met' if abs(e) <= TARGET else 'missed'} in {phase} (worst "
                       f"{e:+.1%})")
    return ", ".join(verdict)


def bound(m):
    """The roofline mode's default collectives on ``m``'s GPU (``netmodel infer`` without
    ``--scenario``, ``--fabric`` or ``--profile``): the scale-up lower bound
    (:func:`compute.roofline.default_comm`)."""
    from compute.profile_fit import gpu_of
    from compute.roofline import default_comm

    return default_comm(gpu_of(m))


def held_out_tables(ms, profile, comm, fit, markdown: bool, scenario: str = SCENARIO):
    """Per :data:`GROUPS` set a table of its rows (measured, roofline with the scenario's
    collectives, calibrated with ``profile``, error) and a summary line; ``fit`` says which
    rows ``profile`` was fitted on. Returns ``(lines, summaries, errors by set, bound
    margins, scenario margins)``."""
    from compute.profile_fit import predict, roofline

    head = ["measurement", "measured ms", f"roofline {scenario} ms", "below by",
            "calibrated ms", "error"]
    out, summary, bound_margin, dgx_margin, by_group = [], [], [], [], {}
    for title, pick in GROUPS:
        rows, points = [], []
        for m in (m for m in ms if pick(m, fit)):
            dgx = roofline(m, comm(m))
            cal = predict(profile, m, comm(m))
            bound_margin.append(m.latency_s / roofline(m, bound(m)))
            dgx_margin.append(m.latency_s / dgx)
            points.append((cal / m.latency_s - 1, m))
            rows.append([m.label(), f"{m.latency_s * 1e3:.1f}", f"{dgx * 1e3:.1f}",
                         f"{m.latency_s / dgx:.2f}x", f"{cal * 1e3:.1f}",
                         f"{points[-1][0]:+.1%}"])
        by_group[title] = points
        out += render(head, rows, markdown, title)
        summary.append(f"{title}, {len(points)} rows: {phase_summary(points)}.")
    return out, summary, by_group, bound_margin, dgx_margin


def render(head, rows, markdown: bool, title: str = "") -> list[str]:
    """A table as Markdown or as aligned text, under ``title``."""
    if markdown:
        out = [f"**{title}**", ""] if title else []
        out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        return out + ["| " + " | ".join(r) + " |" for r in rows] + [""]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows, strict=True)]
    out = [title] if title else []
    out += ["  ".join(str(x).rjust(w) for x, w in zip(r, widths, strict=True))
            for r in [head, *rows]]
    return out + [""]


def fit_table(ms, profile, base_profile, comm, markdown: bool, scenario: str = SCENARIO):
    """The rows a profile is fitted on: measured, the roofline (with the default GPU-only
    collectives, the scale-up bound, and with ``scenario``'s),
    ``profile``'s fit error and each row held out (fitted like ``profile``, from
    ``base_profile``, on the others). Returns ``(lines, summaries)``."""
    from compute.profile_fit import leave_one_out, predict, roofline

    held = leave_one_out(ms, fit=FIT, base=base_profile, comm_for=comm)
    head = ["measurement", "measured ms", "roofline bound ms", "below by", f"roofline "
            f"{scenario} ms", "below by", "calibrated ms", "fit err", "held-out ms",
            "held-out err"]
    rows, margins = [], []
    for m, h in zip(ms, held, strict=True):
        low = roofline(m, bound(m))
        dgx = roofline(m, comm(m))
        cal = predict(profile, m, comm(m))
        margins += [m.latency_s / low, m.latency_s / dgx]
        rows.append([m.label(), f"{m.latency_s * 1e3:.1f}", f"{low * 1e3:.1f}",
                     f"{m.latency_s / low:.2f}x", f"{dgx * 1e3:.1f}",
                     f"{m.latency_s / dgx:.2f}x", f"{cal * 1e3:.1f}",
                     f"{cal / m.latency_s - 1:+.1%}", f"{h.predicted_s * 1e3:.1f}",
                     f"{h.error:+.1%}"])
    fit_errors = [relative_error(profile, m, comm) for m in ms]
    worst = max(held, key=lambda h: abs(h.error))
    inside = [h for h in held if h is not worst]
    why = ""
    w = worst.measurement
    longest = max((h.measurement.prompt for h in inside if h.measurement.phase == "prefill"),
                  default=None)
    if w.phase == "prefill" and longest and w.prompt > longest:
        why = f", a prompt {w.prompt / longest:g}x the longest left in the fit"
    summary = [
        f"Roofline below every measurement: by {min(margins):.2f}x to {max(margins):.2f}x.",
        f"Calibrated ({profile.name}, fitted on these {len(ms)} rows): rms "
        f"{(sum(e * e for e in fit_errors) / len(ms)) ** 0.5:.1%}, worst "
        f"{max(abs(e) for e in fit_errors):.1%}.",
        f"Held out (fitted on the other {len(ms) - 1}): worst {worst.error:+.1%} "
        f"({worst.measurement.label()}{why}); the others "
        f"within {max(abs(h.error) for h in inside):.1%}.",
    ]
    return render(head, rows, markdown), summary


def margin_lines(used, margins, groups) -> list[str]:
    """The summary's first lines of a report of published throughputs against the
    roofline: how many rows the bound is above and its margins (roofline / measured, with
    their rows in ``margins`` as ``(margin, row)``), then each of ``groups`` (``(name,
    pick)``) that holds rows."""
    lines = [f"Roofline above all {len(used)} rows used ({above(margins)} of {len(used)}): "
             f"by {margin_span(margins)}."]
    for name, pick in groups:
        ms = [(m, r) for m, r in margins if pick(r)]
        if ms:
            lines.append(f"{name}: {len(ms)} rows, margins {margin_span(ms)}.")
    return lines


def above(margins) -> int:
    """How many of ``margins`` (``(roofline / measured, row)``) have the bound hold."""
    return sum(m >= 1 for m, _ in margins)


def margin_span(margins) -> str:
    """The least and the largest of ``margins`` (``(roofline / measured, row)``), each with
    its row's id: '1.26x (a) to 2.03x (b)'."""
    lo, hi = min(margins, key=lambda p: p[0]), max(margins, key=lambda p: p[0])
    return f"{lo[0]:.2f}x ({lo[1]['id']}) to {hi[0]:.2f}x ({hi[1]['id']})"


def left_out_lines(rows, digits: int) -> list[str]:
    """One line for each row a report leaves out (``status`` not ``used``): its id, its
    measured throughput (``digits`` decimals) and the data file's reason."""
    return [f"Left out: {r['id']} ({float(r['measured']):,.{digits}f} tok/s), {r['note']}."
            for r in rows if r["status"] != "used"]
