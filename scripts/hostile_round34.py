"""Hostile-input round 34, on what rounds 15-33 (scripts/hostile_round15.py .. 33.py) tried
least: options each valid alone that contradict (a scenario and a fabric, a scenario's GPU
and its fabric's, a profile and efficiency factors, ``--out`` that is a file the command
reads, the same path for a table and its figure, ``--points`` with no range, a storage
bandwidth without storage loading, said with the flag typed, a tuner beside one
algorithm); the library given what its command line refuses (``collective_time`` with
``algorithms`` beside one ``algorithm`` or a ``placement`` for a group of nodes;
``build_fabric`` with ``params`` beside a spec, a saved fabric or a scenario; a
whole-number builder parameter given as a float, recorded as typed; a ``comm`` function
returning NaN, a negative or a string); data files whose parts disagree or whose values
are at the edge (a profile whose ``gpu`` is not its measurements', a scenario or spec whose
cable ``length`` has its unit, a fabric GPU other than the scenario's); and valid but
absurd sizes (a 10^9-GPU cluster, a search of 4e9 configurations, a direct all-to-all on
10,000 GPUs), which must be refused by an estimate, not run.

What each gets (the project's promise, docs/units-and-errors.md): a refusal is exit status
2, one line ``error: ...`` holding the words listed, no traceback, nothing written in the
case's folder; a value taken is exit 0 (or 3, an unmet target), its output holding the
words listed where some are; a library refusal is a UserError naming the parameter; a
library value taken gives the result it shows.

Usage: ``python scripts/hostile_round34.py [-k SUBSTRING] [-v]``; prints each failure
(FAIL), the counts, and exit status 1 if any failed. In process (click's CliRunner); about
15 seconds on two cores.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hostile_round29 import library_case, library_taken_case  # noqa: E402
from hostile_round32 import env_case  # noqa: E402
from hostile_round33 import shown_case  # noqa: E402
from hostile_tally import Made, refusal_case, run_round, taken_case  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
INFER = ["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "1", "--batch", "8"]
COMPARE = ["compare", "--models", "Llama-3-8B", "--phases", "decode", "--max-batch", "8",
           "-q", "--no-plot"]
COLLECTIVE = ["collective", "all-reduce", "--fabric", "ring:n=8", "--size", "8M"]
COSTS = ["costs", "--fabric", "ring:n=8", "--sizes", "8M", "--groups", "8"]
SWEEP = ["sweep", "--scenarios", "lite-flat", "--models", "Llama-3-8B", "--phases", "decode",
         "--max-batch", "8", "-q", "--no-plot"]
AVAIL = ["availability", "--scenario", "lite-flat", "--model", "Llama-3-8B", "--max-batch",
         "8", "-q", "--no-plot"]
CALIBRATE = ["calibrate", "--measurements", "m.csv"]

#: The shipped texts the files of the cases are edited from.
_PROFILE = (ROOT / "compute/data/profiles/vllm-h100-2024.toml").read_text().replace(
    'name = "vllm-h100-2024"', 'name = "mine"', 1)
_PROFILE_GPU = '\ngpu = "H100-SXM"\ncollectives'
_LITE_FLAT = (ROOT / "netmodel/data/scenarios/lite-flat.toml").read_text().replace(
    'name = "lite-flat"', 'name = "mine"', 1)
_DGX = (ROOT / "netmodel/data/scenarios/h100-dgx.toml").read_text().replace(
    'name = "h100-dgx"', 'name = "mys"', 1)
_MEASURED = (ROOT / "compute/data/vllm_h100_2024_measurements.csv").read_text()
_GPU_FILE = '[gpu."Mine"]\nderive_from = "H100-SXM"\nsource = "x"\n'


def _profile(gpu: str) -> str:
    """The shipped vllm-h100-2024 profile (renamed) with its ``[profile] gpu`` label."""
    assert _PROFILE_GPU in _PROFILE
    return _PROFILE.replace(_PROFILE_GPU, f'\ngpu = "{gpu}"\ncollectives', 1)


def _lite_flat(old: str, new: str) -> str:
    assert old in _LITE_FLAT, old
    return _LITE_FLAT.replace(old, new, 1)


#: Command lines refused: name -> (argv, files, words the line holds).
REFUSALS: dict[str, tuple[list[str], dict[str, Made], tuple[str, ...]]] = {
    # -- a profile whose gpu label is not its measurements' GPUs (it was taken, the label
    # read as the GPU it was fitted on) --------------------------------------------------
    "infer --profile of gpu Lite over rows of H100-SXM": (
        [*INFER, "--profile", "p.toml"], {"p.toml": _profile("Lite")},
        ("p.toml: [profile]: gpu 'Lite' must name the GPUs its [[measurement]] tables were "
         "measured on (H100-SXM)",)),
    "compare --profile of gpu 'H100-SXM, Lite'": (
        [*COMPARE, "--scenarios", "lite-flat", "--profile", "p.toml"],
        {"p.toml": _profile("H100-SXM, Lite")}, ("p.toml", "gpu 'H100-SXM, Lite'")),
    "infer --profile of gpu Nope": ([*INFER, "--profile", "p.toml"],
                                    {"p.toml": _profile("Nope")}, ("gpu 'Nope'", "H100-SXM")),
    # -- a cable length with a unit no one knows (one table now, as a sweep's) ------------
    "topology show ring:n=4,length=5furlong": (
        ["topology", "show", "ring:n=4,length=5furlong"], {},
        ("unknown unit 'furlong'", "mm, cm, m, km")),
    "topology show ring:n=4,length=-5m": (["topology", "show", "ring:n=4,length=-5m"], {},
                                          ("length must be a number from 0 to 100,000 m",)),
    "compare on a scenario of length = '5 parsecs'": (
        [*COMPARE, "--scenarios", "s.toml"],
        {"s.toml": _lite_flat("length = 20.0", 'length = "5parsec"')},
        ("s.toml", "unknown unit 'parsec'")),
    # -- advice in the command line's words (it said 'algorithms=...') --------------------
    "collective all-to-all past --max-transfers": (
        ["collective", "all-to-all", "--fabric", "single-switch:n=64", "--size", "8M",
         "--group", "64", "--max-transfers", "100"], {},
        ("(--max-transfers)", "(--algorithms ...)")),
    # -- options each valid alone that contradict (refused before, as now) ---------------
    "infer --scenario and --fabric": ([*INFER, "--scenario", "h100-dgx", "--fabric",
                                       "ring:n=8"], {}, ("--scenario or --fabric",)),
    "infer --tp 16 on --fabric ring:n=8": (
        ["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--tp", "16", "--batch", "8",
         "--fabric", "ring:n=8"], {}, ("--fabric 'ring:n=8'", "16 GPUs")),
    "infer --profile and --flops-efficiency": (
        [*INFER, "--profile", "vllm-dgx-h100", "--flops-efficiency", "0.5"], {},
        ("--flops-efficiency 0.5", "not both")),
    "infer --phase decode --ttft": ([*INFER, "--ttft", "1s"], {}, ("--ttft", "--tbt")),
    "collective --algorithm ring --algorithms tree": (
        [*COLLECTIVE, "--algorithm", "ring", "--algorithms", "tree"], {},
        ("--algorithms 'tree'", "--algorithm 'ring'")),
    "collective --group of nodes --placement spread": (
        [*COLLECTIVE, "--group", "gpu0,gpu1", "--placement", "spread"], {},
        ("--placement", "--group 'gpu0,gpu1'")),
    "collective --tuner nccl --algorithm ring": ([*COLLECTIVE, "--tuner", "nccl", "--algorithm",
                                                  "ring"], {}, ("--tuner nccl",)),
    "collective --all-groups --group of nodes": ([*COLLECTIVE, "--all-groups", "--group",
                                                  "gpu0,gpu1"], {}, ("--all-groups",)),
    "costs -o x.png --plot x.png (one path twice)": ([*COSTS, "-o", "x.png", "--plot", "x.png"],
                                                     {}, ("--output 'x.png'", ".csv")),
    "sweep --points with no range": ([*SWEEP, "--param", "fabric.bandwidth=100GB/s", "--points",
                                      "3"], {}, ("--points 3", "LO:HI")),
    "sweep one bandwidth in bytes and in bits": (
        [*SWEEP, "--param", "fabric.bandwidth=100GB/s,800Gb/s"], {}, ("twice",)),
    "availability --load-bandwidth without storage": (
        [*AVAIL, "--load-bandwidth", "1GB/s"], {},
        ("--load-bandwidth applies only with --load-from 'storage'",)),
    "serve --kv-ports on a packet fabric": (
        ["serve", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--kv-ports", "4"], {},
        ("--kv-ports '4'", "not optical circuit-switched")),
    "compare --scenarios NAME@GPU --gpus": (
        [*COMPARE, "--scenarios", "lite-flat@H100-SXM", "--gpus", "Lite"], {},
        ("--scenarios 'lite-flat@H100-SXM'", "--gpus")),
    "compare a scenario whose fabric GPU is not its own": (
        [*COMPARE, "--scenarios", "s.toml"],
        {"s.toml": _lite_flat('gpu = "$gpu"', 'gpu = "H100-SXM"')},
        ("its fabric's GPUs are 'H100-SXM'", "gpu = \"$gpu\"")),
    "yield --area and --gpu": (["yield", "--area", "800mm^2", "--gpu", "H100-SXM"], {},
                               ("--area", "--gpu")),
    "calibrate -o the --gpu-file read": ([*CALIBRATE, "-o", "g.toml", "--gpu-file", "g.toml"],
                                         {"m.csv": _MEASURED, "g.toml": _GPU_FILE},
                                         ("--out 'g.toml'", "--gpu-file 'g.toml'")),
    "calibrate -o the GPU file a --scenario reads": (
        [*CALIBRATE, "-o", "g.toml", "--scenario", "s.toml"],
        {"m.csv": _MEASURED, "g.toml": _GPU_FILE,
         "s.toml": _DGX.replace('gpu = "H100-SXM"', 'gpu = "g.toml"', 1)},
        ("'g.toml'", "reads")),
    # -- valid but absurd sizes: an estimate refuses them at once ------------------------
    "search --max-batch 1e9": (["search", "--model", "Llama-3-8B", "--gpu", "H100-SXM",
                                "--max-batch", "1000000000"], {},
                               ("4,000,000,000 configurations", "NETMODEL_MAX_SEARCH")),
    "availability --cluster-gpus 1e9": ([*AVAIL, "--cluster-gpus", "1e9"], {},
                                        ("--cluster-gpus '1e9'", "131,072")),
    "collective all-to-all on 10,000 GPUs": (
        ["collective", "all-to-all", "--fabric", "single-switch:n=10000", "--size", "8M",
         "--group", "10000"], {}, ("99,990,000 point-to-point transfers", "(--algorithms ...)")),
    "infer --tbt 1e-30s": ([*INFER, "--tbt", "1e-30s"], {}, ("--tbt", "1 us to 10 s")),
    "cost --clock 1e9": (["cost", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--clock",
                          "1e9"], {}, ("--clock '1e9'", "[0.05, 1.5]")),
}

#: Command lines taken: name -> (argv, files).
TAKEN: dict[str, tuple[list[str], dict[str, Made]]] = {
    # refused before: 'length must be a number, got '20m''
    "compare on a scenario of length = '20m'": (
        [*COMPARE, "--scenarios", "s.toml"],
        {"s.toml": _lite_flat("length = 20.0", 'length = "20m"')}),
    "infer --profile of gpu 'h100-sxm' (case aside)": ([*INFER, "--profile", "p.toml"],
                                                      {"p.toml": _profile("h100-sxm")}),
    # a failed GPU among the nodes named: the degraded report says what was lost
    "collective --fail gpu0 --group gpu0,gpu1": ([*COLLECTIVE, "--fail", "gpu0", "--group",
                                                  "gpu0,gpu1"], {}),
    "infer --gpu Lite --scenario h100-dgx (its GPU swapped)": (
        ["infer", "--model", "Llama-3-8B", "--gpu", "Lite", "--tp", "8", "--batch", "8",
         "--scenario", "h100-dgx"], {}),
}

#: Command lines taken whose output holds words: name -> (argv, words).
SHOWN: dict[str, tuple[list[str], tuple[str, ...]]] = {
    "topology show ring:n=4,length=20m": (["topology", "show", "ring:n=4,length=20m"],
                                          ("[ring:n=4,length=20.0]",)),
    "topology show ring:n=4,length=50cm": (["topology", "show", "ring:n=4,length=50cm"],
                                           ("[ring:n=4,length=0.5]",)),
    "topology show ring:n=4,length=2km": (["topology", "show", "ring:n=4,length=2km"],
                                          ("[ring:n=4,length=2000.0]",)),
    "infer --gpu Lite --scenario h100-dgx says the swap": (
        ["infer", "--model", "Llama-3-8B", "--gpu", "Lite", "--tp", "8", "--batch", "8",
         "--scenario", "h100-dgx"], ("scenario h100-dgx@Lite",)),
}


def _api(name: str, *args, **kw) -> Callable[[], object]:
    def call() -> object:
        import netmodel

        return getattr(netmodel, name)(*args, **kw)
    return call


def _scenario_with_params() -> object:
    import netmodel

    return netmodel.build_fabric(netmodel.get_scenario("lite-flat"), {"n": 4})


def _comm(result: Callable) -> Callable[[], object]:
    """evaluate at TP 2 (collectives to cost) with a comm function returning ``result``."""
    def call() -> object:
        import netmodel

        return netmodel.evaluate("Llama-3-8B", "H100-SXM", "decode", tp=2, batch=8,
                                 comm=lambda op, n, g: result(n))
    return call


#: Library calls refused: name -> (call, words of the UserError).
LIBRARY: dict[str, tuple[Callable[[], object], tuple[str, ...]]] = {
    # a count given in code is an int: 4.0 built the ring of 4
    "build_fabric('ring', {'n': 4.0})": (_api("build_fabric", "ring", {"n": 4.0}),
                                         ("ring: n must be a whole number (an int)", "got 4.0")),
    "build_fabric('superpod', {'sus': 2.0})": (
        _api("build_fabric", "superpod", {"sus": 2.0}),
        ("superpod: sus must be a whole number (an int)", "got 2.0")),
    # both ran as without the parameter
    "collective_time(algorithm='ring', algorithms=['tree'])": (
        _api("collective_time", "ring:n=8", "all-reduce", 1e6, 4, algorithm="ring",
             algorithms=["tree"]), ("algorithms=['tree']", "algorithm='ring'")),
    "collective_time(group=nodes, placement='random')": (
        _api("collective_time", "ring:n=8", "all-reduce", 1e6, ["gpu0", "gpu1"],
             placement="random"), ("placement='random'", "group")),
    # "unknown fabric builder 'ring:n=4'" / 'lite-flat'; a Scenario dropped params
    "build_fabric('ring:n=4', {})": (_api("build_fabric", "ring:n=4", {}),
                                     ("with params", "spec string 'ring:n=4'")),
    "build_fabric(('ring:n=4', {'n': 8}))": (_api("build_fabric", ("ring:n=4", {"n": 8})),
                                              ("with params", "spec string 'ring:n=4'")),
    "build_fabric('f.json', {'n': 4})": (_api("build_fabric", "f.json", {"n": 4}),
                                         ("with params", "saved fabric 'f.json'")),
    "build_fabric('lite-flat', {'n': 4})": (_api("build_fabric", "lite-flat", {"n": 4}),
                                            ("with params", "scenario 'lite-flat'")),
    "build_fabric(Scenario, {'n': 4})": (_scenario_with_params,
                                         ("with params", "scenario 'lite-flat@Lite'")),
    "build_fabric('ring:n=4,length=5furlong')": (
        _api("build_fabric", "ring:n=4,length=5furlong"), ("length", "furlong", "km")),
    # it said 'storage bandwidth applies only ...', no parameter named
    "catalog().with_(host_storage_bandwidth=2e9)": (
        lambda: __import__("netmodel.study.reliability_catalog", fromlist=["x"]).catalog()
        .with_(host_storage_bandwidth=2e9), ("host_storage_bandwidth applies only",
                                             "load_from 'storage'")),
    # refused before, as now: a comm function's answers are checked
    "evaluate(comm returning NaN)": (_comm(lambda n: n * float("nan")), ("nan", "comm")),
    "evaluate(comm returning -1 s)": (_comm(lambda n: -1.0 + 0 * n), ("negative", "comm")),
    "evaluate(comm returning text)": (_comm(lambda n: "abc"), ("'abc'", "seconds")),
    "evaluate(comm of the wrong shape)": (_comm(lambda n: [0.0, 0.0, 0.0]), ("shape",)),
    "evaluate(comm=5)": (_api("evaluate", "Llama-3-8B", "H100-SXM", "decode", tp=1, batch=8,
                              comm=5), ("comm must be a function",)),
    "evaluate(scenario and comm)": (_api("evaluate", "Llama-3-8B", "H100-SXM", "decode", tp=2,
                                         batch=8, scenario="h100-dgx",
                                         comm=lambda op, n, g: 0 * n), ("scenario or comm",)),
    "evaluate(batch=2**70)": (_api("evaluate", "Llama-3-8B", "H100-SXM", "decode", tp=1,
                                   batch=2 ** 70), ("batch", "1,000,000,000")),
    "search(max_batch=2**70)": (_api("search", "Llama-3-8B", "H100-SXM", "decode",
                                     max_batch=2 ** 70), ("configurations", "max_batch")),
    "search(slo=0.05)": (_api("search", "Llama-3-8B", "H100-SXM", "decode", slo=0.05,
                              max_batch=8), ("slo must be a compute.phases.Slo",)),
    "collective_time(group={'gpu0', 'gpu1'})": (
        _api("collective_time", "ring:n=8", "all-reduce", 1e6, {"gpu0", "gpu1"}),
        ("ordered list", "set")),
    "collective_time(sizes=1e7 of them)": (
        lambda: _api("collective_time", "ring:n=8", "all-reduce",
                     __import__("numpy").ones(10 ** 7), 4)(), ("NETMODEL_MAX_MESSAGE_SIZES",)),
}

#: Library calls taken: name -> (call, what the result shows).
LIBRARY_TAKEN: dict[str, tuple[Callable[[], object], Callable[[object], bool]]] = {
    "build_fabric('ring:n=4,length=20m')": (_api("build_fabric", "ring:n=4,length=20m"),
                                            lambda g: g.graph["args"]["length"] == 20.0),
    "build_fabric('ring:n=4,length=50cm')": (_api("build_fabric", "ring:n=4,length=50cm"),
                                             lambda g: g.graph["args"]["length"] == 0.5),
    "build_fabric('ring', {'n': 4, 'length': '2km'})": (
        _api("build_fabric", "ring", {"n": 4, "length": "2km"}),
        lambda g: g.graph["args"]["length"] == 2000.0),
    # recorded as typed before: spec 'ring:n=4.0', args {'n': 4.0}; a float is refused
    "build_fabric('ring', {'n': np.int64(4)}) spec": (
        lambda: _api("build_fabric", "ring", {"n": __import__("numpy").int64(4)})(),
        lambda g: g.graph["spec"] == "ring:n=4" and g.graph["args"] == {"n": 4}
        and type(g.graph["args"]["n"]) is int),
    "collective_time(group=nodes) is its size's": (
        lambda: (_api("collective_time", "ring:n=8", "all-reduce", 1e6, ["gpu0", "gpu1"])(),
                 _api("collective_time", "ring:n=8", "all-reduce", 1e6, 2)()),
        lambda pair: pair[0] == pair[1]),
    "collective_time(algorithms=['ring']) is ring's": (
        lambda: (_api("collective_time", "ring:n=8", "all-reduce", 1e6, 4,
                      algorithms=["ring"])(),
                 _api("collective_time", "ring:n=8", "all-reduce", 1e6, 4, algorithm="ring")()),
        lambda pair: pair[0] == pair[1]),
}

#: Settings: name -> (argv, env, words of the refusal or None where taken).
ENV: dict[str, tuple[list[str], dict[str, str], tuple[str, ...] | None]] = {
    "NETMODEL_MAX_SEARCH_CONFIGURATIONS=10 search": (
        ["search", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--max-batch", "8"],
        {"NETMODEL_MAX_SEARCH_CONFIGURATIONS": "10"},
        ("32 configurations", "NETMODEL_MAX_SEARCH_CONFIGURATIONS")),
}


def cases() -> Iterator:
    yield from (refusal_case(n, a, f, w) for n, (a, f, w) in REFUSALS.items())
    yield from (taken_case(n, a, f) for n, (a, f) in TAKEN.items())
    yield from (shown_case(n, a, w) for n, (a, w) in SHOWN.items())
    yield from (env_case(n, a, e, w) for n, (a, e, w) in ENV.items())
    yield from (library_case(n, c, w) for n, (c, w) in LIBRARY.items())
    yield from (library_taken_case(n, c, h) for n, (c, h) in LIBRARY_TAKEN.items())


def main() -> int:
    return run_round(cases(), "hostile34-")


if __name__ == "__main__":
    sys.exit(main())
