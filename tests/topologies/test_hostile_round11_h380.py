"""Hostile input, round 11 (h380): the numbers of a fabric file (JSON, GraphML) read by the
one number grammar (:mod:`compute.validate`)."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from topologies import build
from topologies.io import read_graph, write_graph

# a latency may be 0: its range, VALUE_RANGES's (said before as 'write 0 for zero')
BELOW = ("below the smallest number netmodel reads (2.225e-308); latency must be a number "
         "from 0 to 10,000,000 s")


@pytest.mark.parametrize("suffix", [".graphml", ".json"])
@pytest.mark.parametrize("number", ["1e-400", "1e-310"])
def test_a_latency_below_the_smallest_is_refused(tmp_path, suffix, number):
    """Before: a link latency written 1e-400 was read as 0 s (1e-310 as a subnormal), exit 0."""
    path = tmp_path / f"ring{suffix}"
    write_graph(build("ring:n=4"), path)
    assert "1e-08" in path.read_text()
    path.write_text(path.read_text().replace("1e-08", number))
    with pytest.raises(UserError) as err:
        read_graph(path)
    line = path.read_text().split(number)[0].count("\n") + 1   # named since h502
    said = (f'holds the number {number} at line {line} ("edges" > "latency"), {BELOW}'
            if suffix == ".json" else
            f": key 'latency' holds the number {number}, {BELOW}")   # as a float past range
    assert str(err.value) == (f"{path}{' ' if suffix == '.json' else ''}{said}"), str(err.value)


@pytest.mark.parametrize("suffix", [".graphml", ".json"])
def test_a_latency_of_zero_spelt_is_read(tmp_path, suffix):
    path = tmp_path / f"ring{suffix}"
    write_graph(build("ring:n=4"), path)
    path.write_text(path.read_text().replace("1e-08", "0e-400"))
    assert {d["latency"] for *_, d in read_graph(path).edges(data=True)} == {0.0}


# GraphML's typed values (attr.type long/int/double/float) were read by Python's int() and
# float(), networkx's way: '1_8' links read as 18 and '225_000_000_000.0' B/s as 2.25e11
# (exit 0), where every number typed elsewhere is refused with '_' (number_text); a value
# no number said Python's "ValueError: could not convert string to float: '0x10'". Now they
# are read by the one grammar (compute.validate.read_number).

RULE = ("(a number is ASCII digits 0-9 with an optional sign, fraction and exponent (16, +16, "
        "-0.5, .5, 1e3), no '_' and no spaces inside)")


def _ring_graphml(tmp_path, old, new):
    path = tmp_path / "ring.graphml"
    write_graph(build("ring:n=4"), path)
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    return path


@pytest.mark.parametrize("old, new, said", [
    (">18<", ">1_8<", ": a value of key 'lanes' '1_8' groups its digits with '_'; write 18, not "
                      f"1_8 {RULE}"),
    (">225000000000.0<", ">225_000_000_000.0<",
     ": a value of key 'bandwidth' '225_000_000_000.0' groups its digits with '_'; write "
     f"225000000000.0, not 225_000_000_000.0 {RULE}"),
    (">1e-08<", ">0x10<", " is not a readable graphml fabric: a value of key 'latency' "
                          f"(attr.type 'double') is '0x10', not a number {RULE}"),
    (">18<", ">1.5<", " is not a readable graphml fabric: a value of key 'lanes' (attr.type "
                      f"'long') is '1.5', not a whole number {RULE}"),
])
def test_graphml_numbers_follow_the_one_grammar(tmp_path, old, new, said):
    path = _ring_graphml(tmp_path, old, new)
    with pytest.raises(UserError) as err:
        read_graph(path)
    assert str(err.value) == f"{path}{said}"


@pytest.mark.parametrize("old, new, key, value", [
    (">18<", "> 18 <", "lanes", 18), (">18<", ">+18<", "lanes", 18),
    (">18<", ">1.8e1<", "lanes", 18),   # a whole number written so, as on the command line
    (">1e-08<", ">.1e-7<", "latency", 1e-08), (">225000000000.0<", ">2.25E11<", "bandwidth",
                                                 2.25e11)])
def test_graphml_numbers_of_the_grammar_are_read(tmp_path, old, new, key, value):
    g = read_graph(_ring_graphml(tmp_path, old, new))
    assert g.edges["gpu0", "gpu3"][key] == value
    assert type(g.edges["gpu0", "gpu3"][key]) is type(value)
