"""Fitting an engine profile (:mod:`compute.profiles`) to measured step latencies.

Each measurement (:class:`~compute.measurements.Measurement`: model, GPU, TP degree, phase,
batch, prompt or context, seconds) is predicted by :func:`compute.evaluate_one.evaluate` with
the profile, its collectives costed by ``comm_for(measurement)`` (default: NCCL's ring over
the GPU's scale-up bandwidth, :func:`compute.roofline.ring_comm`, the calibrated mode's
default, with which the shipped profiles were fitted, not the roofline's lower bound; the
command line passes a scenario's or a fabric's model). The parameters asked for are fitted by bounded least squares on the relative
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

>>> from compute.measurements import Measurement
>>> truth = neutral_with(layer_overhead_s=1e-4)
>>> ms = [Measurement("Llama-3-8B", "H100-SXM", 1, "decode", b, 1.0, context=1000)
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
from compute.measurements import Measurement
from compute.memo import Memo
from compute.profiles import PARAMETERS, EngineProfile, check_profile_text, neutral
from compute.units import counted, format_time
from compute.validate import SMALLEST_NUMBER

if TYPE_CHECKING:
    from compute.comm import CommLike
    from compute.hardware import GpuSpec

__all__ = ["BELOW_ROOFLINE_TOLERANCE", "DEFAULT_FIT", "FitPoint", "FitResult", "fit_profile",
           "leave_one_out", "neutral_with", "predict", "roofline"]

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
    from compute.roofline_options import RooflineOptions

    return RooflineOptions(profile=profile)


def _model_of(m: Measurement):
    """The measurement's model; a step longer than its ``max_context`` was measured (the
    engine ran it, e.g. with RoPE scaling), so it is evaluated as measured."""
    from compute.models import get_model

    try:
        model = get_model(m.model)
    except UserError as exc:   # an unknown name: say which row gave it
        if not m.origin:
            raise
        raise UserError(f"{m.origin}: model: {exc}") from None
    tokens = m.prompt if m.phase == "prefill" else m.context
    if model.max_context and tokens and tokens > model.max_context:
        model = replace(model, max_context=tokens)
    return model


def gpu_of(m: Measurement, resolve=None) -> GpuSpec:
    """The GPU ``m`` ran on, by ``resolve(name)`` (default the catalog's
    :func:`~compute.hardware.get_gpu`); an unknown name says which row gave it."""
    from compute.hardware import get_gpu

    try:
        return (resolve or get_gpu)(m.gpu)
    except UserError as exc:
        if not m.origin:
            raise
        raise UserError(f"{m.origin}: gpu: {exc}") from None


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
        raise UserError(f"{m.named(k)}: {exc}") from None


class _Components:
    """One measurement's roofline stage times, kept so that the fit's many trial profiles
    cost a few numpy operations each: :meth:`latency` is what :func:`predict` gives (the
    calibrated stage times of :func:`compute.grid_parts._apply_profile`, overlap mode), the
    same operations on the same numbers; a test holds them equal. A pipelined step
    (``pp > 1``: its latency is not a sum of stage times, :func:`compute.pipeline_time.pipeline_latency`)
    is predicted whole, by :func:`predict`."""

    def __init__(self, m: Measurement, comm=None, gpu: GpuSpec | None = None,
                 k: int | None = None, cell: tuple | None = None):
        from compute.grid_parts import GEMM_STAGES

        model = _model_of(m)
        par = m.parallelism
        if cell is None:
            g, j = _grid_of(m, model, [m.batch], comm, gpu, k), 0
            if not g.fits[0, 0]:
                what = "tp" if par.is_plain else "configuration (tp, pp, ep, attention_dp)"
                raise UserError(f"{m.named(k)} cannot have run: "
                                f"{g.result(0, 0).memory.reason}; check its model, gpu and "
                                f"{what}")
        else:   # column j of a grid over this step's batches (_all_components: checked)
            g, j = cell
        self.whole = (m, comm, gpu) if par.pp > 1 else None
        self.count = g.counts[:, 0]
        self.compute = g.compute_time[:, 0, j]
        self.memory = g.memory_time[:, 0, j]
        self.network = g.network_time[:, 0, j]
        flops, hbm = g.flops[:, 0, j], g.hbm_bytes[:, 0, j]
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


def _grid_of(m: Measurement, model, batches, comm, gpu: GpuSpec | None, k: int | None):
    """The roofline's grid of ``m``'s configuration over ``batches``, ``m`` checked first."""
    from compute.roofline import evaluate_grid, make_workload, ring_comm
    from compute.roofline_options import RooflineOptions

    spec = gpu or gpu_of(m)
    if comm is None:   # the calibrated mode's default (evaluate's with a profile)
        comm = ring_comm(spec)
    _checked(m, model, spec, k)
    par = m.parallelism
    # no reserve: what the engine ran held at most the GPU's whole HBM
    return evaluate_grid(model, spec, [m.tp if par.is_plain else par], batches,
                         make_workload(m.phase, m.prompt, m.context), comm=comm,
                         options=RooflineOptions(memory_reserve=0.0),
                         expert_skew=m.expert_skew)


def _all_components(ms, comms, gpus: Mapping[str, GpuSpec]) -> list[_Components]:
    """Each measurement's :class:`_Components`, the steps that differ only in their batch
    from one grid over their batches (each cell's numbers are a one-cell grid's: the same
    elementwise operations; a test holds them equal). Any refusal is made again row by row,
    so that the first bad row in the file is the one named, as before."""
    groups: dict = {}
    for i, (m, c) in enumerate(zip(ms, comms, strict=True)):
        key = (m.model, m.gpu, m.parallelism, m.phase, m.prompt, m.context, m.expert_skew,
               id(c))
        groups.setdefault(key, []).append(i)
    cells: list = [None] * len(ms)
    try:
        for rows in groups.values():
            m = ms[rows[0]]
            batches = sorted({ms[i].batch for i in rows})
            g = _grid_of(m, _model_of(m), batches, comms[rows[0]], gpus.get(m.gpu),
                         rows[0] + 1)
            if not g.fits.all():
                raise UserError("")   # row by row: its own message
            where = {b: j for j, b in enumerate(batches)}
            for i in rows:
                cells[i] = (g, where[ms[i].batch])
    except UserError:
        return [_Components(m, c, gpus.get(m.gpu), k)
                for k, (m, c) in enumerate(zip(ms, comms, strict=True), 1)]
    return [_Components(m, c, gpus.get(m.gpu), k, cell)
            for k, (m, c, cell) in enumerate(zip(ms, comms, cells, strict=True), 1)]


class _Batch:
    """The latencies of many measurements' :class:`_Components` under one profile, a few
    numpy operations per group of rows with the same stages (no padding): row ``i`` of
    :meth:`latencies` is ``parts[i].latency(p)`` to the last bit (the same elementwise
    operations in the same order, and numpy's row-wise sum of a C-contiguous ``(rows,
    stages)`` array adds each row pairwise as the 1-D sum of that row does; a test holds
    them equal). ``in_order=True`` adds each row's stages one after another instead, as
    :func:`compute.roofline.stage_sum` and so :func:`predict` add them. A pipelined
    step is predicted whole, by :func:`predict`."""

    def __init__(self, parts: Sequence[_Components]):
        from compute.roofline import make_workload

        self.n = len(parts)
        self.whole = [(i, c.whole) for i, c in enumerate(parts) if c.whole is not None]
        # pipelined rows of one model, GPU, workload, skew and collective model: one
        # evaluate_many (each entry equals evaluate's to the last bit)
        pipes: dict = {}
        for i, (m, comm, gpu) in self.whole:
            key = (m.model, m.gpu, id(gpu), m.phase, m.prompt, m.context, m.expert_skew,
                   id(comm))
            pipes.setdefault(key, (m, comm, gpu, []))[3].append(i)
        self.pipes = [(np.array(rows), _model_of(m), gpu or m.gpu, m, comm,
                       [parts[i].whole[0].parallelism for i in rows],
                       [parts[i].whole[0].batch for i in rows],
                       make_workload(m.phase, m.prompt, m.context).tokens_per_sequence)
                      for m, comm, gpu, rows in pipes.values()]
        groups: dict = {}
        for i, c in enumerate(parts):
            if c.whole is None:
                key = (len(c.count), c.gemm.tobytes(), c.attention.tobytes())
                groups.setdefault(key, []).append(i)
        self.kept = Memo(4097)   # emptied past 4,096 (:meth:`_pipelined`)
        self.groups = []
        for rows in groups.values():
            cs = [parts[i] for i in rows]
            first = cs[0]
            decode = np.array([c.phase == "decode" for c in cs])
            self.groups.append({
                "rows": np.array(rows), "gemm": first.gemm, "attention": first.attention,
                "count": np.array([c.count for c in cs], dtype=float),
                "compute": np.array([c.compute for c in cs], dtype=float),
                "memory": np.array([c.memory for c in cs], dtype=float),
                "network": np.array([c.network for c in cs], dtype=float),
                "intensity": np.array([c.intensity for c in cs], dtype=float),
                "phases": [(ph, sel, np.array([c.layers for c in cs])[sel],
                            np.array([c.batch for c in cs], dtype=float)[sel],
                            np.array([c.tokens for c in cs])[sel],
                            np.array([c.hidden for c in cs])[sel])
                           for ph, sel in (("decode", decode), ("prefill", ~decode))
                           if sel.any()]})

    def latencies(self, p: EngineProfile, in_order: bool = False,
                  whole: bool = True) -> np.ndarray:
        """Each row's latency under ``p`` (a pipelined row's left NaN unless ``whole``)."""
        from compute.roofline import stage_sum

        out = np.full(self.n, np.nan)
        for g in self.groups:
            ct = g["compute"].copy()
            ct[:, g["gemm"]] /= p.gemm_efficiency_at(g["intensity"]) if p.gemm_curve \
                else p.gemm_efficiency
            ct[:, g["attention"]] /= p.attention_efficiency
            st = np.maximum(np.maximum(ct, g["memory"] / p.hbm_fraction), g["network"])
            total = stage_sum(g["count"].T, st.T) if in_order else \
                (g["count"] * st).sum(axis=1)
            for phase, sel, layers, batch, tokens, hidden in g["phases"]:
                out[g["rows"][sel]] = total[sel] + p.overhead(layers, batch, phase, tokens,
                                                              hidden)
        if whole:
            for rows, model, gpu, m, comm, configs, batches, tokens in self.pipes:
                # the pipelined step of the profile without its overheads, then them, as
                # a grid adds them (compute.roofline.grid_body): latency + overhead
                step = self._pipelined(p, model, gpu, m, comm, configs, batches)
                b = np.array(batches, dtype=float)
                out[rows] = step + p.overhead(model.layers, b, m.phase, tokens,
                                              model.hidden)
        return out

    def _pipelined(self, p, model, gpu, m, comm, configs, batches) -> np.ndarray:
        """:func:`compute.evaluate_many.evaluate_many`'s latencies (each :func:`predict`'s
        to the last bit) of pipelined rows under ``p`` without its overheads (which add
        0.0), kept by the efficiencies: a fit's trial profiles that move only overheads
        reuse them."""
        from compute.evaluate_many import evaluate_many

        # the profile without its overheads is made on a miss only: its key's fields are
        # the profile's own (replace validates every field: most of a hit's time)
        key = (id(configs), p.gemm_efficiency, p.gemm_curve, p.attention_efficiency,
               p.hbm_fraction)
        hit = self.kept.get(key)
        if hit is None:
            bare = replace(p, **{n: 0.0 for n in _OVERHEADS})
            hit = self.kept.put(key, evaluate_many(
                model, gpu, configs, batches, m.phase, prompt=m.prompt, context=m.context,
                comm=comm, options=_options(bare), expert_skew=m.expert_skew).latency)
        return hit


#: The profile's parameters that add time to a step rather than scale its stages.
_OVERHEADS = ("layer_overhead_s", "step_overhead_s", "decode_sequence_overhead_s",
              "token_overhead_s")


def _bare(profile: EngineProfile) -> EngineProfile:
    """``profile`` without the measurements it carries: the same numbers, but a grid keys
    its kept parts on the profile (:func:`compute.grid_parts.static_parts`), and hashing
    10,000 measurements at each evaluation made the fit's report quadratic."""
    return replace(profile, measurements=()) if profile.measurements else profile


def roofline(m: Measurement, comm: CommLike | None = None, gpu: GpuSpec | None = None) -> float:
    """Seconds the roofline gives for ``m`` with the calibrated mode's collectives: ``comm``,
    default NCCL's ring (:func:`compute.roofline.ring_comm`), what a profile with every
    efficiency 1 and no overhead gives, and so a fit's report (the roofline mode's own
    default is the lower bound, :func:`compute.roofline.bound_comm`: pass it for that)."""
    if comm is None:
        from compute.roofline import ring_comm

        comm = ring_comm(gpu or gpu_of(m))
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

    @property
    def below_roofline(self) -> tuple[tuple[int, FitPoint], ...]:
        """The points measured under their roofline by more than
        :data:`BELOW_ROOFLINE_TOLERANCE`, each with its measurement's number (from 1). The
        calibrated mode only adds time to the roofline (efficiencies at most 1, overheads at
        least 0), so no profile reaches them: their step is not the one the row names."""
        floor = 1.0 - BELOW_ROOFLINE_TOLERANCE
        return tuple((k, p) for k, p in enumerate(self.points, 1)
                     if p.measurement.latency_s < floor * p.roofline_s)

    def below_roofline_warning(self, shown: int = 5) -> str:
        """One line on :attr:`below_roofline` (the first ``shown`` rows named: row, measured
        vs roofline, ratio) and their likely causes; "" where there is none."""
        below = self.below_roofline
        if not below:
            return ""
        rows = "; ".join(f"{p.measurement.named(k)} {format_time(p.measurement.latency_s)} "
                         f"measured vs {format_time(p.roofline_s)} roofline "
                         f"({p.measurement.latency_s / p.roofline_s:#.2g}x)"
                         for k, p in below[:shown])
        more = f"; and {len(below) - shown} more" if len(below) > shown else ""
        lie = "lies" if len(below) == 1 else "lie"
        return (f"warning: {len(below)} of {counted(len(self.points), 'measurement')} {lie} "
                f"below the roofline, which no profile reaches (the calibrated mode only adds "
                f"time to it: efficiencies <= 1, overheads >= 0): {rows}{more}; was the "
                f"step run with a smaller dtype than the model's (FP8 against a bf16 model), "
                f"on another GPU or at another TP than the row says, or is latency_s not the "
                f"whole step's time in seconds?")


def _encode(name: str, value: float) -> float:
    """A parameter in the space the optimiser moves in: log of a fraction, a time in units
    of its typical magnitude (``Parameter.scale``: ms for the step overheads)."""
    p = PARAMETERS[name]
    return math.log(value) if p.unit == "" else value * (1 / p.scale)


def _decode(name: str, u: float) -> float:
    p = PARAMETERS[name]
    v = math.exp(u) if p.unit == "" else u * p.scale
    if v < SMALLEST_NUMBER:   # a time at its bound 0 but for a sliver no file holds: 0
        return max(0.0, p.minimum)
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


def _base_elsewhere(base: EngineProfile, fitted: tuple[str, ...],
                    ms: tuple[Measurement, ...]) -> list[str]:
    """A note where ``base``, a profile of its own GPU(s), gives values kept (not in
    ``fitted``, not the roofline's) to measurements of other GPUs: they are carried over.

    >>> from compute.profiles import get_profile
    >>> m = Measurement("Llama-2-70B", "A100-SXM-80GB", 8, "decode", 1, 0.04, context=576)
    >>> note, = _base_elsewhere(get_profile("vllm-h100-2024"), ("layer_overhead_s",), (m,))
    >>> note.split(": ")[0]
    "the base profile 'vllm-h100-2024' was fitted on GPU H100-SXM; these measurements are of A100-SXM-80GB"
    """
    if not base.gpu:
        return []
    base_gpus = set(base.gpu.split(", "))
    other = sorted({m.gpu for m in ms} - base_gpus)
    kept = [n for n in PARAMETERS if n not in fitted
            and getattr(base, n) != PARAMETERS[n].neutral]
    if not other or not kept:
        return []
    return [f"the base profile {base.name!r} was fitted on GPU {base.gpu}; these measurements "
            f"are of {', '.join(other)}: its {', '.join(kept)} (kept, not fitted) are "
            f"{base.gpu}'s, carried over, not measured on {', '.join(other)}"]


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
        (default: the calibrated mode's, NCCL's ring over scale-up bandwidth,
        :func:`compute.roofline.ring_comm`).
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
    _check_repeats(ms)
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
    parts = _all_components(ms, comms, gpus)
    rows = _Batch(parts)
    _check_plausible(ms, rows.latencies(neutral(name)).tolist())
    measured = np.log([m.latency_s for m in ms])
    trial = _bare(base)

    def profile_at(u: np.ndarray) -> EngineProfile:
        return replace(trial, **{n: _decode(n, x) for n, x in zip(names, u, strict=True)})

    def residuals(u: np.ndarray) -> np.ndarray:
        return np.log(rows.latencies(profile_at(u))) - measured

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
    notes += _base_elsewhere(base, names, ms)
    fitted_on = meta.pop("fitted_on", "") or _describe(ms)
    values = {n: _decode(n, x) for n, x in zip(names, best.x, strict=True)}
    sources = {n: f"fitted on {fitted_on}" for n in names}
    for n in PARAMETERS:
        if n not in names and not base.source(n):
            sources[n] = ("not fitted: the roofline's value" if getattr(base, n) ==
                          PARAMETERS[n].neutral else "not fitted: the base profile's value")
    profile = replace(base, name=name, fitted_on=fitted_on, **meta)
    profile = profile.with_values(values, sources, measurements=ms)
    # what roofline() and predict() give, from the kept stage times (in order, as
    # evaluate adds them; a test holds them equal); a pipelined step evaluated whole
    roofs = rows.latencies(neutral(name), in_order=True, whole=False).tolist()
    for i, (m, c, g) in rows.whole:
        roofs[i] = roofline(m, c, g)
    preds = rows.latencies(_bare(profile), in_order=True).tolist()
    points = tuple(FitPoint(m, r, q) for m, r, q in zip(ms, roofs, preds, strict=True))
    result = FitResult(profile=profile, points=points, fitted=names, notes=tuple(notes))
    profile = replace(profile, fit=(names, len(ms), result.rms_relative_error,
                                    result.max_relative_error))
    return replace(result, profile=profile)


#: A measured step this fraction or more under its roofline is one no profile reaches
#: (:attr:`FitResult.below_roofline`; said, not refused: FP8 steps fitted to a bf16 model may
#: be meant). 1%: a latency given to 3 significant figures is rounded by at most 0.5%, and
#: the shipped profiles' measured steps are 1.4-4.7x their roofline.
BELOW_ROOFLINE_TOLERANCE = 0.01

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
        raise UserError(f"{m.named(k)}: latency_s {m.latency_s:.4g} s is {ratio:.4g}x the "
                        f"roofline's {format_time(low)}; latency_s is in seconds ({hint})")


def _step(m: Measurement) -> Measurement:
    """``m``'s step alone: what it ran, without its latency or source."""
    return replace(m, latency_s=1.0, source="")


def _check_repeats(ms) -> None:
    """Refuse a measurement that repeats another, its step and latency alike (a row
    pasted twice): the fit would weigh its step twice and count it as a second point."""
    seen: dict[Measurement, int] = {}
    for k, m in enumerate(ms, 1):
        first = seen.setdefault(replace(m, source=""), k)
        if first != k:
            where = ms[first - 1].origin or f"measurement {first}"
            raise UserError(f"{m.named(k)} repeats {where}: the same step and latency_s "
                            f"{m.latency_s:g} s; give each measurement once (a repeat weighs "
                            f"its step twice in the fit)")


def _check_count(names, ms) -> None:
    """Refuse to fit more parameters than there are measured steps (a step measured
    again at another latency is one step: it tells no parameter from another)."""
    steps = len({_step(m) for m in ms})
    if len(names) > steps:
        told = counted(len(ms), "measurement") if steps == len(ms) else \
            f"{counted(steps, 'measured step')} ({len(ms)} measurements, some of one step)"
        raise UserError(f"cannot fit {len(names)} parameters ({', '.join(names)}) to "
                        f"{told}: give at least as many measured steps as parameters, or "
                        f"fit fewer")


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
    models = _some(sorted({m.model for m in ms}), "models")
    gpus = _some(sorted({m.gpu for m in ms}), "GPUs")
    if all(m.parallelism.is_plain for m in ms):
        configs = "TP " + _some(list(map(str, sorted({m.tp for m in ms}))), "degrees")
    else:
        key = lambda p: (p.tp, p.pp, p.ep, p.attention_dp)  # noqa: E731
        configs = _some([p.label for p in sorted({m.parallelism for m in ms}, key=key)],
                        "configurations")
    phases = {p: sum(m.phase == p for m in ms) for p in ("prefill", "decode")}
    return (f"{len(ms)} measured steps of {models} on {gpus} "
            f"({configs}): " + ", ".join(f"{v} {k}" for k, v in phases.items() if v))


def _some(items: list[str], what: str, limit: int = 400) -> str:
    """``items`` comma-joined, or past ``limit`` characters the first and how many more: a
    profile's texts hold at most 2,000 characters (:func:`compute.profiles.read_profile`),
    and ten GPUs of a GPU file, named in 195 characters each, made a ``fitted_on`` (and the
    sources saying it) that no reader took back.

    >>> _some(["A", "B"], "GPUs"), _some(["G" * 300, "H" * 300], "GPUs")[-20:]
    ('A, B', 'GGG (2 GPUs, 1 more)')
    """
    joined = ", ".join(items)
    if len(joined) <= limit:
        return joined
    return f"{items[0]} ({len(items):,} {what}, {len(items) - 1:,} more)"


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
