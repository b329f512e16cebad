"""A sweep's note on a flat curve whose cost moves says which way the cost moves.

An architect's leaf-spine of half-H100s swept over ``fabric.oversubscription = 1, 2, 4``
(TP 4 inside a leaf, so tokens/s/SM flat) printed "USD per million tokens moves: 0.112 to
0.163": the least and the most, which reads as a cost rising with oversubscription, where
fewer uplinks and spines made it fall (0.163 at 1, 0.123 at 2, 0.112 at 4). The note now
gives the cost at the first and the last swept value, in the swept order, and names them.
"""

from dataclasses import replace

from netmodel.study.sweep_result import _example


def _flat(costs, xs=(1.0, 2.0, 3.0)):
    r = _example([("a", [5.0] * len(xs))], xs=xs)
    rows = tuple(replace(row, usd_per_mtoken=c) for row, c in zip(r.rows, costs, strict=True))
    return replace(r, rows=rows)


def _note(r):
    (line,) = [ln for ln in r.table().splitlines() if ln.startswith("note:")]
    return line


def test_a_falling_cost_is_written_falling():
    line = _note(_flat([0.163, 0.123, 0.112]))
    assert "USD per million tokens moves: 0.163 to 0.112 from " \
           "adjust.latency_scale = 1 to 3" in line
    assert "0.112 to 0.163" not in line


def test_a_rising_cost_is_written_rising():
    line = _note(_flat([0.1, 0.2, 0.3]))
    assert "USD per million tokens moves: 0.100 to 0.300 from adjust.latency_scale = 1 to 3" \
        in line


def test_a_cost_not_monotone_gives_its_range_too():
    # the ends alone (0.200 to 0.200) would hide the 0.100 between them
    line = _note(_flat([0.2, 0.1, 0.2]))
    assert "moves: 0.200 to 0.200 from adjust.latency_scale = 1 to 3" in line
    assert "0.100 to 0.200 between" in line


def test_the_json_keeps_the_range():
    import json

    (u,) = json.loads(_flat([0.163, 0.123, 0.112]).to_json())["unchanged"]
    assert u["usd_per_mtoken"] == [0.112, 0.163]
