"""The agent toolkit: remember, recall and get_context over a Workbench."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from keepui.agents.langchain import keepui_tools
from keepui_engine import Workbench


@pytest.fixture
def store_dir(backend_dir: Path) -> Path:
    """The tests here that use store_dir (through wb) run on DuckDB and on PostgreSQL."""
    return backend_dir


def test_the_toolkit(wb: Workbench) -> None:
    tools = keepui_tools(wb)
    assert [t.name for t in tools] == ["remember", "recall", "get_context"]
    assert all(t.description for t in tools)
    assert set(tools[0].args) == {"text", "tags", "id"}


def test_remember_then_recall(wb: Workbench) -> None:
    remember, recall, _ = keepui_tools(wb)
    said = remember.invoke(
        {"text": "The team offsite is in Porto on 12 June", "tags": ["topic=events"], "id": "off"}
    )
    assert said == "created off (version 1)"
    assert wb.get("off").tags["topic"] == "events"
    remember.invoke({"text": "Buy oat milk", "tags": ["topic=shopping"]})
    found = json.loads(recall.invoke({"query": "offsite Porto", "limit": 3}))
    assert found["query"] == "offsite Porto"
    first = found["hits"][0]
    assert first["id"] == "off" and first["tags"] == {"topic": "events"}
    assert first["summary"].startswith("The team offsite")
    only = json.loads(recall.invoke({"query": "offsite", "tags": ["topic=shopping"]}))
    assert all(h["tags"]["topic"] == "shopping" for h in only["hits"])


def test_get_context_cites_sources(wb: Workbench) -> None:
    assert hasattr(wb, "context")
    remember, _, get_context = keepui_tools(wb)
    remember.invoke({"text": "The deploy key lives in the team vault.", "id": "deploy"})
    remember.invoke({"text": "Lunch is at noon on Fridays.", "id": "lunch"})
    text = get_context.invoke({"query": "where is the deploy key", "top_k": 2})
    assert "The deploy key lives in the team vault." in text
    assert "[Source: deploy]" in text
    empty = get_context.invoke({"query": "where is the deploy key", "tags": ["topic=none"]})
    assert empty == "No stored memory matches 'where is the deploy key'."


def test_keepui_errors_become_tool_answers(wb: Workbench) -> None:
    remember, recall, _ = keepui_tools(wb)
    answer = remember.invoke({"text": "x", "tags": ["_system=1"]})
    assert answer.startswith("Invalid input:") and "system tags" in answer
    assert "query is empty" in recall.invoke({"query": "   "})


async def test_tools_run_async(wb: Workbench) -> None:
    remember, recall, _ = keepui_tools(wb)
    await remember.ainvoke({"text": "Async memories work too", "id": "async"})
    found = json.loads(await recall.ainvoke({"query": "async memories"}))
    assert found["hits"][0]["id"] == "async"


def test_the_first_published_import_path_still_works() -> None:
    """`keepui.langchain` (its modules too) names the same objects as keepui.agents.langchain."""
    from keepui.langchain.store import KeepuiStore as from_module

    import keepui.agents.langchain as now
    import keepui.langchain as then
    from keepui.agents.langchain import store as store_now
    from keepui.langchain import KeepuiRetriever, KeepuiStore
    from keepui.langchain import keepui_tools as tools

    assert (KeepuiRetriever, KeepuiStore, tools) == (
        now.KeepuiRetriever,
        now.KeepuiStore,
        now.keepui_tools,
    )
    assert from_module is KeepuiStore and then.__all__ == now.__all__
    assert sys.modules["keepui.langchain.store"] is store_now
