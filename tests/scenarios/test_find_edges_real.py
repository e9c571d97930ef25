"""With the real model: hits without evidence are hidden, and same-text versions give the newest."""

from __future__ import annotations

from pathlib import Path

import pytest

from keepui_engine import FindQuery, PutSpec, open_workbench

pytestmark = pytest.mark.model

CORPUS = {
    "ticket": "Follow up on ticket QX-7731 before the release freeze.",
    "car": "Fixing the automobile cost far more than the garage first quoted.",
    "garden": "The tomatoes need watering twice a day in this heat.",
    "flight": "Boarding pass for the morning flight to Lisbon is in the inbox.",
    "piano": "Practise the Chopin nocturne slowly, hands separately first.",
    "taxes": "Send the receipts to the accountant before the filing deadline.",
}


@pytest.mark.parametrize("query", ["tomatoes watering", "quantum chromodynamics lattice"])
def test_hits_the_model_puts_below_unrelated_text_are_hidden(tmp_path: Path, query: str) -> None:
    with open_workbench(tmp_path / "store", own=True) as wb:
        wb.put_many([PutSpec(text, id=doc) for doc, text in CORPUS.items()])
        vecs = wb.embedder.embed([query, *CORPUS.values()])
        cos = dict(zip(CORPUS, vecs[1:] @ vecs[0], strict=True))
        words = set(query.lower().split())
        unrelated = {
            d for d, c in cos.items() if c <= 0 and not words & set(CORPUS[d].lower().split())
        }
        assert unrelated, "the query should have some text the model puts below unrelated"
        for fusion in ("score", "rrf"):
            result = wb.find(query, fusion=fusion, dedup=False)
            shown = {h.id for h in result.hits}
            assert shown == set(CORPUS) - unrelated
            assert result.hidden["no_evidence"] == len(unrelated)
            assert all(h.score > 0 for h in result.hits)
        for doc in unrelated:
            assert wb.why(doc, FindQuery(query)).removed_by == "no_evidence"


def test_a_tag_change_leaves_the_current_version_as_the_hit(tmp_path: Path) -> None:
    with open_workbench(tmp_path / "store", own=True) as wb:
        wb.put_many([PutSpec(text, id=doc) for doc, text in CORPUS.items()])
        wb.tag("garden", tags=["season=summer"])
        for mode in ("dense", "bm25", "hybrid"):
            hit = wb.find("watering the tomatoes", mode=mode, limit=1).hits[0]
            assert (hit.matched, hit.version) == ("garden", 0)
            assert hit.tags["season"] == "summer"
