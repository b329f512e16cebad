"""Hostile die tables in GPU files (round 5): every refusal one line naming the file, the
GPU and the value, exit-free at this level (the CLI tests are tests/netmodel/
test_hostile_round5.py)."""
import pytest

from compute.errors import UserError
from compute.hardware import load_gpu_file
from compute.power import gpu_at_clock
from compute.yield_model import gpu_dies, package_cost

# An A100-shaped GPU (108 of 128 SMs on one N7 die); each test names its own copy, since the
# die tables read are kept by GPU name.
HEAD = """[gpu."{name}"]
sms = 108
bf16_dense_TFLOPs = 312
hbm_capacity_GB = 85.9
hbm_bandwidth_TBps = 2.039
scaleup_GBps_per_direction = 300
scaleout_Gbps = 200
tdp_W = 400
max_instance = 8
source = "test"
"""
ROWS = {"area": ("826", "mm^2"), "dies": ("1", "1"), "sms_physical": ("128", "1"),
        "sms_enabled": ("108", "1"), "process": ('"N7"', "name"), "hbm_sites": ("6", "1"),
        "packaging": ('"CoWoS-S"', "name")}


def gpu_file(tmp_path, name, **override):
    text = HEAD.format(name=name) + f'\n[gpu."{name}".die]\n'
    for key, (value, unit) in {**ROWS, **override}.items():
        text += (f'{key} = {{value = {value}, unit = "{unit}", source = "s", ref = "", '
                 f'confidence = "assumption"}}\n')
    path = tmp_path / "g.toml"
    path.write_text(text)
    return path


def one_line(exc) -> str:
    text = str(exc.value)
    assert "\n" not in text
    return text


@pytest.mark.parametrize("name", ["H100-SXM@x", "Lite@0.5x", "Mine@2"])
def test_gpu_name_with_clock_mark_is_refused(tmp_path, name):
    # 'NAME@R' is NAME at another clock: a file GPU 'H100-SXM@x' with 108 SMs and an
    # A100 die table was priced as the H100's reference die (132 of 144 SMs; its own table
    # ignored), 'Lite@0.5x' as a slice of the H100, and --clock refused it as 'already
    # at another clock'
    with pytest.raises(UserError) as e:
        load_gpu_file(gpu_file(tmp_path, name))
    assert f"GPU name {name!r} must not contain '@'" in one_line(e)
    assert str(tmp_path / "g.toml") in one_line(e)


def test_gpu_at_clock_keeps_its_file_die(tmp_path):
    spec = load_gpu_file(gpu_file(tmp_path, "R5-clocked"))["R5-clocked"]
    slow = gpu_at_clock(spec, 0.5)
    assert slow.name == "R5-clocked@0.5x"
    d = gpu_dies(slow)
    assert (round(d.area * 1e6), d.sms_physical, d.sms_enabled) == (826, 128, 108)


@pytest.mark.parametrize("area, needle", [
    ("80000", "die area 80000 mm^2 is larger than the usable wafer"),
    ("1e30", "die area 1e+30 mm^2 is larger than the usable wafer"),
    ("70000", "die area 70000 mm^2: not one whole die fits on the wafer"),
])
def test_die_larger_than_the_wafer_names_the_file(tmp_path, area, needle):
    # a 300 mm wafer's disc is pi x 150^2 = 70,686 mm^2: 80,000 is over it, and at 70,000
    # the edge loss pi d / sqrt(2 A) = 1.78 exceeds pi d^2 / 4A = 1.01: no whole die. The
    # message named neither the file nor the GPU
    name = f"R5-area-{area}"
    spec = load_gpu_file(gpu_file(tmp_path, name, area=(area, "mm^2")))[name]
    with pytest.raises(UserError) as e:
        package_cost(spec)
    text = one_line(e)
    assert needle in text
    assert text.startswith(f"{tmp_path / 'g.toml'}: GPU {name!r} die: ")


def test_die_fits_a_larger_wafer_when_asked(tmp_path):
    # the same 80,000 mm^2 die on a 1 m wafer is priced (pi 1000^2 / 4 / 80,000 = 9.82 less
    # the edge's pi 1000 / 400 = 7.85: one whole die): the check is that of the wafer asked for
    spec = load_gpu_file(gpu_file(tmp_path, "R5-big", area=("80000", "mm^2")))["R5-big"]
    assert package_cost(spec, wafer_diameter=1.0).die.dies_per_wafer == 1


@pytest.mark.parametrize("key, value", [
    ("packaging", '""'), ("packaging", '"a\\nb"'), ("packaging", '"' + "x" * 300 + '"'),
    ("packaging", '" CoWoS-S"'), ("process", '"N7\\t"'),
])
def test_die_names_are_names(tmp_path, key, value):
    # packaging '' (or a 5,000-character one) was taken and printed into cost --json;
    # refused where the file is read (compute.dies, from compute.hardware)
    name = f"R5-name-{key}-{len(value)}"
    with pytest.raises(UserError) as e:
        load_gpu_file(gpu_file(tmp_path, name, **{key: (value, "name")}))
    assert f"{key} name" in one_line(e) and "must be non-empty text" in one_line(e)
