"""The words and numbers of the study's summary (:mod:`netmodel.study.summary`): ratios,
spans, lists and configurations as every part writes them, and the tie ratios are read
against.
"""

from __future__ import annotations

import math

from compute.units import counted

#: Ratios within this of 1 count as "matching".
TIE = 0.005


def ratio_x(v) -> str:
    """A ratio to two decimals with its "x" ("1.23x"), "-" for none."""
    return "-" if v is None else f"{v:.2f}x"


def request_lengths(prompt: int, output: int) -> str:
    """A serving workload's request, as serve's heading and the summary say it.

    >>> request_lengths(1500, 13), request_lengths(1500, 1)
    ('prompt 1500, output 13 tokens', 'prompt 1500, output 1 token')
    """
    return f"prompt {prompt}, output {output} token{'' if output == 1 else 's'}"


def sig3(v) -> str:
    """Three significant figures, trailing zeros kept so a column reads at one precision
    ("54.0" beside "53.9", "3.00" beside "2.59"; plain .3g wrote "54" and "3"), and no
    bare trailing point ("280", not "280."). The rule for a figure of merit said on its
    own (tokens/s/W, tokens/J, USD per million tokens) wherever one is: summary.md,
    ``netmodel cost`` and the bar labels of cost_per_scenario.png; a table column of many
    rows (compare's) keeps fixed decimals, to line up.

    From 1,000 up the figure is rounded to three significant figures and written whole,
    with thousands grouped (.3g wrote "1.23e+03").

    >>> sig3(2.8022), sig3(0.16749), sig3(54), sig3(280.4), sig3(None)
    ('2.80', '0.167', '54.0', '280', 'infeasible')
    >>> sig3(999.6), sig3(1234.5), sig3(-98765), sig3(1.2e7)
    ('1,000', '1,230', '-98,800', '12,000,000')
    """
    if v is None:
        return "infeasible"
    if abs(v) >= 999.5:
        return f"{float(f'{v:.3g}'):,.0f}"
    return f"{v:#.3g}".replace(".e", "e").rstrip(".")


def ratio_span(values) -> str:
    """The range of ``values`` (ratios; ``None`` skipped) as "0.91x-1.20x", one ratio
    where they agree to 0.005, "-" for none."""
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    lo, hi = min(values), max(values)
    return f"{lo:.2f}x" if abs(hi - lo) < 0.005 else f"{lo:.2f}x-{hi:.2f}x"


def geomean(values) -> float | None:
    """The geometric mean of the truthy ``values`` (``None`` and 0 skipped), ``None`` for
    none."""
    values = [v for v in values if v]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def other_gpu_words(gpus, baseline: str = "H100-SXM") -> dict:
    """How the text names the GPUs other than the baseline: the Lites in the default study,
    one other GPU by its name, several by "other" (a B200 is no Lite)."""
    gpus = [g for g in dict.fromkeys(gpus) if g != baseline]
    if all(g.startswith("Lite") for g in gpus):
        return {"one": "Lite", "many": "Lites", "fabrics": "Lite fabrics"}
    if len(gpus) == 1:
        return {"one": gpus[0], "many": f"{gpus[0]}s", "fabrics": f"{gpus[0]} fabrics"}
    return {"one": "non-baseline GPU", "many": "other GPUs", "fabrics": "other fabrics"}


def own_gpu_words(scenarios, lead: str = "each scenario with its own GPU") -> str:
    """``lead``, and which scenarios ran on another GPU because the run lacks their own
    (:func:`~netmodel.study.scenario_catalog.own_gpu_scenarios`)."""
    from netmodel.study.scenario_catalog import own_gpu_scenarios

    swapped = [s.label for s in own_gpu_scenarios(scenarios)
               if s.home_gpu is not None and s.gpu != s.home_gpu]
    return lead + (f" (where this run lacks it, the first GPU it runs with: {and_list(swapped)})"
                   if swapped else "")


def config_label(r) -> str:
    """A row's configuration as compute spells it: ``TP 8``, ``TP 3 x PP 8``,
    ``TP 8 x EP 8 x DP-attention 8``."""
    from compute.parallel import Parallelism

    return Parallelism.of(r).label


def plain_tp(rows) -> bool:
    """Whether every feasible row of ``rows`` is plain tensor parallelism."""
    return all(r.pp == 1 and r.ep == 1 and r.attention_dp == 1
               for r in rows if r.feasible)


def verb_for(items, one: str, many: str) -> str:
    """``one`` after a single subject, ``many`` after several ("Lite falls short",
    "Lite and Lite+BW fall short")."""
    return one if len(list(items)) == 1 else many


def cases(n: int, what: str = "") -> str:
    """``n`` cases, singular for one ("1 model x phase case", "30 cases").

    >>> cases(1, "model x phase "), cases(30)
    ('1 model x phase case', '30 cases')
    """
    return counted(n, f"{what}case")


def and_list(items) -> str:
    """``items`` as prose: "a", "a and b", "a, b and c"."""
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def ran_overlapped(result) -> bool:
    """Whether ``result`` (a comparison or study) ran with ``--overlap-collectives``."""
    return bool(result.settings.get("options", {}).get("overlap_collectives"))
