"""What a fabric-aware search accepts: the parallelism names and the dimensions each
searches (:func:`parallel_dimensions`), and the roofline options refused before any search
where they are not modelled (:func:`check_fabric_options` for compare and sweep,
:func:`refuse_unwired_options` and :func:`refuse_mtp` for the study's other parts), each in
one line naming the value.

>>> check_parallelism_name("auto")
'auto'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from compute.errors import UserError, chosen
from compute.parallel import search_pp
from compute.roofline import check_options
from compute.validate import describe
from netmodel.study.defaults import PARALLELISM

if TYPE_CHECKING:
    from compute.models import ModelSpec
    from compute.roofline_options import RooflineOptions

__all__ = ["check_fabric_options", "check_parallelism_name", "parallel_dimensions",
           "refuse_mtp", "refuse_unwired_options"]


def check_parallelism_name(parallelism: object) -> str:
    """``parallelism`` if it is one of :data:`PARALLELISM`, else one line naming it."""
    from compute.errors import known, lookalike

    text = chosen(parallelism, PARALLELISM)   # blanks at either end dropped, as every choice's
    if text is None:
        raise UserError(f"parallelism {describe(parallelism)} is unknown"
                        f"{lookalike(parallelism, PARALLELISM)}; known: {known(PARALLELISM)}")
    return text


def parallel_dimensions(model: ModelSpec, parallelism: str, gpus: int, *,
                        two_batch_overlap: bool = False, mtp_decode: bool = False) -> dict:
    """The search's parallelism arguments for ``model`` on a fabric of ``gpus`` GPUs: empty
    for tensor parallelism alone (``tp``, and ``auto`` for a dense model); expert and
    attention data parallelism within ``gpus`` (``auto`` for a mixture-of-experts model:
    no pipeline, a choice that keeps the search about 3x faster, not an optimum: with
    ``all`` pipelines win where a token's all-to-alls cost more than a stage's hand-off,
    e.g. Mixtral-8x7B prefill on every shipped fabric, TP 1 x PP 2 on ``h100-dgx`` 291.3
    against 280.2 tokens/s/SM and PP 8 on the Lite fabrics 287.9 against 239.8-277.0, and
    DeepSeek-V3 decode on ``lite-direct``, TP 32 x PP 2, 9.96 against 7.69); and with
    ``all`` also pipeline stages (:func:`compute.parallel.search_pp`: 1, 2, 4, 8 up to the
    layers and ``gpus``). With ``two_batch_overlap`` or ``mtp_decode`` (a decode step with
    multi-token prediction; both modelled on one pipeline stage) ``all`` is refused by
    name, where the search would have said 'got PP 8'.

    >>> from compute.models import get_model
    >>> parallel_dimensions(get_model("Llama-3-70B"), "auto", 128)
    {}
    >>> parallel_dimensions(get_model("Mixtral-8x7B"), "auto", 128)["pp"]
    (1,)
    """
    parallelism = check_parallelism_name(parallelism)
    if parallelism == "all" and two_batch_overlap:
        raise UserError(_ALL_REFUSED)
    if parallelism == "all" and mtp_decode:
        raise UserError(_ALL_REFUSED_MTP)
    if parallelism == "tp" or (parallelism == "auto" and not model.is_moe):
        return {}
    pp = (1,) if parallelism == "auto" else search_pp(model, gpus)
    return {"pp": pp, "ep": True if model.is_moe else None, "attention_dp": True,
            "max_gpus": gpus}


#: What takes the engine options the study refuses (:func:`refuse_unwired_options`).
_WIRED = "compare, sweep, search, evaluate or serve"


def refuse_unwired_options(options: RooflineOptions | None, caller: str,
                           models: Sequence[ModelSpec] = ()) -> None:
    """Refuse ``options.two_batch_overlap``, ``options.dense_mlp_tp`` and
    ``options.mtp_tokens`` where they are not wired (the study: its crossovers, serving,
    reliability and paper parts and its figures are not checked with them; compare and
    sweep take all three, :func:`check_fabric_options`). ``models``: the caller's models,
    named by :func:`refuse_mtp`.

    >>> from compute.roofline_options import RooflineOptions
    >>> refuse_unwired_options(RooflineOptions(two_batch_overlap=True), "the study")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: options.two_batch_overlap is not modelled by the study; give it to compare, sweep, search, evaluate or serve
    """
    check_options(options)
    refuse_mtp(options, caller, models)
    for name in ("two_batch_overlap", "dense_mlp_tp"):
        value = getattr(options, name, None) if options is not None else None
        if value not in (None, False):
            raise UserError(f"options.{name} is not modelled by {caller}; give it to "
                            f"{_WIRED}")


def refuse_mtp(options: RooflineOptions | None, caller: str,
               models: Sequence[ModelSpec] = ()) -> None:
    """Refuse ``options.mtp_tokens`` (multi-token prediction) where it is not wired (the
    study); compare, sweep, ``infer``, ``search`` and ``serve`` cost it. The line says why:
    where none of ``models`` has an MTP module (the study's own models are dense, its MoE
    part's Mixtral-8x7B has none), that; else that the caller's parts are not checked
    with it.

    >>> from compute.models import get_model
    >>> from compute.roofline_options import RooflineOptions
    >>> refuse_mtp(RooflineOptions(mtp_tokens=1), "the study", [get_model("Llama-3-70B")])
    Traceback (most recent call last):
    ...
    compute.errors.UserError: options.mtp_tokens 1 is not modelled by the study: none of its models has an MTP module (Llama-3-70B: mtp_modules 0), so no decode step of it could draft; give it to compare, sweep, search, evaluate or serve with a model that has one (DeepSeek-V3)
    """
    if options is None or not options.mtp_tokens:
        return
    k = options.mtp_tokens
    if models and not any(m.mtp_modules for m in models):
        names = ", ".join(dict.fromkeys(m.name for m in models))
        raise UserError(f"options.mtp_tokens {k} is not modelled by {caller}: none of its "
                        f"models has an MTP module ({names}: mtp_modules 0), so no decode "
                        f"step of it could draft; give it to {_WIRED} with a model that "
                        f"has one (DeepSeek-V3)")
    raise UserError(f"options.mtp_tokens {k} is not modelled by {caller} (its crossovers, "
                    f"serving, reliability and paper parts are not checked with it); give it "
                    f"to {_WIRED}")


def check_fabric_options(models: Sequence[ModelSpec], options: RooflineOptions | None,
                         parallelism: str, phases: Sequence[str] = ("prefill", "decode")
                         ) -> None:
    """Refuse, before any search, what :func:`~netmodel.study.fabric_search.fabric_search`
    would refuse of the options at every model, phase and scenario of a comparison or sweep
    (a sweep would otherwise report each point as refused by its fabric): two-batch overlap
    with ``parallelism`` ``"all"`` (pipeline stages; the overlap is modelled on one stage);
    a dense MLP TP degree for a model without dense layers among MoE ones or with
    ``parallelism`` ``"tp"`` (no attention DP to run beside); multi-token prediction where
    ``phases`` hold decode (prefill is costed as without it) with a model that has no MTP
    module or a windowed one, or with ``parallelism`` ``"all"`` (one stage).
    ``fabric_search`` costs the options as ``search`` does with the scenario's
    collectives.

    >>> from compute.models import get_model
    >>> from compute.roofline_options import RooflineOptions
    >>> check_fabric_options([get_model("DeepSeek-V3")], RooflineOptions(dense_mlp_tp=1), "tp")
    Traceback (most recent call last):
    ...
    compute.errors.UserError: dense MLP TP 1 runs beside attention DP, which parallelism 'tp' does not search; give parallelism 'auto' or 'all', or leave options.dense_mlp_tp unset
    """
    check_options(options)
    parallelism = check_parallelism_name(parallelism)   # before '== "all"' (a numpy array's truth raised)
    if options is None:
        return
    if options.two_batch_overlap and parallelism == "all":
        raise UserError(_ALL_REFUSED)
    if options.mtp_tokens and "decode" in phases:
        from compute.mtp import check_model

        for m in models:   # the model's own refusal (no MTP module, a windowed model)
            check_model(m)
        if parallelism == "all":
            raise UserError(_ALL_REFUSED_MTP)
    if options.dense_mlp_tp is None:
        return
    if parallelism == "tp":
        raise UserError(f"dense MLP TP {options.dense_mlp_tp} runs beside attention DP, which "
                        f"parallelism 'tp' does not search; give parallelism 'auto' or 'all', or "
                        f"leave options.dense_mlp_tp unset")
    from compute.parallel import Parallelism, dense_data_parallel, layout

    for m in models:   # the model's own refusal (no dense layers among MoE ones)
        c = [Parallelism(1, attention_dp=1)]
        if not (m.is_moe and m.dense_layers):
            dense_data_parallel(m, c, layout(m, c), options.dense_mlp_tp)


def _all_refused(what: str, option: str) -> str:
    """The line refusing parallelism 'all' with an option modelled on one pipeline stage."""
    return (f"parallelism 'all' searches pipeline stages, which {what} does not model (one "
            f"stage); give parallelism 'auto' or 'tp' with options.{option}")


_ALL_REFUSED = _all_refused("two-batch overlap", "two_batch_overlap")
_ALL_REFUSED_MTP = _all_refused("MTP decode", "mtp_tokens")
