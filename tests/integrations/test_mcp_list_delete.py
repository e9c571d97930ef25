"""`keepui mcp`: browsing (list) and forgetting (delete), find/context about now unless
history is asked for, and error hints that name tool arguments (issue 22, point 10)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client
from mcp.server import MCPServer
from mcp.types import CallToolResult
from test_mcp import call, connect, data, text_of

from keepui.agents.mcp.errors import tool_words
from keepui.agents.mcp.server import build_server
from keepui.agents.mcp.shared import SharedWorkbench
from keepui_engine import open_workbench


@pytest.fixture
def server(backend_dir: Path) -> Iterator[MCPServer[Any]]:
    """The MCP server over a Workbench that owns a fresh fake-embedder store (each backend)."""
    with open_workbench(backend_dir, own=True) as wb:
        yield build_server(SharedWorkbench(wb))


def ids(result: CallToolResult) -> list[str]:
    """The ids a list call returned, in order."""
    return [d["id"] for d in data(result)["documents"]]


async def failed(client: Client, name: str, **args: Any) -> str:
    """Call a tool that must fail; its error text."""
    result = await client.call_tool(name, args)
    assert result.is_error, text_of(result)
    return text_of(result)


MEETINGS = {1: ["topic=auth"], 2: ["topic=storage"], 3: ["topic=auth", "status=done"]}


async def test_list_by_prefix_tags_limit_and_sort(server: MCPServer[Any]) -> None:
    async with connect(server) as client:
        for n, tags in MEETINGS.items():
            await call(client, "put", text=f"meeting {n} notes", id=f"meeting-{n}", tags=tags)
        await call(client, "put", text="Bake the sourdough", id="recipe")
        newest = await call(client, "list", prefix="meeting-")
        auth = await call(client, "list", tags=["topic=auth"])
        auth_done = await call(client, "list", tags=["topic=auth", "status"])
        first_two = data(await call(client, "list", limit=2))
        by_id = await call(client, "list", sort="id")
        await call(client, "put", text="meeting 1 notes, amended", id="meeting-1")
        by_update = await call(client, "list", prefix="meeting-", sort="updated")
        by_creation = await call(client, "list", prefix="meeting-", sort="created")
        nothing = data(await call(client, "list", prefix="zzz"))
    assert ids(newest) == ["meeting-3", "meeting-2", "meeting-1"]
    assert ids(auth) == ["meeting-3", "meeting-1"] and ids(auth_done) == ["meeting-3"]
    assert [d["id"] for d in first_two["documents"]] == ["recipe", "meeting-3"]
    assert first_two["more"] is True and data(newest)["more"] is False
    assert ids(by_id) == ["meeting-1", "meeting-2", "meeting-3", "recipe"]
    assert ids(by_update) == ["meeting-1", "meeting-3", "meeting-2"]
    assert ids(by_creation) == ["meeting-3", "meeting-2", "meeting-1"]
    doc = data(by_update)["documents"][0]
    assert doc["summary"] == "meeting 1 notes, amended" and doc["versions"] == 2
    assert doc["tags"]["topic"] == "auth" and doc["updated"] >= doc["created"]
    assert "text" not in doc and nothing == {"documents": [], "more": False}


async def test_delete_reverts_then_deletes_and_purge_forgets_everything(
    server: MCPServer[Any],
) -> None:
    async with connect(server) as client:
        await call(client, "put", text="first take", id="db")
        await call(client, "put", text="second take", id="db")
        reverted = await call(client, "delete", id="db")
        after_revert = data(await call(client, "get", address="db"))
        deleted = data(await call(client, "delete", id="db"))
        gone = await failed(client, "get", address="db")
        for take in ("one", "two", "three"):
            await call(client, "put", text=f"take {take}", id="p")
        purged = data(await call(client, "delete", id="p", purge=True))
        old_gone = await failed(client, "get", address="p@V{1}")
        listed = data(await call(client, "list"))
    assert data(reverted) == {
        "id": "db",
        "action": "reverted",
        "version": 1,
        "removed_versions": 1,
        "message": "reverted db to version 1 (its latest version was removed)",
    }
    assert text_of(reverted) == data(reverted)["message"]
    assert after_revert["text"] == "first take" and after_revert["versions"] == 1
    assert deleted["action"] == "deleted" and deleted["message"].startswith("deleted db")
    assert "no document with id 'db'" in gone
    assert purged["action"] == "purged" and purged["removed_versions"] == 3
    assert purged["message"] == "purged p and its history (3 version(s))"
    assert "no document with id 'p'" in old_gone and listed["documents"] == []


AOA_V1 = "The API gateway is a single point of failure for the whole platform."
AOA_V2 = "The API gateway now runs in three zones behind a load balancer."


async def test_find_and_context_answer_about_now_unless_history(server: MCPServer[Any]) -> None:
    async with connect(server) as client:
        await call(client, "put", text=AOA_V1, id="notes/aoa", tags=["status=draft"])
        await call(client, "put", text=AOA_V2, id="notes/aoa", tags=["status=reviewed"])
        await call(client, "now", text="Checking the single point of failure in the gateway")
        now = data(await call(client, "find", query="single point of failure", mode="bm25"))
        past = data(
            await call(client, "find", query="single point of failure", mode="bm25", history=True)
        )
        draft = data(await call(client, "find", query="gateway", tags=["status=draft"]))
        draft_then = data(
            await call(client, "find", query="gateway", tags=["status=draft"], history=True)
        )
        with_notes = data(
            await call(client, "find", query="single point of failure", mode="bm25", all=True)
        )
        ctx = data(await call(client, "context", query="single point of failure", mode="bm25"))
        ctx_then = data(
            await call(
                client, "context", query="single point of failure", mode="bm25", history=True
            )
        )
    assert all(h["archived"] is None and "@V{" not in h["matched"] for h in now["hits"])
    assert "now" not in [h["id"] for h in now["hits"]]
    old = [h for h in past["hits"] if h["matched"] == "notes/aoa@V{1}"]
    assert old and old[0]["archived"] == {"version": 1, "of": 2, "text_differs": True}
    assert draft["hits"] == []
    assert [h["matched"] for h in draft_then["hits"]] == ["notes/aoa@V{1}"]
    assert "now" in [h["id"] for h in with_notes["hits"]]
    assert "[Source: notes/aoa@V{1}]" not in ctx["text"]
    assert "[Source: notes/aoa@V{1}]" in ctx_then["text"]


async def test_error_hints_name_tool_arguments(server: MCPServer[Any]) -> None:
    async with connect(server) as client:
        await call(client, "put", text="one version only", id="solo")
        bad_date = await failed(client, "find", query="x", since="last blue moon")
        bad_tag = await failed(client, "list", tags=["=v"])
        bare_tag = await failed(client, "put", text="x", tags=["topic"])
        unknown = await failed(client, "get", address="nope")
        too_old = await failed(client, "get", address="solo@V{3}")
        unknown_delete = await failed(client, "delete", id="nope")
        blank_scope = await failed(client, "now", scope="  ")
        no_limit = await failed(client, "list", limit=0)
        bad_sort = await failed(client, "list", sort="size")
        bad_mode = await failed(client, "find", query="x", mode="psychic")
    hint = "\nHint: change the `{}` argument as the message says and call {} again."
    assert "`since` 'last blue moon' is not" in bad_date
    assert bad_date.endswith(hint.format("since", "find"))
    assert 'e.g. tags=["topic=search"]' in bad_tag and bad_tag.endswith(hint.format("tags", "list"))
    assert 'give "topic=VALUE" in `tags`' in bare_tag
    assert "The list tool shows the ids" in unknown and "`address` argument" in unknown
    assert "solo@V{0} (current) to solo@V{0}" in too_old and "-V" not in too_old
    assert "`id` argument" in unknown_delete and "delete takes no ID@V{N}" in unknown_delete
    assert 'e.g. scope="project-x"' in blank_scope
    assert blank_scope.endswith(hint.format("scope", "now"))
    assert "limit" in no_limit and "greater than or equal to 1" in no_limit
    assert "sort" in bad_sort and "'updated', 'created', 'accessed' or 'id'" in bad_sort
    assert "mode" in bad_mode
    for text in (bad_date, bad_tag, bare_tag, unknown, too_old, unknown_delete, blank_scope):
        assert " -t " not in text and "--" not in text and "keepui list" not in text, text


REWORDED = [
    ("--limit 0: give a number of 1 or more.", "`limit` 0: give a number of 1 or more."),
    ("--sort 'x': choose one of updated, id.", "`sort` 'x': choose one of updated, id."),
    ("--top-k 0: give a whole number of 1.", "`top_k` 0: give a whole number of 1."),
    (
        "query required: give it with -p query=TEXT",
        "query required: give it with the `query` argument",
    ),
    ("run the same command again to continue", "call the tool again to continue"),
    ("tags go with: keepui now TEXT -t KEY=VALUE.", "tags go with: give `text` with `tags`."),
    ("a date like 2026-11-01 stays", "a date like 2026-11-01 stays"),
]


@pytest.mark.parametrize(("cli", "tool"), REWORDED)
def test_cli_words_become_tool_words(cli: str, tool: str) -> None:
    assert tool_words(cli) == tool
