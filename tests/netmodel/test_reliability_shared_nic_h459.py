"""The reliability study on servers that share NICs (``rail-optimized`` with
``nics_per_server=1``: gpu0 and gpu8 hold the NICs of 2 servers of 8 H100, the other GPUs
reach the network through them).

* An instance is costed on a graph that lets its members out: GPUs holding a shared NIC
  forward their partners' traffic, so instances are costed on the whole cell. Costed on its
  members and the switches alone, an instance none of whose members holds its server's NIC
  had no way out: spread over the 16 GPUs (TP 4: gpu1, gpu5, gpu9, gpu13 and so on), 3 of the
  4 instances served nothing healthy (``netmodel blast-radius``: 4 instances, 5,312
  tokens/s, the one holding gpu0 and gpu8), where each reaches the network as that one
  does, one NVSwitch hop further.
* A GPU that hands a NIC on (:attr:`~topologies.failure_domains.Component.handed`) and one
  that does not are never one symmetry class: idle gpu0 and gpu1 read alike otherwise.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

import netmodel
from netmodel.study.reliability_cluster import build_cluster
from tests.netmodel.cli_helpers import run_cli


def _scenario(placement: str, domains: int = 2) -> str:
    """The shipped h100-dgx scenario cut to ``domains`` servers, one NIC each, placed
    ``placement``."""
    text = (Path(netmodel.__file__).parent / "data" / "scenarios" / "h100-dgx.toml").read_text()
    for old, new in (('name = "h100-dgx"', f'name = "one-nic-{placement}"'),
                     ("domains = 4", f"domains = {domains}"),
                     ("gpus_per_server = 8", "gpus_per_server = 8\nnics_per_server = 1"),
                     ('placement = "contiguous"', f'placement = "{placement}"')):
        assert text.count(old) == 1
        text = text.replace(old, new)
    return text


def _cluster(tmp_path, placement: str):
    path = tmp_path / f"{placement}.toml"
    path.write_text(_scenario(placement))
    return build_cluster(str(path), "Llama-3-70B")


def test_spread_instances_all_serve(tmp_path):
    c = _cluster(tmp_path, "spread")
    assert c.tp == 4 and c.instances[1] == ("gpu1", "gpu5", "gpu9", "gpu13")
    first, *rest = c.healthy
    assert first is not None and all(r is not None for r in rest)   # were None
    for r in rest:   # the same NICs, reached one hop further: at most as fast, near it
        assert 0.99 * first.tokens_per_s <= r.tokens_per_s <= first.tokens_per_s
    # a member of one of them failing takes it down (was: nothing served, nothing lost)
    effect = next(e for e in c.effects(["gpu-die"]) if e.example == "gpu1")
    assert effect.down == (1,)


def test_spread_matches_contiguous_where_they_agree(tmp_path):
    """Contiguous TP-4 instances never leave a server: their cost is the same whether
    costed on the cell or on members and switches (the whole-cell costing changes nothing
    there)."""
    c = _cluster(tmp_path, "contiguous")
    assert len({round(r.tokens_per_s, 6) for r in c.healthy}) == 1


def test_a_handing_gpu_is_a_class_of_its_own(tmp_path):
    c = _cluster(tmp_path, "contiguous")
    # gpu0 (holding the server's NIC) and gpu1 idle: the rest in instances of 4
    c = replace(c, instances=(("gpu2", "gpu3", "gpu4", "gpu5"),
                              ("gpu8", "gpu9", "gpu10", "gpu11"),
                              ("gpu12", "gpu13", "gpu14", "gpu15")))
    comps = {x.name: x for x in c.components["gpu-die"]}
    assert comps["gpu0"].handed and not comps["gpu1"].handed
    assert c.local(comps["gpu0"])[0] != c.local(comps["gpu1"])[0]
    classes = [set(c.class_members(e)) for e in c.effects(["gpu-die"])]
    assert not any(comps["gpu0"] in k and comps["gpu1"] in k for k in classes)


def test_blast_radius_counts_every_instance(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(_scenario("spread"))
    r = run_cli(["blast-radius", "--scenario", str(path), "--model", "Llama-3-70B",
                 "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["instances"] == 4
    # every instance serves: 4 x the one's rate, less the 3's extra hop (was 1 x)
    assert 3.99 * out["instance_tokens_per_s"] <= out["tokens_per_s"] <= 4.0001 * out[
        "instance_tokens_per_s"]
    rows = {row["cls"]: row for row in out["rows"]}
    assert rows["host"]["instances_down_mean"] == 4.0   # was 1: 3 served nothing
    assert rows["gpu-die"]["instances_down_mean"] == 1.0   # was 0.25


def test_no_instance_holding_a_nic_is_no_crash(tmp_path):
    """3 servers spread (TP 4: gpu0, gpu6, gpu12, gpu18 and so on): no instance holds
    every NIC its members go through, so none served healthy and blast-radius divided by
    zero (ZeroDivisionError in _tokens_lost_pct); now all 6 serve alike."""
    path = tmp_path / "s3.toml"
    path.write_text(_scenario("spread", domains=3))
    r = run_cli(["blast-radius", "--scenario", str(path), "--model", "Llama-3-70B",
                 "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["instances"] == 6
    assert out["tokens_per_s"] == pytest.approx(6 * out["instance_tokens_per_s"], rel=1e-9)
