"""``blast-radius`` / ``availability --fabric`` on a fabric built for a GPU-file GPU (a
saved fabric that carries it in its ``gpu_types``): the help says the GPU is the fabric's
own, but the cluster looked its name up in the catalog ("unknown GPU 'Half'", h275). The
scenario's own GpuSpec is used now, as ``search``/``infer --fabric`` do."""

import json

from compute.hardware import derive_gpu, get_gpu
from netmodel.study.reliability_cluster import build_cluster
from netmodel.study.scenarios import fabric_scenario
from tests.netmodel.cli_helpers import run_cli
from topologies import build

GPU = '[gpu.Half]\nderive_from = "H100-SXM"\nfraction = 0.5\nsource = "test"\n'


def test_cluster_takes_the_fabrics_own_gpu():
    mine = derive_gpu(get_gpu("H100-SXM"), "Half", fraction=0.5)
    c = build_cluster(fabric_scenario(build("ring", {"n": 8, "gpu": mine}), "mine"),
                      "Llama-3-8B")
    assert c.gpu == mine and c.gpu.sms == 66     # half an H100's 132
    assert c.gpus == 8


def test_saved_fabric_with_a_file_gpu(tmp_path):
    gpus = tmp_path / "half.toml"
    gpus.write_text(GPU)
    saved = tmp_path / "ring.json"
    assert run_cli(["topology", "export", f"ring:n=8,gpu={gpus}", "-o", saved]).exit_code == 0
    r = run_cli(["blast-radius", "--fabric", saved, "--model", "Llama-3-8B", "--json"])
    assert r.exit_code == 0, r.output
    assert "Half" in json.dumps(json.loads(r.output))
    r = run_cli(["availability", "--fabric", saved, "--model", "Llama-3-8B", "--trials", "5",
                 "-q", "--json"])
    assert r.exit_code == 0, r.output
