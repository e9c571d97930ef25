"""The document screen while the queue worker is busy: the document, its versions and its
similar items are shown while a summary is being computed, and the summary shows as pending
until it lands."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
import support
from textual.widgets import Static
from tui_helpers import settle

import keepui_engine.providers.summary as summary_module
from keepui.tui.app import KeepuiApp
from keepui.tui.screens.document import DocumentScreen, SimilarList
from keepui.tui.widgets.version_timeline import VersionTimeline
from keepui_engine import Workbench

WAIT_S, V1, V2, SUMMARY = support.WAIT_S, support.AUTH_V1, support.AUTH_V2, support.AUTH_SUMMARY
BlockingSummarizer = support.BlockingSummarizer


def shown(app: KeepuiApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


async def test_the_document_opens_while_its_summary_is_computed(
    seeded: Workbench, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow = BlockingSummarizer()
    monkeypatch.setattr(summary_module, "create_summarizer", lambda *a, **k: slow)
    seeded.put(V1, id="auth-05")
    seeded.put(V2, id="auth-05")
    finished = threading.Event()

    def done(result: dict[str, Any]) -> None:
        if result["doc_id"] == "auth-05":
            finished.set()

    seeded.start_worker(on_result=done)  # as `keepui` runs it (Workbench.serve)
    assert slow.entered.wait(WAIT_S)  # the worker is summarising auth-05 now
    app = KeepuiApp(seeded, poll_interval=None, warm_up=False)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(app, pilot)
            await app.push_screen(DocumentScreen(seeded, "auth-05"))
            # a load that waited for the summary would hang here, not time out slowly
            await asyncio.wait_for(settle(app, pilot), WAIT_S)
            assert not slow.release.is_set()
            screen = app.screen
            assert isinstance(screen, DocumentScreen) and screen.item is not None
            assert shown(app, "#doc-header").startswith("auth-05   version 2 of 2")
            assert shown(app, "#doc-text").endswith("who rotates the signing keys.")
            assert [v.version for v in screen.query_one(VersionTimeline).versions] == [2, 1]
            assert shown(app, "#doc-pending") == "… summarize running"  # pending, as pending
            assert screen.query_one(SimilarList).border_title == "similar"  # found as well
            assert screen.item.summary != SUMMARY
            slow.release.set()
            assert await asyncio.to_thread(finished.wait, WAIT_S)
            app.action_poll()  # the app's timer does this every 2 s
            await settle(app, pilot, rounds=4)
            assert screen.item.summary == SUMMARY
            assert not screen.query_one("#doc-pending").display
    finally:
        slow.release.set()


async def test_the_document_is_shown_before_its_similar_items_are_found(
    seeded: Workbench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding similar items needs the model (busy with background work on a real store):
    the document does not wait for it."""
    seeded.put(V1, id="auth-05")
    embedder = seeded.embedder
    inside, go_on = threading.Event(), threading.Event()
    original = embedder.embed

    def held(texts: list[str]) -> Any:
        if any(t.startswith("Sentence 0 tells") for t in texts):  # the similar items' query
            inside.set()
            assert go_on.wait(WAIT_S)
        return original(texts)

    monkeypatch.setattr(embedder, "embed", held)
    app = KeepuiApp(seeded, poll_interval=None, warm_up=False)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(app, pilot)
            screen = DocumentScreen(seeded, "auth-05")
            await app.push_screen(screen)
            assert await asyncio.to_thread(inside.wait, WAIT_S)

            async def document_shown() -> None:
                while screen.item is None:
                    await pilot.pause()

            await asyncio.wait_for(document_shown(), WAIT_S)
            await pilot.pause()
            assert shown(app, "#doc-header").startswith("auth-05   version 1 of 1")
            assert shown(app, "#doc-pending") == "… summarize queued"
            similar = screen.query_one(SimilarList)
            assert similar.border_title == "similar …" and similar.option_count == 0
            go_on.set()
            await settle(app, pilot)
            assert similar.border_title == "similar" and similar.option_count > 0
    finally:
        go_on.set()
