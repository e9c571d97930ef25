"""With the real model, the cases issue 22 was filed on: a superseded hypothesis must not be
found through its old tags nor cited by reflect, and an old value must not answer a question
its new value contradicts."""

from __future__ import annotations

from pathlib import Path

import pytest

from keepui_engine import PutSpec, open_workbench

pytestmark = pytest.mark.model

HYPOTHESIS = (
    "Hypothesis: the message broker is the single point of failure; if it goes down, every "
    "service stops."
)
FINDING = (
    "Finding after review: the broker runs as a replicated cluster. The DNS resolver is the "
    "component whose outage stops everything."
)
OTHERS = {
    "notes/backup": "Backups run nightly to object storage and are restored monthly as a test.",
    "notes/oncall": "The on-call rotation changes every Monday at noon.",
    "notes/latency": "p95 latency of the search API rose after the index migration.",
}


def test_a_superseded_hypothesis_is_neither_found_by_its_tags_nor_cited(tmp_path: Path) -> None:
    with open_workbench(tmp_path / "store", own=True) as wb:
        wb.put_many([PutSpec(text, id=doc) for doc, text in OTHERS.items()])
        wb.put(HYPOTHESIS, id="notes/aoa", tags=["status=draft"])
        wb.put(FINDING, id="notes/aoa", tags=["status=reviewed"])
        assert wb.find("single point of failure", tags=["status=draft"]).hits == []
        now = wb.find("single point of failure", tags=["status=reviewed"]).hits
        assert [(h.matched, h.summary) for h in now] == [("notes/aoa", FINDING)]
        for kind in ("summary", "key-points"):
            got = wb.reflect("what is the single point of failure", kind=kind)
            assert "message broker is the single point" not in got.text
            assert all("@V{" not in p["source"] for p in got.points)
        ctx = wb.context("what is the single point of failure", min_score=0.0)
        assert HYPOTHESIS not in ctx.text and "@V{" not in ctx.text
        past = wb.find("single point of failure", tags=["status=draft"], history=True).hits
        assert past[0].matched == "notes/aoa@V{1}" and past[0].archived == {
            "version": 1,
            "of": 2,
            "text_differs": True,
        }


def test_an_old_value_does_not_answer_for_the_new_one(tmp_path: Path) -> None:
    with open_workbench(tmp_path / "store", own=True) as wb:
        wb.put("Alice is vegetarian: she never eats meat or fish.", id="diet")
        wb.put("Bob loves hiking in the Alps every summer.", id="hobby")
        wb.put("Alice now eats steak every Friday with her team.", id="diet")
        for mode in ("dense", "bm25", "hybrid"):
            for hit in wb.find("who never eats meat or fish?", mode=mode).hits:
                assert hit.version == 0 and "vegetarian" not in hit.summary
        old = wb.find("who never eats meat or fish?", history=True).hits
        assert old[0].matched == "diet@V{1}"
