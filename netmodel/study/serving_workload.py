"""A serving workload (:mod:`netmodel.study.serving`): prompt and output tokens a request,
a request rate and a load; the shipped ones (Splitwise's coding and conversation medians)
and workload files (a shipped one's name refused on other figures).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from os import PathLike
from pathlib import Path

from compute import validate
from compute.config_files import check_keys, check_not_shipped_name, read_table
from compute.errors import UserError, chosen, known, lookalike
from netmodel.study.queueing import LOAD_HELP, LOAD_RANGE, check_load

__all__ = ["MAX_RATE", "MAX_TOKENS", "MIN_RATE", "SPLITWISE", "WORKLOADS", "ServingWorkload",
           "get_workload", "load_workload", "number_allowed", "with_load", "with_rate"]

#: Where the default workloads come from.
SPLITWISE = ("Patel et al., 'Splitwise: Efficient generative LLM inference using phase "
             "splitting', ISCA 2024 (arXiv 2311.18677), Section III: medians of the Azure LLM "
             "inference traces (AzurePublicDataset AzureLLMInferenceTrace_code / _conv)")
#: Largest request rate, prompt and output accepted from a workload (requests/s, tokens).
MAX_RATE, MAX_TOKENS = 1e9, 100_000_000
#: Smallest request rate accepted (requests/s): one request in ~32 years.
MIN_RATE = 1e-9
#: The range of each number of a workload (:func:`compute.validate.number`'s keywords).
_RANGES = {"prompt": {"minimum": 1, "maximum": MAX_TOKENS, "integer": True},
           "output": {"minimum": 1, "maximum": MAX_TOKENS, "integer": True},
           "rate": {"minimum": MIN_RATE, "maximum": MAX_RATE, "unit": "requests/s"}}


def number_allowed(key: str) -> str | None:
    """What a workload's ``key`` must be where 0 is refused (every number: none may be 0),
    for a number below the smallest a file holds; None for another key."""
    if key == "load":
        return LOAD_RANGE
    r = _RANGES.get(key)
    return None if r is None else validate.range_words(**r)


@dataclass(frozen=True)
class ServingWorkload:
    """What the service serves: ``prompt`` tokens in and ``output`` tokens out per request
    (medians), at ``rate`` requests/s (None: report the capacity per SM) and ``load``, the
    fraction of the pools' capacity at which they arrive (None: no queueing)."""

    name: str
    prompt: int
    output: int
    rate: float | None = None
    source: str = ""
    load: float | None = field(default=None, metadata={"help": LOAD_HELP})

    def __post_init__(self):
        where = f"workload {self.name!r}"
        validate.name("", "workload", self.name)
        for key in ("prompt", "output"):
            object.__setattr__(self, key, validate.number(where, key, getattr(self, key),
                                                          **_RANGES[key]))
        if self.rate is not None:
            object.__setattr__(self, "rate", validate.number(where, "rate", self.rate,
                                                             **_RANGES["rate"]))
        if self.load is not None:
            object.__setattr__(self, "load", check_load(self.load, where))
        validate.string(where, "source", self.source)

    def to_dict(self) -> dict:
        return {"name": self.name, "prompt_tokens": self.prompt, "output_tokens": self.output,
                "rate_per_s": self.rate, "load": self.load, "source": self.source}


#: The Splitwise workloads (median prompt and output tokens of the Azure traces).
WORKLOADS = {
    "coding": ServingWorkload("coding", 1500, 13, source=SPLITWISE),
    "conversation": ServingWorkload("conversation", 1020, 129, source=SPLITWISE),
}


def load_workload(path: str | PathLike[str]) -> ServingWorkload:
    """A workload from a TOML or JSON file: ``prompt`` and ``output`` (tokens per request),
    optional ``rate`` (requests/s), ``load`` (a fraction of the pools' capacity), ``name``
    (default the file's stem) and ``source``. A shipped workload's name (:data:`WORKLOADS`,
    case aside) is refused but with its prompt and output (its rate and load the file's)."""
    path = Path(path)
    doc = read_table(path, "workload file", allowed=number_allowed)
    check_keys(str(path), doc, ("prompt", "output"), ("name", "rate", "load", "source"))
    name = doc.get("name", path.stem)
    try:
        with validate.file_values(path):   # a JSON file's null said as null
            wl = ServingWorkload(name=name, prompt=doc["prompt"], output=doc["output"],
                                 rate=doc.get("rate"), load=doc.get("load"),
                                 source=doc.get("source", str(path)))
    except UserError as exc:
        raise UserError(f"{path}: {exc}") from None
    # a shipped one's name: its prompt and output (its rate and load are a file's to set)
    said = f"name {wl.name!r}" + ("" if "name" in doc else " (the file's stem, no name given)")
    check_not_shipped_name(str(path), said, wl.name, "workload", tuple(WORKLOADS),
                           lambda n: (WORKLOADS[n].prompt, WORKLOADS[n].output)
                           == (wl.prompt, wl.output))
    return wl


def get_workload(ref: str | Path | ServingWorkload) -> ServingWorkload:
    """``coding`` or ``conversation`` (:data:`WORKLOADS`), a workload file, or a
    :class:`ServingWorkload` (passed through)."""
    if isinstance(ref, ServingWorkload):
        return ref
    name = chosen(ref, WORKLOADS)   # blanks at either end dropped, as every choice's
    if name is not None:
        return WORKLOADS[name]
    if isinstance(ref, str | Path) and str(ref).lower().endswith((".toml", ".json")):
        return load_workload(ref)
    raise UserError(f"unknown workload {ref!r}{lookalike(ref, WORKLOADS)}; known: "
                    f"{known(WORKLOADS)}, or a .toml/.json file with prompt, output (and rate)")


def with_rate(workload: str | Path | ServingWorkload, rate: float) -> ServingWorkload:
    """``workload`` (a name, file or object) at ``rate`` requests/s."""
    return replace(get_workload(workload), rate=rate)


def with_load(workload: str | Path | ServingWorkload, load: float) -> ServingWorkload:
    """``workload`` (a name, file or object) at ``load``, a fraction of the pools' capacity."""
    return replace(get_workload(workload), load=load)
