"""On a PostgreSQL store the TUI hears other processes' writes (LISTEN/NOTIFY), with no poll
timer: a `keepui put` from another terminal shows up in the open result tab."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pg_support
from support import run_cli
from tui_helpers import search, settle

from keepui.tui.app import KeepuiApp
from keepui.tui.messages import StoreStats
from keepui.tui.widgets.result_tabs import ResultTabs
from keepui_engine import open_workbench


class Watched(KeepuiApp):
    """The app, with an event set when a poll sees the store's counts move."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.moved = asyncio.Event()

    def on_store_stats(self, message: StoreStats) -> None:
        before = self.stats
        super().on_store_stats(message)
        if before is not None and before.items != message.stats.items:
            self.moved.set()


async def test_a_put_from_another_process_reaches_the_open_tab(tmp_path: Path, pg_url: str) -> None:
    store = pg_support.make_pg_store(tmp_path / "store", pg_url, half_life_days=0)
    with open_workbench(store, own=True) as wb:
        wb.put("Rivers of Europe: the Danube and the Rhine.", id="rivers")
        app = Watched(wb, poll_interval=30.0, warm_up=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(app, pilot)
            assert app.stats is not None and app.stats.items == 1
            await search(app, pilot, "glacier ice")
            pane = app.screen.query_one(ResultTabs).current
            assert pane is not None and "glacier" not in pane.ids
            put = run_cli(store, "put", "--text", "A glacier is a river of ice.", "-i", "glacier")
            assert put.returncode == 0, put.stderr
            # the 30 s timer is not running: only the notice can bring the change this soon
            await asyncio.wait_for(app.moved.wait(), 20)
            await settle(app, pilot, rounds=4)
            assert app.stats.items == 2
            assert pane.ids[0] == "glacier"
