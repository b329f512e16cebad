"""Parts 4 and 5 of the study's summary (:mod:`netmodel.study.summary`): how each fabric
fails (blast radius, availability, hot spares) and what it costs (power, USD per token,
the dies' yield).
"""

from __future__ import annotations

from compute.parallel import Parallelism
from compute.units import counted
from netmodel.study.summary_words import (
    TIE,
    and_list,
    other_gpu_words,
    own_gpu_words,
    ratio_span,
    ratio_x,
    sig3,
)


def _share(n: int, of: int) -> str:
    """``n`` of ``of`` as a percentage, two figures (3.1%, 1.6%, 0.39%).

    >>> _share(1, 32), _share(2, 128), _share(0, 8), _share(64, 16384)
    ('3.1%', '1.6%', '0%', '0.39%')
    """
    return f"{100 * n / of:.2g}%"


def _pool(s, sms: dict) -> str:
    """The reference pool of summary ``s``: its GPUs, their SMs (``sms``: per scenario
    label, SMs a GPU, where known) and its share of the cluster, and where it sits."""
    per = sms.get(s.scenario)
    size = counted(s.spares, "GPU")
    if per:
        size += f" = {s.spares * per:,} SMs"
    return f"{size}, {_share(s.spares, s.gpus)} of the cluster; {s.spare_placement}"


def _pool_rule(rel, sms: dict) -> str:
    """What the reference pool is (the rule, a share of each cluster's GPUs rounded up to
    whole GPUs or a count) and what it comes to per GPU type, so its unequal share shows."""
    rule = getattr(rel, "spares", None)
    if rule is None:
        return ""
    what = (f"{rule} of each cluster's GPUs, rounded up to whole GPUs" if str(rule).endswith("%")
            else f"{rule} GPUs")
    sizes = {}
    for s in rel.summaries:   # one entry per GPU type, pool and cluster size
        gpu = s.scenario.split("@")[-1]
        per = sms.get(s.scenario)
        sms_text = f"{s.spares * per:,} SMs, " if per else ""
        sizes.setdefault((gpu, s.spares, s.gpus), f"{s.spares} x {gpu} ({sms_text}"
                         f"{_share(s.spares, s.gpus)} of {s.gpus:,} GPUs)")
    return (f" With spares: a reference pool of {what}, at the better of pod and global "
            f"placement; one GPU is the smallest step, so the pool's share of the cluster "
            f"differs with the GPU: {and_list(sizes.values())}.")


def reliability_section(rel, fab) -> list[str]:
    """Section 4 of the summary: per scenario, the SMs a GPU failure takes down (hardware
    and software), failures a year, availability and the spares that keep capacity, from
    the study's reliability part ``rel``; none without one."""
    if not rel.summaries:
        return []
    s0 = rel.summaries[0]
    sms = getattr(rel, "sms_per_gpu", {}) or {}
    out = ["## 4. Blast radius and availability (reliability.csv, reliability_spares.png)", "",
           f"{s0.model}, {s0.phase}, {own_gpu_words(fab.scenarios)} and one copy of its fabric; "
           "failure and repair rates from netmodel/data/failures.toml (a source per number); "
           "closed forms. SMs down per GPU failure: hardware (the GPU) and software (every "
           "GPU of its instance)." + _pool_rule(rel, sms), "",
           "| scenario | GPUs | instance | SMs down (hw) | SMs down (sw) | GPU failures/yr | "
           f"availability | with spares | spares to keep >= {100 * s0.threshold:.4g}% of "
           f"capacity {100 * s0.quantile:.4g}% of the time |",
           "|---|---|---|---|---|---|---|---|---|"]
    for s in rel.summaries:
        need = "none reaches it" if s.spares_needed is None else \
            f"{s.spares_needed} ({s.spares_needed_placement})"
        out.append(f"| {s.scenario} | {s.gpus} | {Parallelism.of(s).label} | {s.sms_down_per_gpu_failure_hw:.0f} "
                   f"| {s.sms_down_per_gpu_failure_sw:.0f} | {s.gpu_failures_per_year:.2f} | "
                   f"{s.availability:.5f} | {s.availability_with_spares:.5f} "
                   f"({_pool(s, sms)}) | {need} |")
    out.append("")
    base = next((s for s in rel.summaries if s.scenario == fab.baseline), None)
    lites = [s for s in rel.summaries if s is not base]
    if base and lites:
        them = other_gpu_words(s.scenario.split("@")[-1] for s in lites)
        hw = [s.sms_down_per_gpu_failure_hw / base.sms_down_per_gpu_failure_hw for s in lites]
        sw = [s.sms_down_per_gpu_failure_sw / base.sms_down_per_gpu_failure_sw for s in lites]
        # failures per SM of silicon: equal-silicon clusters compared
        rate = [(s.gpu_failures_per_year / (s.gpus * s.sms_down_per_gpu_failure_hw))
                / (base.gpu_failures_per_year / (base.gpus * base.sms_down_per_gpu_failure_hw))
                for s in lites]
        verdict = "smaller, as the paper expects" if max(hw) < 1 else "not smaller"
        out.append(f"- **Hardware blast radius**: a {them['one']} failure takes {ratio_span(hw)} "
                   f"the SMs of "
                   f"an H100 failure ({verdict}).")
        out.append(f"- **Software blast radius**: an instance goes down whole, so a GPU "
                   f"failure takes {ratio_span(sw)} the SMs it takes on {base.scenario}, "
                   f"and for the same silicon the {them['many']} have {ratio_span(rate)} "
                   f"as many GPU failures a year "
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
        # the pool's SMs and share are in the table and the part's opening: said once
        out.append("- **Hot spares**: the reference pool raises availability on "
                   + and_list(f"{s.scenario} ({s.availability:.5f} to "
                           f"{s.availability_with_spares:.5f} with "
                           f"{counted(s.spares, 'GPU')}, {s.spare_placement})"
                           for s in helped)
                   + (("; on " + and_list(s.scenario for s in flat) + " the fabric has no free "
                       "port to reach a spare, so only whole spare instances (global) help")
                      if flat else "") + ".")
    out += _recovery(rel.recovery)
    out += _spares_per_sm(rel.summaries)
    out += _approximations(rel.summaries)
    for label, why in rel.notes.items():
        out.append(f"- {label}: not computed ({why}).")
    return out + [""]


def _approximations(summaries) -> list[str]:
    """Where a row's figures rest on an approximation, as ``compare --reliability``'s notes
    say it: the closed form past the spare chain's limit (``analytic_fallback``), or a
    spares count read off a time below the threshold in the regime where it reads low
    (``threshold_low``); none where no row's does.

    >>> from types import SimpleNamespace as S
    >>> rows = [S(scenario="a@G", analytic_fallback=(), threshold_low=False),
    ...         S(scenario="b@G", analytic_fallback=("one repair time",), threshold_low=True)]
    >>> for line in _approximations(rows): print(line)
    - **Approximations**: on b@G the closed form passed the spare chain's limit (30,000 states) and fell back to one repair time.
    - **Spares needed may read low** on b@G: the closed-form time below the threshold that set the count is in the regime where it reads low (a busy pool refuses failures together); netmodel availability --spares N tells by Monte Carlo (pod or global --spare-placement; N is enough where its time below 99% capacity is at most 0.001).
    """
    from netmodel.study.availability_busy import fallback_words

    said: dict = {}
    for s in summaries:
        fell = tuple(getattr(s, "analytic_fallback", ()) or ())
        if fell:
            said.setdefault(fell, []).append(s.scenario)
    out = [f"- **Approximations**: on {and_list(names)} the closed form "
           f"{fallback_words(fell)}." for fell, names in said.items()]
    low = [s.scenario for s in summaries if getattr(s, "threshold_low", False)]
    if low:
        out.append(f"- **Spares needed may read low** on {and_list(low)}: the closed-form "
                   "time below the threshold that set the count is in the regime where it "
                   "reads low (a busy pool refuses failures together); netmodel "
                   "availability --spares N tells by Monte Carlo (pod or global "
                   "--spare-placement; N is enough where its time below 99% capacity is at "
                   "most 0.001).")
    return out


def _recovery(recovery: dict) -> list[str]:
    """How long a GPU failure's instance is down, without a spare and with a hot spare
    switched in (``recovery``: per scenario, seconds (shortest, longest) without and with),
    said once where every scenario gives the same to three figures."""
    if not recovery:
        return []

    def words(lo, hi, swap):
        down = sig3(lo / 3600) if sig3(lo / 3600) == sig3(hi / 3600) else \
            f"{sig3(lo / 3600)}-{sig3(hi / 3600)}"
        return f"{down} h without a spare, {sig3(swap)} s with a hot spare"

    said: dict = {}
    for label, times in recovery.items():
        said.setdefault(words(*times), []).append(label)
    where = (f"on every scenario its instance is down {next(iter(said))}" if len(said) == 1
             else "its instance is down " + "; ".join(f"{text} on {and_list(labels)}"
                                                     for text, labels in said.items()))
    return [f"- **Recovery from a GPU failure**: {where} (detection, the repair or the swap, "
            f"reloading the weight shard, warm-up; netmodel/data/failures.toml); a hot spare "
            f"only where the fabric reaches one."]


def _spares_per_sm(summaries) -> list[str]:
    """The reference pool per SM bought: availability counts the instances' capacity, so a
    pool raises it, while the pool's GPUs idle until a failure, so the goodput over every SM
    bought (spares included) can fall; said beside the availability, one bullet."""
    have = [s for s in summaries if s.spares and s.goodput_tokens_per_s_per_sm]
    if not have:
        return []
    moves = [(s, s.goodput_tokens_per_s_per_sm_with_spares / s.goodput_tokens_per_s_per_sm - 1)
             for s in have]
    text = and_list(f"{s.scenario} {sig3(s.goodput_tokens_per_s_per_sm)} to "
                    f"{sig3(s.goodput_tokens_per_s_per_sm_with_spares)} ({d:+.1%})"
                    for s, d in moves)
    fell = [s for s, d in moves if d < 0]
    # a pool the fabric cannot reach (no free port) adds no availability: its goodput falls
    # by the pool's share of the SMs bought, which is no trade of idle SMs for availability
    reached = [s for s in fell if s.availability_with_spares > s.availability]
    unreached = [s for s in fell if s not in reached]
    trade = "the pool's idle SMs cost more tokens/s per SM than the availability it adds wins back"
    if len(fell) == len(moves) and not unreached:
        tail = f": on every scenario {trade}"
    elif len(fell) == len(moves):
        tail = ": " + "; ".join(
            ([f"on {and_list(s.scenario for s in reached)} {trade}"] if reached else [])
            + [f"on {and_list(s.scenario for s in unreached)} no spare is reachable, so the "
               "pool adds no availability and goodput falls by its share of the SMs bought"])
    else:
        tail = f": it falls on {and_list(s.scenario for s in fell)}" if fell else ""
    return [f"- **Spares per SM bought**: goodput (tokens/s/SM over every SM, the "
            f"reference pool's included) without and with the pool: {text}{tail}."]


def _package_terms(lite, h100) -> str:
    """The package's terms beside its logic, each per enabled SM as a multiple of the
    H100's (``HBM 1.00x, packaging 1.40x, test and assembly 1.75x`` as shipped: the HBM is
    priced pro rata, so it is no reason for a dearer package; packaging and test are in
    part paid per package)."""
    def per_sm(pkg, term: str) -> float:
        return getattr(pkg, term) / pkg.sms_enabled

    return ", ".join(f"{words} {ratio_x(per_sm(lite, t) / per_sm(h100, t))}"
                     for t, words in (("hbm", "HBM"), ("packaging", "packaging"),
                                      ("test", "test and assembly")))


def cost_section(cost, fab) -> list[str]:
    """Section 5 of the summary: per scenario and phase, tokens/s/W, USD per Mtoken and the
    network's share of capex and power, from the study's cost part ``cost``; none without
    one."""
    if not cost.summaries:
        return []
    s0 = cost.summaries[0]
    out = ["## 5. Power and cost (cost.json, cost_per_scenario.png, cost_yield_vs_area.png)",
           "", f"{s0.model}, {own_gpu_words(fab.scenarios)} at its best configuration; prices, "
           "power and yield defaults in compute/data/economics.toml and "
           "netmodel/data/network_costs.toml (a source and confidence tag per number; "
           "estimates say so).", "",
           "| scenario | phase | tokens/s/W | USD per Mtoken | network share of capex | "
           "of power |", "|---|---|---|---|---|---|"]
    for s in cost.summaries:
        out.append(f"| {s.scenario} | {s.phase} | {sig3(s.tokens_per_s_per_w)} | "
                   f"{sig3(s.usd_per_mtoken)} | {s.network_share_capex:.0%} | "
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
            f"{and_list(sorted(priced - {'H100-SXM'})) or 'the H100-SXM alone'})")
        out.append(f"- **Per good SM**{ref}, a Lite die costs {ratio_x(logic)} an H100 die "
                   f"(yield falls with area) and a Lite package {ratio_x(whole)} an H100 package "
                   f"(per SM: {_package_terms(lite, h)}).")
    for phase in dict.fromkeys(s.phase for s in cost.summaries):
        rows = [s for s in cost.summaries if s.phase == phase and s.usd_per_mtoken]
        base = next((s for s in rows if s.scenario == fab.baseline), None)
        others = [s for s in rows if s is not base]
        if base and others:
            out.append(f"- **{base.model} {phase}, cost**: USD per million tokens relative "
                       f"to {base.scenario}: "
                       + ", ".join(f"{s.scenario} {ratio_x(s.usd_per_mtoken / base.usd_per_mtoken)}"
                                   for s in others) + "; tokens/s/W: "
                       + ", ".join(f"{s.scenario} "
                                   f"{ratio_x(s.tokens_per_s_per_w / base.tokens_per_s_per_w)}"
                                   for s in others) + ".")
    return out + [""]
