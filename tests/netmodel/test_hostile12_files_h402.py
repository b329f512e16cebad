"""Round 12 of hostile inputs (files and their limits): wordings (each test failed on the
code before it)."""

from click.testing import CliRunner

from netmodel.cli.main import cli
from netmodel.study.fabric_ref import _build_spec


def test_a_cap_of_one_link_is_said_in_the_singular(monkeypatch):
    """Before: 'over the limit of 2,000,000 nodes and 1 edges; topology compare holds at most
    1 links together'. ring:n=4 has 4 links, so a cap of 1 refuses it before it is built."""
    monkeypatch.setenv("NETMODEL_MAX_COMPARE_LINKS", "1")
    _build_spec.cache_clear()   # a spec built before (cached) is not built again
    out = CliRunner().invoke(cli, ["topology", "compare", "ring:n=4", "ring:n=3"])
    assert out.exit_code == 2 and out.output.count("\n") == 1, out.output
    assert ("the fabric would have about 4 nodes and 4 edges, over the limit of 2,000,000 "
            "nodes and 1 edge; topology compare holds at most 1 link together (0 in the "
            "fabrics before it)") in out.output, out.output


def test_a_fabric_limit_of_one_node_is_said_in_the_singular(monkeypatch):
    monkeypatch.setenv("NETMODEL_MAX_FABRIC_NODES", "1")
    _build_spec.cache_clear()
    out = CliRunner().invoke(cli, ["topology", "show", "ring:n=4"])
    assert out.exit_code == 2
    assert "about 4 nodes and 4 edges, over the limit of 1 node and 10,000,000 edges" \
        in out.output, out.output


def _scenario_with_bandwidth(tmp_path, text: str):
    from pathlib import Path

    import netmodel

    shipped = Path(netmodel.__file__).parent / "data" / "scenarios" / "lite-flat.toml"
    body = shipped.read_text()
    assert 'bandwidth = "$scaleup"' in body
    path = tmp_path / "s.toml"
    path.write_text(body.replace('bandwidth = "$scaleup"', f'bandwidth = "{text}"', 1))
    return path


def _said(args):
    out = CliRunner().invoke(cli, args)
    assert out.exit_code == 2 and out.output.count("\n") == 1, out.output
    assert "Traceback" not in out.output
    return out.output


def test_a_scenario_token_factor_below_the_smallest_is_refused_as_typed(tmp_path):
    """Before: bandwidth = "1e-400*$scaleup" read K by float() as 0.0 and was told
    '[fabric]: flat: bandwidth must be a finite number > 0, got 0.0'."""
    path = _scenario_with_bandwidth(tmp_path, "1e-400*$scaleup")
    said = _said(["collective", "all-reduce", "--scenario", str(path), "--size", "1MiB"])
    assert ("fabric value '1e-400*$scaleup': K '1e-400' is below the smallest number "
            "netmodel reads") in said, said


def test_a_scenario_token_factor_past_a_floats_range_is_named(tmp_path):
    """Before: "1e300*$scaleup" (1e300 x 1.125e11 B/s overflows) was told 'bandwidth must
    be a finite number > 0, got inf', an inf the file never holds."""
    path = _scenario_with_bandwidth(tmp_path, "1e300*$scaleup")
    said = _said(["collective", "all-reduce", "--scenario", str(path), "--size", "1MiB"])
    assert ("fabric value '1e300*$scaleup': K 1e300 times the GPU's scaleup bandwidth is "
            "beyond the range of a float (at most about 1.8e308); give a smaller K") in said


def test_a_scenario_token_factor_in_range_still_reads(tmp_path):
    from compute.hardware import get_gpu
    from netmodel.study.fabric_table import parse_gpu_token

    assert parse_gpu_token("0.5 * $scaleout", get_gpu("Lite")) == 0.5 * get_gpu("Lite").scaleout_bandwidth
    path = _scenario_with_bandwidth(tmp_path, "2*$scaleup")
    out = CliRunner().invoke(cli, ["collective", "all-reduce", "--scenario", str(path),
                                   "--size", "1MiB", "--group", "8"])
    assert out.exit_code == 0, out.output
