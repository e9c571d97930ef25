"""LISTEN/NOTIFY: a write committed by any process wakes a store's change feed; reads do not."""

from __future__ import annotations

from pathlib import Path

import pg_support
from support import run_cli

from keepui_engine import open_workbench


def test_a_write_by_another_process_wakes_the_feed_and_reads_do_not(
    tmp_path: Path, pg_url: str
) -> None:
    store = pg_support.make_pg_store(tmp_path / "store", pg_url)
    with open_workbench(store) as wb:
        wb.put("first note", id="first")
        feed = wb.change_feed()
        assert feed is not None
        try:
            assert feed.wait(0.0) == 0  # nothing committed since it started listening
            put = run_cli(store, "put", "--text", "a note from another process", "-i", "other")
            assert put.returncode == 0, put.stderr
            assert feed.wait(10.0) >= 1
            wb.stats(), wb.pending(), wb.find("note")
            # what a listener does on a notice sends none (get is a write: it records access)
            assert feed.wait(0.2) == 0
            wb.put("changed text", id="first")
            assert feed.wait(10.0) >= 1
        finally:
            feed.close()


def test_a_duckdb_store_has_no_feed(store_dir: Path) -> None:
    with open_workbench(store_dir) as wb:
        assert wb.change_feed() is None
