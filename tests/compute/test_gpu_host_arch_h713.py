"""A GPU names its host's CPU architecture in its own entry: ``host_arch`` (h713).

NCCL's tuner reads the host's CPU architecture (its NVLSTree size correction: x86 hosts), so
which GPUs are hosted by Grace is said once, in each GPU's entry (compute/data/gpus.toml, a
user's GPU file), not in a list of GPU names in netmodel's data: one of
:data:`compute.gpu_rows.HOST_ARCHS`, kept by a GPU derived from it unless it names its own,
carried by a saved fabric for a GPU file's GPUs. The tuner's rule is
tests/netmodel/test_gpu_host_arch_h713.py's."""

from __future__ import annotations

import json

import pytest

from compute.errors import UserError
from compute.gpu_facts import (
    check_gpu_file_facts,
    derivation,
    gpu_file_facts,
    named_fact,
    stated_fact,
)
from compute.gpu_rows import HOST_ARCHS
from compute.hardware import gpu_names, load_gpu_file


def _load(tmp_path, entries, name="gpus.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"gpu": entries}))
    return load_gpu_file(path)


def test_the_catalog_hosts_by_hand():
    # GB200 and GB300 are parts of Grace superchips (NVL72 datasheets: 36 Grace CPUs for 72
    # GPUs); the HGX GPUs' typical hosts are the DGX systems' x86 CPUs; the Lites the H100's
    hosts = {n: named_fact(n, "host_arch") for n in gpu_names()}
    assert {n for n, (arch, _) in hosts.items() if arch == "aarch64"} == {
        "GB200-NVL72", "GB300-NVL72"}
    assert {n for n, (arch, _) in hosts.items() if arch == "x86_64"} == {
        "A100-SXM-80GB", "H100-SXM", "H200-SXM", "B200-HGX", "B300-HGX", "Lite",
        "Lite+NetBW", "Lite+MemBW", "Lite+BW", "Lite+BW+FLOPS"}
    assert hosts["Lite+BW"] == ("x86_64", "H100-SXM")


@pytest.mark.parametrize("gpu", [n for n in gpu_names() if derivation(n) is None])
def test_every_catalog_gpu_derived_from_none_states_its_host(gpu):
    # a catalog GPU added without it would take netmodel's default (x86) without a word: a
    # Grace-hosted part would then get NCCL's x86-only NVLSTree correction
    assert stated_fact(gpu, "host_arch") in HOST_ARCHS, (
        f"catalog GPU {gpu!r} states no host_arch: give it one of {HOST_ARCHS} in "
        f"compute/data/gpus.toml, with its source")


HALF_B200 = {"derive_from": "B200-HGX", "fraction": 0.5, "source": "test"}


def test_a_gpu_file_states_it_and_derived_gpus_keep_it(tmp_path):
    gpus = _load(tmp_path, {
        "H713c-Grace": {**HALF_B200, "host_arch": "aarch64"},
        "H713c-Kept": {"derive_from": "H713c-Grace", "fraction": 0.5, "source": "test"},
        "H713c-Back": {"derive_from": "H713c-Grace", "fraction": 0.5, "source": "test",
                       "host_arch": "x86_64"},
        "H713c-FromGB": {"derive_from": "GB300-NVL72", "fraction": 0.5, "source": "test"}})
    assert named_fact("H713c-Grace", "host_arch") == ("aarch64", "H713c-Grace")
    assert named_fact("H713c-Kept", "host_arch") == ("aarch64", "H713c-Grace")
    assert named_fact("H713c-Back", "host_arch") == ("x86_64", "H713c-Back")
    assert named_fact("H713c-FromGB", "host_arch") == ("aarch64", "GB300-NVL72")
    # its base's other named facts are kept beside it
    assert named_fact("H713c-Grace", "collective_generation") == ("blackwell", "B200-HGX")
    # a saved fabric carries what the entry states, not what it keeps
    assert gpu_file_facts(gpus["H713c-Grace"]) == {
        "derive_from": "B200-HGX", "fraction": 0.5, "host_arch": "aarch64"}
    assert gpu_file_facts(gpus["H713c-Kept"]) == {"derive_from": "H713c-Grace",
                                                  "fraction": 0.5}


@pytest.mark.parametrize("value", ["arm64", "grace", "X86_64", "x86", " aarch64", "", 64,
                                   ["aarch64"]])
def test_a_bad_host_arch_is_refused_in_one_line(tmp_path, value):
    with pytest.raises(UserError) as err:
        _load(tmp_path, {"H713c-Bad": {**HALF_B200, "host_arch": value}})
    message = str(err.value)
    assert "\n" not in message and "GPU 'H713c-Bad'" in message
    assert "host_arch must be the CPU architecture of the GPU's host as Linux names it " \
           "(Grace and Vera: 'aarch64'; Intel and AMD: 'x86_64'), got " in message
    assert message.endswith("; known: 'aarch64', 'ppc64le', 'x86_64'")


def test_a_saved_fabrics_host_arch_is_checked_as_a_gpu_files(tmp_path):
    gpus = _load(tmp_path, {"H713c-Fab": HALF_B200})
    with pytest.raises(UserError, match=r"^f\.json: GPU 'H713c-Fab': host_arch must be .* "
                                        r"got 'arm64'; known: "):
        check_gpu_file_facts(gpus, {"H713c-Fab": {**gpu_file_facts(gpus["H713c-Fab"]),
                                                  "host_arch": "arm64"}}, "f.json")
    named = check_gpu_file_facts(gpus, {"H713c-Fab": {"host_arch": "aarch64"}}, "f.json")[3]
    assert named == {"H713c-Fab": {"host_arch": "aarch64"}}


def test_unknown_key_refusals_name_it(tmp_path):
    with pytest.raises(UserError, match=r"a derived GPU allows: .*compute_capability, "
                                        r"host_arch, source"):
        _load(tmp_path, {"H713c-K": {**HALF_B200, "host_cpu": "grace"}})
