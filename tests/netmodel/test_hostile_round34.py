"""Hostile round 34 (scripts/hostile_round34.py): options each valid alone that contradict,
the library given what its command line refuses, data files whose parts disagree.

Found wrong, each checked here:

(a) ``netmodel.collective_time`` took what it never read, where ``netmodel collective``
refuses it: ``algorithms=['tree']`` beside ``algorithm='ring'`` (the candidates of auto
beside one algorithm) and ``placement='random'`` for a group given by its GPU nodes (only a
group given by its size is placed); both ran as without them. Now refused naming both
parameters (:func:`netmodel.api._refuse_unread_choices`).

(b) ``build_fabric`` with ``params`` and what brings its own parameters: a spec string
(``'ring:n=4'``) or a saved fabric was refused as "unknown fabric builder 'ring:n=4'", a
scenario's name as "unknown fabric builder 'lite-flat'", and a Scenario object built its own
fabric, ``params`` dropped without a word (``{'n': 4}``: 132 nodes). Now each is refused as
a Graph with params was: "with params, the fabric spec must be a builder name, got ..."
(:func:`topologies.registry.build` for a spec or file, :func:`netmodel.api.build_fabric`
for a scenario), a ``(spec, params)`` pair alike.

(c) A builder's ``length`` in a spec string (``ring:n=4,length=20m``) or a scenario's
``[fabric]`` (``length = "20m"``) was refused as "length must be a number, got '20m'" while
``sweep --param fabric.length=20m`` took it, and a spec's bandwidth and latency take their
units: one table of length units now (:data:`compute.units.LENGTH_UNITS`: mm, cm, m, km),
read by the spec grammar (:func:`topologies.spec_grammar._convert`) and the sweep alike.

(d) A profile file whose ``[profile] gpu`` named other GPUs than its ``[[measurement]]``
rows (``gpu = "Lite"`` over rows of H100-SXM) was taken, and that label was read as the GPU
it was fitted on: ``compare --profile`` on Lite said nothing of carrying it over, and on
H100-SXM, where it was measured, "an extrapolation ... its efficiencies and fixed overheads
are Lite's". Now the reader refuses it naming the rows' GPUs
(:func:`compute.profiles._check_fitted_gpus`); a label in another case is the same GPU.

(e) ``collective all-to-all --max-transfers 100`` on 64 GPUs advised "leave it out
(algorithms=...)", the library's parameter on the command line: a parameter without an
underscore was never written as its flag. Now a parameter written as given,
``algorithms=...``, is said as the flag, ``--algorithms ...``
(:func:`netmodel.cli.refusals.flags_for_parameters`).

(f) A builder's whole-number parameter given as a float (``build_fabric('ring', {'n':
4.0})``, numpy's ``float64(4)``) built the ring of 4 but recorded it as typed: spec
``ring:n=4.0``, args ``{'n': 4.0}``, where the text ``'4.0'`` gives ``ring:n=4`` and ``{'n':
4}``. Now recorded as the whole number the builder took (:func:`topologies.registry.builder`).
Later (h741) a count given in code is an int, as ``range(4.0)`` is a TypeError: the float is
refused, 4.0 too ("ring: n must be a whole number (an int), got 4.0"); numpy's integers and
the text '4.0' are taken and recorded as ``{'n': 4}``.

(g) A storage bandwidth without storage loading was refused by the library as "storage
bandwidth applies only with load_from 'storage'", no parameter named, and so on the command
line, where ``--load-bandwidth`` was typed. Now ``host_storage_bandwidth applies only with
load_from 'storage' ...`` (netmodel.study.reliability_catalog), ``--load-bandwidth applies
only with --load-from 'storage' ...`` on the command line.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import netmodel
from compute.errors import UserError

# -- (a) collective_time: what it would not read ------------------------------------------


def test_collective_time_refuses_candidates_beside_one_algorithm():
    with pytest.raises(UserError, match=r"^algorithms=\['tree'\] are the candidates "
                                        r"algorithm='auto' chooses among; algorithm='ring' "
                                        r"names one: drop one of the two$"):
        netmodel.collective_time("ring:n=8", "all-reduce", 1e6, 4, algorithm="ring",
                                 algorithms=["tree"])
    # auto with candidates is what they are for: the best of the one candidate is it
    ring = netmodel.collective_time("ring:n=8", "all-reduce", 1e6, 4, algorithm="ring")
    assert netmodel.collective_time("ring:n=8", "all-reduce", 1e6, 4,
                                    algorithms=["ring"]) == ring


def test_collective_time_refuses_a_placement_for_a_group_of_nodes():
    with pytest.raises(UserError, match=r"^placement='random' places a group given by its "
                                        r"size; group names its GPU nodes \(\['gpu0', 'gpu1'\]"
                                        r"\): give group as a size, or drop placement$"):
        netmodel.collective_time("ring:n=8", "all-reduce", 1e6, ["gpu0", "gpu1"],
                                 placement="random")
    # the default placement with nodes is taken; a size is placed as asked
    two = netmodel.collective_time("ring:n=8", "all-reduce", 1e6, ["gpu0", "gpu1"])
    assert two == netmodel.collective_time("ring:n=8", "all-reduce", 1e6, 2)
    assert netmodel.collective_time("ring:n=8", "all-reduce", 1e6, 4, placement="spread") > 0


# -- (b) build_fabric: params beside what brings its own ----------------------------------


@pytest.mark.parametrize("spec, said", [
    ("ring:n=4", "a spec string 'ring:n=4': give its parameters in the spec or in params, "
                 "not both"),
    ("f.json", "a saved fabric 'f.json': give its parameters in the spec or in params, "
               "not both"),
    ("lite-flat", "scenario 'lite-flat', which brings its own fabric"),
    (None, "scenario 'lite-flat@Lite', which brings its own fabric"),   # the object
])
def test_build_fabric_params_need_a_builder_name(spec, said):
    # a spec or file was "unknown fabric builder 'ring:n=4'", a scenario's name too; a
    # Scenario object built its own fabric with params dropped (132 nodes for {'n': 4})
    spec = netmodel.get_scenario("lite-flat") if spec is None else spec
    with pytest.raises(UserError, match="^with params, the fabric spec must be a builder "
                                        "name, got " + re.escape(said)):
        netmodel.build_fabric(spec, {"n": 4})
    with pytest.raises(UserError, match="^with params, the fabric spec must be a builder "
                                        "name, got " + re.escape(said)):
        netmodel.build_fabric((spec, {"n": 4})) if isinstance(spec, str) else \
            netmodel.build_fabric(spec, {})
    assert netmodel.build_fabric("ring", {"n": 4}).graph["spec"] == "ring:n=4"


# -- (c) a cable length with its unit ------------------------------------------------------


@pytest.mark.parametrize("typed, metres", [("20m", 20.0), ("50cm", 0.5), ("2km", 2000.0),
                                           ("20", 20.0), ("0m", 0.0)])
def test_a_spec_length_takes_a_unit_as_a_sweep_does(typed, metres):
    from netmodel.study.sweep_values import _value

    g = netmodel.build_fabric(f"ring:n=4,length={typed}")
    assert g.graph["args"].get("length", 0.0) == metres
    assert _value(typed, "m", "fabric.length") == metres


@pytest.mark.parametrize("typed, says", [
    ("5furlong", "ring: length '5furlong' has unknown unit 'furlong' (allowed: mm, cm, m, km)"),
    ("-5m", "ring: length must be a number from 0 to 100,000 m, got '-5m'"),
    ("abc", "ring: length 'abc' is not a number with a unit (allowed units: mm, cm, m, km)"),
])
def test_a_spec_length_refused_says_the_units(typed, says):
    with pytest.raises(UserError, match="^" + re.escape(says) + "$"):
        netmodel.build_fabric(f"ring:n=4,length={typed}")


def test_a_scenario_file_length_with_its_unit(tmp_path):
    from netmodel.study.scenario_catalog import get_scenario

    text = get_scenario("lite-flat").to_toml().replace("length = 20.0", 'length = "20m"')
    assert 'length = "20m"' in text
    (tmp_path / "mine.toml").write_text(text.replace('name = "lite-flat"', 'name = "mine"'))
    shipped = netmodel.build_fabric("lite-flat").edges["plane0", "gpu0"]
    assert netmodel.build_fabric(str(tmp_path / "mine.toml")).edges["plane0", "gpu0"] == shipped
    # the length is read: 2 km more of fibre is 10 us more a hop (5 ns/m)
    (tmp_path / "mine.toml").write_text(text.replace('name = "lite-flat"', 'name = "mine"')
                                        .replace('"20m"', '"2.02km"'))
    far = netmodel.build_fabric(str(tmp_path / "mine.toml")).edges["plane0", "gpu0"]
    assert far["latency"] - shipped["latency"] == pytest.approx(2000 * 5e-9, rel=1e-9)


# -- (d) a profile's gpu and its measurements ---------------------------------------------

SHIPPED_PROFILE = Path(__file__).resolve().parents[2] / "compute/data/profiles/vllm-h100-2024.toml"


def _profile(tmp_path, gpu: str) -> Path:
    text = SHIPPED_PROFILE.read_text().replace('name = "vllm-h100-2024"', 'name = "mine"', 1)
    assert '\ngpu = "H100-SXM"\ncollectives' in text
    f = tmp_path / "p.toml"
    f.write_text(text.replace('\ngpu = "H100-SXM"\ncollectives', f'\ngpu = "{gpu}"\ncollectives',
                              1))
    return f


@pytest.mark.parametrize("gpu", ["Lite", "H100-SXM, Lite", "Nope"])
def test_a_profile_gpu_other_than_its_measurements_is_refused(tmp_path, gpu):
    from compute.profiles import read_profile

    f = _profile(tmp_path, gpu)
    with pytest.raises(UserError, match="^" + re.escape(
            f"{f}: [profile]: gpu {gpu!r} must name the GPUs its [[measurement]] tables were "
            f"measured on (H100-SXM): a profile run on another GPU is said to be carried over "
            f"from them") + "$"):
        read_profile(f)


def test_a_profile_gpu_in_another_case_is_its_measurements_gpu(tmp_path):
    from compute.profiles import read_profile

    assert read_profile(_profile(tmp_path, "h100-sxm")).fitted_gpus == ("h100-sxm",)


# -- (e) the command line's advice names its flags -----------------------------------------


def test_too_many_transfers_advise_the_algorithms_flag():
    from tests.netmodel.cli_helpers import one_line_error, run_cli

    line = one_line_error(run_cli(["collective", "all-to-all", "--fabric", "single-switch:n=64",
                                   "--size", "8M", "--group", "64", "--max-transfers", "100"]))
    assert line == ("error: direct all-to-all on 64 GPUs routes 4,032 point-to-point "
                    "transfers, more than the limit of 100 (--max-transfers): leave it out "
                    "(--algorithms ...), ask only for sizes where another algorithm is faster, "
                    "or raise the limit")


# -- (f) a whole number is recorded as one; a float given in code is refused (h741) --------


@pytest.mark.parametrize("n", [np.int64(4), np.uint8(4), "4.0"])
def test_a_whole_number_parameter_is_recorded_as_the_whole_number(n):
    g = netmodel.build_fabric("ring", {"n": n})
    assert g.graph["spec"] == "ring:n=4" and g.graph["args"] == {"n": 4}
    assert type(g.graph["args"]["n"]) is int


@pytest.mark.parametrize("n", [4.0, np.float64(4), np.float32(4)])
def test_a_whole_float_count_given_in_code_is_refused(n):
    with pytest.raises(UserError, match=r"^ring: n must be a whole number \(an int\), got 4\.0$"):
        netmodel.build_fabric("ring", {"n": n})
    with pytest.raises(UserError, match=r"^superpod: sus must be a whole number \(an int\), "
                                        r"got 2\.0$"):
        netmodel.build_fabric("superpod", {"sus": n / 2})


# -- (g) a storage bandwidth without storage loading: the parameter named -------------------


def test_storage_bandwidth_without_storage_names_the_parameter():
    from netmodel.study.reliability_catalog import catalog
    from tests.netmodel.cli_helpers import one_line_error, run_cli

    with pytest.raises(UserError, match=r"^host_storage_bandwidth applies only with load_from "
                                        r"'storage', not 'fabric' \(spares load from a peer "
                                        r"over the fabric\)$"):
        catalog().with_(host_storage_bandwidth=2e9)
    assert catalog().with_(load_from="storage",
                           host_storage_bandwidth=2e9).host_storage_bandwidth == 2e9
    line = one_line_error(run_cli(["blast-radius", "--scenario", "lite-flat", "--model",
                                   "Llama-3-8B", "--max-batch", "8", "--load-bandwidth",
                                   "1GB/s"]))
    assert line == ("error: --load-bandwidth applies only with --load-from 'storage', not "
                    "'fabric' (spares load from a peer over the fabric)")
