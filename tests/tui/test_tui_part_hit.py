"""The detail pane says which part of a long document a hit matched, and shows it."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static
from tui_helpers import ATLAS, search, settle

from keepui.tui.app import KeepuiApp
from keepui.tui.widgets.detail_pane import DetailPane
from keepui_engine import open_workbench


@pytest.fixture(params=["duckdb", "postgres"])
def tui_backend(request: pytest.FixtureRequest) -> str:
    """Each test here that opens a store runs on DuckDB and on PostgreSQL."""
    return str(request.param)


LONG = ATLAS


async def test_a_part_hit_shows_its_number_title_excerpt_and_text(tui_store: Path) -> None:
    with open_workbench(tui_store, own=True) as wb:
        wb.put(LONG, id="atlas")
        app = KeepuiApp(wb, poll_interval=None)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(app, pilot)
            await search(app, pilot, "glacier crevasse mode:bm25")
            detail = app.screen.query_one(DetailPane)
            assert detail.hit is not None and detail.hit.matched == "atlas@P{2}"
            assert detail.item is not None and (detail.item.part or {})["count"] == 3
            text = str(detail.query_one("#detail-body", Static).render())
            assert text.startswith("atlas   (matched atlas@P{2})\n")
            start, end = LONG.index("# Mountains"), LONG.index("# Kitchen") - 2
            assert f"part 2 of 3 · Mountains · section 2, chars {start}-{end}\n" in text
            assert "match …peak" in text and "glacier crevasse\n" in text
            assert "\ntext\n# Mountains\npeak0" in text and "sourdough" not in text
