"""A spec string's boolean parameter is read from yes/no, on/off and 1/0 as well as
true/false; its refusal lists those words, from the table the parser reads."""
import pytest

from compute.errors import UserError
from tests.netmodel.cli_helpers import one_line_error, run_cli
from topologies.registry import SPEC_BOOLEANS, build


@pytest.mark.parametrize("word", sorted(SPEC_BOOLEANS))
def test_every_listed_word_is_read(word):
    for spelled in (word, word.upper()):
        graph = build(f"fat-tree:k=4,in_network_reduction={spelled}")
        assert graph.graph["args"].get("in_network_reduction", False) is SPEC_BOOLEANS[word]


def test_the_refusal_lists_every_accepted_word():
    # was: "fat-tree: in_network_reduction must be true or false, got 'maybe'", while
    # 'yes', 'on' and '1' were read
    want = ("fat-tree: in_network_reduction must be true/yes/on/1 or false/no/off/0, "
            "got 'maybe'")
    with pytest.raises(UserError) as e:
        build("fat-tree:k=4,in_network_reduction=maybe")
    assert str(e.value) == want
    for word in SPEC_BOOLEANS:
        assert word in str(e.value)
    one_line_error(run_cli(["topology", "show", "fat-tree:k=4,in_network_reduction=maybe"]),
                   want)
