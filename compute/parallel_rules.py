"""The rules of a configuration's parallel degrees that the command line's help states,
declared once without numpy.

:mod:`compute.parallel`, which checks the degrees, imports numpy; ``netmodel infer --help``
and ``search --help`` read the rules from here without it.

>>> PP_RULE.split(";")[0], DENSE_MLP_TP_DEGREES
("from 1 to the model's layers", (1,))
"""

from __future__ import annotations

__all__ = ["DENSE_MLP_TP_DEGREES", "PP_RULE"]

#: The pipeline degrees allowed, as the CLI's help says them (checked in one place:
#: :func:`compute.parallel.check_parallelism`).
PP_RULE = ("from 1 to the model's layers; stages of layers // PP layers, the rest one each to "
           "the stages before the last (vLLM's split)")


#: The dense-MLP TP degrees a roofline option may ask (``dense_mlp_tp``): SGLang's
#: ``--moe-dense-tp-size`` ("TP size for MoE dense MLP layers", python/sglang/srt/server_args.py)
#: takes None (the stage's TP) or 1: its ``require_attn_tp_gather`` asserts
#: ``moe_dense_tp_size in [1, None]``, and ``enable_moe_dense_fully_dp()`` (``== 1``) makes
#: the dense layers' MLP mode SCATTERED (python/sglang/srt/layers/communicator.py
#: ``_compute_mlp_mode``): each GPU runs the whole dense MLP on its own tokens.
DENSE_MLP_TP_DEGREES = (1,)
