"""Research features in the TUI: as: in the bar, relevance judgments in result tabs, facets."""

from __future__ import annotations

import pytest
from textual.widgets import Tabs
from tui_helpers import T0, burst, duckdb_only, screen_text, search, settle, submit

from keepui.tui.app import KeepuiApp
from keepui.tui.screens.error import ErrorModal
from keepui.tui.screens.facets import FacetsScreen
from keepui.tui.widgets.detail_pane import DetailPane
from keepui.tui.widgets.facet_filter import carries, selection_text
from keepui.tui.widgets.facet_list import FacetList
from keepui.tui.widgets.judged_line import JudgedLine
from keepui.tui.widgets.result_tabs import ResultTabs
from keepui.tui.widgets.search_bar import parse_search
from keepui_engine import Workbench


@pytest.fixture(params=["duckdb", "postgres"])
def tui_backend(request: pytest.FixtureRequest) -> str:
    """Each test here that opens a store runs on DuckDB and on PostgreSQL."""
    return str(request.param)


STORAGE_V1_AT = (T0.replace(minute=1, second=30)).isoformat() + "Z"
"""Between the storage note's first version (09:01) and its second (09:02), before any other."""


def tabs_of(app: KeepuiApp) -> ResultTabs:
    return app.screen.query_one("#results", ResultTabs)


def tab_labels(app: KeepuiApp) -> list[str]:
    return [str(t.label) for t in app.screen.query_one(Tabs).query("Tab")]


async def test_as_searches_the_versions_current_then(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "storage")
        now = tabs_of(app).current
        assert now is not None and "storage" in now.ids and len(now.ids) > 1
        await search(app, pilot, f"storage as:{STORAGE_V1_AT}")
        then = tabs_of(app).current
        assert then is not None and then.q.as_of == STORAGE_V1_AT
        # only the first version of the first note existed then
        assert then.ids == ["storage"]
        assert then.current_hit is not None and then.current_hit.matched == "storage@V{1}"
        detail = app.screen.query_one(DetailPane)
        assert detail.item is not None and detail.item.version == 1
        assert "Backups copy the directory" not in screen_text(app)
        assert tab_labels(app)[-1].startswith("2 storage · as 2026-11-02T09:01")


@duckdb_only("the search bar rejects the date before any search")
async def test_a_bad_as_date_is_said_in_the_bars_words(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await submit(app, pilot, "storage as:yesterday")
        assert isinstance(app.screen, ErrorModal)
        assert "as:yesterday is not a date" in app.screen.message
        assert "--as-of" not in app.screen.message


def test_as_round_trips_through_the_bar() -> None:
    q = parse_search("auth as:2026-10-01 mode:bm25")
    assert (q.query, q.as_of, q.mode) == ("auth", "2026-10-01", "bm25")


async def test_plus_and_minus_judge_hits_and_the_tab_shows_the_score(
    app: KeepuiApp, seeded: Workbench
) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "storage backups mode:dense")
        pane = tabs_of(app).current
        assert pane is not None and app.focused is pane and len(pane.ids) >= 3
        line = app.screen.query_one(JudgedLine)
        assert not line.display  # no judgments yet
        first, second = pane.ids[0], pane.ids[1]
        await pilot.press("minus")  # the first hit: not relevant
        await pilot.press("down", "plus")  # the second: relevant
        await settle(app, pilot)
        grades = {j.id: j.grade for j in seeded.judgments("storage backups")}
        assert grades == {first: 0, second: 1}
        assert pane.grades == grades
        # DCG of [0, 1] = 1/log2(3) = 0.63 against an ideal of 1
        assert line.display
        assert str(line.render()) == f"judged 2/{len(pane.ids)} · nDCG@10 0.63"
        text = screen_text(app)
        assert "✗ " in text and "✓ " in text
        await burst(app, pilot, "+", "+")  # typed fast, the second again: grade 2, then 3
        assert {j.id: j.grade for j in seeded.judgments("storage backups")}[second] == 3
        assert "✓✓✓ " in screen_text(app)
        await pilot.press("up", "0")  # forget the first one's
        await settle(app, pilot)
        assert {j.id for j in seeded.judgments("storage backups")} == {second}
        assert str(line.render()).startswith(f"judged 1/{len(pane.ids)} · nDCG@10 0.63")


async def test_a_new_tab_of_a_judged_query_shows_its_judgments(
    app: KeepuiApp, seeded: Workbench
) -> None:
    seeded.judge("storage backups", "storage", 2)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "storage backups mode:dense")
        pane = tabs_of(app).current
        assert pane is not None and pane.grades == {"storage": 2}
        score = seeded.judged_score("storage backups", pane.ids)
        line = str(app.screen.query_one(JudgedLine).render())
        assert line == f"judged 1/{len(pane.ids)} · nDCG@10 {score['ndcg@10']:.2f}"


async def open_facets(app: KeepuiApp, pilot: object) -> FacetList:
    await pilot.press("b")  # type: ignore[attr-defined]
    await settle(app, pilot)  # type: ignore[arg-type]
    assert isinstance(app.screen, FacetsScreen)
    return app.screen.query_one(FacetList)


async def test_facets_of_the_whole_store_or_within_a_key(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("escape")  # out of the bar: b is a key, not a letter
        facets = await open_facets(app, pilot)
        assert facets.facets == {
            "status": {"decided": 1},
            "topic": {"search": 2, "geo": 1, "storage": 1},
        }
        assert "Facets of the whole store" in screen_text(app)
        # the cursor starts on status=decided; down skips the topic heading
        await pilot.press("down")
        assert facets.current == ("topic", "search")
        await pilot.press("space", "down", "space")
        assert facets.selection == {"topic": ["search", "geo"]}
        assert "topic = search or geo" in screen_text(app)
        await pilot.press("enter")
        await settle(app, pilot)
        pane = tabs_of(app).current
        assert pane is not None and pane.listing
        assert sorted(pane.ids) == ["bm25", "rivers", "vectors"]
        assert tab_labels(app)[-1] == "1 tags · topic=search|geo"
        assert app.focused is pane
        # no query, so no scores: the columns say so, and so does the detail
        assert "listed by its tags" in screen_text(app)
        assert pane.get_row_at(0)[2].plain == "–"


async def test_facets_and_across_keys(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("escape")
        facets = await open_facets(app, pilot)
        await pilot.press("space", "down", "down", "down", "space")  # decided, topic=storage
        assert facets.selection == {"status": ["decided"], "topic": ["storage"]}
        await pilot.press("enter")
        await settle(app, pilot)
        pane = tabs_of(app).current
        assert pane is not None and pane.ids == ["storage"]
        await pilot.press("b")  # over this tab's one hit: decided AND search holds for none
        await settle(app, pilot)
        facets = app.screen.query_one(FacetList)
        assert facets.facets == {"status": {"decided": 1}, "topic": {"storage": 1}}


async def test_facets_of_a_result_tab_filter_its_hits(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "vector search words storage rivers mode:hybrid n:20")
        searched = tabs_of(app).current
        assert searched is not None and {"bm25", "vectors", "storage"} <= set(searched.ids)
        await open_facets(app, pilot)
        n = len(searched.ids)
        assert f"the {n} hits of 'vector search words storage rivers'" in screen_text(app)
        await pilot.press("down")  # topic=search (the commonest), Enter alone: just that value
        await pilot.press("enter")
        await settle(app, pilot)
        pane = tabs_of(app).current
        assert pane is not None and pane is not searched and not pane.listing
        assert pane.q == searched.q and sorted(pane.ids) == ["bm25", "vectors"]
        assert [h.id for h in searched.hits if carries(h.tags, {"topic": ["search"]})] == (pane.ids)
        assert "topic=search" in tab_labels(app)[-1]
        await pilot.press("r")  # refreshed: searched again, filtered again
        await settle(app, pilot)
        assert sorted(pane.ids) == ["bm25", "vectors"]


def test_selection_text() -> None:
    assert selection_text({"kind": ["bug"], "project": ["web", "mobile"]}) == (
        "kind=bug · project=web|mobile"
    )
    assert carries({"project": ["web", "ios"]}, {"project": ["mobile", "web"]})
    assert not carries({"project": "web"}, {"project": ["web"], "kind": ["bug"]})


@duckdb_only("the palette; the facet tests above run on both")
async def test_the_palette_opens_the_facet_browser_from_the_search_bar(app: KeepuiApp) -> None:
    from textual.command import CommandInput

    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert app.focused is not None and app.focused.id == "search-input"
        await pilot.press("ctrl+p")
        await settle(app, pilot)
        app.screen.query_one(CommandInput).value = "facets"
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, FacetsScreen)
        assert app.screen.query_one(FacetList).facets["topic"]["search"] == 2
        await pilot.press("escape")
        assert not isinstance(app.screen, FacetsScreen)
