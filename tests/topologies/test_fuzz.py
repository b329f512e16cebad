"""Fuzz tests: every fabric reader and the structured build answer random documents and
values with success or a one-line UserError, never another exception (random nesting,
random types, random magnitudes). Kept small: the whole file runs in a few seconds."""

from __future__ import annotations

import json
import os
import random
import re
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compute.errors import UserError
from topologies import build, builders, write_graph
from topologies.io import read_graph

FOLDER = tempfile.mkdtemp(prefix="netmodel-fuzz-")
SETTINGS = settings(max_examples=120, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

MAGNITUDES = st.sampled_from([0, -1, 1, 2**31, 2**63, 10**300, -(10**4000), 10**4000])
SCALARS = (st.none() | st.booleans() | st.integers(-10, 10) | MAGNITUDES
           | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=8)
           | st.sampled_from(["gpu", "switch", "ocs", "H100-SXM", "copper", "gpu0", "nvs0"]))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=12)


def _answer(read):
    """Call ``read``: a result, or a one-line UserError; anything else fails the test."""
    try:
        return read()
    except UserError as exc:
        assert "\n" not in str(exc) and str(exc), str(exc)
        return None


def _valid_json() -> dict:
    path = os.path.join(FOLDER, "valid.json")
    write_graph(build("single-switch:n=2"), path)
    with open(path) as fh:
        return json.load(fh)


BASE_JSON = _valid_json()


def _paths(doc, prefix=()):
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, (*prefix, i))


ALL_PATHS = list(_paths(BASE_JSON))


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(ALL_PATHS), VALUES), max_size=3),
       st.sampled_from([0, 0, 0, 0, 0, 1, 31, 32, 60]), st.booleans())
def test_fuzzed_json_fabric_is_read_or_refused_in_one_line(edits, wrap, drop):
    doc = json.loads(json.dumps(BASE_JSON))
    for path, value in edits:
        if not path:
            doc = value
            continue
        target = doc
        try:
            for k in path[:-1]:
                target = target[k]
            if drop and isinstance(target, dict):
                target.pop(path[-1], None)
            else:
                target[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue  # an earlier edit changed the shape
    text = "[" * wrap + json.dumps(doc) + "]" * wrap
    file = os.path.join(FOLDER, "fuzz.json")
    with open(file, "w") as fh:
        fh.write(text)
    _answer(lambda: read_graph(file))


def _valid_graphml() -> str:
    path = os.path.join(FOLDER, "valid.graphml")
    write_graph(build("single-switch:n=2"), path)
    with open(path) as fh:
        return fh.read()


BASE_GRAPHML = _valid_graphml()
DATA = list(re.finditer(r"(<data key=\"[^\"]+\">)([^<]*)(</data>)", BASE_GRAPHML))
TYPES = ["int", "long", "float", "double", "boolean", "string", "bogus", ""]
TEXTS = (st.text(max_size=10) | st.sampled_from(["nan", "inf", "-1", "true", "1e400", "0",
                                                 "9" * 5000, "[[[]]]", "{}", "gpu"])
         | st.integers().map(str))


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, len(DATA) - 1), TEXTS), max_size=4),
       st.lists(st.sampled_from(TYPES), max_size=3), st.sampled_from([0, 0, 0, 0, 1, 28, 60]),
       st.sampled_from(["undirected", "directed", ""]), st.integers(0, 2**32))
def test_fuzzed_graphml_fabric_is_read_or_refused_in_one_line(edits, types, nest, default,
                                                              seed):
    text = BASE_GRAPHML
    for i, value in sorted(edits, key=lambda e: -DATA[e[0]].start()):
        m = DATA[i]
        escaped = value.replace("&", "&amp;").replace("<", "&lt;")
        text = text[:m.start(2)] + escaped + text[m.end(2):]
    rng = random.Random(seed)
    for t in types:
        spots = [m.start(1) for m in re.finditer(r'attr.type="([^"]*)"', text)]
        if spots:
            at = rng.choice(spots)
            end = text.index('"', at)
            text = text[:at] + t + text[end:]
    text = text.replace('edgedefault="undirected"', f'edgedefault="{default}"')
    if nest:
        at = text.index("<graph ")
        text = text[:at] + "<x>" * nest + "</x>" * nest + text[at:]
    if seed % 7 == 0:  # raw damage: a random slice removed
        a = rng.randrange(len(text))
        text = text[:a] + text[a + rng.randrange(1, 40):]
    file = os.path.join(FOLDER, "fuzz.graphml")
    with open(file, "w") as fh:
        fh.write(text)
    _answer(lambda: read_graph(file))


NAMES = [b.name for b in builders()]
PARAMS = {b.name: [p.name for p in b.params] for b in builders()}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(NAMES), st.data())
def test_fuzzed_builder_parameters_build_or_are_refused(name, data):
    keys = data.draw(st.lists(st.sampled_from(PARAMS[name] + ["bogus"]), max_size=3,
                              unique=True))
    params = {k: data.draw(SCALARS | st.integers(0, 40) | st.lists(st.integers(0, 9),
                                                                   max_size=3)) for k in keys}
    os.environ["NETMODEL_MAX_FABRIC_NODES"] = "3000"
    os.environ["NETMODEL_MAX_FABRIC_EDGES"] = "6000"
    try:
        graph = _answer(lambda: build(name, params))
    finally:
        del os.environ["NETMODEL_MAX_FABRIC_NODES"], os.environ["NETMODEL_MAX_FABRIC_EDGES"]
    if graph is not None:
        assert graph.graph["builder"] == name
        json.dumps(graph.graph["args"])


@pytest.fixture(autouse=True, scope="module")
def _clean():
    yield
    for f in os.listdir(FOLDER):
        os.unlink(os.path.join(FOLDER, f))
    os.rmdir(FOLDER)
