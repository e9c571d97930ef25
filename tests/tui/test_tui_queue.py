"""The background queue in the TUI: the live queue line, the queue dialog (retry and purge),
and a document's unfinished work on the document screen and in the detail pane."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.widgets import Input, Static, TextArea
from tui_helpers import duckdb_only, search, settle

from keepui.tui.app import KeepuiApp
from keepui.tui.commands import KeepuiCommands
from keepui.tui.messages import QueueChanged, StoreStats
from keepui.tui.screens.confirm import ConfirmModal
from keepui.tui.screens.document import DocumentScreen
from keepui.tui.screens.main import MainScreen
from keepui.tui.screens.queue import QueueModal
from keepui.tui.widgets.detail_pane import DetailPane
from keepui.tui.widgets.queue_status import QueueStatus, queue_text, queue_totals
from keepui_engine import Stats, Workbench, open_workbench


@pytest.fixture(params=["duckdb", "postgres"])
def tui_backend(request: pytest.FixtureRequest) -> str:
    """Each test here that opens a store runs on DuckDB and on PostgreSQL."""
    return str(request.param)


LONG = "The queue keeps slow work out of the way of a put. " * 12
"""Longer than summary_max_chars (500): a put of it queues a `summarize` task."""
REFUSED = "cannot be reached"
"""Part of the error of a summarizer whose server is not there (port 9, discard)."""


def queue_line(app: KeepuiApp) -> str:
    return str(app.screen.query_one(QueueStatus).render())


@pytest.fixture
def failing(tui_store: Path) -> Iterator[Workbench]:
    """A store whose summarizer cannot be reached and gives up after one attempt, holding one
    long note whose summarize task is a dead letter."""
    config = tui_store / "keepui.toml"
    text = config.read_text().replace(
        'provider = "extractive"',
        'provider = "openai-compatible"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"',
    )
    config.write_text(text.replace("max_attempts = 5", "max_attempts = 1"))
    bench = open_workbench(tui_store, own=True)
    bench.put(LONG, id="long", tags=["topic=queue"])
    assert [r["outcome"] for r in bench.drain()] == ["dead"]
    yield bench
    bench.close()


def test_queue_text_and_totals() -> None:
    report = {"counts": {"summarize": {"queued": 2, "dead": 1}, "analyze": {"running": 1}}}
    assert queue_totals(report) == {"queued": 2, "running": 1, "failed": 0, "dead": 1}
    assert queue_text(report) == "queue: 2 pending · 1 running · 1 dead"
    assert queue_text({"counts": {}}) == "queue empty" and queue_text(None) == "queue …"


def test_queue_messages_collapse() -> None:
    first, second = QueueChanged({"counts": {}}), QueueChanged({"counts": {"x": {"queued": 1}}})
    assert second.can_replace(first)
    assert not second.can_replace(StoreStats(Stats("s", 0, 0, 0, 0, "m", 1)))


async def test_a_long_note_from_the_tui_shows_up_pending_then_done(
    app: KeepuiApp, seeded: Workbench
) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert queue_line(app) == "queue empty"
        await pilot.press("escape", "a")
        await pilot.pause()
        app.screen.query_one("#note-text", TextArea).text = LONG
        app.screen.query_one("#note-id", Input).value = "long"
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        # the write's own poll: no timer runs in tests, and no worker thread drains the queue
        assert queue_line(app) == "queue: 1 pending"
        assert app.screen.query_one(QueueStatus).has_class("-busy")
        assert [r["outcome"] for r in seeded.drain()] == ["done"]
        app.action_poll()
        await settle(app, pilot)
        assert queue_line(app) == "queue empty"


@duckdb_only("messages between threads, not the store")
async def test_reports_from_another_thread_reach_the_queue_line(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        reports = [{"counts": {"summarize": {"queued": n}}} for n in (1, 2, 3)]

        def post() -> None:
            for report in reports:
                app.post_message(QueueChanged(report))

        thread = threading.Thread(target=post)
        thread.start()
        thread.join()
        await settle(app, pilot)
        assert app.queue == reports[-1]
        assert queue_line(app) == "queue: 3 pending"


@duckdb_only("layout only")
async def test_the_queue_line_is_as_wide_as_its_text(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        status = app.screen.query_one(QueueStatus)
        for counts in ({}, {"summarize": {"queued": 12, "running": 1, "failed": 3, "dead": 2}}):
            app.queue = {"counts": counts}
            await pilot.pause()
            assert status.region.width == len(queue_line(app)) + 2  # padding 0 1


async def test_queue_dialog_lists_failures_and_retries_after_confirmation(
    failing: Workbench,
) -> None:
    app = KeepuiApp(failing, poll_interval=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        status = app.screen.query_one(QueueStatus)
        assert queue_line(app) == "queue: 1 dead" and status.has_class("-failed")
        await pilot.click("#queue-status")
        await settle(app, pilot)
        assert isinstance(app.screen, QueueModal)
        failures = str(app.screen.query_one("#queue-failures", Static).render())
        assert "dead" in failures and "summarize  long" in failures and REFUSED in failures
        await pilot.press("r")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal) and "Retry 1 dead task" in (
            app.screen.confirm_title
        )
        await pilot.press("n")
        await settle(app, pilot)
        assert queue_totals(failing.pending())["dead"] == 1
        await pilot.press("r")
        await pilot.pause()
        await pilot.press("y")
        await settle(app, pilot)
        assert isinstance(app.screen, QueueModal)
        assert queue_totals(failing.pending()) == {"queued": 1, "running": 0, "failed": 0,
                                                   "dead": 0}  # fmt: skip
        assert "queue: 1 pending" in str(app.screen.query_one("#queue-counts", Static).render())
        assert app.screen.query_one("#queue-retry").disabled
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen) and queue_line(app) == "queue: 1 pending"


async def test_purge_dead_letters_and_the_dialog_follows_the_worker(
    failing: Workbench,
) -> None:
    app = KeepuiApp(failing, poll_interval=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("escape", "p")
        await settle(app, pilot)
        assert isinstance(app.screen, QueueModal)
        failing.pending_retry()
        app.action_poll()  # what the timer does; the dialog follows the app's report
        await settle(app, pilot)
        assert "queue: 1 pending" in str(app.screen.query_one("#queue-counts", Static).render())
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, QueueModal)  # nothing dead: nothing to purge
        failing.drain()
        app.action_poll()
        await settle(app, pilot)
        await pilot.click("#queue-purge")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal) and "Purge" in app.screen.confirm_title
        await pilot.click("#confirm-yes")
        await settle(app, pilot)
        assert failing.pending()["counts"] == {}
        assert "No failures." in str(app.screen.query_one("#queue-failures", Static).render())
        await pilot.press("escape")
        assert queue_line(app) == "queue empty"


@duckdb_only("the palette only")
async def test_show_queue_is_in_the_palette(app: KeepuiApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        commands = {name: cb for name, _, cb in KeepuiCommands(app.screen).commands()}
        assert "Show queue" in commands
        commands["Show queue"]()
        await settle(app, pilot)
        assert isinstance(app.screen, QueueModal)
        await pilot.press("p")  # already open: not twice
        assert len(app.screen_stack) == 3


async def test_document_screen_shows_unfinished_work(failing: Workbench) -> None:
    app = KeepuiApp(failing, poll_interval=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await app.push_screen(DocumentScreen(failing, "long"))
        await settle(app, pilot)
        box = app.screen.query_one("#doc-pending", Static)
        text = str(box.render())
        assert box.display and box.has_class("-failed")
        assert "summarize failed after 1 attempt, gave up: the summarization server" in text
        failing.pending_retry()
        app.action_poll()
        await settle(app, pilot, rounds=3)
        assert str(box.render()) == "… summarize queued" and not box.has_class("-failed")


async def test_work_done_clears_the_document_screen(app: KeepuiApp, seeded: Workbench) -> None:
    seeded.put(LONG, id="long")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await app.push_screen(DocumentScreen(seeded, "long"))
        await settle(app, pilot)
        box = app.screen.query_one("#doc-pending", Static)
        assert box.display and str(box.render()) == "… summarize queued"
        seeded.drain()
        app.action_poll()
        await settle(app, pilot, rounds=3)
        assert not box.display
        screen = app.screen
        assert isinstance(screen, DocumentScreen) and screen.item is not None
        assert screen.item.pending == [] and len(screen.item.summary) < len(LONG)


async def test_detail_pane_shows_unfinished_work(failing: Workbench) -> None:
    app = KeepuiApp(failing, poll_interval=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "queue slow work tag:topic=queue")
        detail = app.screen.query_one(DetailPane)
        text = str(detail.query_one("#detail-body", Static).render())
        assert "background work\nsummarize failed after 1 attempt, gave up:" in text
        assert REFUSED in text
