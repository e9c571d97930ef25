"""Context injection: budgets, sentence cuts and rank order (unit and property tests)."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keepui_engine import FindQuery, Workbench
from keepui_engine.core.errors import UsageError
from keepui_engine.core.types import FindResult, Hit
from keepui_engine.search.context import (
    HEADER,
    ContextResult,
    build,
    count_tokens,
    fit,
    marker,
    sentence_ends,
)


def hit(doc: str, score: float, matched: str | None = None) -> Hit:
    return Hit(doc, 0, score, score, 1.0, "", {}, "", "", matched or doc)


def found(*hits: Hit) -> FindResult:
    return FindResult("q", list(hits), 10)


def test_sentence_ends_skip_abbreviations_and_take_blank_lines() -> None:
    text = "We met Dr. Smith, e.g. on Monday. Then we left!\n\nNew para without end"
    ends = [text[:e] for e in sentence_ends(text)]
    assert ends == [
        "We met Dr. Smith, e.g. on Monday.",
        "We met Dr. Smith, e.g. on Monday. Then we left!",
        text,
    ]


def test_fit_takes_whole_sentences_only() -> None:
    text = "One two three. Four five six seven. Eight."
    assert fit(text, "a", 100) == (text, 8 + 2, False)
    assert fit(text, "a", 9) == ("One two three. Four five six seven.", 9, True)
    assert fit(text, "a", 8) == ("One two three.", 5, True)
    assert fit(text, "a", 2 + 3) == ("One two three.", 5, True)
    assert fit(text, "a", 4) is None  # not even the first sentence and its marker


def test_build_fills_in_rank_order_and_stops_at_the_first_that_cannot_fit() -> None:
    texts = {
        "a": "Alpha is first. Alpha again here.",
        "b": "Beta has a very long single sentence that will not fit at all anywhere",
        "c": "Gamma.",
    }
    result = build(
        found(hit("a", 0.9), hit("b", 0.8), hit("c", 0.7), hit("d", 0.05)),
        lambda h: texts.get(h.id, "Delta."),
        max_tokens=12,
    )
    assert [p.id for p in result.passages] == ["a"]
    assert result.dropped == 2 and result.below_min_score == 1
    assert result.text == f"{texts['a']}\n{marker('a')}"
    assert result.tokens == count_tokens(result.text) == 8 <= result.budget
    assert any("did not fit" in n for n in result.notes)


def test_the_marker_names_the_matched_part_or_version() -> None:
    result = build(found(hit("doc", 0.5, "doc@P{2}")), lambda h: "Part two text.")
    assert result.text.endswith("[Source: doc@P{2}]")
    assert result.passages[0].matched == "doc@P{2}"


def test_header_counts_and_appears_only_with_passages() -> None:
    result = build(found(hit("a", 0.9)), lambda h: "Short.", header=True)
    assert result.text.startswith(HEADER) and result.tokens == count_tokens(result.text)
    empty = build(found(hit("a", 0.9)), lambda h: "Short.", header=True, max_tokens=5)
    assert (empty.text, empty.tokens, empty.passages) == ("", 0, [])


def test_round_trip_through_dicts() -> None:
    result = build(found(hit("a", 0.9)), lambda h: "Short text.")
    again = ContextResult.from_dict(result.to_dict())
    assert again == result


words = st.text(alphabet=string.ascii_letters, min_size=1, max_size=8)
sentence = st.builds(
    lambda ws, end: " ".join(ws) + end,
    st.lists(words, min_size=1, max_size=12),
    st.sampled_from([".", "!", "?", "", "…"]),
)
passage = st.builds(
    lambda ss, sep: sep.join(ss),
    st.lists(sentence, min_size=1, max_size=8),
    st.sampled_from([" ", "\n", "\n\n", "  "]),
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(passage, min_size=0, max_size=8),
    st.integers(min_value=1, max_value=200),
    st.booleans(),
)
def test_context_is_never_over_budget_and_never_cuts_inside_a_sentence(
    texts: list[str], budget: int, header: bool
) -> None:
    hits = [hit(f"d{i}", 1.0 - i / 100) for i in range(len(texts))]
    by_id = {h.id: t for h, t in zip(hits, texts, strict=True)}
    result = build(found(*hits), lambda h: by_id[h.id], max_tokens=budget, header=header)
    assert result.tokens == count_tokens(result.text) <= budget
    assert (
        sum(p.tokens for p in result.passages)
        + (count_tokens(HEADER) if header and result.passages else 0)
        == result.tokens
    )
    # rank order, a prefix of the hits
    assert [p.id for p in result.passages] == [h.id for h in hits[: len(result.passages)]]
    for p in result.passages:
        original = by_id[p.id]
        if p.truncated:
            cut = len(p.text)
            assert original.startswith(p.text)
            assert cut in sentence_ends(original) or original[:cut].strip() == p.text
            assert any(original[:end].strip() == p.text for end in sentence_ends(original))
        else:
            assert p.text == original.strip()
    assert result.dropped == len(hits) - len(result.passages)


def test_a_nan_min_score_is_a_usage_error_from_the_library_too(wb: Workbench) -> None:
    # NaN compares false with every score: it would hide every hit without a word. The CLI
    # refuses it at the option; MCP, the TUI and library callers reach the engine directly.
    wb.put("a note about mutual TLS between services", id="tls")
    with pytest.raises(UsageError, match="--min-score nan"):
        wb.find_query(FindQuery(query="mutual TLS", min_score=float("nan")))
    with pytest.raises(UsageError, match="--min-score nan"):
        wb.context("mutual TLS", min_score=float("nan"))
    assert wb.find_query(FindQuery(query="mutual TLS", min_score=0.0)).hits[0].id == "tls"
