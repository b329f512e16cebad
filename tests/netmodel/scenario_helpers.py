"""Helpers the scenario-file tests of tests/netmodel share: a scenario TOML written from its
few varying parts (the rest: the ``[collective]`` and ``[sources]`` tables every test scenario
repeats), a fabric saved with ``netmodel topology export``, a user's GPU file, and a Python
process of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from tests.netmodel.cli_helpers import run_cli


def _value(v: object) -> str:
    """A TOML value: booleans, numbers, strings (JSON's quoting, TOML's for these)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    return json.dumps(str(v))


def scenario_toml(name: str, gpu: str, fabric: str | Mapping[str, object], *,
                  description: str | None = None, links: str = "scale-up",
                  tuner: str | None = None, instances: str | None = None,
                  sources: str = "test") -> str:
    """The text of a scenario file: ``fabric`` a saved fabric's file name (``fabric = "..."``)
    or the ``[fabric]`` table's keys; ``[collective]`` contiguous, auto, ``links``, the
    default calibration, ``tuner`` and ``instances`` if given; ``[sources]`` bandwidth and latency both
    ``sources``."""
    head = {"name": name, "description": description or name, "gpu": gpu}
    if isinstance(fabric, str):
        head["fabric"] = fabric
        tables: dict[str, Mapping[str, object]] = {}
    else:
        tables = {"fabric": fabric}
    collective = {"placement": "contiguous", "algorithm": "auto", "links": links,
                  "calibration": "default"}
    if tuner is not None:
        collective["tuner"] = tuner
    if instances is not None:
        collective["instances"] = instances
    tables |= {"collective": collective, "sources": {"bandwidth": sources, "latency": sources}}
    lines = [f"{k} = {_value(v)}" for k, v in head.items()]
    for table, keys in tables.items():
        lines += ["", f"[{table}]", *(f"{k} = {_value(v)}" for k, v in keys.items())]
    return "\n".join(lines) + "\n"


def write_scenario(folder: Path, name: str, gpu: str, fabric: str | Mapping[str, object],
                   *, file: str | None = None, **kw: object) -> Path:
    """:func:`scenario_toml` written to ``folder / file`` (``NAME.toml`` by default); its
    path."""
    path = folder / (file or f"{name}.toml")
    path.write_text(scenario_toml(name, gpu, fabric, **kw))
    return path


def export_fabric(folder: Path, spec: str, file: str) -> Path:
    """``netmodel topology export SPEC -o folder/file`` (in process), checked to succeed; the
    file's path."""
    path = folder / file
    r = run_cli(["topology", "export", spec, "-o", path])
    assert r.exit_code == 0, r.output
    return path


def gpu_file_text(name: str = "Test-GPU", sms: int = 100) -> str:
    """A user's GPU file of one GPU ``name``: 1000/2000 dense BF16/FP8 TFLOP/s, 100 GB of HBM
    at 4 TB/s, 400 GB/s scale-up, 400 Gb/s scale-out, 700 W, instances up to 8."""
    return (f'[gpu."{name}"]\nsms = {sms}\nbf16_dense_TFLOPs = 1000\nfp8_dense_TFLOPs = 2000\n'
            "hbm_capacity_GB = 100\nhbm_bandwidth_TBps = 4\nscaleup_GBps_per_direction = 400\n"
            'scaleout_Gbps = 400\ntdp_W = 700\nmax_instance = 8\nsource = "test"\n')


def run_python(folder: Path, *args: str, timeout: float = 120) -> str:
    """``python ARGS`` in a process of its own in ``folder`` (this checkout on its path),
    checked to succeed; its output, stripped."""
    env = {**os.environ, "PYTHONPATH": os.getcwd() + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, *args], cwd=folder, env=env, capture_output=True,
                         text=True, timeout=timeout)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def efa_tuned_toml(tuner: str) -> str:
    """Scenario ``efa-tuned``: 8 x 8 Lites rail-optimized (the GPU's own bandwidths, NVLinks
    and in-network reduction), its collectives chosen by ``tuner``."""
    rail = {"builder": "rail-optimized", "domains": 8, "domain_size": 8, "gpus_per_server": 8,
            "gpu": "$gpu", "scaleup_bandwidth": "$scaleup", "nic_bandwidth": "$scaleout",
            "nvlinks": "$nvlinks", "in_network_reduction": "$reduction"}
    return scenario_toml("efa-tuned", "Lite", rail, links="as-built", tuner=tuner,
                         description="8 x 8 Lite, rail-optimized, aws-ofi-nccl p5 tuner")
