"""Fitting an engine profile (:mod:`compute.profiles`) to measured step latencies.

Each measurement (:class:`~compute.profiles.Measurement`: model, GPU, TP degree, phase,
batch, prompt or context, seconds) is predicted by :func:`compute.evaluate_one.evaluate` with
the profile, its collectives costed by ``comm_for(measurement)`` (default: the roofline's
ring over the GPU's scale-up bandwidth; the command line passes a scenario's or a fabric's
model). The parameters asked for are fitted by bounded least squares on the relative
errors in log space, ``log(predicted / measured)``, from a few starting points; the others
keep the ``base`` profile's values (default: the roofline's, efficiencies 1 and no
overhead).

The fit refuses (one-line :class:`~compute.errors.UserError`) to fit more parameters than
there are measurements, a parameter no measurement moves (``decode_sequence_overhead_s``
without decode rows), and parameters the measurements cannot tell apart (with one model,
``step_overhead_s`` and ``layer_overhead_s`` shift every step by the same amount; with one
model at one TP degree, ``gemm_efficiency`` and ``token_overhead_s`` both grow with the
tokens of a compute-bound step: fix one from elsewhere, as the shipped profile fixes the
GEMM efficiency from a published measurement).

>>> from compute.profiles import Measurement
>>> truth = neutral_with(layer_overhead_s=1e-4)
>>> ms = [Measurement("Llama-3-8B", "H100-SXM", 1, "decode", b, 0.0, context=1000)
...       for b in (1, 64)]
>>> ms = [replace(m, latency_s=predict(truth, m)) for m in ms]
>>> r = fit_profile(ms, fit=["layer_overhead_s"])
>>> round(r.profile.layer_overhead_s * 1e6, 3), r.max_relative_error < 1e-9
(100.0, True)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from compute.errors import UserError, known
from compute.profiles import PARAMETERS, EngineProfile, Measurement, check_profile_text, neutral
from compute.units import format_time

if TYPE_CHECKING:
    from compute.comm import CommLike
    from compute.hardware import GpuSpec

__all__ = ["DEFAULT_FIT", "FitPoint", "FitResult", "fit_profile", "leave_one_out",
           "neutral_with", "predict", "roofline"]

#: Parameters fitted by default: those measurements of one model on one system can tell
#: apart (the per-step overhead moves every step as the per-layer one does when every row
#: has the same layer count; HBM efficiency moves decode steps as the overheads do). A
#: default parameter that no measurement moves is left out (with a note).
DEFAULT_FIT = ("gemm_efficiency", "attention_efficiency", "layer_overhead_s",
               "decode_sequence_overhead_s")

#: Why a parameter may be unconstrained, for the message.
_NEEDS = {"decode_sequence_overhead_s": "it needs decode measurements",
          "attention_efficiency": "it needs measurements where attention takes time "
                                  "(long prompts or contexts)",
          "gemm_efficiency": "it needs measurements where GEMMs are compute-bound "
                             "(prefill)",
          "token_overhead_s": "it needs steps of different token counts"}


def neutral_with(**values) -> EngineProfile:
    """The neutral profile with some parameters set (a doctest and test helper)."""
    return neutral("test").with_values(values)


def _options(profile: EngineProfile | None):
    from compute.roofline import RooflineOptions

    return RooflineOptions(profile=profile)


def _model_of(m: Measurement):
    """The measurement's model; a step longer than its ``max_context`` was measured (the
    engine ran it, e.g. with RoPE scaling), so it is evaluated as measured."""
    from compute.models import get_model

    model = get_model(m.model)
    tokens = m.prompt if m.phase == "prefill" else m.context
    if model.max_context and tokens and tokens > model.max_context:
        model = replace(model, max_context=tokens)
    return model


def predict(profile: EngineProfile | None, m: Measurement, comm: CommLike | None = None,
            gpu: GpuSpec | None = None) -> float:
    """Seconds the calibrated mode (or the roofline, ``profile=None``) gives for the step
    ``m`` measured (on ``gpu``, default the catalog's GPU of ``m.gpu``)."""
    from compute.evaluate_one import evaluate

    return evaluate(_model_of(m), gpu or m.gpu, m.tp, m.batch, m.phase, pp=m.pp, ep=m.ep,
                    attention_dp=m.attention_dp, expert_skew=m.expert_skew, prompt=m.prompt,
                    context=m.context, comm=comm, options=_options(profile)).latency


def _checked(m: Measurement, model, gpu: GpuSpec, k: int | None = None):
    """``m``'s configuration checked for its model and GPU as ``netmodel infer`` checks
    ``--tp/--pp/--ep/--attention-dp`` (:func:`compute.parallel.check_parallelism`; plain TP
    by :func:`compute.sharding.check_tp`, as evaluate does), the error naming the step."""
    from compute.parallel import check_parallelism
    from compute.sharding import check_tp

    try:
        if m.parallelism.is_plain:
            return check_tp(model, m.tp, gpu.max_instance)
        return check_parallelism(model, m.parallelism, gpu.max_instance)
    except UserError as exc:
        where = f"measurement {k} ({m.label()} on {m.gpu})" if k else \
            f"measurement {m.label()} on {m.gpu}"
        raise UserError(f"{where}: {exc}") from None


class _Components:
    """One measurement's roofline stage times, kept so that the fit's many trial profiles
    cost a few numpy operations each: :meth:`latency` is what :func:`predict` gives (the
    calibrated stage times of :func:`compute.grid_parts._apply_profile`, overlap mode), the
    same operations on the same numbers; a test holds them equal. A pipelined step
    (``pp > 1``: its latency is not a sum of stage times, :func:`compute.pipeline_time._pipeline`)
    is predicted whole, by :func:`predict`."""

    def __init__(self, m: Measurement, comm=None, gpu: GpuSpec | None = None,
                 k: int | None = None):
        from compute.grid_parts import GEMM_STAGES
        from compute.hardware import get_gpu
        from compute.roofline import RooflineOptions, evaluate_grid, make_workload

        model = _model_of(m)
        spec = gpu or get_gpu(m.gpu)
        _checked(m, model, spec, k)
        par = m.parallelism
        # no reserve: what the engine ran held at most the GPU's whole HBM
        g = evaluate_grid(model, spec, [m.tp if par.is_plain else par], [m.batch],
                          make_workload(m.phase, m.prompt, m.context), comm=comm,
                          options=RooflineOptions(memory_reserve=0.0),
                          expert_skew=m.expert_skew)
        if not g.fits[0, 0]:
            what = "tp" if par.is_plain else "configuration (tp, pp, ep, attention_dp)"
            raise UserError(f"measurement {m.label()} on {m.gpu} cannot have run: "
                            f"{g.result(0, 0).memory.reason}; check its model, gpu and {what}")
        self.whole = (m, comm, gpu) if par.pp > 1 else None
        self.count = g.counts[:, 0]
        self.compute = g.compute_time[:, 0, 0]
        self.memory = g.memory_time[:, 0, 0]
        self.network = g.network_time[:, 0, 0]
        flops, hbm = g.flops[:, 0, 0], g.hbm_bytes[:, 0, 0]
        self.gemm = np.array([n in GEMM_STAGES for n in g.stages])
        self.attention = np.array([n == "attention" for n in g.stages])
        with np.errstate(divide="ignore", invalid="ignore"):
            self.intensity = np.where(hbm > 0, flops / hbm, np.inf)[self.gemm]
        self.layers, self.batch, self.phase = model.layers, float(m.batch), m.phase
        self.tokens, self.hidden = (m.prompt if m.phase == "prefill" else 1), model.hidden

    def latency(self, p: EngineProfile) -> float:
        if self.whole is not None:
            return predict(p, *self.whole)
        ct = self.compute.copy()
        ct[self.gemm] /= p.gemm_efficiency_at(self.intensity) if p.gemm_curve \
            else p.gemm_efficiency
        ct[self.attention] /= p.attention_efficiency
        st = np.maximum(np.maximum(ct, self.memory / p.hbm_fraction), self.network)
        return float((self.count * st).sum() + p.overhead(self.layers, self.batch,
                                                          self.phase, self.tokens,
                                                          self.hidden))


def roofline(m: Measurement, comm: CommLike | None = None, gpu: GpuSpec | None = None) -> float:
    """Seconds the roofline (the default mode, a lower bound) gives for ``m``."""
    return predict(None, m, comm, gpu)


@dataclass(frozen=True)
class FitPoint:
    """One measurement with what the roofline and the fitted profile give for it."""

    measurement: Measurement
    roofline_s: float
    predicted_s: float

    @property
    def error(self) -> float:
        """Relative error of the prediction: predicted / measured - 1."""
        return self.predicted_s / self.measurement.latency_s - 1.0


@dataclass(frozen=True)
class FitResult:
    """A fitted profile and its fit, point by point."""

    profile: EngineProfile
    points: tuple[FitPoint, ...]
    fitted: tuple[str, ...]
    notes: tuple[str, ...] = ()

    @property
    def rms_relative_error(self) -> float:
        return math.sqrt(sum(p.error ** 2 for p in self.points) / len(self.points))

    @property
    def max_relative_error(self) -> float:
        return max(abs(p.error) for p in self.points)


def _encode(name: str, value: float) -> float:
    """A parameter in the space the optimiser moves in: log of a fraction, a time in units
    of its typical magnitude (``Parameter.scale``: ms for the step overheads)."""
    p = PARAMETERS[name]
    return math.log(value) if p.unit == "" else value * (1 / p.scale)


def _decode(name: str, u: float) -> float:
    p = PARAMETERS[name]
    v = math.exp(u) if p.unit == "" else u * p.scale
    return min(max(v, p.minimum), p.maximum)


def _start(name: str) -> float:
    """Where the fit starts: half of peak for a fraction, a tenth of a time's scale."""
    p = PARAMETERS[name]
    return 0.5 if p.unit == "" else 0.1 * p.scale


def _bounds(names) -> tuple[list[float], list[float]]:
    lo = [_encode(n, PARAMETERS[n].minimum) for n in names]
    hi = [_encode(n, PARAMETERS[n].maximum) for n in names]
    return lo, hi


def _check_names(fit) -> tuple[str, ...]:
    names = tuple(fit)
    bad = [n for n in names if n not in PARAMETERS]
    if bad:
        raise UserError(f"unknown profile parameter(s) {', '.join(map(str, bad))}; known: "
                        f"{known(PARAMETERS)}")
    if len(set(names)) != len(names) or not names:
        raise UserError(f"give each parameter to fit once, at least one; got {list(names)}")
    return names


def fit_profile(measurements: Iterable[Measurement], *, fit: Sequence[str] | None = None,
                base: EngineProfile | None = None,
                comm_for: Callable[[Measurement], CommLike | None] | None = None,
                gpus: Mapping[str, GpuSpec] | None = None,
                name: str = "fitted", **meta: Any) -> FitResult:
    """Fit ``fit`` (default :data:`DEFAULT_FIT`) to ``measurements``.

    Parameters
    ----------
    measurements : sequence of Measurement
    fit : sequence of str, optional
        Parameters to fit (:data:`compute.profiles.PARAMETERS`); the others keep ``base``'s.
    base : EngineProfile, optional
        Values of the parameters not fitted (default: the roofline's).
    comm_for : callable, optional
        ``comm_for(measurement)``: the collective model of that measurement's system
        (default: the roofline's ring over scale-up bandwidth).
    gpus : mapping of str to GpuSpec, optional
        GPUs the measurements name that are not in the catalog (a GPU file's), by name.
    name : str
        The fitted profile's name; ``meta`` sets its other fields (engine, system, gpu,
        collectives, fitted_on).

    Returns
    -------
    FitResult
        The profile (its fitted parameters' sources say what they were fitted on, and it
        carries the measurements) and every point's error.
    """
    from scipy.optimize import least_squares

    # the texts as read_profile reads them back (a newline in the name, 10,000 characters,
    # were written and then refused when the profile was used)
    check_profile_text("", {"name": name, **meta})
    ms = tuple(measurements)
    if not ms:
        raise UserError("no measurements to fit")
    notes = []
    if fit is None:
        names = DEFAULT_FIT
    else:
        names = _check_names(fit)
        _check_count(names, ms)
    base = base or neutral(name)
    if base.gemm_curve and "gemm_efficiency" in names:
        # the curve wins over the scalar (EngineProfile.gemm_efficiency_at): the fit would
        # move nothing and say that no measurement moves it ('it needs ... prefill')
        if fit is not None:
            raise UserError("fit: gemm_efficiency cannot be fitted over base's gemm_efficiency "
                            "curve (by arithmetic intensity), which a fitted value would not "
                            "replace; fit it over a base without a curve, or leave it out")
        notes.append("gemm_efficiency not fitted: the base profile gives it as a curve by "
                     "arithmetic intensity (kept)")
        names = tuple(n for n in names if n != "gemm_efficiency")
    comms = [comm_for(m) if comm_for else None for m in ms]
    gpus = gpus or {}
    parts = [_Components(m, c, gpus.get(m.gpu), k)
             for k, (m, c) in enumerate(zip(ms, comms, strict=True), 1)]
    _check_plausible(ms, [c.latency(neutral(name)) for c in parts])
    measured = np.log([m.latency_s for m in ms])

    def profile_at(u: np.ndarray) -> EngineProfile:
        return replace(base, **{n: _decode(n, x) for n, x in zip(names, u, strict=True)})

    def residuals(u: np.ndarray) -> np.ndarray:
        p = profile_at(u)
        return np.log([c.latency(p) for c in parts]) - measured

    start = {n: _start(n) for n in names}
    u0 = np.array([_encode(n, start[n]) for n in names])
    sens = _sensitivity(residuals, u0)
    dead = [n for n, s in zip(names, sens.T, strict=True) if np.max(np.abs(s)) < 1e-7]
    if dead and fit is None:   # the default set: leave out what the data does not move
        notes += [f"{n} not fitted: no measurement moves it ({_NEEDS.get(n, 'no effect')})"
                  for n in dead]
        names = tuple(n for n in names if n not in dead)
        u0 = np.array([_encode(n, start[n]) for n in names])
        sens = _sensitivity(residuals, u0) if names else sens[:, :0]
    elif dead:
        raise UserError(f"no measurement moves {dead[0]} ({_NEEDS.get(dead[0], 'no effect')});"
                        f" leave it out of the parameters to fit")
    if not names:
        raise UserError("no parameter left to fit: no measurement moves any of them")
    _check_count(names, ms)
    _check_independent(names, sens)
    lo, hi = _bounds(names)
    best = None
    for scale in (1.0, 0.3, 3.0):
        x0 = np.clip([_encode(n, min(max(start[n] * (scale if PARAMETERS[n].unit else
                                                     scale ** 0.5), PARAMETERS[n].minimum),
                                         PARAMETERS[n].maximum)) for n in names],
                     np.array(lo) + 1e-9, np.array(hi) - 1e-9)
        r = least_squares(residuals, x0, bounds=(lo, hi), method="trf", x_scale=1.0,
                          xtol=1e-12, ftol=1e-12, gtol=1e-12, max_nfev=400)
        if best is None or r.cost < best.cost:
            best = r
    fitted_on = meta.pop("fitted_on", "") or _describe(ms)
    values = {n: _decode(n, x) for n, x in zip(names, best.x, strict=True)}
    sources = {n: f"fitted on {fitted_on}" for n in names}
    for n in PARAMETERS:
        if n not in names and not base.source(n):
            sources[n] = ("not fitted: the roofline's value" if getattr(base, n) ==
                          PARAMETERS[n].neutral else "not fitted: the base profile's value")
    profile = replace(base, name=name, fitted_on=fitted_on, **meta)
    profile = profile.with_values(values, sources, measurements=ms)
    points = tuple(FitPoint(m, roofline(m, c, gpus.get(m.gpu)),
                            predict(profile, m, c, gpus.get(m.gpu)))
                   for m, c in zip(ms, comms, strict=True))
    result = FitResult(profile=profile, points=points, fitted=names, notes=tuple(notes))
    profile = replace(profile, fit=(names, len(ms), result.rms_relative_error,
                                    result.max_relative_error))
    return replace(result, profile=profile)


#: A measured step more than this many times its roofline (or less than its reciprocal)
#: is refused as a unit slip: measured serving steps are 1.7-5.2x the roofline in the
#: reference data (docs/accuracy.md), and a latency in ms read as seconds is 1000x.
PLAUSIBLE_RATIO = 100.0


def _check_plausible(ms, bounds) -> None:
    """Refuse a measurement whose latency is more than :data:`PLAUSIBLE_RATIO` times its
    roofline (or less than 1/PLAUSIBLE_RATIO of it): a value in ms or us given as
    seconds, not a slow engine.

    >>> m = Measurement("Llama-3-70B", "H100-SXM", 8, "decode", 1, 29.8, context=576)
    >>> _check_plausible([m], [0.0094])
    Traceback (most recent call last):
    ...
    compute.errors.UserError: measurement 1 (Llama-3-70B TP 8 decode batch 1 context 576 on H100-SXM): latency_s 29.8 s is 3170x the roofline's 9.4 ms; latency_s is in seconds (a value in ms?)
    """
    for k, (m, low) in enumerate(zip(ms, bounds, strict=True), 1):
        ratio = m.latency_s / low
        if PLAUSIBLE_RATIO ** -1 <= ratio <= PLAUSIBLE_RATIO:
            continue
        hint = "a value in ms?" if ratio > 1 else "a value in a smaller unit than seconds?"
        raise UserError(f"measurement {k} ({m.label()} on {m.gpu}): latency_s {m.latency_s:.4g} s is {ratio:.4g}x the "
                        f"roofline's {format_time(low)}; latency_s is in seconds ({hint})")


def _check_count(names, ms) -> None:
    """Refuse to fit more parameters than there are measurements."""
    if len(names) > len(ms):
        raise UserError(f"cannot fit {len(names)} parameters ({', '.join(names)}) to "
                        f"{len(ms)} measurement{'s' if len(ms) != 1 else ''}: give at least "
                        f"as many measurements as parameters, or fit fewer")


def _sensitivity(residuals, u0: np.ndarray) -> np.ndarray:
    """d residual / d u (points x parameters), central differences."""
    cols = []
    for j in range(len(u0)):
        h = 1e-3
        up, dn = u0.copy(), u0.copy()
        up[j] += h
        dn[j] -= h
        cols.append((residuals(up) - residuals(dn)) / (2 * h))
    return np.array(cols).T if cols else np.zeros((0, 0))


def _check_independent(names, sens: np.ndarray) -> None:
    """Refuse parameters whose effects on the measurements are (nearly) proportional."""
    if len(names) < 2:
        return
    cols = sens / np.linalg.norm(sens, axis=0)
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            if abs(float(cols[:, i] @ cols[:, j])) > 1 - 1e-6:
                raise UserError(f"the measurements cannot tell {names[i]} from {names[j]} "
                                f"(they move every point alike, e.g. one model's layer and "
                                f"step overheads); fit one of them")
    s = np.linalg.svd(cols, compute_uv=False)
    if s[-1] < 1e-6 * s[0]:
        raise UserError(f"the measurements cannot tell apart the parameters "
                        f"{', '.join(names)} (one is a combination of the others); fit "
                        f"fewer")


def _describe(ms) -> str:
    """``6 measured steps of Llama-2-70B on H100-SXM (TP 8): 3 prefill, 3 decode``; with
    other configurations than plain TP, each (``(TP 8, TP 8 x EP 8)``)."""
    models = sorted({m.model for m in ms})
    gpus = sorted({m.gpu for m in ms})
    if all(m.parallelism.is_plain for m in ms):
        configs = "TP " + ", ".join(map(str, sorted({m.tp for m in ms})))
    else:
        key = lambda p: (p.tp, p.pp, p.ep, p.attention_dp)  # noqa: E731
        configs = ", ".join(p.label for p in sorted({m.parallelism for m in ms}, key=key))
    phases = {p: sum(m.phase == p for m in ms) for p in ("prefill", "decode")}
    return (f"{len(ms)} measured steps of {', '.join(models)} on {', '.join(gpus)} "
            f"({configs}): " + ", ".join(f"{v} {k}" for k, v in phases.items() if v))


def leave_one_out(measurements: Iterable[Measurement], *, fit: Sequence[str] | None = None,
                  base: EngineProfile | None = None,
                  comm_for: Callable[[Measurement], CommLike | None] | None = None,
                  gpus: Mapping[str, GpuSpec] | None = None) -> list[FitPoint]:
    """Each measurement predicted by the profile fitted on all the others (held out)."""
    ms = tuple(measurements)
    gpus = gpus or {}
    out = []
    for i, m in enumerate(ms):
        rest = ms[:i] + ms[i + 1:]
        r = fit_profile(rest, fit=fit, base=base, comm_for=comm_for, gpus=gpus,
                        name="held-out")
        c = comm_for(m) if comm_for else None
        g = gpus.get(m.gpu)
        out.append(FitPoint(m, roofline(m, c, g), predict(r.profile, m, c, g)))
    return out
