"""``netmodel collective --plot``'s title: a fabric's long spec is broken after its commas,
never inside a name (textwrap cut ``nic_bandwidth`` into ``n`` / ``ic_bandwidth``)."""

import string

from hypothesis import given
from hypothesis import strategies as st

from netmodel.collectives.plot import title_lines

H100_DGX = ("4 x 8 H100-SXM (rail-optimized) [rail-optimized:scaleup_bandwidth=450GB/s,"
            "nic_bandwidth=50GB/s,nvlinks=18,in_network_reduction=true]")


def test_h100_dgx_title_breaks_after_a_comma():
    # the figure's width: 75 characters for one panel (plot_busbw)
    assert title_lines(H100_DGX, 75) == [
        "4 x 8 H100-SXM (rail-optimized) [rail-optimized:scaleup_bandwidth=450GB/s,",
        "nic_bandwidth=50GB/s,nvlinks=18,in_network_reduction=true]"]


def test_a_piece_without_a_comma_is_kept_whole():
    assert title_lines("a " + "x" * 50, 20) == ["a", "x" * 50]
    assert title_lines("", 20) == []


_piece = st.text(string.ascii_letters + string.digits + "=._:[]", min_size=1, max_size=30)
_word = st.lists(_piece, min_size=1, max_size=6).map(",".join)


@given(st.lists(_word, min_size=1, max_size=8), st.integers(10, 90))
def test_lines_give_the_title_back_and_fit(words, width):
    title = " ".join(words)
    lines = title_lines(title, width)
    # every line fits, or is one piece that has no comma to break at
    for line in lines:
        assert len(line) <= width or (" " not in line and "," not in line.rstrip(","))
    # joined again: the generated titles hold no ', ', so a ', ' is a break after a comma
    assert " ".join(lines).replace(", ", ",") == title
