"""A fabric spec naming a file (``ring:n=8,gpu=g.toml``) is built once per process, but kept by
the file it read, not by its text: the same text in another working folder, or after the
file is rewritten, names another GPU. The cache was keyed by the text alone, so a second
folder's ``g.toml`` got the first folder's GPU (found by two tests sharing one worker)."""

import os

from netmodel.study.fabric_ref import resolve_fabric
from tests.netmodel.scenario_helpers import gpu_file_text

SPEC = "ring:n=8,gpu=g.toml"


def _gpu_of(folder):
    here = os.getcwd()
    os.chdir(folder)
    try:
        graph = resolve_fabric(SPEC).graph
    finally:
        os.chdir(here)
    return list(graph.graph["gpu_types"]), graph.graph["gpu_types"]


def test_one_spec_text_in_two_folders_reads_each_folders_file(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "g.toml").write_text(gpu_file_text(name="Mine", sms=100))
    (tmp_path / "b" / "g.toml").write_text(gpu_file_text(name="Yours", sms=50))
    names_a, types_a = _gpu_of(tmp_path / "a")
    names_b, types_b = _gpu_of(tmp_path / "b")
    assert (names_a, names_b) == (["Mine"], ["Yours"])
    assert (types_a["Mine"].sms, types_b["Yours"].sms) == (100, 50)
    # and read again in the first folder: the first folder's, kept
    assert _gpu_of(tmp_path / "a")[0] == ["Mine"]


def test_a_rewritten_file_is_read_again(tmp_path):
    f = tmp_path / "g.toml"
    f.write_text(gpu_file_text(sms=100))
    assert _gpu_of(tmp_path)[1]["Test-GPU"].sms == 100
    f.write_text(gpu_file_text(sms=60))
    assert _gpu_of(tmp_path)[1]["Test-GPU"].sms == 60


def test_a_spec_without_files_is_built_once():
    assert resolve_fabric("ring:n=8").graph is resolve_fabric("ring:n=8").graph
