"""Signals on real-scale scores, and the pure pick / expand actions."""

from __future__ import annotations

import pytest

from keepui_engine.core.errors import UsageError
from keepui_engine.flows.actions import expand, pick
from keepui_engine.flows.signals import entropy, family, lineage, margin, top_facets


def test_margin() -> None:
    assert margin([]) == 0.0 and margin([0.3]) == 1.0
    assert margin([0.4, 0.8]) == pytest.approx(0.5)
    assert margin([0.5, 0.5]) == 0.0


def test_entropy_separates_a_standout_from_a_flat_list() -> None:
    flat = entropy([0.50, 0.50, 0.49, 0.49, 0.48])
    peaked = entropy([0.80, 0.50, 0.49, 0.48, 0.47])
    assert flat > 0.95 and peaked < 0.1
    assert entropy([0.7]) == 0.0


def test_lineage_and_facets() -> None:
    hits = [
        {"id": "file:///notes/a.md", "tags": {"topic": ["auth"], "_source": "file"}},
        {"id": "file:///notes/b.md", "tags": {"topic": ["auth"], "project": "x"}},
        {"id": "%abc", "tags": {"topic": ["auth"], "project": "x"}},
        {"id": "https://site/docs/c", "tags": {}},
    ]
    assert family("file:///notes/a.md@P{2}") == "file:///notes" and family("%abc") is None
    strong, root, shared = lineage(hits)
    assert (strong, root, shared) == (0.5, "file:///notes", ["topic=auth"])
    assert top_facets(hits) == ["topic=auth", "project=x"]
    assert lineage(hits[2:]) == (0.0, None, [])


def test_pick_prefers_the_clearest_branch_and_merges_all() -> None:
    a = {
        "mode": "bm25",
        "tags": [],
        "margin": 0.4,
        "top_score": 0.5,
        "results": [{"id": "1"}, {"id": "2"}],
    }
    b = {
        "mode": None,
        "tags": ["topic=x"],
        "margin": 0.1,
        "top_score": 0.9,
        "results": [{"id": "2"}, {"id": "3"}],
    }
    best = pick([None, b, a])
    assert best["label"] == "words (bm25)" and [h["id"] for h in best["merged"]] == ["2", "1", "3"]
    assert pick([b])["label"] == "topic=x"
    with pytest.raises(UsageError):
        pick([None])


def test_expand_adds_words_the_top_results_share() -> None:
    results = [
        {"summary": "Vitamin D deficiency raises fracture risk in elderly patients"},
        {"summary": "Fracture risk and vitamin D supplements in elderly women"},
        {"summary": "Bone density and fracture risk"},
        {"summary": "Unrelated note about bread"},
    ]
    out = expand("vitamin d", results, 2)
    # "fracture" and "risk" are in all three top summaries; "elderly" in two; "bread" in none.
    assert out["added"] == ["fracture", "risk"] and out["query"] == "vitamin d fracture risk"
    assert expand("vitamin d", [], 3) == {"query": "vitamin d", "added": []}
