"""Pure helpers behind the widgets: the search syntax, formatting, labels (no app needed)."""

from __future__ import annotations

import pytest

from keepui.tui.screens.compare import comparison_text
from keepui.tui.screens.diff import diff_title, tags_summary
from keepui.tui.screens.forms import join_tags, split_tags
from keepui.tui.widgets.detail_pane import query_terms, score_line
from keepui.tui.widgets.format import age, first_line, num, size, tag_pairs
from keepui.tui.widgets.hit_row import hit_cells, row_layout, title_cells
from keepui.tui.widgets.result_tabs import tab_label
from keepui.tui.widgets.search_bar import format_search, parse_search
from keepui_engine import FindQuery, Hit, UsageError, compare_results
from keepui_engine.core.types import VersionDiff
from keepui_engine.ops.diff import diff_lines


def test_parse_search_filters_and_words() -> None:
    q = parse_search(
        'since:P7D which database tag:topic=db tag:"title=two words" mode:bm25 n:5 min:0.3'
        " until:2026-12-01 fusion:rrf rerank:mix dedup:off"
    )
    assert q == FindQuery(
        "which database",
        ["topic=db", "title=two words"],
        5,
        "P7D",
        "2026-12-01",
        "bm25",
        0.3,
        "rrf",
        False,
        "mix",
    )


def test_parse_search_defaults_and_unknown_keys_stay_words() -> None:
    q = parse_search("http://example.org notes", mode="dense", limit=7)
    assert q == FindQuery("http://example.org notes", [], 7, mode="dense")
    assert parse_search("x mode:hybrid", mode="dense").mode == "hybrid"


@pytest.mark.parametrize("text", ["tag:a=b", "n:0 word", "n:x word", "min:high w", "dedup:maybe w"])
def test_parse_search_errors(text: str) -> None:
    with pytest.raises(UsageError):
        parse_search(text)


def test_an_unknown_filter_key_names_the_known_ones_and_quotes_escape_it() -> None:
    with pytest.raises(UsageError) as err:
        parse_search("auth tags:a=b")
    assert "tags:" in err.value.message and "tag:k=v, since:" in err.value.message
    assert '"tags:a=b"' in err.value.message  # the way to search for the words
    assert parse_search('auth "TODO:fix"').query == 'auth "TODO:fix"'
    assert parse_search("see https://example.org/x").query == "see https://example.org/x"


def test_format_search_round_trips() -> None:
    q = FindQuery("a b", ["k=v", "t=two words"], 10, "P1D", None, "dense", 0.5, "rrf", True, "mix")
    assert parse_search(format_search(q)) == q
    assert format_search(FindQuery("plain", limit=20)) == "plain"


def test_formatting_helpers() -> None:
    assert first_line("\n\n  first  \nsecond") == "first"
    assert first_line("x" * 100, 10) == "x" * 9 + "…"
    assert num(None) == "–" and num(0.12345) == "0.123" and num(2, 2) == "2.00"
    assert tag_pairs({"b": ["2", "3"], "a": "1", "_source": "x"}) == ["a=1", "b=2", "b=3"]
    assert size(999) == "999" and size(12_400) == "12.4k" and size(3_100_000) == "3.1M"
    assert age("2026-11-04T11:59:30Z") == "30s" and age("2026-11-02T09:00:00Z") == "2d"
    assert age("not a time") == "?"


def test_hit_row_and_score_line() -> None:
    hit = Hit(
        "doc", 1, 0.5, 0.61, 0.9, "Summary line\nmore", {"topic": "x"}, "2026-11-01T00:00:00Z",
        "2026-11-03T12:00:00Z", "doc@V{1}",
        {"dense": 0.61, "dense_rank": 1, "bm25": 2.5, "bm25_rank": 3, "fused": 0.55, "decay": 0.9},
        ["dup"],
    )  # fmt: skip
    layout = row_layout(100)
    [title] = title_cells([hit], layout.title_width)
    cells = [c.plain for c in hit_cells(2, hit, layout, title)]
    assert cells == ["2", "Summary line more  doc@V{1} +1", "0.500", "0.610", "2.50", "0.90",
                     "1d"]  # fmt: skip
    assert title.spans and title.spans[-1].style == "dim"  # the id is dimmed after the title
    assert score_line(hit) == (
        "score 0.500 = fused 0.550 (dense 0.610 #1 · bm25 2.50 #3) × decay 0.90"
    )
    assert query_terms("the Danube, a river!") == ["danube", "river", "the"]


def test_labels_and_reports() -> None:
    assert tab_label(FindQuery("short"), 3) == "3 short"
    assert tab_label(FindQuery("a much longer query text"), 1) == "1 a much longer que…"
    assert tab_label(FindQuery("auth", mode="bm25"), 2) == "2 auth · bm25"
    q = FindQuery("auth", ["topic=sec"], since="P7D", mode="dense")
    assert tab_label(q, 4, "baseline") == "4 baseline · dense · topic=sec · sin…"
    assert tab_label(FindQuery("x", min_score=0.3, dedup=False), 5) == "5 x · min 0.3 · no dedup"
    assert split_tags('a=1 "b=two words"') == ["a=1", "b=two words"]
    assert join_tags(["a=1", "b=two words"]) == "a=1 'b=two words'"
    text = comparison_text("tab 1", "tab 2", compare_results(["a", "b"], ["b", "c"]))
    assert "entered (1)\n  + c" in text and "left (1)\n  - a" in text and "↑ b  #2 → #1" in text
    diff = VersionDiff(
        "d", 1, 1, "2026-11-01T09:00:00Z", 2, 0, "2026-11-02T09:00:00Z",
        diff_lines(["x"], ["y"]), diff_lines(["k=a"], ["k=b", "n=1"]), 0, 0, 1,
    )  # fmt: skip
    assert diff_title(diff) == "d   v1 2026-11-01 09:00  →  v2 2026-11-02 09:00   +0 −0 ~1"
    assert tags_summary(diff) == "tags: −k=a +k=b +n=1"
