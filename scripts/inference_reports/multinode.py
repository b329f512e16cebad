"""The multi-server report: published DeepSeek-V3/R1 serving with expert parallelism
(``tests/netmodel/data/published_serving_multinode.csv``) against the roofline, costed as
``netmodel infer --tp N --ep N --attention-dp N --fabric SPEC`` costs it.
"""

from __future__ import annotations

import csv

from inference_reports.common import ROOT
from inference_reports.published import published_model
from inference_reports.tables import above, left_out_lines, margin_span, render

#: Published multi-server serving of DeepSeek-V3/R1 with expert parallelism (in the
#: repository; tests/netmodel/test_published_multinode.py reads it too).
MULTINODE = ROOT / "tests" / "netmodel" / "data" / "published_serving_multinode.csv"


def multinode_prediction(row: dict, two_batch: bool = False, dense_dp: bool = False) -> float:
    """Tokens/s a server the roofline gives ``row`` (its header's conversion): the instance
    costed as ``netmodel infer --tp N --ep N --attention-dp N --fabric SPEC`` costs it,
    input tokens a prefill step or the tokens a sequence emits a decode step, over the
    instance's servers; ``two_batch``: the step run as two micro-batches, each one's
    collectives behind the other's compute (``--two-batch-overlap``,
    :mod:`compute.two_batch`); ``dense_dp``: the dense MLP layers data-parallel
    (``--dense-mlp-tp 1``, SGLang's ``--moe-dense-tp-size 1``).

    A decode row whose source may run the model's MTP module (``emitted`` 2: at most 2
    tokens a step) is costed both ways and the higher taken (whether MTP ran is not
    said): one token a step, and ``--mtp-tokens emitted - 1`` at the published acceptance
    (:data:`compute.roofline_options.DEFAULT_ACCEPTANCE`: the verification pass, the module's passes,
    ``1 + a`` expected tokens). MTP with two-batch overlap is not modelled: there the
    bare bound stays, ``emitted`` tokens a step over the step without MTP (every draft
    accepted, the module free; :func:`mtp_costed` says which a row's figure is)."""
    from compute.evaluate_one import evaluate
    from compute.roofline_options import RooflineOptions
    from compute.two_batch import evaluate_two_batch
    from netmodel.cli.resolve import resolve_collectives

    n, b = int(row["gpus"]), int(row["batch"])
    kw = {"ep": int(row["ep"]), "attention_dp": int(row["attention_dp"]),
          "comm": resolve_collectives(None, row["fabric"], None, None)[1]}
    if dense_dp:
        kw["options"] = RooflineOptions(dense_mlp_tp=1)
    if row["phase"] == "prefill":
        kw["prompt"] = int(row["prompt"])
        tokens = b * int(row["prompt"])
    else:
        kw["context"] = int(row["context"])
        tokens = b * (1 if mtp_costed(row, two_batch) else int(row["emitted"]))
    run = evaluate_two_batch if two_batch else evaluate
    r = run(published_model(row), row["gpu"], n, b, row["phase"], **kw)
    per = n / int(row["gpus_per_node"])
    best = tokens / r.latency / per
    if mtp_costed(row, two_batch):   # or with MTP, the module's passes costed
        mtp = RooflineOptions(dense_mlp_tp=1 if dense_dp else None,
                              mtp_tokens=int(row["emitted"]) - 1)
        m = evaluate(published_model(row), row["gpu"], n, b, "decode",
                     **{**kw, "options": mtp})
        best = max(best, m.tokens_per_step / m.latency / per)
    return best


def mtp_costed(row: dict, two_batch: bool = False) -> bool:
    """Whether :func:`multinode_prediction` costs ``row``'s drafts through the MTP option
    (a decode row emitting up to 2 or more tokens a step, without two-batch overlap)."""
    return row["phase"] == "decode" and int(row["emitted"]) > 1 and not two_batch


def multinode(markdown: bool) -> list[str]:
    """Every multi-server row: measured and roofline tokens/s a server and the margin
    (roofline / measured: >= 1 where the bound holds); excluded rows with their reason."""
    from compute.roofline_options import ACCEPTANCE_SOURCE, DEFAULT_ACCEPTANCE

    with open(MULTINODE) as fh:
        rows = list(csv.DictReader(line for line in fh if not line.startswith("#")))
    head = ["row", "system", "engine", "what", "measured tok/s", "roofline", "per", "margin",
            "roofline TBO", "margin TBO", "roofline dense DP", "margin dense DP"]
    table_rows, margins, overlapped, dense, both = [], [], [], [], []
    for r in (r for r in rows if r["status"] == "used"):
        roof = multinode_prediction(r)
        margins.append((roof / float(r["measured"]), r))
        tbo = multinode_prediction(r, two_batch=True)
        overlapped.append((tbo / float(r["measured"]), r))
        ddp = multinode_prediction(r, dense_dp=True)
        dense.append((ddp / float(r["measured"]), r))
        both.append((multinode_prediction(r, two_batch=True, dense_dp=True)
                     / float(r["measured"]), r))
        n = int(r["gpus"])
        what = (f"prefill {int(r['batch']) // n}x{r['prompt']} tok/GPU" if r["phase"] == "prefill"
                else f"decode b{int(r['batch']) // n}/GPU ctx {r['context']}"
                + (f", MTP {int(r['emitted']) - 1} at {DEFAULT_ACCEPTANCE:.2f} or none "
                   f"(TBO: <= {r['emitted']} tok/step)" if mtp_costed(r) else ""))
        table_rows.append([r["id"], f"{r['gpu_measured']}, EP {r['ep']} x DP-attn "
                           f"{r['attention_dp']}, --fabric {r['fabric']}", r["engine"], what,
                           f"{float(r['measured']):,.0f}", f"{roof:,.0f}",
                           "node" if r["gpus_per_node"] != "1" else "GPU",
                           f"{margins[-1][0]:.2f}x", f"{tbo:,.0f}", f"{overlapped[-1][0]:.2f}x",
                           f"{ddp:,.0f}", f"{dense[-1][0]:.2f}x"])
    out = render(head, table_rows, markdown)
    summary = [f"Roofline above all {len(margins)} multi-server rows used "
               f"({above(margins)} of {len(margins)}): by {margin_span(margins)}.",
               f"With two-batch overlap (--two-batch-overlap, as the engines run): above "
               f"{above(overlapped)} of {len(overlapped)}, by {margin_span(overlapped)}.",
               f"With the dense MLP layers data-parallel (--dense-mlp-tp 1, as SGLang runs "
               f"them with --moe-dense-tp-size 1): above {above(dense)} of {len(dense)}, by "
               f"{margin_span(dense)}.",
               f"With both (--two-batch-overlap --dense-mlp-tp 1): above {above(both)} of "
               f"{len(both)}, by {margin_span(both)}."]
    drafted = [r["id"] for r in rows if r["status"] == "used" and mtp_costed(r)]
    if drafted:
        summary.append(
            f"Rows whose source may run DeepSeek-V3's MTP module ({', '.join(drafted)}): "
            f"the roofline and dense-DP columns take the higher of one token a step and "
            f"--mtp-tokens 1 at acceptance {DEFAULT_ACCEPTANCE:.2f} ({ACCEPTANCE_SOURCE}; the "
            f"top of the range: a bound), the verification pass and the module's pass "
            f"costed; MTP with two-batch overlap is not modelled, so the TBO columns keep "
            f"the bare bound of every draft accepted and the module free.")
    summary += left_out_lines(rows, 0)
    return out + ([f"- {s}" for s in summary] if markdown else summary)
