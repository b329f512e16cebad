"""Hostile-input round 21, on the values a number option takes in another spelling and on
options each fine alone but wrong together. Rounds 15-20 (scripts/hostile_round15.py ..
20.py) gave every option the values no number is (nan, 1e309, '1_000', other scripts'
digits), files broken every way, hostile environments and signals; round 19 took a
refusal as naming the value where the line held the number read. This round types the
numbers a command reads as another number (``+5``, ``5.0``, ``1e3``, ``0005``, ``5.``)
and checks that a refusal of the value read still names the flag typed: a library error
says ``TP degree 1000``, which is no word of ``--tp 1e3``. And it pairs options and files
that are each taken alone: a step past the model's context (``--context``'s default
past an HF config's ``max_position_embeddings``: no flag named), a serving workload whose requests outgrow the model's context
(the refusal spoke of a ``context`` serve has no option for), ``--two-batch-overlap``
with ``--profile`` or ``--pp 2``, ``yield --sms`` past the SM limit (named
``sms_physical``, a library parameter), degrees that do not divide TP (no word of what
divides it), one collective algorithm asked for where it cannot run (``--algorithm torus`` on
a ring, a scenario's ``[collective] algorithm = "torus"`` on OCS instances set as rings:
``no algorithm can run ...``, naming neither the flag nor the scenario).

What each gets (the project's promise, docs/units-and-errors.md): exit status 2, one line
``error: ...`` holding the flag (or file) typed and what is allowed (each case's words),
no traceback, nothing written in the case's folder. A case marked ``ok`` is a value the
command takes (exit 0).

Usage: ``python scripts/hostile_round21.py [-k SUBSTRING] [-v]``; prints each failure
(FAIL), the counts, and exit status 1 if any failed. In process (click's CliRunner), a
few seconds a case at most.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hostile_tally import invoke_in, one_line_refusal, run_round  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: One case: (name, run); run(folder) is None where the case holds, else why not.
Case = tuple[str, Callable[[Path], str | None]]

INFER = ["infer", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--batch", "4"]
INFER_MOE = ["infer", "--model", "DeepSeek-V3", "--gpu", "H200-SXM", "--batch", "16", "--tp",
             "8"]
SEARCH = ["search", "--model", "Llama-3-8B", "--gpu", "H100-SXM", "--max-batch", "8"]
AVAIL = ["availability", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "-q", "--trials",
         "5", "--no-plot", "--max-batch", "8"]
SERVE = ["serve", "--scenario", "h100-dgx", "--model", "Llama-3-8B", "--max-batch", "8"]
COMPARE = ["compare", "--scenarios", "h100-dgx", "--models", "Llama-3-8B", "--max-batch", "8",
           "-q", "--no-plot"]
SWEEP = ["sweep", "--scenarios", "h100-dgx", "--models", "Llama-3-8B", "--max-batch", "8",
         "-q", "--no-plot", "--param", "cost.pue=1.1,1.2"]
DIVISORS_8 = "allowed: 1, 2, 4, 8"
#: lite-ocs with the torus algorithm for every collective: its circuits are set per
#: instance to the faster of a ring and a torus, and an instance of 2 has no torus.
OCS_TORUS = (ROOT / "netmodel/data/scenarios/lite-ocs.toml").read_text().replace(
    'algorithm = "auto"', 'algorithm = "torus"')
#: A GPU file of one GPU of the user's (an H100-SXM by another name).
GPU_FILE = '[gpu."Mine"]\nderive_from = "H100-SXM"\nsource = "what-if: a test"\n'
#: A HuggingFace config.json of a Llama-3-8B-shaped model with a context of 1,024 tokens.
HF_1024 = ('{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": '
           '4096, "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": '
           '32, "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": '
           '1024}')

#: Refusals: name -> (argv, files to write in the case's folder, words the line must hold).
REFUSALS: dict[str, tuple[list[str], dict[str, str], tuple[str, ...]]] = {}
for _flag, _word in (("--tp", "TP degree"), ("--pp", "PP degree"), ("--ep", "EP degree"),
                     ("--attention-dp", "attention DP degree")):
    for _typed in ("+5", "5.0", "1e3", "0005", "5."):
        if _flag == "--pp" and _typed != "1e3":   # PP 5 is a pipeline Llama-3-8B takes
            continue
        _tp = [] if _flag == "--tp" else ["--tp", "1"]
        REFUSALS[f"infer {_flag} {_typed}"] = (
            [*INFER, *_tp, _flag, _typed], {}, (f"{_flag} {_typed!r}", _word, "allowed" if
                                                _flag != "--ep" else "EP 1 only"))
        REFUSALS[f"search {_flag} {_typed}"] = (
            [*SEARCH, _flag, f"1,{_typed}" if _flag != "--attention-dp" else _typed], {},
            (_flag,) if _flag == "--attention-dp" else (f"{_flag} '1,{_typed}'", _word))
REFUSALS.update({
    "infer --attention-dp not dividing TP": (
        [*INFER_MOE, "--attention-dp", "3"], {},
        ("--attention-dp '3'", "does not divide TP degree 8", DIVISORS_8)),
    "infer --ep not dividing TP": (
        [*INFER_MOE, "--ep", "3"], {}, ("--ep '3'", "does not divide TP degree 8",
                                        DIVISORS_8)),
    "infer two-batch overlap with PP 2": (
        [*INFER, "--tp", "2", "--pp", "2", "--two-batch-overlap"], {},
        ("--pp '2'", "allowed: PP 1")),
    "search two-batch overlap with PP 1,2": (
        [*SEARCH, "--pp", "1,2", "--two-batch-overlap"], {}, ("--pp '1,2'", "allowed: PP 1")),
    "infer two-batch overlap with a profile": (
        [*INFER, "--tp", "1", "--two-batch-overlap", "--profile", "vllm-dgx-h100"], {},
        ("--two-batch-overlap", "'vllm-dgx-h100'", "drop one")),
    "serve two-batch overlap with a profile": (
        [*SERVE, "--two-batch-overlap", "--profile", "vllm-dgx-h100"], {},
        ("--two-batch-overlap", "'vllm-dgx-h100'", "drop one")),
    "compare two-batch overlap with a profile": (
        [*COMPARE, "--two-batch-overlap", "--profile", "vllm-dgx-h100"], {},
        ("--two-batch-overlap", "'vllm-dgx-h100'", "drop one")),
    "yield --sms past the SM limit": (
        ["yield", "--area", "814", "--sms", "1000000000/1"], {},
        ("--sms '1000000000/1'", "from 1 to 100,000")),
    "yield --sms 1e6/1": (
        ["yield", "--area", "814", "--sms", "1e6/1"], {}, ("--sms '1e6/1'", "from 1 to")),
    "serve workload prompt past the context": (
        [*SERVE, "--workload", "w.toml"], {"w.toml": "prompt = 100000\noutput = 13\n"},
        ("--workload 'w.toml'", "prompt 100000 + output 13", "max_context of 8192",
         "allowed: prompt + output up to 8192")),
    "serve workload prompt + output past the context": (
        [*SERVE, "--workload", "w.json"], {"w.json": '{"prompt": 8000, "output": 1000}'},
        ("--workload 'w.json'", "context of 9000", "allowed: prompt + output up to 8192")),
    "infer a default context past an HF config's max_position_embeddings": (
        ["infer", "--hf-config", "config.json", "--gpu", "H100-SXM", "--tp", "1", "--batch",
         "1"], {"config.json": HF_1024}, ("--context '1513'", "max_context of 1,024")),
    "infer --phase prefill, a default prompt past the context": (
        ["infer", "--hf-config", "config.json", "--gpu", "H100-SXM", "--tp", "1", "--batch",
         "1", "--phase", "prefill"], {"config.json": HF_1024},
        ("--prompt '1500'", "max_context of 1,024")),
    "search --prompt 2e3 past the context": (
        ["search", "--hf-config", "config.json", "--gpu", "H100-SXM", "--max-batch", "4",
         "--phase", "prefill", "--prompt", "2e3"], {"config.json": HF_1024},
        ("--prompt '2e3'", "prompt of 2000 tokens", "max_context of 1,024")),
    "infer --context 9000 past Llama-3-8B's context": (
        [*INFER, "--tp", "1", "--context", "9000"], {},
        ("--context '9000'", "max_context of 8,192")),
    "collective --algorithm torus on a ring": (
        ["collective", "all-reduce", "--fabric", "ring:n=8", "--group", "8", "--size", "1MiB",
         "--algorithm", "torus"], {}, ("--algorithm 'torus'", "torus needs a torus fabric",
                                       "give --algorithm auto")),
    "costs --algorithm torus on a ring": (
        ["costs", "--fabric", "ring:n=8", "--groups", "8", "--sizes", "1MiB", "-o", "c.csv",
         "--algorithm", "torus"], {}, ("--algorithm 'torus'", "give --algorithm auto")),
    "collective --scenario whose algorithm cannot run on it": (
        ["collective", "all-reduce", "--scenario", "s.toml", "--group", "8", "--size", "1MiB"],
        {"s.toml": OCS_TORUS}, ("scenario 'lite-ocs@Lite' [collective] algorithm 'torus'",
                                "give --algorithm auto")),
    **{f"{c[0]} of a scenario whose algorithm cannot run on it": (
        [*c, "s.toml", *rest], {"s.toml": OCS_TORUS},
        ("scenario 'lite-ocs@Lite' runs every collective with algorithm 'torus'",
         "cannot run all-gather on an instance of 2 GPUs", '[collective] algorithm = "auto"'))
       for c, rest in ((["infer", "--model", "Llama-3-8B", "--tp", "2", "--batch", "1",
                         "--scenario"], []),
                       (["compare", "--models", "Llama-3-8B", "--max-batch", "8", "-q",
                         "--no-plot", "--scenarios"], []),
                       (["cost", "--model", "Llama-3-8B", "--max-batch", "8", "--scenario"],
                        []),
                       (["serve", "--model", "Llama-3-8B", "--max-batch", "8", "--scenario"],
                        []))},
    **{f"availability --spare-placement {p} with --spares {n}": (
        [*AVAIL, "--spare-placement", p, *(["--spares", n] if n != "left out" else [])], {},
        (f"--spare-placement {p!r}", "holds none", "give --spares N or P%"))
       for p, n in (("group", "left out"), ("global", "0"), ("pod", "0%"), ("pod", "-0"))},
    "infer --hf-config with --model-file": (
        ["infer", "--hf-config", "config.json", "--model-file", "m.toml", "--gpu", "H100-SXM",
         "--tp", "1", "--batch", "1"], {"config.json": HF_1024, "m.toml": ""},
        ("--hf-config 'config.json'", "--model-file 'm.toml'", "give one of them")),
    "models --hf-config with --model-file": (
        ["models", "--hf-config", "config.json", "--model-file", "m.toml"],
        {"config.json": HF_1024, "m.toml": ""}, ("--model-file 'm.toml'", "give one of them")),
    **{f"{c} --fabric with a --gpu-file of another GPU": (
        [c, "--model", "Llama-3-8B", "--fabric", "ring:n=8", "--gpu-file", "g.toml",
         *(["--tp", "1", "--batch", "1"] if c == "infer" else ["--max-batch", "4"])],
        {"g.toml": GPU_FILE}, ("--gpu-file 'g.toml'", "type 'H100-SXM'", "gpu=g.toml"))
       for c in ("infer", "search")},
    "infer --fabric with --gpu of a GPU file": (
        ["infer", "--model", "Llama-3-8B", "--fabric", "ring:n=8", "--gpu", "Mine",
         "--gpu-file", "g.toml", "--tp", "1", "--batch", "1"], {"g.toml": GPU_FILE},
        ("--gpu 'Mine' of --gpu-file 'g.toml'", "gpu=g.toml in the spec")),
})

#: Values taken (exit 0): name -> argv.
TAKEN: dict[str, list[str]] = {
    "serve workload of one output token at the context": (
        [*SERVE, "--workload", "w.toml"]),
    "availability --spare-placement global with --spares 1%": (
        [*AVAIL, "--spare-placement", "global", "--spares", "1%"]),
    "infer --tbt in microseconds written with the Greek mu": (
        [*INFER, "--tp", "1", "--tbt", "50\u03bcs"]),
    "sweep adjust.hop_latency in microseconds written with the Greek mu": (
        [*SWEEP, "--param", "adjust.hop_latency=0.1\u03bcs,1\u03bcs"]),
    "infer --fabric built of a GPU file's GPU, the file given too": (
        ["infer", "--model", "Llama-3-8B", "--fabric", "ring:n=8,gpu=g.toml", "--gpu-file",
         "g.toml", "--tp", "1", "--batch", "1"]),
}
TAKEN_FILES = {"serve workload of one output token at the context":
               {"w.toml": "prompt = 8192\noutput = 1\n"},
               "infer --fabric built of a GPU file's GPU, the file given too":
               {"g.toml": GPU_FILE}}


def refusal_case(name: str, argv: list[str], files: dict[str, str],
                 words: tuple[str, ...]) -> Case:
    def run(d: Path) -> str | None:
        for f, text in files.items():
            (d / f).write_text(text)
        before = sorted(os.listdir(d))
        why = one_line_refusal(invoke_in(argv, d), words)
        if why is not None:
            return why
        after = sorted(os.listdir(d))
        return None if after == before else f"wrote {sorted(set(after) - set(before))}"
    return f"refusal {name}", run


def taken_case(name: str, argv: list[str], files: dict[str, str]) -> Case:
    def run(d: Path) -> str | None:
        for f, text in files.items():
            (d / f).write_text(text)
        r = invoke_in(argv, d)
        if r.exit_code != 0 or "Traceback" in r.output:
            return f"exit {r.exit_code} | {r.output.strip()[-300:]}"
        return None
    return f"taken {name}", run


#: Refusals run as a user runs them (``python -m netmodel``, a child process: what is left
#: half-started shows at the interpreter's exit): name -> (argv, words the one line holds).
CHILD_REFUSALS: dict[str, tuple[list[str], tuple[str, ...]]] = {
    "sweep --scheduler of a scheme Dask lacks": (
        [*SWEEP, "--scheduler", "http://127.0.0.1:9"], ("'http://127.0.0.1:9'",
                                                        "unknown address scheme 'http'")),
    "sweep --scheduler inproc://": (
        [*SWEEP, "--scheduler", "inproc://x"], ("'inproc://x'", "same process only")),
    "sweep --scheduler ucx:// without UCX": (
        [*SWEEP, "--scheduler", "ucx://127.0.0.1:9"], ("'ucx://127.0.0.1:9'",
                                                       "distributed-ucxx")),
    # a web server where the scheduler should be ({web}: its host:port, :func:`web_server`)
    "sweep --scheduler tls:// without TLS settings": (
        [*SWEEP, "--scheduler", "tls://{web}"], ("tls:// needs TLS settings",)),
    "sweep --scheduler ws:// of a web server": (
        [*SWEEP, "--scheduler", "ws://{web}"], ("Non-websocket response",)),
}
#: The most a child refusal may take: a hang's guard only, loose for a loaded machine (a
#: refusal takes 1-2 s; 18 s seen at a load of 5 on 2 cores). The leftover that hung 20 s
#: printed its traceback at exit too, which the one-line check catches.
CHILD_SECONDS = 30.0
_WEB: list[str] = []


def web_server() -> str:
    """``host:port`` of a plain web server (no Dask) answering in this process's thread,
    started on first use."""
    if not _WEB:
        import threading
        from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

        class Quiet(SimpleHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        _WEB.append(f"127.0.0.1:{server.server_address[1]}")
    return _WEB[0]


def child_refusal_case(name: str, argv: list[str], words: tuple[str, ...]) -> Case:
    def run(d: Path) -> str | None:
        t0 = time.perf_counter()
        try:
            args = [a.replace("{web}", web_server()) if "{web}" in a else a for a in argv]
            p = subprocess.run([sys.executable, "-m", "netmodel", *args], cwd=d, text=True,
                               capture_output=True, timeout=40)
        except subprocess.TimeoutExpired:
            return "over 40 s"
        dt = time.perf_counter() - t0
        lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
        shown = " / ".join(lines)[:300]
        if p.returncode != 2 or len(lines) != 1 or not lines[0].startswith("error: "):
            return f"exit {p.returncode} | {shown}"
        missing = [w for w in words if w not in lines[0]]
        if missing:
            return f"names not {missing} | {shown}"
        return None if dt < CHILD_SECONDS else f"took {dt:.1f} s | {shown}"
    return f"child refusal {name}", run


def cases() -> Iterator[Case]:
    yield from (refusal_case(n, a, f, w) for n, (a, f, w) in REFUSALS.items())
    yield from (child_refusal_case(n, a, w) for n, (a, w) in CHILD_REFUSALS.items())
    yield from (taken_case(n, a, TAKEN_FILES.get(n, {})) for n, a in TAKEN.items())


def main() -> int:
    return run_round(cases(), "hostile21-")


if __name__ == "__main__":
    sys.exit(main())
