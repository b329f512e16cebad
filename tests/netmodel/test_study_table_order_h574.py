"""``study lite-gpu``'s console tables come in summary.md's order: 1 the GPUs alone, 2 the
fabrics, 2b the paper's assumption, 2c the crossovers, 3 the sweep. The crossovers were
printed before the paper's assumption, so the console and the summary read the two parts
in opposite orders."""

from __future__ import annotations

from netmodel.study.lite_gpu import FullStudy


class _Part:
    def __init__(self, name: str) -> None:
        self.name = name

    def table(self) -> str:
        return f"<{self.name}>"


def test_console_tables_follow_the_summary_sections():
    study = FullStudy(_Part("1"), fabric=_Part("2"), paper=_Part("2b"),
                      crossovers=_Part("2c"), sweep=_Part("3"))
    text = study.table()
    at = [text.index(f"<{n}>") for n in ("1", "2", "2b", "2c", "3")]
    assert at == sorted(at), text
    assert text.index("fabric comparison under the paper's assumption") \
        < text.index("co-design crossovers") < text.index("per-hop latency sweep")


def test_a_skipped_part_leaves_no_title():
    text = FullStudy(_Part("1"), fabric=_Part("2"), crossovers=_Part("2c")).table()
    assert "paper's assumption" not in text and "per-hop latency sweep" not in text
    assert text.index("<2>") < text.index("co-design crossovers") < text.index("<2c>")
