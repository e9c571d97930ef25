"""The experiments screen: run a query set under two configurations, read the metrics and the
queries by difference, judge side by side; search configurations in the mode picker."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support import make_fake_store
from textual.command import CommandInput, CommandPalette
from textual.widgets import ProgressBar, Select, SelectionList, Static
from tui_helpers import T_AFTER_SEED, Clock, screen_text, search, seed, settle, submit

from keepui.tui.app import KeepuiApp
from keepui.tui.screens.experiments import ExperimentsScreen
from keepui.tui.screens.help import HelpScreen
from keepui.tui.screens.side_by_side import SideBySideScreen
from keepui.tui.widgets.experiment_tables import MetricsTable, QueryTable
from keepui.tui.widgets.judged_line import JudgedLine
from keepui.tui.widgets.result_tabs import ResultTabs
from keepui.tui.widgets.search_bar import format_search, parse_search
from keepui_engine import Workbench, open_workbench

WORDS = '\n[search.configs.words]\nmode = "dense"\nlimit = 5\n'
"""A configuration that ranks some seed notes differently (meaning only, five hits)."""
JUDGED = {
    "vector search": {"vectors": 3, "storage": 2},
    "hybrid search words": {"bm25": 3, "meeting": 2, "vectors": 0},
    "storage": {"storage": 3},
    "rivers danube": {"rivers": 3},
}


def _store(path: Path, clock: Clock, *, queryset: bool = True) -> Workbench:
    store = make_fake_store(path, half_life_days=0)
    with (store / "keepui.toml").open("a") as fh:
        fh.write(WORDS)
    wb = open_workbench(store, own=True)
    seed(wb)
    for query, grades in JUDGED.items():
        for doc, grade in grades.items():
            wb.judge(query, doc, grade)
    if queryset:
        wb.tuning.add_queryset("mine", from_judgments=True)
    clock.t = T_AFTER_SEED
    return wb


@pytest.fixture
def tuned(tmp_path: Path, frozen_clock: Clock) -> Iterator[Workbench]:
    """The seed notes with four judged queries, query set `mine`, and `[search.configs.words]`."""
    wb = _store(tmp_path / "store", frozen_clock)
    yield wb
    wb.close()


async def open_experiments(app: KeepuiApp, pilot: object) -> ExperimentsScreen:
    """From the search bar, as a user: Escape (list mode), then E."""
    await pilot.press("escape", "E")  # type: ignore[attr-defined]
    await settle(app, pilot)  # type: ignore[arg-type]
    assert isinstance(app.screen, ExperimentsScreen)
    return app.screen


def cell(table: object, row: int, column: int) -> str:
    return str(table.get_row_at(row)[column])  # type: ignore[attr-defined]


async def test_run_an_experiment_and_read_the_metrics_and_the_queries(tuned: Workbench) -> None:
    app = KeepuiApp(tuned, poll_interval=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        screen = await open_experiments(app, pilot)
        assert screen.query_one("#exp-queryset", Select).value == "mine"
        assert screen.checked == ["default", "words"]  # default and the next one
        assert "No experiment on mine yet" in screen_text(app)
        assert app.focused is screen.query_one("#exp-configs", SelectionList)
        await pilot.press("r")
        await settle(app, pilot)
        exp = screen.experiment
        assert exp is not None and exp.configs == ["default", "words"]
        assert [e.id for e in tuned.tuning.experiments("mine")] == [exp.id]  # stored
        bar = screen.query_one("#exp-bar", ProgressBar)
        assert bar.total == 2 * len(JUDGED) and bar.progress == bar.total
        metrics = screen.query_one(MetricsTable)
        assert metrics.row_count == 2
        ndcg = exp.scores["words"]["ndcg@10"]
        low, high = exp.intervals["words"]["ndcg@10"]
        assert cell(metrics, 1, 1) == f"{ndcg:.4f} [{low:.3f}, {high:.3f}]"
        configs = screen.query_one("#exp-configs", SelectionList)
        assert str(configs.get_option_at_index(1).prompt) == "words  mode=dense limit=5"
        paired = str(screen.query_one("#exp-paired", Static).render())
        assert paired.startswith("words vs default ndcg@10: ") and " p=" in paired
        queries = screen.query_one(QueryTable)
        assert queries.row_count == len(JUDGED)
        diffs = [abs(r["diff"]) for r in queries.entries]
        assert diffs == sorted(diffs, reverse=True) and diffs[0] > 0 and diffs[-1] == 0
        assert queries.entries[-1]["query"] == "rivers danube"  # the same under both
        text = screen_text(app)
        assert "ndcg@10" in text and f"{ndcg:.4f}" in text and "just run" in text


async def test_the_latest_experiment_shows_on_open_and_r_runs_again(tuned: Workbench) -> None:
    first = tuned.tuning.run("mine", ["words", "default"])
    app = KeepuiApp(tuned, poll_interval=None)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        screen = await open_experiments(app, pilot)
        assert screen.experiment is not None and screen.experiment.id == first.id
        assert screen.checked == ["default", "words"]  # its configurations, the list's order
        assert "the latest" in str(screen.query_one("#exp-header", Static).render())
        await pilot.press("d")  # to the queries
        assert app.focused is screen.query_one(QueryTable)
        await pilot.press("r")
        await settle(app, pilot)
        assert len(tuned.tuning.experiments("mine")) == 2
        assert screen.experiment is not None and screen.experiment.configs[0] == "default"
        assert "2 experiments on this set" in str(screen.query_one("#exp-header").render())
        await pilot.press("f1")
        await settle(app, pilot)
        assert isinstance(app.screen, HelpScreen) and app.screen.section == "Experiments"
        await pilot.press("escape", "escape")
        await settle(app, pilot)
        assert not isinstance(app.screen, ExperimentsScreen)


async def test_enter_on_a_query_judges_side_by_side_and_the_row_is_rescored(
    tuned: Workbench,
) -> None:
    app = KeepuiApp(tuned, poll_interval=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        screen = await open_experiments(app, pilot)
        await pilot.press("r")
        await settle(app, pilot)
        queries = screen.query_one(QueryTable)
        await pilot.press("d")
        target = next(i for i, r in enumerate(queries.entries) if r["unjudged"])
        await pilot.press(*["down"] * target)
        row = queries.current
        assert row is not None
        query, before = row["query"], row["unjudged"]
        await pilot.press("enter")
        await settle(app, pilot)
        side = app.screen
        assert isinstance(side, SideBySideScreen) and side.configs == ["default", "words"]
        left, right = side.panes
        assert app.focused is left and left.hits and right.hits
        assert len(right.hits) <= 5  # words shows five
        text = screen_text(app)
        assert "? " in text and "✓" in text  # unjudged and judged hits are marked
        unjudged = next(i for i, h in enumerate(left.hits) if h.id not in left.grades)
        doc = left.hits[unjudged].id
        line = side.query_one("#sbs-score-0", JudgedLine)
        score_before = str(line.render())
        await pilot.press(*["down"] * unjudged, "plus")
        await settle(app, pilot)
        assert {j.id: j.grade for j in tuned.judgments(query)}[doc] == 1
        assert left.grades[doc] == 1 and side.judged
        assert str(line.render()) != score_before
        if doc in right.ids:  # the same document is marked on the other side too
            assert right.grades[doc] == 1
        await pilot.press("escape")
        await settle(app, pilot)
        assert app.screen is screen
        rescored = next(r for r in queries.entries if r["query"] == query)
        assert rescored["unjudged"] == before - 1
        assert queries.current is not None and queries.current["query"] == query
        assert "re-scored" in str(screen.query_one("#exp-header", Static).render())
        assert len(tuned.tuning.experiments("mine")) == 1  # re-scoring stores nothing


async def test_without_query_sets_the_screen_says_how_to_make_one(
    tmp_path: Path, frozen_clock: Clock
) -> None:
    wb = _store(tmp_path / "store", frozen_clock, queryset=False)
    try:
        app = KeepuiApp(wb, poll_interval=None)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(app, pilot)
            await pilot.press("ctrl+p")
            await settle(app, pilot)
            assert isinstance(app.screen, CommandPalette)
            app.screen.query_one(CommandInput).value = "experiments"
            await settle(app, pilot)
            await pilot.press("enter")
            await settle(app, pilot)
            screen = app.screen
            assert isinstance(screen, ExperimentsScreen)
            said = str(screen.query_one("#exp-message", Static).render())
            assert "keepui queryset add NAME --from-judgments" in said
            await pilot.press("r")  # nothing to run: said, no crash
            await settle(app, pilot)
            assert app.screen is screen and screen.experiment is None
    finally:
        wb.close()


async def test_the_mode_picker_offers_the_stores_configurations(tuned: Workbench) -> None:
    app = KeepuiApp(tuned, poll_interval=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        mode = app.screen.query_one("#search-mode", Select)
        assert ("config words", "config:words") in [(str(p), v) for p, v in mode._options]
        await pilot.press("shift+tab")  # from the bar, back round to the mode picker
        assert app.focused is mode
        await pilot.press("enter", "down", "down", "down", "down", "enter")
        await settle(app, pilot)
        assert mode.value == "config:words"
        await search(app, pilot, "storage backups")
        pane = app.screen.query_one(ResultTabs).current
        assert pane is not None and pane.q.config == "words" and pane.q.mode is None
        assert pane.q.limit == 5 and len(pane.hits) <= 5  # the configuration's limit
        assert tuned.searches()[0].q.config == "words"
        assert "config words" in screen_text(app)  # the tab says so
        await pilot.press("slash")
        await submit(app, pilot, "rivers config:default n:3")
        pane = app.screen.query_one(ResultTabs).current
        assert pane is not None and (pane.q.config, pane.q.limit) == ("default", 3)


def test_config_in_the_bar_round_trips() -> None:
    q = parse_search("auth config:words mode:dense", limits={"words": 5})
    assert (q.query, q.config, q.mode, q.limit) == ("auth", "words", "dense", 5)
    assert parse_search(format_search(q)) == q
    assert parse_search("auth n:7", config="words", limits={"words": 5}).limit == 7
    assert parse_search("auth min:0.2", config="words", limits={"words": 5}).limit == 5


async def test_a_failed_run_is_said_in_the_screen(tuned: Workbench, tmp_path: Path) -> None:
    listing = tmp_path / "plain.txt"
    listing.write_text("nothing judged here\n")
    tuned.tuning.add_queryset("plain", path=listing)
    app = KeepuiApp(tuned, poll_interval=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        screen = await open_experiments(app, pilot)
        await pilot.press("s")  # the picker opens on the set shown; plain is listed last
        await pilot.press("down", "enter")
        await settle(app, pilot)
        assert screen.queryset == "plain" and screen.experiment is None
        await pilot.press("r")
        await settle(app, pilot)
        said = screen.query_one("#exp-message", Static)
        assert said.has_class("-error") and "none of the 1 queries of plain" in str(said.render())
        assert app.screen is screen and not screen.running
        assert tuned.tuning.experiments("plain") == []
