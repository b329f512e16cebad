"""A GPU names its collective generation in its own entry (h709).

``collective_generation`` in a GPU's entry (compute/data/gpus.toml, a user's GPU file) picks
the table of netmodel/data/collective_generations.toml whose constants the collective model
applies; the generations file lists no GPU. A derived GPU keeps its base's unless it names
its own; a name the file does not define is refused in one line naming the ones it does.
``compute_capability`` likewise: NCCL leaves LL128 off by capability
(``ll128_off_capabilities``: 10.3 through NCCL 2.27), so a B300 and what derives from it
run without it there.
"""

from __future__ import annotations

import json
import tomllib
from importlib import resources

import pytest
from click.testing import CliRunner

from compute.errors import UserError
from compute.hardware import load_gpu_file
from netmodel.cli.main import cli
from netmodel.collectives.calibration_files import default_calibration
from netmodel.collectives.model import FabricCostModel
from topologies import build
from topologies.io import read_graph, write_graph

#: NCCL's perChMaxTreeBws rows on 1, 2 and 3+ nodes (collective_generations.toml: [TB]
#: Blackwell {70.0, 42.8, 24.0}, [TC] Hopper {38.7, 41.4, 36.0} GB/s).
BLACKWELL_TREE = (70.0e9, 42.8e9, 24.0e9)
HOPPER_TREE = (38.7e9, 41.4e9, 36.0e9)


def _b200_entry(**named) -> dict:
    """The catalog B200's figures as a GPU file's entry derived from none (no die table),
    with the named facts ``named``."""
    text = resources.files("compute").joinpath("data/gpus.toml").read_text(encoding="utf-8")
    entry = dict(tomllib.loads(text)["gpu"]["B200-HGX"])
    for key in ("die", "collective_generation", "compute_capability"):
        entry.pop(key, None)
    return {**entry, "source": "test: the B200's figures", **named}


def _gpu_file(tmp_path, entries: dict, name: str = "gpus.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"gpu": entries}))
    return path, load_gpu_file(path)


def test_a_gpu_file_naming_its_generation_gets_its_constants(tmp_path):
    _gpu_file(tmp_path, {"H709-Named": _b200_entry(collective_generation="blackwell"),
                         "H709-Unnamed": _b200_entry()})
    cal = default_calibration()
    named, unnamed = cal.for_gpu("H709-Named"), cal.for_gpu("H709-Unnamed")
    assert (named.generation, named.tree_channel_bandwidth) == ("blackwell", BLACKWELL_TREE)
    assert named.in_network.bandwidth_factor == 0.74          # nvlsEfficiency[Blackwell]
    assert named.flagship_bandwidth == 18 * 50e9              # B200's 18 NVLink5 links
    # naming none, derived from none: the default (Hopper's), as before the key existed
    assert (unnamed.generation, unnamed.tree_channel_bandwidth) == ("hopper", HOPPER_TREE)


def test_the_named_generation_costs_as_the_catalog_gpu_bit_for_bit(tmp_path):
    # the B200's figures under another name, naming Blackwell: every collective as the B200's
    path, _ = _gpu_file(tmp_path, {"H709-Twin": _b200_entry(
        collective_generation="blackwell", compute_capability="10.0")}, "twin.json")
    plain, _ = _gpu_file(tmp_path, {"H709-Plain": _b200_entry()}, "plain.json")
    sizes = [2.0 ** e for e in (12, 20, 28)]

    def times(gpu):
        m = FabricCostModel(build(f"rail-optimized:gpu={gpu},domains=2"), tuner="nccl")
        return [m.cost("all-reduce", s, 16).time for s in sizes]

    assert times(path) == times("B200-HGX")
    assert times(plain) != times("B200-HGX")   # Hopper's constants on B200 links


def test_the_generation_travels_with_a_saved_fabric(tmp_path):
    path, _ = _gpu_file(tmp_path, {"H709-Saved": _b200_entry(collective_generation="blackwell")})
    g = build(f"single-switch:gpu={path},n=8")
    assert g.graph["gpu_file_facts"]["H709-Saved"]["collective_generation"] == "blackwell"
    saved = tmp_path / "fabric.json"
    write_graph(g, saved)
    again = read_graph(saved)
    assert default_calibration().resolve(again).tree_channel_bandwidth == BLACKWELL_TREE


def test_a_derived_gpu_keeps_its_bases_unless_it_names_its_own(tmp_path):
    _gpu_file(tmp_path, {
        "H709-Base": _b200_entry(collective_generation="ampere"),
        "H709-Kept": {"derive_from": "H709-Base", "fraction": 0.5, "source": "test"},
        "H709-Own": {"derive_from": "H709-Base", "fraction": 0.5, "source": "test",
                     "collective_generation": "blackwell"},
        "H709-OwnChild": {"derive_from": "H709-Own", "fraction": 0.5, "source": "test"}})
    gen = default_calibration().generation_of
    assert [gen(n).name for n in ("H709-Base", "H709-Kept", "H709-Own", "H709-OwnChild")] == \
        ["ampere", "ampere", "blackwell", "blackwell"]
    # Ampere's row: perChMaxTreeBws {24.0, 23.6, 17.8}
    assert default_calibration().for_gpu("H709-Kept").tree_channel_bandwidth == \
        (24.0e9, 23.6e9, 17.8e9)


@pytest.mark.parametrize("capability, off", [(None, True), ("10.0", False)])
def test_a_gpu_derived_from_the_b300_keeps_its_compute_capability(tmp_path, capability, off):
    # NCCL <= 2.27 leaves LL128 off on 10.3 (B300, GB300); a half B300 keeps its 10.3 unless
    # its entry says another
    entry = {"derive_from": "B300-HGX", "fraction": 0.5, "source": "test"}
    if capability is not None:
        entry["compute_capability"] = capability
    name = f"H709-HalfB300-{capability}"
    _gpu_file(tmp_path, {name: entry})
    cal = default_calibration().with_(nccl_release="2.27")
    assert cal.ll128_off(name) is off
    assert cal.for_gpu(name).ll128_enabled is not off
    assert cal.for_gpu(name).generation == "blackwell"
    assert default_calibration().ll128_off(name) is False   # 2.28 on: every capability


def test_an_unknown_generation_is_refused_naming_the_known(tmp_path):
    _gpu_file(tmp_path, {"H709-Typo": _b200_entry(collective_generation="Hopper"),
                         "H709-TypoChild": {"derive_from": "H709-Typo", "fraction": 0.5,
                                            "source": "test"}})
    with pytest.raises(UserError) as err:
        default_calibration().for_gpu("H709-Typo")
    assert str(err.value) == ("GPU 'H709-Typo': collective_generation 'Hopper' is not a "
                              "generation of the collective model; known: 'ampere', "
                              "'blackwell', 'hopper'")
    with pytest.raises(UserError, match=r"^GPU 'H709-TypoChild' \(derived from 'H709-Typo', "
                                        r"whose entry names it\): collective_generation "):
        default_calibration().generation_of("H709-TypoChild")


def test_an_unknown_generation_exits_2_in_one_line(tmp_path):
    path, _ = _gpu_file(tmp_path, {"H709-Cli": _b200_entry(collective_generation="rubin")},
                        "cli.json")
    r = CliRunner().invoke(cli, ["collective", "all-reduce", "--fabric",
                                 f"single-switch:gpu={path},n=8"])
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.output, r.output
    assert "collective_generation 'rubin' is not a generation of the collective model; " \
           "known: 'ampere', 'blackwell', 'hopper'" in lines[0]


@pytest.mark.parametrize("value", ['"H100"', "3", '"h100-sxm"'])
def test_a_generations_flagship_must_be_a_catalog_gpu(tmp_path, value):
    from netmodel.collectives.calibration_files import load_generations

    path = tmp_path / "gens.toml"
    path.write_text(f'default = "x"\n[generation.x]\nflagship_gpu = {value}\n')
    with pytest.raises(UserError, match=r"\[generation\.x\]\.flagship_gpu must name a catalog "
                                        r"GPU .* known: 'A100-SXM-80GB'") as err:
        load_generations(path)
    assert "\n" not in str(err.value)
    path.write_text('default = "x"\n[generation.x]\nflagship_gpu = "A100-SXM-80GB"\n'
                    'nvlink_bandwidth = 25e9\n')
    (gen,), _ = load_generations(path)
    assert gen.flagship_gpu == "A100-SXM-80GB"
