"""The second-system report: the shipped profile's recipe on one DGX-A100 (the same
Splitwise data file's A100 runs), a profile fitted there the same way, held out and carried.
"""

from __future__ import annotations

from dataclasses import replace

from inference_reports.common import (
    FIT,
    GROUPS,
    NOT_FITTED,
    PROFILE,
    ROOT,
    SCENARIO,
    TARGET,
    VLLM_EXCHANGES,
    fitted,
    held_out,
    scenario_comm,
)
from inference_reports.tables import (
    fit_table,
    held_out_tables,
    phase_summary,
    refit_on_llama8,
    relative_error,
    verdict,
)

#: A second system: the same Splitwise data file's runs on one DGX-A100 (8x A100-SXM-80GB,
#: NVLink3 over second-generation NVSwitch, no in-switch reduction), derived as the H100 file
#: (in the repository; tests/compute/test_profile_a100.py reads it too).
A100_DATA = ROOT / "tests" / "compute" / "data" / "splitwise_perf_model_medians_a100.csv"
A100_GPU = "A100-SXM-80GB"
#: The A100 profile fitted here the way vllm-dgx-h100 is (not shipped: no user needs 2023 vLLM
#: on A100 more than the H100 one; it tests that the recipe carries to a second system).
A100_PROFILE = "vllm-dgx-a100"
#: A100-SXM's maximum achievable matmul throughput, BF16 (dense), from the same table as
#: GEMM_EFFICIENCY's H100 figure (its CUDA 12.1 edition): 267.9 of 312 TFLOP/s.
A100_GEMM_EFFICIENCY = (267.9 / 312, "A100-SXM's maximum achievable matmul FLOP/s (BF16, "
                        "dense): 267.9 of 312 TFLOP/s, the best shape of a search (CUDA "
                        "12.1), from the MAMF comparison table of github.com/stas00/ml-"
                        "engineering (compute/accelerator/README.md), the table vllm-dgx-h100's "
                        "792.1 of 989 comes from; not fitted (as for vllm-dgx-h100)")
#: A100's attention forward throughput: FlashAttention-2 "reaching 50-73% of the theoretical
#: maximum FLOPs/s on A100" (Dao, arXiv 2307.08691, abstract); the top of the range, a
#: ceiling as the H100 figure is (the engine measured ran xFormers' kernel, no faster).
A100_ATTENTION_EFFICIENCY = (0.73, "A100 attention forward FLOP/s, FlashAttention-2: at most "
                             "73% of peak (Dao, FlashAttention-2, arXiv 2307.08691, abstract: "
                             "'reaching 50-73% of the theoretical maximum FLOPs/s on A100'); "
                             "not fitted (as for vllm-dgx-h100)")


def config_key(m) -> tuple:
    """A row's configuration, whatever the GPU."""
    return (m.model, m.tp, m.phase, m.batch, m.prompt, m.context)


def a100_rows():
    """The measurements of :data:`A100_DATA`."""
    from compute.measurements import read_measurements

    return read_measurements(A100_DATA)


def a100_fit_keys() -> set:
    """The configurations vllm-dgx-h100 is fitted on (the H100 file's "fitted" rows): the
    A100 profile is fitted on the same six."""
    return {config_key(m) for m in held_out() if fitted(m)}


def a100_base():
    """The roofline with the A100's published GEMM and attention efficiencies."""
    from compute.profiles import neutral

    return neutral(A100_PROFILE).with_values(
        {"gemm_efficiency": A100_GEMM_EFFICIENCY[0],
         "attention_efficiency": A100_ATTENTION_EFFICIENCY[0]},
        {"gemm_efficiency": A100_GEMM_EFFICIENCY[1],
         "attention_efficiency": A100_ATTENTION_EFFICIENCY[1]}, moe_exchanges=VLLM_EXCHANGES)


def a100_fit(rows=None):
    """The A100 profile, fitted as :func:`~inference_reports.common.fit` fits
    vllm-dgx-h100: the same parameters (:data:`FIT`), on the A100 rows of the same six
    configurations, collectives of :data:`SCENARIO` swapped to the A100
    (``h100-dgx@A100-SXM-80GB``: no in-switch reduction)."""
    from compute.profile_fit import fit_profile

    keys = a100_fit_keys()
    ms = [m for m in (a100_rows() if rows is None else rows) if config_key(m) in keys]
    result = fit_profile(
        ms, fit=FIT, base=a100_base(), comm_for=scenario_comm(), name=A100_PROFILE,
        engine="vLLM (FP16), as measured for Splitwise (2023)",
        system="DGX-A100: 8x A100-SXM-80GB over NVSwitch, TP 8", gpu=A100_GPU,
        collectives=f"scenario {SCENARIO}@{A100_GPU}",
        fitted_on=f"{len(ms)} vLLM step latencies of Llama-2-70B on one DGX-A100 (TP 8), the "
        f"configurations of vllm-dgx-h100's fit ({A100_DATA.relative_to(ROOT)})")
    return replace(result, profile=result.profile.with_values({}, NOT_FITTED))


def second_system(markdown: bool) -> list[str]:
    """The recipe of vllm-dgx-h100 on a second system: a profile fitted the same way on the
    A100 rows of the same six configurations, its fit (and each row held out), then the
    held-out sets of :data:`GROUPS` on the A100, the roofline below every row, and what
    vllm-dgx-h100 itself (fitted on the H100) makes of the A100 rows."""
    from compute.profiles import get_profile

    rows = a100_rows()
    keys = a100_fit_keys()
    comm = scenario_comm()
    label = f"{SCENARIO}@{A100_GPU}"
    result = a100_fit(rows)
    profile = result.profile
    fit_rows = [m for m in rows if config_key(m) in keys]
    out, fit_summary = fit_table(fit_rows, profile, a100_base(), comm, markdown, label)
    out += [f"- {s}" for s in fit_summary] if markdown else fit_summary
    out.append("")
    tables, summary, by_group, bound_margin, dgx_margin = held_out_tables(
        rows, profile, comm, lambda m: config_key(m) in keys, markdown, label)
    out += tables
    model = by_group[GROUPS[0][0]]
    summary.insert(0, f"Cross-model target on the A100 ({A100_PROFILE}, fitted on "
                   f"Llama-2-70B TP 8 on the A100 only, predicts BLOOM-176B on the same "
                   f"system within {TARGET:.0%}): {verdict(model)}.")
    shipped = get_profile(PROFILE)
    summary.insert(1, "The fitted overheads against vllm-dgx-h100's: per layer "
                   f"{profile.layer_overhead_s * 1e3:.3f} ms ({shipped.layer_overhead_s * 1e3:.3f}"
                   f"), per decode sequence {profile.decode_sequence_overhead_s * 1e3:.3f} ms "
                   f"({shipped.decode_sequence_overhead_s * 1e3:.3f}), per token "
                   f"{profile.token_overhead_s:.3g} s ({shipped.token_overhead_s:.3g}) per layer "
                   f"and unit of hidden size.")
    prefills = [(e, m) for e, m in model if m.phase == "prefill"]
    misses = [m for e, m in prefills if abs(e) > TARGET]
    if misses:
        def fall(ms_, at):
            """(peak tokens/s, its row, how much lower the rows of ``at`` tokens a step run)."""
            rate = {m: m.batch * m.prompt / m.latency_s for m in ms_}
            peak = max(rate, key=rate.get)
            low = min(r for m, r in rate.items() if m.batch * m.prompt in at)
            return rate[peak], peak, 1 - low / rate[peak]

        sizes = {m.batch * m.prompt for m in misses}
        top, peak, drop = fall([m for _, m in prefills], sizes)
        h100 = [m for m in held_out() if GROUPS[0][1](m, fitted) and m.phase == "prefill"]
        in_fit = sorted(((m.batch * m.prompt, relative_error(profile, m, comm))
                         for m in fit_rows if m.phase == "prefill"), key=lambda p: p[0])
        summary.append(
            f"BLOOM-176B's prefill misses are its steps of "
            f"{' and '.join(f'{n:,}' for n in sorted(sizes))} tokens ("
            + ", ".join(f"batch {m.batch} x {m.prompt}: {m.latency_s * 1e3:,.0f} ms"
                        for m in misses)
            + f"): measured prefill throughput peaks at {top:,.0f} tokens/s (batch "
            f"{peak.batch} x {peak.prompt}) and is {drop:.0%} lower there, whatever the "
            f"batch (on the H100: {fall(h100, sizes)[2]:.0%}). A cost per token cannot "
            f"follow both: the fit itself comes out {in_fit[0][1]:+.1%} at "
            f"{in_fit[0][0]:,} and {in_fit[-1][1]:+.1%} at {in_fit[-1][0]:,} tokens a step.")
    n_llama8, again = refit_on_llama8(rows, a100_base(), "a100-llama2-70b-tp8-all", comm,
                                       keys.__contains__)
    summary.append(
        f"Fitted instead on all {n_llama8} Llama-2-70B TP 8 rows of the A100 file (BLOOM-176B "
        f"still held out), BLOOM-176B comes out: {phase_summary(again)}.")
    carried = [(relative_error(shipped, m, comm), m) for m in rows
               if GROUPS[0][1](m, keys.__contains__)]
    summary.append(
        f"{PROFILE} (fitted on the H100) used on the A100 unchanged, BLOOM-176B: "
        f"{phase_summary(carried)} (infer says so with a note: a profile is fitted per "
        f"system, netmodel calibrate).")
    summary.append(
        f"Roofline below every A100 row: by {min(bound_margin):.2f}x to "
        f"{max(bound_margin):.2f}x (bound), {min(dgx_margin):.2f}x to {max(dgx_margin):.2f}x "
        f"({label}); rows the data file leaves out are listed in its header.")
    return out + ([f"- {s}" for s in summary] if markdown else summary)
