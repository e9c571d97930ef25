"""Long documents (issue 24): passages a vector sees whole, fused per passage, named in hits.

The fake embedder counts whitespace words as its tokens and sees 510 of them; the real model's
token counting is in tests/engine/test_minilm_numpy.py.
"""

from __future__ import annotations

from datetime import datetime

import numpy as np

from keepui_engine import FindQuery, PutSpec, Workbench
from keepui_engine.search.ranking import fuse
from keepui_engine.store.tables.queries import KeyRow

FILLER = [
    "The committee reviewed the quarterly figures and agreed on the schedule.",
    "Several members asked for more time to read the appendix before voting.",
    "The chair thanked the staff for preparing the minutes in good time.",
    "Routine items were approved without discussion by a show of hands.",
]
ANSWER = "Zanzibar cloves are dried in the sun for five days before export."


def _long_text(sentences: int, answer_at: int) -> str:
    body = [f"Item {i}: {FILLER[i % len(FILLER)]}" for i in range(sentences)]
    body.insert(answer_at, ANSWER)
    return " ".join(body)


def test_an_answer_in_the_middle_is_found_by_meaning_and_words_and_named(
    wb: Workbench,
) -> None:
    text = _long_text(240, 120)  # ~2,900 words: the answer sits in the middle
    wb.put_many([PutSpec(text, id="minutes"), PutSpec("a short note about cloves", id="note")])
    parts = wb.parts("minutes")
    assert len(parts) >= 5 and all(len(p.text.split()) <= 510 for p in parts)
    holding = [p.part for p in parts if ANSWER in p.text]
    for mode in ("dense", "bm25", "hybrid"):
        hit = wb.find_query(FindQuery("Zanzibar cloves dried in the sun", mode=mode)).hits[0]
        assert hit.id == "minutes", mode
        assert hit.matched.startswith("minutes@P{") and hit.part is not None, (mode, hit)
        assert hit.part["index"] in holding, (mode, hit.part)
    ctx = wb.context("Zanzibar cloves dried in the sun", max_tokens=600)
    assert ANSWER in ctx.text  # the passage that holds it, not the document's opening
    assert text[:300] not in ctx.text


def test_a_short_note_keeps_one_vector(wb: Workbench) -> None:
    wb.put(" ".join(FILLER * 10), id="short")  # ~120 words: fits one window
    assert wb.parts("short") == []


def test_re_putting_an_unchanged_long_text_embeds_nothing(wb: Workbench) -> None:
    text = _long_text(200, 50)
    wb.put(text, id="long")
    embedder = wb._engine.embedder  # type: ignore[attr-defined]
    before = embedder.texts_embedded
    result = wb.put(text, id="long")
    assert result.action == "unchanged" and embedder.texts_embedded == before


def _row(key: int, doc: str, part: int) -> KeyRow:
    when = datetime(2026, 1, 1)
    return KeyRow(key, doc, 1, 1, part, doc, {}, {}, when, when)


def test_fusion_scores_each_passage_on_its_own_evidence() -> None:
    # "long": passage 1 wins dense alone, passage 2 wins BM25 alone; "even": one passage
    # good in both. Fused per passage, "long" cannot add passage 1's cosine to passage 2's
    # words; fused per document (before issue 24) it did, and ranked first.
    rows = {1: _row(1, "long", 1), 2: _row(2, "long", 2), 3: _row(3, "even", 0)}
    dense = (np.asarray([1, 3]), np.asarray([0.80, 0.70]))
    bm25 = (np.asarray([2, 3]), np.asarray([10.0, 8.0]))
    similarity = {2: 0.20}
    now = datetime(2026, 1, 2)
    for fusion in ("rrf", "score"):
        hits = fuse(
            dense,
            bm25,
            rows,
            now,
            0.0,
            fusion=fusion,
            similarity=similarity,
            idf=np.asarray([3.0, 2.0]),
        )
        assert [h.id for h in hits] == ["even", "long"], fusion
        long = hits[1]
        assert long.scores["fused"] == long.score  # the best passage's own fused score
    hits = fuse(dense, bm25, rows, now, 0.0, fusion="rrf")
    assert hits[0].scores["fused"] == 2 / 62  # "even": second in both channels' key ranks
    assert hits[1].scores["fused"] == 1 / 61  # "long": one channel's first, not both


def test_context_hands_over_two_passages_of_one_document_when_both_are_best(
    wb: Workbench,
) -> None:
    body = _long_text(240, 40).split(" ")
    second = "Zanzibar cloves are also sorted by hand in the sun before export."
    text = (
        " ".join(body[: len(body) * 3 // 4]) + f" {second} " + " ".join(body[len(body) * 3 // 4 :])
    )
    wb.put_many([PutSpec(text, id="minutes"), PutSpec("weather report for the coast", id="wx")])
    hit = wb.find_query(FindQuery("Zanzibar cloves sun export")).hits[0]
    assert hit.id == "minutes" and hit.passages, hit
    ctx = wb.context("Zanzibar cloves sun export", max_tokens=2000)
    cited = [p.matched for p in ctx.passages]
    assert cited[0].startswith("minutes@P{") and cited[1].startswith("minutes@P{"), cited
    assert cited[0] != cited[1] and ANSWER in ctx.text and second in ctx.text
    assert "passages" not in wb.find_query(FindQuery("weather", mode="bm25")).hits[0].to_dict()
