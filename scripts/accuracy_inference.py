#!/usr/bin/env python
"""Print the inference models' error against measured serving latencies.

`python scripts/accuracy_inference.py [--markdown] [--write-profile PATH]`

Reads ``../shared/reference/inference_vllm_llama2_70b_dgx_h100.csv`` (beside the project
root): vLLM (FP16) step latencies of Llama-2-70B on one DGX-H100 (TP 8), measured by the
Splitwise authors. For every measurement it shows

* the **roofline** (the default mode, a lower bound) with the GPU-only ring and with the
  ``h100-dgx`` scenario's collectives (the system measured), and how far below it is;
* the **calibrated mode** with the shipped profile ``vllm-dgx-h100`` (fitted on these rows,
  collectives of ``h100-dgx``): the fit error;
* the **held-out** error: each row predicted by a profile fitted on the other five (the
  reference holds one model, so rows of other batches and phases are held out; the
  cross-model target cannot be tested with it).

``--write-profile PATH`` fits the profile again and writes it (the shipped
``compute/data/profiles/vllm-dgx-h100.toml`` is this script's output), the reference rows
copied into it with their source.
"""

from __future__ import annotations

import argparse
import csv
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT.parent / "shared" / "reference"
FILE = "inference_vllm_llama2_70b_dgx_h100.csv"
#: The decode rows' context (not given by the source): the Splitwise coding trace's median
#: prompt, as the reference file's header says.
DECODE_CONTEXT = 1500
SOURCE = ("Splitwise (Patel et al., ISCA 2024, arXiv 2311.18677), vLLM FP16 median, from "
          "Mutinifni/splitwise-sim data/perf_model.csv (commit 3780880), via "
          "../shared/reference/" + FILE)
SCENARIO = "h100-dgx"
PROFILE = "vllm-dgx-h100"


def measurements():
    """The reference rows as :class:`compute.profiles.Measurement` s (Llama-2-70B on
    H100-SXM; decode rows at the assumed context)."""
    from compute.profiles import Measurement

    with open(REFERENCE / FILE) as fh:
        rows = list(csv.DictReader(line for line in fh if not line.startswith("#")))
    out = []
    for r in rows:
        decode = r["phase"] == "decode"
        note = r["note"] + (f"; context not given by the source: {DECODE_CONTEXT} tokens "
                            f"assumed (the Splitwise coding trace's median prompt)"
                            if decode else "")
        out.append(Measurement(
            model=r["model"].replace("llama2-70b", "Llama-2-70B"), gpu="H100-SXM",
            tp=int(r["tp"]), phase=r["phase"], batch=int(r["batch"]),
            latency_s=float(r["time_ms"]) / 1e3,
            prompt=None if decode else int(r["prompt_tokens"]),
            context=DECODE_CONTEXT if decode else None, source=f"{SOURCE}: {note}"))
    return out


def scenario_comm():
    from netmodel.study.fabric_search import ScenarioCollectives

    coll = ScenarioCollectives(SCENARIO)
    return lambda m: coll


#: Why the parameters not fitted keep the roofline's values (one model, one system).
NOT_FITTED = {
    "hbm_fraction": "not fitted: with one model the rows cannot tell it from the per-layer "
                    "overhead (both add a fixed time to every step); the roofline's 1",
    "step_overhead_s": "not fitted: with one model (one layer count) the rows cannot tell it "
                       "from the per-layer overhead; 0 (the per-layer overhead holds it)",
}


def fit(ms):
    from compute.profile_fit import fit_profile

    result = fit_profile(
        ms, comm_for=scenario_comm(), name=PROFILE, engine="vLLM (FP16), as measured for "
        "Splitwise (2023)", system="DGX-H100: 8x H100-SXM over NVSwitch, TP 8",
        gpu="H100-SXM", collectives=f"scenario {SCENARIO}",
        fitted_on=f"{len(ms)} vLLM step latencies of Llama-2-70B on one DGX-H100 (TP 8: 3 "
        f"prefill, 3 decode) measured by the Splitwise authors (../shared/reference/{FILE}),"
        f" collectives of scenario {SCENARIO}")
    profile = result.profile.with_values({}, NOT_FITTED)
    return replace(result, profile=profile)


def table(markdown: bool) -> list[str]:
    from compute.profile_fit import leave_one_out, predict, roofline
    from compute.profiles import get_profile

    ms = measurements()
    comm = scenario_comm()
    profile = get_profile(PROFILE)
    held = leave_one_out(ms, comm_for=comm)
    head = ["measurement", "measured ms", "roofline ring ms", "below by", f"roofline "
            f"{SCENARIO} ms", "below by", "calibrated ms", "fit err", "held-out ms",
            "held-out err"]
    rows, margins = [], []
    for m, h in zip(ms, held, strict=True):
        ring = roofline(m)
        dgx = roofline(m, comm(m))
        cal = predict(profile, m, comm(m))
        margins += [m.latency_s / ring, m.latency_s / dgx]
        rows.append([m.label(), f"{m.latency_s * 1e3:.1f}", f"{ring * 1e3:.1f}",
                     f"{m.latency_s / ring:.2f}x", f"{dgx * 1e3:.1f}",
                     f"{m.latency_s / dgx:.2f}x", f"{cal * 1e3:.1f}",
                     f"{cal / m.latency_s - 1:+.1%}", f"{h.predicted_s * 1e3:.1f}",
                     f"{h.error:+.1%}"])
    fit_errors = [predict(profile, m, comm(m)) / m.latency_s - 1 for m in ms]
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
        f"Calibrated ({PROFILE}, fitted on these {len(ms)} rows): rms "
        f"{(sum(e * e for e in fit_errors) / len(ms)) ** 0.5:.1%}, worst "
        f"{max(abs(e) for e in fit_errors):.1%}.",
        f"Held out (fitted on the other {len(ms) - 1}): worst {worst.error:+.1%} "
        f"({worst.measurement.label()}{why}); the others "
        f"within {max(abs(h.error) for h in inside):.1%}.",
        "Cross-model (fitted on one model, another model predicted): cannot be tested: the "
        "reference holds one model (Llama-2-70B).",
    ]
    if markdown:
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        out += ["| " + " | ".join(r) + " |" for r in rows]
        return out + [""] + [f"- {s}" for s in summary]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows, strict=True)]
    out = ["  ".join(str(x).rjust(w) for x, w in zip(r, widths, strict=True))
           for r in [head, *rows]]
    return out + [""] + summary


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    parser.add_argument("--write-profile", metavar="PATH",
                        help="fit the shipped profile again and write it to PATH")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    if not (REFERENCE / FILE).is_file():
        print(f"reference data {REFERENCE / FILE} is absent; nothing to compare",
              file=sys.stderr)
        return 1
    if args.write_profile:
        from compute.outputs import atomic_write

        result = fit(measurements())
        atomic_write(args.write_profile, result.profile.to_toml().encode(), "profile file")
        print(f"wrote {args.write_profile}: rms {result.rms_relative_error:.1%}, worst "
              f"{result.max_relative_error:.1%}", file=sys.stderr)
        return 0
    print("\n".join(table(args.markdown)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
