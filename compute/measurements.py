"""Measured step latencies, the data an engine profile is fitted on: one measured step
(:class:`Measurement`: model, GPU, configuration, phase, batch, tokens, latency and its
source), checked from a table or a CSV row, and read from a measurements CSV
(:func:`read_measurements`, columns :data:`MEASUREMENT_COLUMNS`, at most
:data:`MAX_MEASUREMENTS` rows). The profiles fitted on them are :mod:`compute.profiles`';
the fit is :mod:`compute.profile_fit`'s.

>>> m = Measurement("Llama-2-70B", "H100-SXM", 8, "decode", 1, 0.0298, context=1500)
>>> m.label(), m.to_dict()["latency_s"]
('Llama-2-70B TP 8 decode batch 1 context 1500', 0.0298)
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from os import PathLike

from compute import validate
from compute.config_files import read_text
from compute.errors import UserError
from compute.parallel import MAX_EXPERT_SKEW

__all__ = ["MAX_MEASUREMENTS", "MEASUREMENT_COLUMNS", "Measurement", "read_measurements"]

#: The configuration's columns after ``tp`` (a :class:`Measurement`'s, default 1 each).
_PARALLEL_COLUMNS = ("pp", "ep", "attention_dp", "expert_skew")


@dataclass(frozen=True)
class Measurement:
    """One measured step latency: ``model`` on ``tp`` GPUs of ``gpu``, a step of ``phase``
    for ``batch`` sequences of ``prompt`` tokens (prefill) or at ``context`` tokens
    (decode), taking ``latency_s`` seconds."""

    model: str
    gpu: str
    tp: int
    phase: str
    batch: int
    latency_s: float
    prompt: int | None = None
    context: int | None = None
    source: str = ""
    pp: int = 1               #: pipeline stages (:class:`compute.parallel.Parallelism`)
    ep: int = 1               #: expert-parallel groups per stage
    attention_dp: int = 1     #: attention data-parallel groups per stage
    expert_skew: float = 1.0  #: busiest EP group's share of routed tokens over the mean
    #: where it was read (``m.csv: row 4``; empty: made in code), which errors about the step
    #: name; not part of its value
    origin: str = field(default="", compare=False, repr=False)

    def __post_init__(self):
        # one made in code is checked as a file's row is (a read one was, by _measurement):
        # text for latency_s raised TypeError in the fit, an array for batch TypeError
        # (unhashable), NaN for tp printed 'TP nan' in the refusal
        if not self.origin:
            row = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "origin"}
            checked = _measurement("Measurement", row)
            for f in fields(self):
                if f.name != "origin":
                    object.__setattr__(self, f.name, getattr(checked, f.name))

    def named(self, k: int | None = None) -> str:
        """The step as an error names it: ``m.csv: row 4 (Llama-2-70B TP 8 decode batch 1
        context 576 on H100-SXM)``, or ``measurement K (...)`` without an origin."""
        what = f"{self.label()} on {self.gpu}"
        if self.origin:
            return f"{self.origin} ({what})"
        return f"measurement {k} ({what})" if k else f"measurement {what}"

    @property
    def parallelism(self):
        """The configuration the step ran at (:class:`compute.parallel.Parallelism`)."""
        from compute.parallel import Parallelism

        return Parallelism(self.tp, self.pp, self.ep, self.attention_dp)

    def label(self) -> str:
        """``Llama-2-70B TP 8 decode batch 32 context 1500``, ``Mixtral-8x7B TP 8 x EP 8
        decode batch 64 context 1000``."""
        tokens = f"prompt {self.prompt}" if self.phase == "prefill" else \
            f"context {self.context}"
        skew = f" expert skew {self.expert_skew:g}" if self.expert_skew != 1.0 else ""
        return (f"{self.model} {self.parallelism.label} {self.phase} batch {self.batch} "
                f"{tokens}{skew}")

    def to_dict(self) -> dict:
        """The measurement's columns (:data:`MEASUREMENT_COLUMNS`); ``pp``, ``ep``,
        ``attention_dp`` and ``expert_skew`` only where they are not 1."""
        d = {"model": self.model, "gpu": self.gpu, "tp": self.tp}
        d.update({k: getattr(self, k) for k in _PARALLEL_COLUMNS if getattr(self, k) != 1})
        d.update({"phase": self.phase, "batch": self.batch})
        if self.prompt is not None:
            d["prompt"] = self.prompt
        if self.context is not None:
            d["context"] = self.context
        d["latency_s"] = self.latency_s
        if self.source:
            d["source"] = self.source
        return d


#: Each number of a measurement: its range (least, most), whether whole, its unit. Tokens to
#: 10 million, parallel degrees to a million (infer's parsers'), the skew as infer's
#: --expert-skew (compute.roofline.check_skew; 1: uniform), a step from 1 ns to 1e6 s.
_RANGES: dict[str, tuple[float, float, bool, str]] = {
    "prompt": (1, 10_000_000, True, ""), "context": (1, 10_000_000, True, ""),
    "batch": (1, 10_000_000, True, ""), "tp": (1, 1_000_000, True, ""),
    "pp": (1, 1_000_000, True, ""), "ep": (1, 1_000_000, True, ""),
    "attention_dp": (1, 1_000_000, True, ""), "expert_skew": (1, MAX_EXPERT_SKEW, False, ""),
    "latency_s": (1e-9, 1e6, False, "s")}


def _number(where: str, key: str, value: object) -> int | float:
    """``value`` of a measurement's number ``key`` checked against its range
    (:data:`_RANGES`)."""
    least, most, whole, unit = _RANGES[key]
    return validate.number(where, key, value, minimum=least, maximum=most, integer=whole,
                           unit=unit)


def _measurement(where: str, row: dict) -> Measurement:
    """A measurement from a table or a CSV row of typed values (None for empty cells)."""
    from compute.phases import PHASES

    phase = validate.choice(where, "phase", row.get("phase"), PHASES)
    need = "prompt" if phase == "prefill" else "context"
    if row.get(need) is None:
        raise UserError(f"{where}: a {phase} measurement needs {need} (tokens)")
    other = "context" if phase == "prefill" else "prompt"
    if row.get(other) is not None:   # never read by a step of this phase: not fitted on
        reads = ("a decode step reads context, the tokens in the KV cache" if other == "context"
                 else "a prefill reads prompt, the tokens of each prompt")
        raise UserError(f"{where}: a {phase} measurement takes {need}, not {other} "
                        f"({validate.describe(row[other])}: {reads}); leave out its {other}")
    tokens = {k: _number(where, k, row[k]) for k in ("prompt", "context")
              if row.get(k) is not None}
    parallel = {k: _number(where, k, row[k]) for k in ("pp", "ep", "attention_dp")
                if row.get(k) is not None}
    if row.get("expert_skew") is not None:
        parallel["expert_skew"] = _number(where, "expert_skew", row["expert_skew"])
        if parallel["expert_skew"] != 1 and parallel.get("ep", 1) == 1:
            # never costed (one EP group takes every routed token; a dense model has EP 1
            # only), as infer refuses --expert-skew without --ep N > 1
            raise UserError(f"{where}: expert_skew {parallel['expert_skew']:g} weighs the "
                            f"busiest of the EP groups; with ep 1 there is one group, costed "
                            f"at 1: give ep N > 1, or leave out expert_skew")
    return Measurement(
        model=validate.name(where, "model", row.get("model")),
        gpu=validate.name(where, "GPU", row.get("gpu")),
        tp=_number(where, "tp", row.get("tp")),
        phase=phase,
        batch=_number(where, "batch", row.get("batch")),
        latency_s=_number(where, "latency_s", row.get("latency_s")),
        # only text is a source (absent: none); 0, false, [] or {} were read as none
        source="" if row.get("source") is None else validate.string(
            where, "source", row["source"], max_length=2000),
        origin=where, **tokens, **parallel)


#: Columns of a measurements CSV (and keys of a profile's ``[[measurement]]`` tables, but
#: ``note``): required, then optional. ``prompt`` is required on prefill rows and
#: ``context`` on decode rows (the other may be empty); ``pp``, ``ep``, ``attention_dp``
#: (default 1: plain tensor parallelism) and ``expert_skew`` (default 1: uniform routing)
#: are the step's configuration, as ``netmodel infer`` takes them.
MEASUREMENT_COLUMNS = (("model", "gpu", "tp", "batch", "phase", "latency_s"),
                       ("prompt", "context", "pp", "ep", "attention_dp", "expert_skew",
                        "source", "note"))
#: Most measurements read from one measurements file, or held by one profile (its
#: ``[[measurement]]`` tables: the rows ``calibrate`` fitted it on).
MAX_MEASUREMENTS = 10_000


def _too_many_measurements(where: str) -> UserError:
    """The refusal of a measurements file or a profile of more than
    :data:`MAX_MEASUREMENTS` measurements."""
    return UserError(f"{where} holds more than {MAX_MEASUREMENTS:,} measurements, the most "
                     f"a measurements file or a profile holds")


def _cell(where: str, key: str, text: str):
    """A CSV cell as a number (int where whole), text, or None when empty."""
    text = (text or "").strip()
    if not text:
        return None
    if key in ("model", "gpu", "phase", "source", "note"):
        return text
    try:
        v = validate.read_number(f"{where}: {key}", text)   # the one number grammar
    except UserError:
        if _below_smallest(text):   # '1e-320', not zero: as typed, for the measurement's
            return text             # range (above 0 for every number) to name
        raise
    if v is None:   # '136.8ms', 'abc': refused with the number's range
        _number(where, key, text)
    if math.isinf(v) and "inf" not in text.lower():
        return text   # past a float's range (1e400): its check names it as typed, not inf
    value = int(v) if v.is_integer() and key != "latency_s" else v
    if key in _RANGES and validate.describe(value) != text:
        try:   # a refusal names the cell as typed where the number prints otherwise
            _number(where, key, value)
        except UserError:   # ('-0.0', not 0; '1e7', not 10000000)
            _number(where, key, text)
    return value


def _below_smallest(text: str) -> bool:
    """Whether ``text`` is a number below :data:`~compute.validate.SMALLEST_NUMBER` that
    does not spell zero (:func:`~compute.validate.below_smallest`)."""
    try:
        return validate.below_smallest(text, float(text))
    except ValueError:
        return False


#: CSV's line breaks (``str.splitlines`` also breaks at form feeds, U+2028 and others,
#: which the csv module keeps inside a cell)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _ends_quoted(line: str, inside: bool) -> bool:
    """Whether CSV ``line`` ends inside a quoted cell (``inside``: it starts in one). A quote
    opens a cell only at its start (after a comma or at the line's start); ``""`` inside one
    is a quote."""
    if '"' not in line:
        return inside
    at_start = not inside
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if inside:
            if c == '"':
                if i + 1 < n and line[i + 1] == '"':
                    i += 1
                else:
                    inside = False
        elif c == '"' and at_start:
            inside = True
        at_start = c == "," and not inside
        i += 1
    return inside


def _content_lines(text: str) -> list[tuple[int, str]]:
    """``(line number, line)`` of the lines of a CSV text that are not blank or comments
    (``#`` first); a line that continues a quoted cell is kept whatever it holds, so that
    ``"a\n# b"`` stays one cell rather than losing its second line."""
    out, inside = [], False
    for n, ln in enumerate(_LINE_BREAK.split(text), 1):
        if inside or (ln.strip() and not ln.lstrip().startswith("#")):
            out.append((n, ln))
            inside = _ends_quoted(ln, inside)
    return out


def _csv_rows(reader: csv.DictReader, where: str) -> Iterator[dict]:
    """``reader``'s rows; a row the csv module cannot read (a cell over its field size
    limit, a stray quote before the end) is a UserError naming the line."""
    row = 2  # the header is row 1, as read_measurements counts them
    while True:
        try:
            yield next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            why = "a quoted cell is not closed (its closing \" is missing)" \
                if "unexpected end of data" in str(exc) else exc
            if "field larger than field limit" in str(exc):   # the csv module's words
                why = (f"a cell holds more than {csv.field_size_limit():,} characters, the "
                       f"most a cell holds (a source or note is at most 2,000)")
            raise UserError(f"{where}: row {row} is not readable CSV: {why}") from None
        row += 1


def read_measurements(path: str | PathLike[str]) -> tuple[Measurement, ...]:
    """Measured latencies from a CSV file (columns :data:`MEASUREMENT_COLUMNS`; lines
    starting with ``#`` are comments). A missing column, an unknown one, an empty file or
    a bad value is a one-line :class:`UserError` naming it.

    >>> import tempfile, os
    >>> f = tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False)
    >>> _ = f.write("model,gpu,tp,batch,phase,prompt,context,latency_s\\n"
    ...             "Llama-2-70B,H100-SXM,8,1,decode,,1500,0.0298\\n"); f.close()
    >>> read_measurements(f.name)[0].label()
    'Llama-2-70B TP 8 decode batch 1 context 1500'
    >>> os.unlink(f.name)
    """
    where = str(path)
    text = read_text(path, "measurements file", max_bytes=4 * 2**20)
    numbered = _content_lines(text)
    lines = [ln for _, ln in numbered]
    if not lines:
        raise UserError(f"{where} holds no measurements (a header line of columns "
                        f"{', '.join(MEASUREMENT_COLUMNS[0])} and rows)")
    # strict: a quote left open at the end, or text after a closing quote, is an error, not
    # a cell read to the end of the file
    reader = csv.DictReader(io.StringIO("\n".join(lines)), strict=True)
    try:
        header = [h.strip() for h in reader.fieldnames or []]
    except csv.Error as exc:
        raise UserError(f"{where}: the header is not readable CSV: {exc}") from None
    required, optional = MEASUREMENT_COLUMNS
    missing = [c for c in required if c not in header]
    if missing:
        raise UserError(f"{where}: missing column(s) {', '.join(missing)}; columns: "
                        f"{', '.join(required)} (required), {', '.join(optional)} (optional)")
    unnamed = [i for i, c in enumerate(header, 1) if not c]
    if unnamed:   # ',,' or a trailing comma: listed as unknown, or twice, with no name
        raise UserError(f"{where}: the header's column {unnamed[0]} (of {len(header)}) has no "
                        f"name (a comma too many?); columns: {', '.join(required + optional)}")
    twice = sorted({c for c in header if header.count(c) > 1})
    if twice:
        raise UserError(f"{where}: column(s) {', '.join(twice)} given twice; give each "
                        f"column once")
    unknown = [c for c in header if c not in required + optional]
    if unknown:
        raise UserError(f"{where}: unknown column(s) {', '.join(unknown[:5])}; columns: "
                        f"{', '.join(required + optional)}")
    out = []
    last = reader.line_num   # lines read so far: the header's
    for i, raw in enumerate(_csv_rows(reader, where), 2):
        # the file's line too where comments or blank lines come before (the row's first)
        line = numbered[min(last, len(numbered) - 1)][0]
        last = reader.line_num
        at = f"row {i}" if line == i else f"row {i} (line {line} of the file)"
        if len(out) >= MAX_MEASUREMENTS:
            raise _too_many_measurements(where)
        if None in raw:
            raise UserError(f"{where}: {at} has more cells than the header has columns "
                            f"({len(header) + len(raw[None])}, not {len(header)}); quote a "
                            f"cell that holds a comma (\"a,b\")")
        if None in raw.values():
            raise UserError(f"{where}: {at} has fewer cells than the header has columns "
                            f"({len(header)}); leave a cell empty with nothing between commas")
        row = {k.strip(): _cell(f"{where}: {at}", k.strip(), v) for k, v in raw.items()}
        empty = [c for c in required if row[c] is None]
        if empty:   # named as the file holds it, not as the None an empty cell reads as
            raise UserError(f"{where}: {at}: {', '.join(empty)} "
                            f"{'is' if len(empty) == 1 else 'are'} empty; every measurement "
                            f"gives {', '.join(required)}")
        if row.get("note") and not row.get("source"):   # checked as the column it is
            row["source"] = validate.string(f"{where}: {at}", "note", row["note"],
                                            max_length=2000)
        out.append(_measurement(f"{where}: {at}", row))
    if not out:
        raise UserError(f"{where} holds a header but no measurements")
    return tuple(out)
