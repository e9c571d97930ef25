"""`keepui mcp` over a long document (issue 24): find names the passage that matched and its
place, and context hands over that passage, not the document's opening."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.server import MCPServer
from test_mcp import call, connect, data

from keepui.agents.mcp.server import build_server
from keepui.agents.mcp.shared import SharedWorkbench
from keepui_engine import open_workbench

FILLER = [
    "The committee reviewed the quarterly figures and agreed on the schedule.",
    "Several members asked for more time to read the appendix before voting.",
    "The chair thanked the staff for preparing the minutes in good time.",
]
ANSWER = "Zanzibar cloves are dried in the sun for five days before export."


@pytest.fixture
def server(backend_dir: Path) -> Iterator[MCPServer[Any]]:
    """The MCP server over a Workbench that owns a fresh fake-embedder store (each backend)."""
    with open_workbench(backend_dir, own=True) as wb:
        yield build_server(SharedWorkbench(wb))


def _minutes() -> str:
    body = [f"Item {i}: {FILLER[i % len(FILLER)]}" for i in range(240)]
    body.insert(120, ANSWER)  # ~2,900 words: the answer in the middle, past the first window
    return " ".join(body)


async def test_find_names_the_passage_and_context_hands_it_over(server: MCPServer[Any]) -> None:
    async with connect(server) as client:
        await call(client, "put", text=_minutes(), id="minutes")
        await call(client, "put", text="a short note about the harbour", id="note")
        found = data(await call(client, "find", query="Zanzibar cloves dried in the sun"))
        context = data(await call(client, "context", query="Zanzibar cloves dried in the sun"))
    hit = found["hits"][0]
    assert hit["id"] == "minutes" and hit["matched"].startswith("minutes@P{")
    assert hit["part"]["index"] > 1 and "words" in hit["part"]["position"]
    first = context["passages"][0]
    assert first["matched"] == hit["matched"] and ANSWER in first["text"]
    assert "Item 0:" not in first["text"]  # not the document's opening
