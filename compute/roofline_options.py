"""The options of the roofline model (:class:`RooflineOptions`): each field's type, range,
default and description, declared once, with the stage-time modes (:data:`MODES`) and the
defaults of the memory reserve and of the MTP acceptance.

The model (:mod:`compute.roofline`) takes them; the command line's options of the same
names are made from them (:func:`option_help`). This module loads no numpy (the profiles'
module, which does, is read only when options are made), so ``netmodel infer --help`` and
the other commands with these options write their help without it.

>>> RooflineOptions().mode, DEFAULT_RESERVE, DEFAULT_ACCEPTANCE
('overlap', 0.1, 0.9)
>>> RooflineOptions(mode="parallel")
Traceback (most recent call last):
...
compute.errors.UserError: unknown mode 'parallel'; known: 'overlap', 'serial'
>>> RooflineOptions(flops_efficiency=5e-5)
Traceback (most recent call last):
...
compute.errors.UserError: flops_efficiency must be a fraction from 0.0001 to 1, got 5e-05
"""

from __future__ import annotations

import math
import numbers
import tomllib
from dataclasses import dataclass, field, fields
from importlib import resources
from typing import TYPE_CHECKING

from compute.errors import UserError, chosen, known, lookalike
from compute.model_spec import COMPUTE_DTYPES
from compute.parallel_rules import DENSE_MLP_TP_DEGREES
from compute.phases import check_mtp_tokens
from compute.validate import describe, flag, is_finite, is_whole

if TYPE_CHECKING:
    from compute.profiles import EngineProfile

__all__ = ["ACCEPTANCE_SOURCE", "DEFAULT_ACCEPTANCE", "DEFAULT_RESERVE", "MODES",
           "MTP_TWO_BATCH_REFUSED", "RooflineOptions", "check_acceptance", "check_reserve",
           "option_help", "profile_two_batch_refused"]

#: How a stage's compute, memory and network times combine: their max or their sum.
MODES = ("overlap", "serial")

#: The one line refusing multi-token prediction with two-batch overlap (the halves' chains
#: leave the drafts out): :class:`RooflineOptions` and :mod:`compute.two_batch`.
MTP_TWO_BATCH_REFUSED = ("MTP decode with two-batch overlap is not modelled; give one of "
                         "mtp_tokens and two_batch_overlap")



def profile_two_batch_refused(profile: EngineProfile) -> str:
    """The one line refusing two-batch overlap with an engine ``profile`` (the overlap is
    modelled on the roofline): :class:`RooflineOptions` and :mod:`compute.two_batch`. It
    names the parameter (two_batch_overlap, which the command line says as its flag) and
    the profile given."""
    return (f"two-batch overlap is modelled on the roofline; give no profile "
            f"(two_batch_overlap with profile {profile.name!r}, the calibrated mode: drop "
            f"one of them)")


#: Fraction of HBM left to the runtime (vLLM's default gpu_memory_utilization = 0.9).
DEFAULT_RESERVE = 0.10


def check_reserve(reserve: float) -> float:
    """Return ``reserve`` if it is a fraction in [0, 1), else raise :class:`UserError`."""
    if not (is_finite(reserve) and 0 <= reserve < 1):
        raise UserError(f"memory reserve must be a fraction in [0, 1), got {describe(reserve)}")
    return float(reserve)


def _acceptance() -> dict:
    text = resources.files("compute").joinpath("data/mtp.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)["acceptance"]


_DATA = _acceptance()
#: Per-draft-token acceptance probability taken by default: the top of the DeepSeek-V3
#: Technical Report's 85%-90% (compute/data/mtp.toml, with its source).
DEFAULT_ACCEPTANCE: float = float(_DATA["default"])
#: Where :data:`DEFAULT_ACCEPTANCE` comes from.
ACCEPTANCE_SOURCE: str = _DATA["source"]


#: What an MTP acceptance must be, in :func:`check_acceptance`'s words (0 allowed: every
#: draft refused).
ACCEPTANCE_RANGE = "a probability from 0 to 1"


def check_acceptance(a: object) -> float:
    """``a`` as a float if it is a probability (a finite number from 0 to 1), else a
    :class:`UserError`."""
    v = math.nan
    if isinstance(a, numbers.Real) and not isinstance(a, bool):   # numpy's, fractions too
        try:
            v = float(a)
        except (TypeError, ValueError, OverflowError, ArithmeticError):
            v = math.nan   # an integer past a float's range; numpy's timedelta64
    if not 0 <= v <= 1:
        raise UserError(f"MTP acceptance (mtp_acceptance) must be {ACCEPTANCE_RANGE}, "
                        f"got {describe(a)}")
    return v


@dataclass(frozen=True)
class RooflineOptions:
    """How stage times are formed.

    ``mode``: ``"overlap"`` (stage time = max of compute, memory, network) or ``"serial"``
    (their sum). ``flops_efficiency`` and ``memory_efficiency``: achievable fractions of
    peak FLOP/s and HBM bandwidth, from the floor an engine profile puts on its efficiencies
    (:data:`compute.profiles.PARAMETERS`' ``gemm_efficiency`` minimum, 1e-4) to 1 (default
    1.0). ``compute_dtype``: ``"bf16"`` or
    ``"fp8"`` tensor cores; ``None`` takes the model's. ``memory_reserve``: fraction of HBM
    left to the runtime (:data:`DEFAULT_RESERVE`).

    ``overlap_collectives`` (``overlap`` mode only; default False): each per-layer all-reduce
    is pipelined with the GEMM that produces its input (chunked, as async tensor parallelism
    does), so only the part of it longer than that GEMM shows: the collective stage's time
    becomes ``max(0, network - producer time)``. By default the collectives are stages of
    their own and add to the step in full.

    ``profile`` (default None: the roofline): an
    :class:`~compute.profiles.EngineProfile`, the calibrated mode (GEMM and attention
    efficiencies, achievable HBM bandwidth, fixed overheads; see :mod:`compute.profiles`).
    It replaces the two efficiency factors, which must then stay 1.

    ``two_batch_overlap`` (default False; the roofline only, one pipeline stage): the engine
    may run a step as two micro-batches, each one's collectives hidden behind the other's
    compute (:mod:`compute.two_batch`); a step of two or more sequences then takes the
    lesser of the serial step and the overlapped one (the operator turns the engine's flag
    on or off per deployment), and the result says which (``two_batch_hidden``).

    ``dense_mlp_tp`` (default None: the stage's TP): 1 runs an MoE model's dense MLP
    layers data-parallel beside attention DP (:func:`compute.parallel.dense_data_parallel`);
    refused for other degrees, models without dense layers and configurations without
    attention DP.

    ``mtp_tokens`` (default 0: off) and ``mtp_acceptance`` (default
    :data:`DEFAULT_ACCEPTANCE`, 0.90: DeepSeek-V3 Technical Report, Section
    5.4.3): decode with multi-token prediction, ``mtp_tokens`` draft tokens a step from
    the model's MTP module, each accepted with probability ``mtp_acceptance``
    (:mod:`compute.mtp`; the roofline only, PP 1, no two-batch overlap).

    A field's ``metadata`` ``help`` is its one description: the command line's option of
    that name (dashes for underscores) is made from it (:func:`option_help`).
    """

    mode: str = "overlap"
    flops_efficiency: float = 1.0
    memory_efficiency: float = 1.0
    compute_dtype: str | None = None
    memory_reserve: float = DEFAULT_RESERVE
    overlap_collectives: bool = field(default=False, metadata={
        "help": "Hide each all-reduce behind the GEMM producing its input."})
    profile: EngineProfile | None = None
    two_batch_overlap: bool = field(default=False, metadata={
        "help": "Let the engine run a step as two micro-batches, each one's collectives "
                "hidden behind the other's compute (SGLang's --enable-two-batch-overlap, "
                "DeepSeek's dual micro-batches): a step of 2 or more sequences takes the "
                "lesser of the serial and the overlapped time (infer prints both; the "
                "roofline only, PP 1)."})
    dense_mlp_tp: int | None = field(default=None, metadata={
        "help": "TP degree of an MoE model's dense MLP layers under attention DP: 1 runs "
                "them data-parallel, each GPU the whole dense MLP on its own tokens with no "
                "gather/scatter across attention groups (SGLang's --moe-dense-tp-size 1; "
                "the dense weights replicated on every GPU); unset: the stage's TP."})
    mtp_tokens: int = field(default=0, metadata={
        "help": "Decode with multi-token prediction: K draft tokens a step from the "
                "model's MTP module (DeepSeek-V3: 1 module, num_nextn_predict_layers), "
                "verified by the main model on K + 1 tokens a sequence, after K passes "
                "of the module; 0 (default): off. TPOT = step / expected tokens; prefill "
                "is costed as without it (the roofline only, PP 1)."})
    mtp_acceptance: float = field(default=DEFAULT_ACCEPTANCE, metadata={
        "help": "Probability that each MTP draft token is accepted, in order (expected "
                f"tokens a step 1 + a + ... + a^K); default {DEFAULT_ACCEPTANCE:g}, the top "
                f"of the DeepSeek-V3 Technical Report's {_DATA['low']:.0%}-{_DATA['high']:.0%} "
                "(arXiv 2412.19437, Section 5.4.3; compute/data/mtp.toml)."})

    def to_dict(self) -> dict:
        """JSON-ready settings: the fields, ``profile`` left out without one (so the
        roofline's settings read as before profiles existed) and named with one.

        >>> RooflineOptions().to_dict()["mode"], "profile" in RooflineOptions().to_dict()
        ('overlap', False)
        """
        d = {f: getattr(self, f) for f in self.__dataclass_fields__
             if f != "profile" and (f != "two_batch_overlap" or self.two_batch_overlap)
             and (f != "dense_mlp_tp" or self.dense_mlp_tp is not None)
             and (f not in ("mtp_tokens", "mtp_acceptance") or self.mtp_tokens)}
        if self.profile is not None:
            d["profile"] = {"name": self.profile.name, "gpu": self.profile.gpu,
                            "fitted_on": self.profile.fitted_on, **self.profile.values()}
        return d

    def __post_init__(self):
        mode = chosen(self.mode, MODES)   # ' overlap' is 'overlap', as every choice
        if mode is None:
            raise UserError(f"unknown mode {describe(self.mode)}{lookalike(self.mode, MODES)}; "
                            f"known: {known(MODES)}")
        object.__setattr__(self, "mode", mode)
        # the profiles' module imports numpy: read when options are made, not for --help
        from compute.profiles import PARAMETERS, EngineProfile

        # the smallest efficiency factor taken (a fraction of peak FLOP/s or HBM bandwidth):
        # the floor engine profiles put on their efficiencies; 1e-300 would make every
        # stage take 1e294 s
        floor = PARAMETERS["gemm_efficiency"].minimum
        for key in ("flops_efficiency", "memory_efficiency"):
            v = getattr(self, key)
            if not (is_finite(v) and floor <= v <= 1):
                raise UserError(f"{key} must be a fraction from {floor:g} to 1, "
                                f"got {describe(v)}")
            # Python's numbers kept, as every checked field below: a numpy float32 failed
            # every report's JSON (to_dict)
            object.__setattr__(self, key, float(v))
        if self.compute_dtype is not None:
            dtype = chosen(self.compute_dtype, COMPUTE_DTYPES)
            if dtype is None:
                raise UserError(f"unknown compute dtype {describe(self.compute_dtype)}"
                                f"{lookalike(self.compute_dtype, COMPUTE_DTYPES)}; "
                                f"known: {known(COMPUTE_DTYPES)}")
            object.__setattr__(self, "compute_dtype", dtype)
        object.__setattr__(self, "memory_reserve", check_reserve(self.memory_reserve))
        for key in FLAGS:   # numpy's bool taken, kept as Python's (compute.validate.flag)
            object.__setattr__(self, key, flag("", key, getattr(self, key)))
        if self.overlap_collectives and self.mode != "overlap":
            raise UserError("overlap_collectives needs mode 'overlap' (serial mode sums every "
                            "stage's compute, memory and network time)")
        if self.profile is not None:
            if not isinstance(self.profile, EngineProfile):
                raise UserError(f"profile must be an EngineProfile (compute.profiles."
                                f"get_profile), got {type(self.profile).__name__}")
            if self.flops_efficiency != 1 or self.memory_efficiency != 1:
                # named by its parameters: the command line says its flags
                given = " and ".join(f"{k} {getattr(self, k):g}" for k in (
                    "flops_efficiency", "memory_efficiency") if getattr(self, k) != 1)
                raise UserError(f"give profile {self.profile.name!r} or efficiency factors "
                                f"({given}), not both: the profile holds the engine's "
                                f"efficiencies")
        if self.two_batch_overlap and self.profile is not None:
            raise UserError(profile_two_batch_refused(self.profile))
        if self.dense_mlp_tp is not None:
            if not is_whole(self.dense_mlp_tp) or self.dense_mlp_tp not in DENSE_MLP_TP_DEGREES:
                raise UserError(f"dense MLP TP degree (dense_mlp_tp) must be 1 (SGLang's "
                                f"--moe-dense-tp-size 1) or unset (the stage's TP), got "
                                f"{describe(self.dense_mlp_tp)}")
            object.__setattr__(self, "dense_mlp_tp", int(self.dense_mlp_tp))
        if type(self.mtp_tokens) is not int or self.mtp_tokens != 0:
            object.__setattr__(self, "mtp_tokens", check_mtp_tokens(self.mtp_tokens))
        if type(self.mtp_acceptance) is not float or self.mtp_acceptance != DEFAULT_ACCEPTANCE:
            object.__setattr__(self, "mtp_acceptance", check_acceptance(self.mtp_acceptance))
        if self.mtp_tokens and self.two_batch_overlap:
            raise UserError(MTP_TWO_BATCH_REFUSED)
        if self.mtp_tokens and self.profile is not None:
            raise UserError(f"MTP decode (mtp_tokens {self.mtp_tokens}) is modelled on the "
                            f"roofline, not with engine profile {self.profile.name!r}; give "
                            f"no profile or mtp_tokens 0")


#: The options' true/false fields (each checked by :func:`compute.validate.flag`).
FLAGS = tuple(f.name for f in fields(RooflineOptions) if f.type in (bool, "bool"))


def option_help(name: str) -> str:
    """The help of the :class:`RooflineOptions` field ``name`` (its metadata's ``help``;
    the command line's flag is the name with dashes, ``--two-batch-overlap``).

    >>> option_help("two_batch_overlap").split(",")[0]
    'Let the engine run a step as two micro-batches'
    """
    return next(f.metadata for f in fields(RooflineOptions) if f.name == name)["help"]
