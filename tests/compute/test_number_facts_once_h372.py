"""Facts of the number grammar said once: units' decimal reader is built from
NUMBER_PATTERN, the printing rungs take their factors from the parsers' unit tables, and the
optical media are one tuple in topologies (the network bill imports it)."""

import ast
import inspect
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compute.quantities as quantities
import compute.units as units
from compute.validate import NUMBER_PATTERN


def test_the_decimal_reader_is_the_number_grammar():
    assert NUMBER_PATTERN in quantities._DECIMAL.pattern


def test_the_rungs_name_no_factor_of_their_own():
    tree = ast.parse(inspect.getsource(units))
    rungs = [node for node in tree.body if isinstance(node, ast.Assign)
             and any(isinstance(t, ast.Name) and t.id.endswith("_RUNGS") for t in node.targets)]
    assert len(rungs) == 3
    for node in rungs:
        numbers = [c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant)
                   and isinstance(c.value, int | float)]
        assert numbers == [], (node.targets[0].id, numbers)


@pytest.mark.parametrize("rungs, table", [(units.RATE_RUNGS, units._BANDWIDTH_UNITS),
                                          (units._BYTE_RUNGS, units._BYTE_UNITS),
                                          (units._TIME_RUNGS, units._TIME_UNITS)])
def test_each_rung_is_a_unit_the_parser_reads(rungs, table):
    scales = [scale for _, scale in rungs]
    assert scales == sorted(scales, reverse=True)
    for unit, scale in rungs:
        assert table[unit] == scale


def test_the_optical_media_are_said_once():
    from netmodel.study import network_bill
    from topologies import inventory

    assert network_bill.OPTICAL_MEDIA is inventory.OPTICAL_MEDIA
    assert '"pluggable-optics", "fibre"' not in inspect.getsource(network_bill)


@settings(max_examples=300, deadline=None)
@given(sign=st.sampled_from(["", "+", "-"]), whole=st.text("0123456789", max_size=5),
       frac=st.one_of(st.none(), st.text("0123456789", max_size=4)),
       exp=st.one_of(st.none(), st.integers(-30, 30)),
       factor=st.sampled_from([1e-9, 1e-3, 2.0**30, 1e15, 1 / 8]))
def test_scaled_is_the_exact_product_rounded_once(sign, whole, frac, exp, factor):
    text = sign + whole + ("" if frac is None else "." + frac) + \
        ("" if exp is None else f"e{exp}")
    if not (whole or frac):
        return
    exact = Fraction(text.replace("+", "", 1) if text.startswith("+") else text) * \
        Fraction(repr(factor))
    assert units.scaled(text, factor) == float(exact)
