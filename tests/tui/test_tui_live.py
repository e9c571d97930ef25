"""Other processes while the TUI runs: `keepui put` and `keepui find --json` go through its
socket, and what they add appears in the open result tab (real subprocesses)."""

from __future__ import annotations

import json

from support import run_cli as keepui
from tui_helpers import search, settle

from keepui.tui.app import KeepuiApp
from keepui.tui.widgets.history_list import HistoryList
from keepui.tui.widgets.result_tabs import ResultTabs
from keepui.tui.widgets.status_bar import StatusBar
from keepui_engine import Workbench


async def test_put_and_find_from_other_processes(app: KeepuiApp, seeded: Workbench) -> None:
    seeded.serve()  # what `keepui tui` does before the app starts
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "glacier tag:topic=ice")
        pane = app.screen.query_one(ResultTabs).current
        assert pane is not None and pane.ids == []
        put = keepui(seeded.store, "put", "A glacier is a river of ice.", "-i", "glacier",
                     "-t", "topic=ice")  # fmt: skip
        assert put.returncode == 0, put.stderr
        assert put.stdout.strip() == "glacier"
        found = keepui(seeded.store, "find", "glacier ice", "--json")
        assert found.returncode == 0, found.stderr
        doc = json.loads(found.stdout)
        assert doc["schema"] == 1 and doc["hits"][0]["id"] == "glacier"
        app.action_poll()  # the interval timer does this every 2 s
        await settle(app, pilot, rounds=4)
        assert pane.ids == ["glacier"]
        assert "6 items · 7 versions" in str(app.screen.query_one(StatusBar).render())
        assert app.screen.query_one(HistoryList).option_count == 1


async def test_a_new_version_from_outside_reaches_the_document_screen(
    app: KeepuiApp, seeded: Workbench
) -> None:
    from keepui.tui.screens.document import DocumentScreen
    from keepui.tui.widgets.version_timeline import VersionTimeline

    seeded.serve()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await app.push_screen(DocumentScreen(seeded, "rivers"))
        await settle(app, pilot)
        app.action_poll()
        await settle(app, pilot)
        timeline = app.screen.query_one(VersionTimeline)
        assert len(timeline.versions) == 1
        put = keepui(seeded.store, "put", "Rivers of Europe: the Danube, the Rhine, the Elbe.",
                     "-i", "rivers")  # fmt: skip
        assert put.returncode == 0, put.stderr
        app.action_poll()
        await settle(app, pilot, rounds=4)
        assert [v.version for v in timeline.versions] == [2, 1]
