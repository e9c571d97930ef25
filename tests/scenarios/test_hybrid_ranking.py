"""Ranking with the real model: what each channel finds, and hybrid finding both."""

from __future__ import annotations

from pathlib import Path

import pytest

from keepui_engine import PutSpec, open_workbench

pytestmark = pytest.mark.model

CORPUS = {
    "ticket": "Follow up on ticket QX-7731 before the release freeze.",
    "car": "Fixing the automobile cost far more than the garage first quoted.",
    "garden": "The tomatoes need watering twice a day in this heat.",
    "flight": "Boarding pass for the morning flight to Lisbon is in the inbox.",
    "piano": "Practise the Chopin nocturne slowly, hands separately first.",
    "taxes": "Send the receipts to the accountant before the filing deadline.",
    "move1": "The team meeting moved to Thursday at 3pm in room B.",
    "move2": "The team meeting moved to Thursday at 3 pm in room B.",
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hybrid") / "store"
    with open_workbench(root, own=True) as wb:
        for doc, text in CORPUS.items():
            wb.put_many([PutSpec(text, id=doc)])
    return root


def ids(store: Path, query: str, mode: str, n: int = 3) -> list[str]:
    with open_workbench(store) as wb:
        return [h.id for h in wb.find(query, mode=mode, limit=n).hits]


def test_a_code_only_words_can_match_is_found_by_bm25_and_hybrid(store: Path) -> None:
    assert ids(store, "QX-7731", "bm25", 1) == ["ticket"]
    assert ids(store, "QX-7731", "hybrid", 1) == ["ticket"]


def test_a_paraphrase_with_no_shared_word_is_found_by_dense_and_hybrid(store: Path) -> None:
    query = "car repair was expensive"
    assert "car" not in ids(store, query, "bm25")
    assert ids(store, query, "dense", 1) == ["car"]
    assert ids(store, query, "hybrid", 1) == ["car"]


def test_hybrid_is_the_default_and_carries_both_channels(store: Path) -> None:
    with open_workbench(store) as wb:
        result = wb.find("watering tomatoes")
    assert result.mode == "hybrid"
    top = result.hits[0]
    assert top.id == "garden" and top.scores["dense_rank"] == 1 and top.scores["bm25_rank"] == 1
    assert top.scores["final"] == pytest.approx(top.scores["fused"] * top.scores["decay"])


def test_near_duplicate_notes_fold_into_the_newest(store: Path) -> None:
    with open_workbench(store) as wb:
        result = wb.find("when is the team meeting")
        shown = [h.id for h in result.hits]
        assert "move2" in shown and "move1" not in shown
        assert result.hidden["dedup"] == 1
        assert result.hits[shown.index("move2")].duplicates == ["move1"]
        assert {"move1", "move2"} <= {h.id for h in wb.find("team meeting", dedup=False).hits}


SECTIONS = {
    "Sailing": (
        "The harbour master checks the tide tables every morning before the boats leave. "
        "Sailors reef the mainsail when the wind rises above twenty knots, and the crew "
        "keeps a lookout for ferries crossing the channel near the breakwater. "
    ),
    "Baking": (
        "Feed the sourdough starter the night before, then mix flour, water and salt into a "
        "shaggy dough. Fold it every half hour, shape a round loaf and bake it in a hot "
        "covered pot until the crust is deep brown and crackles as it cools. "
    ),
    "Astronomy": (
        "On clear winter nights the telescope on the roof shows the rings of Saturn and the "
        "moons of Jupiter. Observers let their eyes adapt to the dark for twenty minutes and "
        "log each comet sighting with the time and the sky conditions. "
    ),
}


def test_a_long_document_splits_by_heading_and_a_part_hit_lifts_to_it(tmp_path: Path) -> None:
    text = "\n\n".join(f"# {title}\n" + body * 5 for title, body in SECTIONS.items())
    assert len(text.split()) > 512
    with open_workbench(tmp_path / "store", own=True) as wb:
        wb.put(text, id="handbook")
        wb.put("Notes on the quarterly budget and hiring plan.", id="budget")
        parts = wb.parts("handbook")
        # Passages are model-window sized: a section longer than the window splits in two,
        # but never across a heading, and the sections keep their order.
        assert list(dict.fromkeys(p.title for p in parts)) == list(SECTIONS)
        titles = {p.part: p.title for p in parts}
        hit = wb.find("how do I make bread at home", mode="dense", limit=1).hits[0]
        assert hit.id == "handbook" and hit.matched == f"handbook@P{{{hit.part_index}}}"
        assert titles[hit.part_index] == "Baking"
        assert hit.part is not None and hit.part["title"] == "Baking"
        hit = wb.find("looking at planets through a telescope", limit=1).hits[0]
        assert hit.id == "handbook" and titles[hit.part_index] == "Astronomy"


HANDBOOK = {
    "Release process": (
        "Every change lands through a pull request that two reviewers approve. The build server "
        "runs the unit tests, the linters and the type checker on each push, and a green build "
        "is required before merging into the main branch. Release candidates are tagged every "
        "Tuesday and promoted to production on Thursday after the staging soak. "
    ),
    "Deployment": (
        "Services ship as container images built from a pinned base image. The deploy tool "
        "rolls them out one zone at a time and watches error rates for ten minutes before "
        "moving on; a spike rolls the zone back automatically. Database migrations run before "
        "the new code starts and must be backwards compatible for one release. "
    ),
    "Monitoring": (
        "Dashboards show latency, error rate and saturation for every service, and alerts page "
        "the on-call engineer when the error budget burns too fast. Our approach to incidents "
        "is blameless: the write-up lists the timeline, the contributing causes and the "
        "follow-up tickets, and it is reviewed in the weekly operations meeting. "
    ),
    "Dependencies": (
        "Third-party libraries are updated by a bot that opens pull requests every Monday. "
        "Security advisories are triaged within a day, and a library without a maintainer for "
        "a year is replaced. Licences are checked in the build so nothing copyleft slips into "
        "the product by accident. "
    ),
}
AUTH_NOTES = {
    "auth-tokens": "Sign-in uses OAuth 2.0 with short-lived JWT access tokens; refresh tokens "
    "rotate on each use.",
    "auth-cookies": "Auth: we went with session cookies plus CSRF tokens instead of JWTs.",
}


def test_one_common_word_in_a_long_part_does_not_beat_a_dense_match(tmp_path: Path) -> None:
    # Issue 15's new-user bug: BM25 finds only "approach", once, in a long section of an HTML
    # handbook; the two auth notes share no word with the query but mean it.
    page = tmp_path / "handbook.html"
    sections = "".join(
        f"<h2>{title}</h2><p>{body * 2}</p><p>{body * 2}</p>" for title, body in HANDBOOK.items()
    )
    page.write_text(f"<html><body><h1>Engineering handbook</h1>{sections}</body></html>")
    query = "authentication approach"
    with open_workbench(tmp_path / "store", own=True) as wb:
        wb.put_many([PutSpec(text, id=doc) for doc, text in AUTH_NOTES.items()])
        wb.ingest([str(page)])
        handbook = f"file://{page}"
        assert len(wb.parts(handbook)) > 1
        dense = [h.id for h in wb.find(query, mode="dense").hits]
        assert set(dense[:2]) == set(AUTH_NOTES) and dense[2] == handbook
        bm25 = wb.find(query, mode="bm25").hits
        assert [h.id for h in bm25] == [handbook] and bm25[0].part_index
        # Issue 15 fixed this with the fusion's rate (share fusion put the page first); since
        # fusion is per passage, the passage holding "approach" brings only its own weak
        # dense evidence, so share fusion ranks the meaning matches first as well.
        share = [h.id for h in wb.find(query, fusion="share").hits]
        assert set(share[:2]) == set(AUTH_NOTES)
        hits = wb.find(query).hits
        assert set(h.id for h in hits[:2]) == set(AUTH_NOTES)
        assert hits[2].id == handbook and (hits[2].scores["bm25"] or 0) > 0
