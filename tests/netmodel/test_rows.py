"""Study rows (netmodel.study.rows): to_dict gives what dataclasses.asdict gives."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np

from netmodel.study.rows import _plain


@dataclass(frozen=True)
class _Inner:
    x: float
    tags: tuple


def _asdict_columns(row) -> dict:
    d = asdict(row)
    return {c: d[c] for c in row.columns()}


def test_row_to_dict_equals_asdict_with_nested_groups():
    from netmodel.study.compare import run_compare

    res = run_compare(["Llama-3-70B"], ["h100-dgx", "lite-flat"], ["decode"])
    rows = list(res.rows)
    assert rows
    for row in rows:
        got, want = row.to_dict(), _asdict_columns(row)
        assert repr(got) == repr(want)  # same keys, order, values and types
    # nested dicts in a group are copies, not the row's own objects
    row = rows[0]
    name = next(iter(row.group_fields("cost")))
    nested = {"a": [1.0, {"b": (2, "c")}], "n": None}
    row2 = replace(row, **{name: nested})
    d = row2.to_dict()
    assert d[name] == nested and d[name] is not nested and d[name]["a"] is not nested["a"]
    assert repr(d) == repr(_asdict_columns(row2))


def test_plain_matches_asdict_on_containers_dataclasses_and_numpy():
    for v in (1.5, 3, "s", None, True, [1, (2, 3)], {"k": {"j": [4.0]}}, _Inner(1.0, (1, 2)),
              np.float64(2.5), np.arange(3)):
        @dataclass
        class Box:
            v: object

        want = asdict(Box(v))["v"]
        got = _plain(v)
        assert repr(got) == repr(want)
        assert type(got) is type(want)
