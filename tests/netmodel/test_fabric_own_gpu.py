"""``search``/``infer --fabric`` on a fabric built for a GPU-file GPU (a spec's
``gpu=FILE.toml`` or a saved fabric that carries it in its gpu_types) refused the fabric's
own GPU: "unknown GPU 'A'" (it looked the name up in the catalog), though ``topology
show`` and ``collective`` use it (hostile round 16). The fabric's own GpuSpec is used now."""

from tests.netmodel.cli_helpers import run_cli

GPU = '[gpu.A]\nderive_from = "A100-SXM-80GB"\nfraction = 0.5\nsource = "test"\n'


def test_spec_and_saved_fabric_with_a_file_gpu(tmp_path):
    gpus = tmp_path / "a.toml"
    gpus.write_text(GPU)
    spec = f"rail-optimized:gpu={gpus},domains=2"
    saved = tmp_path / "f.json"
    assert run_cli(["topology", "export", spec, "-o", saved]).exit_code == 0
    for fabric in (spec, saved):
        r = run_cli(["search", "--fabric", fabric, "--model", "Llama-3-8B", "--max-batch", "8"])
        assert r.exit_code == 0, r.output
        assert "on 1 x A," in r.output and "(54 SMs)" in r.output   # half an A100's 108
        r = run_cli(["infer", "--fabric", fabric, "--model", "Llama-3-8B", "--tp", "2",
                     "--batch", "1"])
        assert r.exit_code == 0 and "on 2 x A," in r.output, r.output
