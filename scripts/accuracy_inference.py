#!/usr/bin/env python
"""Print the inference models' error against measured serving latencies.

`python scripts/accuracy_inference.py [--markdown] [--write-profile PATH]`

Reads ``../shared/reference/inference_vllm_llama2_70b_dgx_h100.csv`` (beside the project
root): vLLM (FP16) step latencies of Llama-2-70B on one DGX-H100 (TP 8), measured by the
Splitwise authors. For every measurement it shows

* the **roofline** (the default mode, a lower bound) with the GPU-only scale-up bound
  (the default collectives) and with the ``h100-dgx`` scenario's collectives (the system
  measured), and how far below it is;
* the **calibrated mode** with the shipped profile ``vllm-dgx-h100`` (GEMM and attention
  efficiencies from published H100 kernel measurements; its per-token, per-layer and
  per-decode-sequence overheads fitted on these rows, collectives of ``h100-dgx``): the fit
  error;
* the **held-out** error: each row predicted by a profile fitted (the same way) on the other
  five;
* the **cross-model and cross-TP check**, from ``tests/compute/data/
  splitwise_perf_model_medians.csv`` (medians of the same Splitwise data file, with its
  source): the shipped profile, fitted on Llama-2-70B at TP 8 only, predicts BLOOM-176B on
  the same system (the issue's target: within 30%), Llama-2-70B at TP 2 and 4, and the
  Llama-2-70B TP 8 rows it was not fitted on; per row measured, roofline and calibrated,
  the worst error per phase, and the roofline staying below every measured row. Decode rows
  there are at the context the source implies (prompt + 64, the mean over the 128 generated
  tokens), as are the reference's (576, not the 1,500 its header assumes);
* **a second system**, from ``tests/compute/data/splitwise_perf_model_medians_a100.csv``
  (the same Splitwise data file's runs on one DGX-A100, 8x A100-SXM-80GB, derived the same
  way): a profile fitted as the shipped one is (the A100's published GEMM and attention
  ceilings, the three overheads fitted on the A100 rows of the same six configurations,
  collectives of ``h100-dgx`` swapped to the A100, ``h100-dgx@A100-SXM-80GB``: no in-switch
  reduction; not shipped), its fit and each row held out, then BLOOM-176B, TP 2 and 4 and the
  TP 8 rows not fitted as above, the roofline below every row, and what the H100 profile
  makes of the A100 rows;
* the **published serving measurements beyond Splitwise**, from ``tests/compute/data/
  published_serving.csv`` (NVIDIA NIM, vLLM and TensorRT-LLM on A100, H100, H200 and B200;
  Llama-2-70B, Llama-3 8B / 70B, Llama-3.1-405B, Mixtral-8x7B in bf16, fp8, int8 and NVFP4;
  step latencies, end-to-end latencies of one batch and throughputs; one source per row):
  per row measured, the roofline and how far on the safe side it is (it must stay below
  every latency and above every throughput), and on the H100 rows the calibrated mode's
  error (``vllm-dgx-h100`` is fitted on 2023 vLLM; the 30% target is for vLLM rows);
* **a profile for newer vLLM**, ``vllm-h100-2024``, from ``compute/data/
  vllm_h100_2024_measurements.csv`` (vLLM's performance-CI latency tests on H100, autumn
  2024, with their source): its fit (one overhead, per layer, over the published GEMM and
  attention ceilings), each model held out (the issue's 30% target) and the other vLLM rows
  of the published file for reference;
* the **published multi-server serving with expert parallelism**, from ``tests/netmodel/data/
  published_serving_multinode.csv`` (DeepSeek-V3/R1: SGLang on 4 and 9 servers of 8 H100
  and on a GB200 NVL72, DeepSeek's service on 4 and 18 servers of 8 H800): per row the
  measured and the roofline's tokens/s a server (or a GPU) and the margin, each instance
  costed as ``netmodel infer --tp N --ep N --attention-dp N --fabric SPEC`` costs it;
* the **TensorRT-LLM figures beyond those**, from ``tests/compute/data/
  published_serving_trtllm.csv`` (NVIDIA's TensorRT-LLM documentation: 0.6.1's static
  batches of Llama-2-70B on H100 and A100, the v1.0 overview's Llama-3.1-405B and
  Llama-3.3-70B in NVFP4 on B200 and GB200 and the FP8 lengths not used above, the
  DeepSeek-R1 guide's 8-GPU runs on B200 and H200 with expert parallelism and MTP): per row
  measured, the roofline's output tokens/s and the margin, and the calibrated profile's
  figure, every row an extrapolation of it (another engine);
* **further published figures**, from ``tests/compute/data/published_serving_more.csv``
  (gpt-fast's batch-1 decode rates of Llama-2-70B on A100-80GB in bf16, int8 and int4 at TP 1
  to 8; MLPerf Inference v5.1's Offline results of NVIDIA's closed submission, Llama-2-70B on
  DGX B200 and a GB200 tray, DeepSeek-R1 on DGX B200 and GB200 / GB300 NVL72, prompt lengths
  a 1-token floor; TensorRT-LLM's gpt-oss-120b tech blog on B200): per row measured, the
  roofline's tokens/s and the margin through the TensorRT-LLM report's conversions, and the
  calibrated profile's figure, an extrapolation.

``--write-profile PATH`` fits the profile again and writes it (the shipped
``compute/data/profiles/vllm-dgx-h100.toml`` is this script's output), the reference rows
copied into it with their source.
``--write-newer-profile PATH`` does the same for ``compute/data/profiles/vllm-h100-2024.toml``
(its rows are in the package: no reference data needed).

Each report is a module of ``scripts/inference_reports/`` (``cross_check``,
``second_system``, ``step_size``, ``published``, ``newer_vllm``, ``multinode``,
``trtllm``, ``more_published``), over the data and the profile's recipe they share
(``common``) and the tables (``tables``); this script prints the fit on the reference
rows, then each report under its heading.
"""

from __future__ import annotations

import argparse
import sys

from inference_reports.common import (
    FILE,
    HELD_OUT,
    PROFILE,
    REFERENCE,
    ROOT,
    base,
    fit,
    measurements,
    scenario_comm,
)
from inference_reports.cross_check import cross_check
from inference_reports.more_published import MORE, more_published
from inference_reports.multinode import MULTINODE, multinode
from inference_reports.newer_vllm import (
    NEWER,
    NEWER_PROFILE,
    newer_fit,
    newer_measurements,
    newer_vllm,
)
from inference_reports.published import PUBLISHED, published
from inference_reports.second_system import A100_DATA, second_system
from inference_reports.step_size import step_size
from inference_reports.tables import fit_table
from inference_reports.trtllm import TRTLLM, trtllm


def table(markdown: bool) -> list[str]:
    """The fit on the reference rows, then every report under its heading."""
    from compute.profiles import get_profile

    out, summary = fit_table(measurements(), get_profile(PROFILE), base(), scenario_comm(),
                              markdown)
    out += [f"- {s}" for s in summary] if markdown else summary
    heading = ("Held out of the fit: another model, other TP degrees "
               f"({HELD_OUT.relative_to(ROOT)})")
    heading2 = f"Published serving measurements beyond Splitwise ({PUBLISHED.relative_to(ROOT)})"
    heading3 = ("Published multi-server serving with expert parallelism "
                f"({MULTINODE.relative_to(ROOT)})")
    heading4 = f"A second system: 8x A100 ({A100_DATA.relative_to(ROOT)})"
    heading5 = "Prefill cost per token by the tokens of a step (both systems)"
    heading6 = f"A profile for newer vLLM: {NEWER_PROFILE} ({NEWER.relative_to(ROOT)})"
    heading7 = f"TensorRT-LLM's published figures beyond those ({TRTLLM.relative_to(ROOT)})"
    heading8 = ("Further published figures: gpt-fast, MLPerf v5.1, gpt-oss on B200 "
                f"({MORE.relative_to(ROOT)})")
    return out + ["", f"### {heading}" if markdown else heading.upper(), ""] + \
        cross_check(markdown) + ["", f"### {heading4}" if markdown else heading4.upper(),
                                 ""] + second_system(markdown) + \
        ["", f"### {heading5}" if markdown else heading5.upper(), ""] + step_size(markdown) + \
        ["", f"### {heading2}" if markdown else heading2.upper(), ""] + published(markdown) + \
        ["", f"### {heading6}" if markdown else heading6.upper(), ""] + newer_vllm(markdown) + \
        ["", f"### {heading3}" if markdown else heading3.upper(), ""] + multinode(markdown) + \
        ["", f"### {heading7}" if markdown else heading7.upper(), ""] + trtllm(markdown) + \
        ["", f"### {heading8}" if markdown else heading8.upper(), ""] + more_published(markdown)


def _write_fitted(path: str, fitted) -> int:
    """Fit a profile (``fitted()``, a calibration result) and write it to ``path``, its
    path checked before the fit; print the fit's error. Returns the exit status."""
    from compute.errors import UserError
    from compute.output_paths import check_file_path
    from compute.outputs import atomic_write

    try:
        check_file_path(path, "profile file", (".toml",))
        result = fitted()
        atomic_write(path, result.profile.to_toml().encode(), "profile file", (".toml",))
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {path}: rms {result.rms_relative_error:.1%}, worst "
          f"{result.max_relative_error:.1%}", file=sys.stderr)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    parser.add_argument("--write-profile", metavar="PATH",
                        help="fit the shipped profile again and write it to PATH")
    parser.add_argument("--write-newer-profile", metavar="PATH",
                        help=f"fit the shipped profile {NEWER_PROFILE} again (on {NEWER.name}, "
                             "in the package: no reference data needed) and write it to PATH")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from compute.errors import UserError
    from compute.output_paths import check_file_path

    if args.write_profile:   # a path that cannot be written: one line, before the fit
        try:
            check_file_path(args.write_profile, "profile file", (".toml",))
        except UserError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    if args.write_newer_profile:
        return _write_fitted(args.write_newer_profile,
                             lambda: newer_fit(newer_measurements()))
    if not (REFERENCE / FILE).is_file():
        print(f"reference data {REFERENCE / FILE} is absent; nothing to compare",
              file=sys.stderr)
        return 1
    if args.write_profile:
        return _write_fitted(args.write_profile, lambda: fit(measurements()))
    print("\n".join(table(args.markdown)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
