"""A measurements CSV whose shape is wrong says what is allowed (scripts/hostile_round18.py).

Before: 'column(s) latency_s given twice' (no fix said) and 'row 6 has more cells than the
header has columns' (no count, no cause: an unquoted comma, as in a note). Now each says
what to do, the long row with its count."""

from __future__ import annotations

import pytest

from compute.errors import UserError
from compute.measurements import read_measurements

HEAD = "model,gpu,tp,batch,phase,prompt,context,latency_s,note"
ROW = "Llama-2-70B,H100-SXM,8,1,prefill,2048,,0.1368,"


@pytest.mark.parametrize("text, said", [
    (HEAD.replace(",note", ",tp") + "\n" + ROW[:-1] + ",8\n",
     "m.csv: column(s) tp given twice; give each column once"),
    (HEAD + "\n" + ROW + "\n" + ROW + "vLLM, 8 GPUs\n",
     'm.csv: row 3 has more cells than the header has columns (10, not 9); quote a cell '
     'that holds a comma ("a,b")'),
    (HEAD + "\n" + ROW + ",x,y\n",
     'm.csv: row 2 has more cells than the header has columns (11, not 9); quote a cell '
     'that holds a comma ("a,b")'),
])
def test_the_refusal_says_the_fix(tmp_path, text, said):
    path = tmp_path / "m.csv"
    path.write_text(text)
    with pytest.raises(UserError) as err:
        read_measurements(path)
    assert str(err.value) == f"{tmp_path}/{said}"


def test_the_comma_quoted_is_read(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text(HEAD + "\n" + ROW + '"vLLM, 8 GPUs"\n')
    (m,) = read_measurements(path)
    assert m.latency_s == 0.1368 and m.tp == 8 and m.prompt == 2048
