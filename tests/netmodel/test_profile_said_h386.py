"""Every command that takes ``--profile`` says the calibrated mode the same way.

``compare``, ``sweep`` and ``study lite-gpu`` printed their tables bare under ``--profile``
(a TBT many times the roofline's, with nothing saying why), where ``infer``, ``search`` and
``serve`` print :func:`netmodel.cli.resolve.profile_line`: its line, and the note that the
profile was fitted on another model or GPU than the run's (the study also infer's note on
the collectives its first part's networks cost otherwise than the profile was fitted with).
"""

import json

from click.testing import CliRunner

from netmodel.cli.main import cli

PROFILE = "vllm-dgx-h100"   # fitted on H100-SXM (compute/data/profiles)


def run(*args):
    r = CliRunner().invoke(cli, list(args))
    assert r.exit_code == 0, r.output
    return r.stdout


def _said(text: str) -> list[str]:
    """The lines that say the calibrated mode."""
    return [line for line in text.splitlines()
            if line.startswith(("calibrated mode:", f"note: profile {PROFILE}"))]


def _search_lines() -> list[str]:
    return _said(run("search", "--model", "Llama-3-70B", "--gpu", "Lite", "--profile", PROFILE,
                     "--tp", "16", "--max-batch", "8"))


def _expect(text: str, collectives: str = "") -> None:
    """The calibrated line and the carried-over GPU note, worded as search words them
    (not its note on collectives: a comparison runs several fabrics' by design; the
    study's first part, ``collectives``, its networks')."""
    said = _said(text)
    from_search = _search_lines()
    assert said[0] == from_search[0] and said[0].startswith(
        f"calibrated mode: engine profile {PROFILE}, fitted on ")
    # the run's models and GPUs, then what is carried over to Lite, as search says it
    head = (f"note: profile {PROFILE} was fitted on model Llama-2-70B on GPU H100-SXM; this is "
            f"model Llama-3-70B on GPU")
    gpu_note = [line for line in from_search if line.startswith(head)]
    assert len(gpu_note) == 1 and len(said) == 2 + bool(collectives)
    assert said[0] == from_search[0] and said[2:] == ([collectives] if collectives else [])
    tail = gpu_note[0].split(": an extrapolation ")[1]
    assert said[1].startswith(head) and said[1].endswith(f": an extrapolation {tail}")
    assert tail.startswith("(on Lite its efficiencies and fixed overheads are H100-SXM's")
    # said once, above the tables
    assert text.splitlines()[:len(said)] == said


COMPARE = ("compare", "--models", "Llama-3-70B", "--phases", "decode", "--scenarios",
           "h100-dgx,lite-flat", "--profile", PROFILE, "-q", "--max-batch", "8")


def test_compare_says_the_profile():
    _expect(run(*COMPARE))
    d = json.loads(run(*COMPARE, "--json"))   # the JSON stays one document and carries it
    assert d["settings"]["options"]["profile"]["name"] == PROFILE
    assert d["settings"]["options"]["profile"]["gpu"] == "H100-SXM"


def test_compare_without_profile_says_nothing():
    plain = run(*COMPARE[:-5], "-q", "--max-batch", "8")
    assert _said(plain) == [] and "calibrated" not in plain


def test_sweep_says_the_profile():
    args = ("sweep", "--scenarios", "lite-flat", "--param", "fabric.latency=1e-7,1e-6",
            "--models", "Llama-3-70B", "--phases", "decode", "--profile", PROFILE, "-q",
            "--max-batch", "8")
    _expect(run(*args))
    assert json.loads(run(*args, "--json"))["settings"]["options"]["profile"]["name"] == PROFILE


def test_study_says_the_profile(tmp_path):
    _expect(run("study", "lite-gpu", "--out", str(tmp_path / "s"), "--models", "Llama-3-70B",
                "--gpus", "Lite", "--phases", "decode", "--no-fabric", "--no-plot", "-q",
                "--profile", PROFILE),
            # its default networks ring and ideal: the ring is not the profile's collectives
            f"note: profile {PROFILE} was fitted with collectives scenario h100-dgx, not this "
            f"run's ring alpha-beta over scale-up bandwidth (network ring)")
