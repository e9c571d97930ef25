"""The store answers about now (issue 22, rules 1-4): find, context, reflect and flows search
current versions and their parts; filters test the current tags and time; --history also
searches older versions (each filtered by its own tags); the now notes are not results."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from keepui_engine import FindQuery, Workbench, open_workbench

DRAFT = "Hypothesis: the single point of failure is the message broker everyone depends on."
REVIEWED = "Finding: the broker is replicated; the real weak spot is the DNS resolver."
MODES = ("dense", "bm25", "hybrid")


@pytest.fixture
def both(backend_dir: Path) -> Iterator[Workbench]:
    """A fake-embedder store on DuckDB and on PostgreSQL."""
    bench = open_workbench(backend_dir, own=True)
    yield bench
    bench.close()


def _aoa(wb: Workbench) -> str:
    """A note whose draft (tagged status=draft) was replaced by a reviewed finding; returns
    the moment between the two versions (ISO, UTC)."""
    wb.put(DRAFT, id="notes/aoa", tags=["status=draft", "team=infra"])
    between = datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
    wb.put(REVIEWED, id="notes/aoa", tags=["status=reviewed", "team=infra"])
    wb.put("Lunch on Friday is pizza with the whole team.", id="lunch")
    return between


@pytest.mark.parametrize("mode", MODES)
def test_a_tag_filter_tests_the_current_tags(both: Workbench, mode: str) -> None:
    _aoa(both)
    assert both.find("message broker failure", tags=["status=draft"], mode=mode).hits == []
    now = both.find("message broker failure", tags=["status=reviewed"], mode=mode).hits
    assert [(h.id, h.matched, h.version) for h in now] == [("notes/aoa", "notes/aoa", 0)]
    assert now[0].summary == REVIEWED and now[0].tags["status"] == "reviewed"


@pytest.mark.parametrize("mode", MODES)
def test_history_filters_each_version_by_its_own_tags(both: Workbench, mode: str) -> None:
    _aoa(both)
    got = both.find("message broker failure", tags=["status=draft"], mode=mode, history=True)
    assert [(h.id, h.matched, h.version) for h in got.hits] == [("notes/aoa", "notes/aoa@V{1}", 1)]
    hit = got.hits[0]
    assert hit.summary == DRAFT and hit.tags["status"] == "draft"
    assert hit.archived == {"version": 1, "of": 2, "text_differs": True}
    assert hit.to_dict()["archived"] == hit.archived


def test_without_history_no_hit_names_an_older_version(both: Workbench) -> None:
    _aoa(both)
    for mode in MODES:
        for query in ("message broker", DRAFT, "single point of failure hypothesis"):
            for hit in both.find(query, mode=mode, limit=10).hits:
                assert "@V{" not in hit.matched and hit.version == 0 and hit.archived is None
                assert "archived" not in hit.to_dict()


def test_a_tag_change_alone_says_the_current_tags_differ(both: Workbench) -> None:
    both.put("Quarterly numbers are in the shared sheet.", id="q", tags=["state=open"])
    both.tag("q", tags=["state=closed"])
    assert both.find("quarterly numbers", tags=["state=open"]).hits == []
    old = both.find("quarterly numbers", tags=["state=open"], history=True).hits
    assert old[0].archived == {"version": 1, "of": 2, "text_differs": False}


def test_time_filters_test_the_current_version(both: Workbench) -> None:
    between = _aoa(both)
    # the current version of notes/aoa was written after `between`
    assert both.find("message broker", until=between, mode="bm25").hits == []
    old = both.find("message broker", until=between, mode="bm25", history=True).hits
    assert [h.matched for h in old] == ["notes/aoa@V{1}"]
    assert [h.matched for h in both.find("broker", since=between, mode="bm25").hits] == [
        "notes/aoa"
    ]


def test_as_of_is_unchanged(both: Workbench) -> None:
    between = _aoa(both)
    then = both.find("message broker hypothesis", as_of=between, mode="bm25").hits
    assert [h.matched for h in then] == ["notes/aoa@V{1}"]


def test_an_old_version_outscoring_the_current_one_does_not_leak(both: Workbench) -> None:
    """The LangGraph case: the new value shares nothing with the query; the old one did."""
    both.put("Alice is vegetarian and never eats meat or fish.", id="diet")
    both.put("Alice now eats steak every Friday.", id="diet")
    for mode in MODES:
        for hit in both.find("who never eats meat or fish", mode=mode).hits:
            assert hit.summary != "Alice is vegetarian and never eats meat or fish."


def test_context_and_reflect_cite_current_versions_unless_history(both: Workbench) -> None:
    _aoa(both)
    ctx = both.context("single point of failure message broker", min_score=0.0)
    assert ctx.passages and all("@V{" not in p.matched for p in ctx.passages)
    assert DRAFT not in ctx.text and "[Source: notes/aoa]" in ctx.text
    old = both.context("single point of failure message broker", min_score=0.0, history=True)
    assert "[Source: notes/aoa@V{1}]" in old.text and DRAFT in old.text
    points = both.reflect("single point of failure message broker", kind="key-points")
    assert points.points and all("@V{" not in str(p) for p in points.points)
    assert all(DRAFT.split(":")[1].strip()[:20] not in p["text"] for p in points.points)


def test_the_now_notes_are_not_research_results(both: Workbench) -> None:
    _aoa(both)
    both.now("Reviewing the message broker failure analysis")
    both.now("Broker failure drill on Monday", scope="ops")
    for mode in MODES:
        ids = {h.id for h in both.find("message broker failure", mode=mode).hits}
        assert "now" not in ids and "now:ops" not in ids and "notes/aoa" in ids
    every = {h.id for h in both.find("message broker failure", include_system=True).hits}
    assert {"now", "now:ops"} <= every
    assert "now" not in {p.id for p in both.context("broker failure", min_score=0.0).passages}
    assert "now" not in both.reflect("broker failure").sources
    assert both.get("now").text == "Reviewing the message broker failure analysis"


def test_flow_searches_answer_about_now(both: Workbench) -> None:
    _aoa(both)
    both.now("message broker failure review in progress")
    result = both.run_flow("query-resolve", {"query": "message broker failure"})
    found = [r for r in result.results]
    assert found, result
    for r in found:
        assert "@V{" not in r["matched"] and r["id"] != "now"


def test_current_parts_are_searched_and_archived_parts_are_not(both: Workbench) -> None:
    long = "\n\n".join(
        f"# Section {i}\n\n" + " ".join(f"filler{i}x{j}" for j in range(120)) for i in range(6)
    )
    both.put(long.replace("filler3x5 ", "avalanche beacon "), id="guide")
    assert both.find("avalanche beacon", mode="bm25").hits[0].matched.startswith("guide@P{")
    both.put(long, id="guide")  # the beacon paragraph is gone from the current text
    assert both.find("avalanche beacon", mode="bm25").hits == []
    old = both.find("avalanche beacon", mode="bm25", history=True).hits
    assert old[0].matched.startswith("guide@V{1}")


def test_find_deep_neighbours_are_current_documents(both: Workbench) -> None:
    both.put("alpha beta gamma notes on the launch", id="a")
    both.put("alpha beta gamma notes on the launch and more", id="b")
    both.put("an unrelated shopping list: eggs, milk", id="b")
    both.now("alpha beta gamma notes on the launch, next step")
    found = both.find_deep(FindQuery("alpha beta gamma launch", limit=1))
    related = found.hits[0].related or []
    assert found.hits[0].id == "a"
    assert all(r["id"] != "now" for r in related)
    assert all("alpha" not in r["summary"] for r in related if r["id"] == "b")


def test_a_filter_that_removes_everything_says_which_one(both: Workbench) -> None:
    _aoa(both)
    alone = both.find_query(FindQuery("broker", ["status=draft", "team=infra"]))
    assert alone.hits == []
    (note,) = [n for n in alone.notes if n.startswith("no current version")]
    assert "tag status=draft" in note and "team=infra" not in note and "--history" in note
    together = both.find_query(FindQuery("broker", ["status=reviewed"], since="2099-01-01"))
    (note,) = [n for n in together.notes if n.startswith("no current version")]
    assert note.endswith("matches --since 2099-01-01 (--history also tests older ones)")
    both.put("Dinner is soup.", id="dinner", tags=["kind=meal"])
    apart = both.find_query(FindQuery("soup", ["status=reviewed", "kind=meal"]))
    (note,) = [n for n in apart.notes if n.startswith("no current version")]
    assert "matches all the filters together, though each matches some on its own" in note
    assert "tag status=reviewed, tag kind=meal" in note
    crossed = both.find_query(FindQuery("pizza", ["status=reviewed"], until="2000-01-01"))
    (note,) = [n for n in crossed.notes if n.startswith("no current version")]
    assert "--until 2000-01-01" in note and "status=reviewed" not in note
