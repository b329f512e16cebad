"""``summary.md`` of the Lite-GPU study: tables and findings written from the numbers.

Every sentence is generated from the study's results (ratios, rankings, crossovers and
ranges are computed here), so the summary changes when the model, the catalogs or the
scenarios do; nothing in it is a hard-coded claim. Only the "how it was modelled" notes at
the end are fixed text.

The parts are written by job: :mod:`netmodel.study.summary_fabrics` (parts 1, 2 and 2d:
tokens/s/SM alone, on fabrics, packed), :mod:`netmodel.study.summary_claims` (2b: the
paper's claims), :mod:`netmodel.study.summary_crossings` (2c and 3: crossovers and the
latency sweep), :mod:`netmodel.study.summary_costs` (4 and 5: reliability and cost) and
:mod:`netmodel.study.summary_serving` (6 and 7: disaggregated serving, a mixture of
experts), all in the words of :mod:`netmodel.study.summary_words`; this module puts them
in order (:func:`summary_markdown`), with the header and the closing notes.

>>> from netmodel.study.lite_gpu import FullStudy, ideal_network, run_lite_gpu_study
>>> s = run_lite_gpu_study(["Llama-3-8B"], ["H100-SXM", "Lite"], ["decode"],
...                        comm_factory=ideal_network, network="ideal")
>>> text = summary_markdown(FullStudy(s))
>>> text.splitlines()[0], "Lite reaches" in text
('# Lite-GPU study: findings', True)
"""

from __future__ import annotations

import re
from typing import Any

from netmodel.study.run_words import named
from netmodel.study.summary_claims import claims_section
from netmodel.study.summary_costs import cost_section, reliability_section
from netmodel.study.summary_crossings import crossovers_section, sweep_section
from netmodel.study.summary_fabrics import fabric_section, ideal_section, packed_section
from netmodel.study.summary_serving import moe_section, serving_section
from netmodel.study.summary_words import plain_tp, ran_overlapped

__all__ = ["summary_markdown"]


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
    out += ideal_section(ideal, models, gpus, phases)
    if study.fabric is not None:
        out += fabric_section(study.fabric)
        out += claims_section(study)
        if getattr(study, "crossovers", None) is not None:
            out += crossovers_section(study.crossovers, ideal)
        if getattr(study, "packed", None) is not None:
            out += packed_section(study.fabric, study.packed)
    if study.sweep is not None:
        out += sweep_section(study.sweep)
    if getattr(study, "reliability", None) is not None:
        out += reliability_section(study.reliability, study.fabric)
    if getattr(study, "cost", None) is not None:
        out += cost_section(study.cost, study.fabric)
    if getattr(study, "serving", None) is not None:
        out += serving_section(study.serving)
    if getattr(study, "moe", None) is not None:
        out += moe_section(study.moe)
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


def _searched(study) -> str:
    """What the score's search picks: the TP degree where every fabric row is plain tensor
    parallelism (part 1 always is), else the configuration, saying part 1 searched TP only
    and how far the fabric parts spread a model (``--parallelism``)."""
    fabric_rows = [r for part in (study.fabric, study.packed) if part is not None
                   for r in part.rows]
    if plain_tp(fabric_rows):
        return "TP degree"
    how = (study.fabric.settings.get("parallelism") if study.fabric is not None else None)
    spread = ("pipeline stages" + (", expert and attention data parallelism" if any(
        r.ep > 1 or r.attention_dp > 1 for r in fabric_rows if r.feasible) else "")
              if how == "all" else "expert and attention data parallelism")
    return (f"configuration (part 1: the TP degree alone; the fabric parts: the TP degree "
            f"and, where it pays, {spread}, {named('parallelism')} {how})")


def _profile_carried(study) -> str:
    """`` Profile P was fitted on model A on GPU G; this is ...: an extrapolation (...).``:
    the note of the study's parts on the models and GPUs the profile was not fitted on
    (their ``profile_note``, :func:`~netmodel.study.run_words.noted_settings`, as
    ``search``'s) and part 1's on the collectives it was not fitted with
    (``profile_collectives_note``, as ``infer``'s), each once, or nothing where every one
    is its own."""
    notes = dict.fromkeys(part.settings.get(key) for part in (study.ideal, study.fabric)
                          if part is not None
                          for key in ("profile_note", "profile_collectives_note"))
    return "".join(f" {n[0].upper()}{n[1:]}." for n in notes if n)


def _notes(study) -> list[str]:
    out = ["## How it was modelled", "",
           "- Per-stage roofline (compute/): stage time = max(compute, memory, network); the "
           "tensor-parallel all-reduces after attention and MLP are "
           + ("each hidden behind the GEMM that produces its input "
              f"({named('overlap_collectives')}), as the paper assumes."
              if ran_overlapped(study.ideal)
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
        out.insert(3, f"- Calibrated mode ({named('profile')} {profile['name']}): every "
                      f"part's step "
                      f"times take the engine profile's GEMM and attention efficiencies, "
                      f"achievable HBM bandwidth and fixed overheads instead of the GPUs' "
                      f"peak figures (fitted on {profile['fitted_on']})."
                      + _profile_carried(study))
    if study.fabric is not None:
        scenarios = {s.name: s for s in study.fabric.scenarios}.values()
        # a user's scenario file is not a shipped one: name where it was read from
        files = "".join(f"; {s.name}: {s.source}" for s in scenarios if s.source)
        out.append(f"- Scenarios (netmodel/data/scenarios/*.toml{files}, sources in each "
                   "file): " + "; ".join(f"{s.name}: {s.description}" for s in scenarios)
                   + ".")
        fixed = [s for s in study.fabric.scenarios if s.fixed_gpu]
        if fixed:
            out.append("- Run with its own GPU alone, not swapped onto the study's other GPUs "
                       "(the GPUs of a saved fabric are part of its graph): "
                       + "; ".join(f"{s.name} ({s.gpu}, fabric {s.fabric_spec()})"
                                   for s in fixed) + ".")
    return out
