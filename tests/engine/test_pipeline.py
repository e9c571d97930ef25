"""The recall-kit steps after retrieval: threshold, near-duplicate fold, rerank, and --why."""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np
import pytest

from keepui_engine import FindQuery, UsageError, Workbench
from keepui_engine.core.types import Hit
from keepui_engine.ops import engine as engine_mod
from keepui_engine.search import pipeline


def _at(monkeypatch: pytest.MonkeyPatch, when: datetime) -> None:
    monkeypatch.setattr(engine_mod, "_now", lambda: when)


def _hit(doc: str, score: float, updated: str) -> Hit:
    return Hit(doc, 0, score, None, 1.0, "", {}, updated, updated, doc, {"final": score})


def test_dedup_keeps_the_newest_of_a_group_with_its_own_score() -> None:
    hits = [
        _hit("a", 0.9, "2026-01-01T00:00:00Z"),
        _hit("b", 0.8, "2026-03-01T00:00:00Z"),
        _hit("c", 0.7, "2026-02-01T00:00:00Z"),
    ]
    vecs = np.array([[1.0, 0.0], [0.999, 0.0447], [0.0, 1.0]], np.float32)
    kept, folded = pipeline.dedup(hits, vecs, 0.95)
    assert folded == 1
    assert [h.id for h in kept] == ["b", "c"]
    assert kept[0].duplicates == ["a"] and kept[0].score == 0.8
    kept, folded = pipeline.dedup(hits, vecs, 0.9999)
    assert folded == 0 and [h.id for h in kept] == ["a", "b", "c"]


def test_threshold_and_rerank_orders() -> None:
    hits = [_hit("old", 0.9, "2026-01-01T00:00:00Z"), _hit("new", 0.5, "2026-06-01T00:00:00Z")]
    kept, hidden = pipeline.threshold(hits, 0.6)
    assert [h.id for h in kept] == ["old"] and hidden == 1
    assert pipeline.threshold(hits, None) == (hits, 0)
    now = datetime(2026, 6, 1)
    recent = pipeline.rerank(hits, "recency", now=now, half_life_days=30, recency_weight=0.3)
    assert [h.id for h in recent] == ["new", "old"]
    mixed = pipeline.rerank(hits, "mix", now=now, half_life_days=30, recency_weight=0.9)
    assert [h.id for h in mixed] == ["new", "old"]
    assert mixed[0].scores["rerank"] == pytest.approx(0.1 * 0.5 / 0.9 + 0.9 * 1.0)
    assert mixed[0].scores["final"] == 0.5
    same = pipeline.rerank(hits, "relevance", now=now, half_life_days=30, recency_weight=0.3)
    assert same == hits
    with pytest.raises(UsageError, match="--rerank"):
        pipeline.rerank(hits, "random", now=now, half_life_days=30, recency_weight=0.3)


def test_find_folds_copies_into_the_newest_and_counts_them(
    wb: Workbench, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = datetime.utcnow()
    for i, doc in enumerate(["copy1", "copy2", "copy3"]):
        _at(monkeypatch, now - timedelta(days=3 - i))
        wb.put("the quarterly budget review notes", id=doc)
    _at(monkeypatch, now)
    wb.put("a recipe for lentil soup", id="soup")
    result = wb.find("quarterly budget review")
    ids = [h.id for h in result.hits]
    assert "copy3" in ids and "copy1" not in ids and "copy2" not in ids
    keeper = next(h for h in result.hits if h.id == "copy3")
    assert sorted(keeper.duplicates) == ["copy1", "copy2"]
    assert result.hidden["dedup"] == 2
    assert any("near-duplicate" in n for n in result.notes)
    everything = wb.find("quarterly budget review", dedup=False)
    assert {"copy1", "copy2", "copy3"} <= {h.id for h in everything.hits}
    assert "dedup" not in everything.hidden
    story = wb.why("copy1", FindQuery("quarterly budget review"))
    assert story.removed_by == "dedup" and "copy3" in story.explanation
    assert wb.why("copy1", FindQuery("quarterly budget review", dedup=False)).removed_by is None


def test_find_rerank_by_recency_puts_the_newest_first(
    wb: Workbench, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = datetime.utcnow()
    _at(monkeypatch, now - timedelta(days=2))
    wb.put("solar panel installation on the roof", id="exact")
    _at(monkeypatch, now)
    wb.put("solar energy costs this winter", id="recent")
    assert wb.find("solar panel installation on the roof").hits[0].id == "exact"
    hits = wb.find("solar panel installation on the roof", rerank="recency").hits
    assert [h.id for h in hits][:2] == ["recent", "exact"]
    with pytest.raises(UsageError, match="--fusion"):
        wb.find("solar", fusion="nope")


def test_no_evidence_drops_hits_no_channel_found_anything_for() -> None:
    def hit(doc: str, score: float, cos: float | None, bm25: float | None) -> Hit:
        scores = {"dense": cos, "bm25": bm25, "final": score}
        return Hit(doc, 0, score, cos, 1.0, "", {}, "", "", doc, scores)

    hits = [
        hit("words", 0.2, -0.1, 2.5),  # a query word, however far the meaning
        hit("meaning", 0.3, 0.3, None),
        hit("far", 0.0, -0.2, None),  # score fusion: max(cos, 0) = 0 and no word
        hit("rank-only", 1 / 62, -0.05, None),  # rank fusion scores it by its rank alone
        hit("zero", 0.0, 0.0, None),
    ]
    kept, hidden = pipeline.no_evidence(hits)
    assert [h.id for h in kept] == ["words", "meaning"] and hidden == 3
    assert pipeline.no_evidence([]) == ([], 0)
