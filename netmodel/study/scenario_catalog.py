"""The shipped scenarios and the names that reach a scenario: the catalogue of
``netmodel/data/scenarios/*.toml`` by name, ``NAME@GPU`` references, ``.toml`` paths, and
the scenario lists the commands take (:class:`~netmodel.study.scenarios.Scenario` and its
file format are in :mod:`netmodel.study.scenarios`).

>>> s = get_scenario("lite-flat@Lite+NetBW")
>>> s.name, s.gpu, s.label
('lite-flat', 'Lite+NetBW', 'lite-flat@Lite+NetBW')
>>> scenario_names()[0], shipped_scenario("LITE_OCS").name
('h100-dgx', 'lite-ocs')
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from functools import cache
from importlib import resources
from pathlib import Path
from typing import NoReturn

from compute.config_files import missing_named_file
from compute.errors import UserError, known, lookalike, looks_like, odd_character
from compute.hardware import GpuSpec
from compute.validate import describe, listed
from netmodel.study.defaults import BASELINE_SCENARIO
from netmodel.study.scenario_files import load_scenario, load_scenario_text
from netmodel.study.scenarios import Scenario

__all__ = ["expand_scenarios", "get_scenario", "instances_note", "is_scenario_ref",
           "own_gpu_scenarios", "scenario_names", "shipped_scenario", "shipped_scenarios",
           "split_ref"]


@cache
def shipped_scenarios() -> dict[str, Scenario]:
    """The scenarios shipped in ``netmodel/data/scenarios``, by name (read once)."""
    folder = resources.files("netmodel").joinpath("data/scenarios")
    out = {}
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".toml"):
            s = load_scenario_text(entry.read_text(encoding="utf-8"),
                                   f"netmodel/data/scenarios/{entry.name}")
            out[s.name] = s
    order = ("h100-dgx", "lite-direct", "lite-flat", "lite-flat-inr", "lite-hier", "lite-ocs")
    return {n: out[n] for n in sorted(out, key=lambda n: (order.index(n) if n in order
                                                          else len(order), n))}


def scenario_names() -> tuple[str, ...]:
    """Names of the shipped scenarios, the baseline first."""
    return tuple(shipped_scenarios())


def shipped_scenario(name: str) -> Scenario | None:
    """The shipped scenario ``name`` names, or None: case-insensitive, ``_`` read as ``-``,
    as builder names are read (:func:`topologies.registry.canonical_name`).

    >>> shipped_scenario("LITE_OCS").name, shipped_scenario("lite-ocs.toml")
    ('lite-ocs', None)
    """
    from topologies.registry import canonical_name

    return shipped_scenarios().get(canonical_name(name))


def split_ref(ref: str) -> tuple[str, str, str]:
    """``(base, "@", gpu)`` of a scenario reference (``("name", "", "")`` without ``@``, or
    for a ``.toml`` path whose folders or name hold an ``@``: ``a@b/x.toml`` is a file, as
    what comes before its last ``@`` names no scenario; ``h100-dgx@g.toml`` is a GPU file).

    >>> split_ref("lite-flat@Lite"), split_ref("a@b/x.toml"), split_ref("a@b/x.toml@Lite")
    (('lite-flat', '@', 'Lite'), ('a@b/x.toml', '', ''), ('a@b/x.toml', '@', 'Lite'))
    >>> split_ref("h100-dgx@my/gpu.toml"), split_ref("a.toml@g.toml")
    (('h100-dgx', '@', 'my/gpu.toml'), ('a.toml', '@', 'g.toml'))
    >>> split_ref("lite-flat@my@gpu.toml"), split_ref("lite-flat@@Lite")
    (('lite-flat', '@', 'my@gpu.toml'), ('lite-flat', '@', '@Lite'))
    """
    ref = ref.strip()
    if "@" not in ref:
        return ref, "", ""
    for i, c in enumerate(ref):   # the first '@' after a scenario: a GPU file may hold '@'s
        if c == "@" and (shipped_scenario(ref[:i]) is not None
                         or ref[:i].strip().lower().endswith(".toml")):
            return ref[:i], "@", ref[i + 1:]
    if ref.lower().endswith(".toml"):
        return ref, "", ""
    return ref.rpartition("@")


def is_scenario_ref(ref: str) -> bool:
    """True when ``ref`` names a scenario as :func:`get_scenario` reads it: a shipped name or a
    ``.toml`` path, optionally ``@GPU`` (whether that GPU exists is checked on reading).

    A builder's spec whose last value is a GPU file (``ring:n=4,gpu=my.toml``) is a spec,
    not a scenario file: its text before the first ``:`` names a builder, and no file of
    that name exists.

    >>> is_scenario_ref("lite-flat@Lite+BW"), is_scenario_ref("mine.toml"), is_scenario_ref("ring:n=4")
    (True, True, False)
    >>> is_scenario_ref("ring:n=4,gpu=my.toml")
    False
    """
    base = split_ref(ref)[0].strip()
    if base.lower().endswith(".toml"):
        return not _names_a_builder(base)
    return shipped_scenario(base) is not None


def _names_a_builder(text: str) -> bool:
    """True when ``text`` reads as a builder's spec (``NAME:KEY=VALUE,...`` of a registered
    builder) and is not the path of an existing file."""
    from topologies.registry import REGISTRY, canonical_name  # the package loads every builder

    name, colon, _ = text.partition(":")
    return bool(colon) and canonical_name(name) in REGISTRY and not Path(text).is_file()


def get_scenario(ref: str | Scenario) -> Scenario:
    """A scenario from a shipped name or a ``.toml`` path, optionally ``@GPU`` (another GPU
    type); a :class:`Scenario` passes through."""
    if isinstance(ref, Scenario):
        return ref
    if not isinstance(ref, str) or not ref.strip():
        raise UserError(f"a scenario must be a name or a .toml path, got {describe(ref)}")
    base, at, gpu = split_ref(ref)
    if at and not gpu.strip():
        # the scenario quoted, not the text whole: the command line says the flag and
        # the text typed in front (netmodel.cli.refusals.named_by_value)
        raise UserError(f"scenario {base.strip()!r} names no GPU after '@' (NAME@GPU swaps "
                        f"the scenario's GPU)")
    missing = missing_named_file(base, "scenario file", scenario_names,
                                 "the shipped scenario", (".toml",))
    if missing is not None:   # lite-flat.toml meant lite-flat
        raise missing
    if base.lower().endswith(".toml"):
        scenario = load_scenario(base)
        like = looks_like(scenario.name, scenario_names())
        if like is not None:   # 'lite-оcs', a Cyrillic O: its rows read as the shipped one's
            raise UserError(f"{base}: name {scenario.name!r} prints as the shipped scenario "
                            f"{like!r} but is another name (it has "
                            f"{odd_character(scenario.name, like)}); give yours a name of its "
                            f"own")
    else:
        scenario = shipped_scenario(base)
        if scenario is None:
            raise UserError(f"unknown scenario {describe(base if at else ref)}"   # as typed
                            f"{lookalike(base, shipped_scenarios())}; known: "
                            f"{known(shipped_scenarios())} (or a path to a .toml file; "
                            f"NAME@GPU swaps the GPU)")
    return scenario.with_gpu(gpu.strip()) if at else scenario


def expand_scenarios(scenarios: Iterable[str | Scenario],
                     gpus: Collection[str | GpuSpec] | None = None,
                     baseline: str | None = BASELINE_SCENARIO) -> list[Scenario]:
    """Scenario objects from names/paths (``NAME@GPU`` allowed); with ``gpus`` every
    scenario is run with each of those GPUs instead of its own, but the baseline (the
    scenario ``baseline`` names, by name or label: ``h100-dgx``, today's cluster, which the
    others are measured against) also runs as given, just before its copies: ``compare``
    and ``sweep`` read ``--gpus`` by this one rule.
    Duplicates are dropped; two different scenarios of one label (a file named as a shipped
    scenario, on its GPU) are refused, as the results, keyed by label, would keep one of
    them.

    >>> [s.label for s in expand_scenarios(["lite-flat", "h100-dgx"], ["Lite+BW"])]
    ['lite-flat@Lite+BW', 'h100-dgx@H100-SXM', 'h100-dgx@Lite+BW']
    >>> [s.label for s in expand_scenarios(["h100-dgx"], ["H100-SXM", "Lite"])]
    ['h100-dgx@H100-SXM', 'h100-dgx@Lite']
    """
    scenarios = listed("scenarios", scenarios, "scenario names, paths or Scenario objects")
    gpus = None if gpus is None else listed("gpus", gpus, "GPU names or GpuSpec objects")
    out: dict[str, Scenario] = {}
    given: dict[str, object] = {}
    for ref in scenarios:
        s = get_scenario(ref)
        kept = [s] if not gpus or baseline in (s.name, s.label) else []
        if gpus and not kept and isinstance(ref, str) and split_ref(ref)[1]:
            # its GPU would be swapped for each of gpus': the one '@' named never run
            raise UserError(f"scenarios {ref!r} swaps in GPU {s.gpu!r}, and gpus "
                            f"({', '.join(getattr(g, 'name', str(g)) for g in gpus)}) runs "
                            f"every scenario on each of its GPUs instead of the scenario's "
                            f"own; give {split_ref(ref)[0]!r} and put {s.gpu!r} in gpus, or "
                            f"leave out gpus")
        for variant in kept + [s.with_gpu(g) for g in gpus or ()]:
            if variant.label in out and out[variant.label] != variant:
                if given[variant.label] is ref:   # one scenario, two GPUs of one name
                    _two_gpus(out[variant.label], variant)
                raise UserError(f"scenarios {describe(_ref_text(given[variant.label]))} and "
                                f"{describe(_ref_text(ref))} differ but are both "
                                f"{variant.label}; give each scenario its own name")
            out.setdefault(variant.label, variant)
            given.setdefault(variant.label, ref)
    if not out:
        raise UserError("give at least one scenario")
    return list(out.values())



def _two_gpus(first: Scenario, other: Scenario) -> NoReturn:
    """Refuse two different GPUs of one name among ``gpus`` (two GPU files defining it),
    swapped into one scenario (``first`` and ``other``), naming their files where they came
    from files and the first field they differ in."""
    a, b = first.gpu_spec.to_dict(), other.gpu_spec.to_dict()
    key = next((k for k in a if a[k] != b.get(k)), "source")
    files = f"{describe(first.gpu_file)} and {describe(other.gpu_file)} both define" \
        if first.gpu_file and other.gpu_file else "two different GPUs are"
    raise UserError(f"gpus: {files} a GPU named {first.gpu!r}, differently ({key} "
                    f"{a[key]!r} and {b.get(key)!r}); give each its own name")


def _ref_text(ref: object) -> str:
    return ref.name if isinstance(ref, Scenario) else str(ref)


def instances_note(scens: Iterable[Scenario]) -> str:
    """How the scenarios' instances were costed, in words (for the settings)."""
    modes = {s.instances for s in scens}
    if modes == {"alone"}:
        return "each instance costed alone, placed where the scenario's placement puts the " \
               "first one"
    if modes == {"all"}:
        return "every instance of the cluster runs its collectives at the same time, " \
               "sharing links fairly; a collective takes the slowest instance's time, each " \
               "instance on its own algorithm, the fastest for it alone"
    return "per scenario: see each scenario's instances"


def own_gpu_scenarios(scenarios: Iterable[Scenario]) -> list[Scenario]:
    """One variant of each scenario (by name, first-seen order): the one with its own GPU
    (a shipped scenario's, or the one a scenario file names), else, when the run lacks that
    GPU (``--gpus B200-HGX``: no Lite), the first GPU it runs with.

    >>> flat = get_scenario("lite-flat")
    >>> [s.label for s in own_gpu_scenarios([flat.with_gpu("Lite+BW"), flat.with_gpu("Lite")])]
    ['lite-flat@Lite']
    >>> [s.label for s in own_gpu_scenarios([flat.with_gpu("B200-HGX")])]
    ['lite-flat@B200-HGX']
    """
    groups: dict[str, list] = {}
    for s in scenarios:
        groups.setdefault(s.name, []).append(s)
    return [next((s for s in g if s.gpu == (s.home_gpu or s.gpu)), g[0])
            for g in groups.values()]
