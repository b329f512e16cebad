"""compute: a per-stage roofline model of LLM inference (prefill and decode, tensor parallel).

compute knows nothing of fabric graphs: communication enters through the collective-cost
protocol in :mod:`compute.comm`.
"""
