"""`keepui mcp`: the tools and resources in process, over real stdio, and beside `keepui serve`."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import IO, Any

import anyio
import anyio.lowlevel
import anyio.to_thread
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.server import MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent, TextResourceContents
from mcp_types.version import LATEST_HANDSHAKE_VERSION
from support import make_fake_store, run_cli

from keepui.agents.mcp.server import build_server
from keepui.agents.mcp.shared import SharedWorkbench
from keepui_engine import Workbench, open_workbench

CALL_S = 60  # every client call and every wait on a child process ends within this
TOOLS = {"put", "get", "list", "find", "context", "flow", "now", "delete"}

NOTES = {
    "db-choice": "We decided to store everything in DuckDB because one file is easy to back up.",
    "marathon": "Training plan: long run on Sunday, intervals on Tuesday, rest on Friday.",
    "recipe": "Bake the sourdough at 230 degrees for twenty minutes with the lid on.",
    "meeting": "Standup: Alice is blocked on the login bug, Bob reviews the payment service.",
}


@pytest.fixture
def server(backend_dir: Path) -> Iterator[MCPServer[Any]]:
    """The MCP server over a Workbench that owns a fresh fake-embedder store (each backend)."""
    with open_workbench(backend_dir, own=True) as wb:
        yield build_server(SharedWorkbench(wb))


@asynccontextmanager
async def connect(target: Any, budget: float = 120) -> AsyncIterator[Client]:
    """A connected SDK client; the whole session must end within `budget` seconds."""
    with anyio.fail_after(budget):
        async with Client(target, read_timeout_seconds=CALL_S) as client:
            yield client


async def call(client: Client, name: str, **args: Any) -> CallToolResult:
    """Call a tool that must succeed."""
    result = await client.call_tool(name, args)
    assert not result.is_error, text_of(result)
    return result


def text_of(result: CallToolResult) -> str:
    """The text blocks of a tool result."""
    return "\n".join(b.text for b in result.content if isinstance(b, TextContent))


def data(result: CallToolResult) -> dict[str, Any]:
    """The structured result of a tool."""
    assert result.structured_content is not None
    return dict(result.structured_content)


async def read(client: Client, uri: str) -> str:
    """The text of a resource."""
    contents = (await client.read_resource(uri)).contents
    assert len(contents) == 1 and isinstance(contents[0], TextResourceContents)
    return contents[0].text


# -- in process, fake embedder -----------------------------------------------------------------
async def test_lists_the_tools_and_resources(server: MCPServer[Any]) -> None:
    async with connect(server) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        resources = [str(r.uri) for r in (await client.list_resources()).resources]
        templates = (await client.list_resource_templates()).resource_templates
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and tool.output_schema, tool.name
        assert "\n    " not in tool.description  # dedented for the agent
    assert tools["find"].input_schema["properties"]["mode"]["anyOf"][0]["enum"] == [
        "hybrid",
        "dense",
        "bm25",
    ]
    hit_schema = (tools["find"].output_schema or {})["$defs"]["HitOut"]
    assert "scores" in hit_schema["properties"]
    for name in ("find", "context"):  # issue 22: about now unless asked for the past
        props = tools[name].input_schema["properties"]
        assert props["history"]["type"] == props["all"]["type"] == "boolean"
        assert props["history"]["default"] is props["all"]["default"] is False
    assert tools["list"].input_schema["properties"]["sort"]["enum"] == [
        "updated",
        "created",
        "accessed",
        "id",
    ]
    assert (tools["find"].output_schema or {})["$defs"]["ArchivedOut"]["properties"]
    assert "message" in (tools["delete"].output_schema or {})["properties"]
    assert tools["get"].annotations and tools["get"].annotations.read_only_hint
    assert tools["list"].annotations and tools["list"].annotations.read_only_hint
    assert tools["put"].annotations and not tools["put"].annotations.read_only_hint
    assert tools["delete"].annotations and tools["delete"].annotations.destructive_hint
    assert resources == ["keepui://now"]
    assert [t.uri_template for t in templates] == ["keepui://{+id}"]


async def test_put_get_and_find_with_score_provenance(server: MCPServer[Any]) -> None:
    async with connect(server) as client:
        first = data(await call(client, "put", text="DuckDB keeps one file", id="db"))
        second = await call(
            client, "put", text="DuckDB keeps one file on disk", id="db", tags=["topic=storage"]
        )
        same = data(await call(client, "put", text="DuckDB keeps one file on disk", id="db",
                               tags=["topic=storage"]))  # fmt: skip
        await call(client, "put", text="Sourdough bread needs a long proof", tags=["topic=food"])
        item = data(await call(client, "get", address="db"))
        old = data(await call(client, "get", address="db@V{1}"))
        found = data(await call(client, "find", query="duckdb file", limit=5))
        tagged = data(await call(client, "find", query="sourdough", tags=["topic=food"]))
        other = data(await call(client, "find", query="sourdough", tags=["topic=storage"]))
        words = data(await call(client, "find", query="sourdough", mode="bm25"))
        future = data(await call(client, "find", query="duckdb", since="2999-01-01"))
    assert first == {"id": "db", "version": 1, "action": "created"}
    assert data(second)["action"] == "updated" and same["action"] == "unchanged"
    assert json.loads(text_of(second)) == data(second)  # the text block mirrors the data
    assert item["text"] == "DuckDB keeps one file on disk" and item["tags"]["topic"] == "storage"
    assert item["version"] == 2 and item["versions"] == 2
    assert old["text"] == "DuckDB keeps one file" and old["offset"] == 1
    top = found["hits"][0]
    assert top["id"] == "db" and top["matched"] in ("db", "db@V{1}") and found["mode"] == "hybrid"
    assert {"dense", "dense_rank", "bm25", "bm25_rank", "fused", "decay", "final"} <= set(
        top["scores"]
    )
    assert top["scores"]["final"] == pytest.approx(top["score"])
    assert [h["tags"]["topic"] for h in tagged["hits"]] == ["food"] and other["hits"] == []
    assert words["mode"] == "bm25" and words["hits"][0]["similarity"] is None
    assert future["hits"] == []


async def test_context_is_prompt_text_with_sources(server: MCPServer[Any]) -> None:
    async with connect(server) as client:
        await call(client, "put", text="We chose DuckDB for storage. It is one file.", id="db")
        await call(client, "put", text="Marathon training on Sundays.", id="run")
        result = await call(client, "context", query="duckdb storage", top_k=2, max_tokens=50)
    ctx = data(result)
    assert text_of(result) == ctx["text"]
    assert "[Source: db]" in ctx["text"] and ctx["tokens"] <= 50 == ctx["budget"]
    assert ctx["passages"][0]["id"] == "db"


async def test_flow_returns_outcome_results_and_ticks(server: MCPServer[Any]) -> None:
    async with connect(server) as client:
        await call(client, "put", text="OAuth2 tokens for the API gateway", tags=["topic=auth"])
        await call(client, "put", text="Sourdough bread with a long fermentation")
        done = data(await call(client, "flow", query="OAuth2 gateway", budget=3))
        empty = data(await call(client, "flow", query="zzzz qqqq", mode="bm25"))
    assert done["flow"] == "query-resolve" and done["status"] in ("done", "stopped")
    assert done["reason"] and done["results"][0]["summary"].startswith("OAuth2")
    assert len(done["ticks"]) == len(done["history"]) >= 1 and done["budget"] == 3
    search = done["ticks"][0]["actions"][0]
    assert search["action"] == "find" and search["query"] == "OAuth2 gateway"
    assert search["results"] >= 1
    assert empty["status"] == "stopped" and empty["results"] == []


async def test_a_flow_stopped_by_its_budget_resumes_from_its_cursor(
    server: MCPServer[Any],
) -> None:
    async with connect(server) as client:
        for i, topic in enumerate(["tokens", "keys", "gateways"]):
            await call(client, "put", text=f"alpha note about {topic}", tags=[f"topic=t{i}"])
        first = data(await call(client, "flow", query="alpha note", budget=1))
        assert first["status"] == "stopped" and first["reason"] == "budget" and first["cursor"]
        rest = data(await call(client, "flow", query="alpha note", cursor=first["cursor"]))
    assert [t["tick"] for t in rest["ticks"]] == [2] and rest["history"][0] == "query-resolve"


async def test_now_note_and_resources(server: MCPServer[Any]) -> None:
    async with connect(server) as client:
        blank = data(await call(client, "now"))
        empty_resource = await read(client, "keepui://now")
        set_ = data(await call(client, "now", text="Reviewing the auth design", tags=["k=v"]))
        scoped = data(await call(client, "now", text="Indexing papers", scope="agent-7"))
        again = data(await call(client, "now"))
        resource = await read(client, "keepui://now")
        scoped_resource = await read(client, "keepui://now:agent-7")
    assert blank["version"] == 0 and blank["text"] == "" and empty_resource == ""
    assert set_["id"] == "now" and set_["version"] == 1 and set_["tags"]["k"] == "v"
    assert scoped["id"] == "now:agent-7"
    assert again["text"] == resource == "Reviewing the auth design"
    assert scoped_resource == "Indexing papers"


async def test_document_resource_decodes_ids(server: MCPServer[Any]) -> None:
    odd = "notes/2026:q4%draft"
    async with connect(server) as client:
        await call(client, "put", text="first draft", id=odd)
        await call(client, "put", text="second draft", id=odd)
        literal = await read(client, "keepui://notes/2026:q4%25draft")
        encoded = await read(client, "keepui://notes%2F2026%3Aq4%25draft")
        older = await read(client, "keepui://notes/2026:q4%25draft@V%7B1%7D")
        await call(client, "put", text="a file note", id="file:///home/me/a/../b.md")
        path_like = await read(client, "keepui://file:///home/me/a/../b.md")
        with pytest.raises(MCPError) as missing:
            await read(client, "keepui://no-such-id")
    assert literal == encoded == "second draft" and older == "first draft"
    assert path_like == "a file note"
    assert "no-such-id" in missing.value.error.message


async def test_engine_errors_are_tool_errors(server: MCPServer[Any]) -> None:
    async with connect(server) as client:
        missing = await client.call_tool("get", {"address": "nope"})
        bad_date = await client.call_tool("find", {"query": "x", "since": "last blue moon"})
        bad_tag = await client.call_tool("put", {"text": "x", "tags": ["=v"]})
        bad_mode = await client.call_tool("find", {"query": "x", "mode": "psychic"})
        bad_scope = await client.call_tool("now", {"scope": "  "})
        still_fine = await call(client, "put", text="the server still answers", id="ok")
    assert missing.is_error and "nope" in text_of(missing) and "not_found" in text_of(missing)
    for failed in (bad_date, bad_tag, bad_scope):
        assert failed.is_error and "usage" in text_of(failed), text_of(failed)
    assert bad_mode.is_error and "mode" in text_of(bad_mode)
    assert data(still_fine)["action"] == "created"


async def test_calls_run_off_the_loop_one_at_a_time(wb: Workbench) -> None:
    access = SharedWorkbench(wb)
    gate = threading.Event()
    order: list[str] = []

    def slow() -> str:
        order.append("slow started")
        assert gate.wait(CALL_S)
        order.append("slow ended")
        return "slow"

    def quick() -> str:
        order.append("quick")
        return "quick"

    with anyio.fail_after(CALL_S):
        async with anyio.create_task_group() as tg:
            tg.start_soon(access.call, slow)
            while order != ["slow started"]:  # the loop runs while `slow` blocks its thread
                await anyio.lowlevel.checkpoint()
            tg.start_soon(access.call, quick)
            while access._lock.statistics().tasks_waiting == 0:
                await anyio.lowlevel.checkpoint()
            assert order == ["slow started"]  # quick waits for its turn
            gate.set()
    assert order == ["slow started", "slow ended", "quick"]


# -- a real `keepui mcp` process ------------------------------------------------------------------
def mcp_params(store: Path) -> StdioServerParameters:
    """`python -m keepui mcp --store STORE` with this test's environment (HOME, offline)."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "keepui", "mcp", "--store", str(store)],
        env=dict(os.environ),
    )


class Child:
    """A child process driven line by line, every read bounded by a timeout."""

    def __init__(self, args: list[str], stdin: bool = True) -> None:
        self.proc = subprocess.Popen(
            args,
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.stderr: list[str] = []
        threading.Thread(
            target=self._pump, args=(self.proc.stdout, self.lines), daemon=True
        ).start()
        threading.Thread(target=self._collect, daemon=True).start()

    @staticmethod
    def _pump(stream: IO[str], lines: queue.Queue[str | None]) -> None:
        for line in stream:
            lines.put(line)
        lines.put(None)

    def _collect(self) -> None:
        assert self.proc.stderr is not None
        self.stderr.extend(self.proc.stderr)

    def line(self) -> str:
        """The next stdout line (waits for it, at most CALL_S seconds)."""
        line = self.lines.get(timeout=CALL_S)
        assert line is not None, "stdout closed; stderr: " + "".join(self.stderr)
        return line

    def rest(self) -> list[str]:
        """Every stdout line until the stream closes."""
        out = []
        while (line := self.lines.get(timeout=CALL_S)) is not None:
            out.append(line)
        return out

    def stop(self) -> int:
        """Close stdin, and end the process if it does not exit on its own."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=CALL_S)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(timeout=CALL_S)

    def send(self, message: dict[str, Any]) -> None:
        """Write one JSON-RPC message to stdin."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        self.proc.stdin.flush()

    def initialize(self) -> str:
        """The MCP handshake; returns the server's answer line."""
        init = {
            "protocolVersion": LATEST_HANDSHAKE_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        }
        self.send({"id": 0, "method": "initialize", "params": init})
        answer = self.line()
        self.send({"method": "notifications/initialized"})
        return answer


def rpc_session(args: list[str], calls: list[tuple[str, dict[str, Any]]]) -> tuple[list[str], str]:
    """Speak raw JSON-RPC to an MCP server process: initialize, each call in turn, then EOF.

    Returns every line the process wrote to stdout, and its stderr.
    """
    child = Child(args)
    try:
        lines = [child.initialize()]
        for n, (method, params) in enumerate(calls, start=1):
            child.send({"id": n, "method": method, "params": params})
            lines.append(child.line())
        assert child.stop() == 0, "".join(child.stderr)
        lines.extend(child.rest())
    finally:
        child.stop()
    return lines, "".join(child.stderr)


def assert_only_json_rpc(lines: list[str], answers: int) -> list[dict[str, Any]]:
    """Every stdout line is one JSON-RPC message; `answers` responses, none an error."""
    messages = [json.loads(line) for line in lines]
    assert all(m.get("jsonrpc") == "2.0" for m in messages)
    responses = [m for m in messages if "id" in m]
    assert len(responses) == answers and not [m for m in responses if "error" in m]
    return responses


STRAY = """
import os, sys
import keepui_engine
original = keepui_engine.Workbench.put

def noisy_put(self, *args, **kwargs):
    print("stray print from a library")
    os.write(1, b"stray write to fd 1\\n")
    os.system("echo stray child output")
    return original(self, *args, **kwargs)

def noisy_warm_up(self):
    print("stray print while the model loads")

keepui_engine.Workbench.put = noisy_put
keepui_engine.Workbench.warm_up = noisy_warm_up
from keepui.cli import main
main(["mcp", "--store", sys.argv[1]])
"""


def test_stdout_carries_only_protocol_messages(store_dir: Path) -> None:
    lines, stderr = rpc_session(
        [sys.executable, "-c", STRAY, str(store_dir)],
        [
            ("tools/call", {"name": "put", "arguments": {"text": "a note", "id": "n"}}),
            ("tools/call", {"name": "get", "arguments": {"address": "n"}}),
        ],
    )
    responses = assert_only_json_rpc(lines, answers=3)
    assert responses[2]["result"]["structuredContent"]["text"] == "a note"
    for stray in ("print from a library", "write to fd 1", "child output", "print while the model"):
        assert f"stray {stray}" in stderr


def test_serves_other_commands_and_closes_the_store_on_sigterm(store_dir: Path) -> None:
    child = Child([sys.executable, "-m", "keepui", "mcp", "--store", str(store_dir)])
    try:
        child.initialize()
        put = {"name": "put", "arguments": {"text": "kept on SIGTERM", "id": "n"}}
        child.send({"id": 1, "method": "tools/call", "params": put})
        assert json.loads(child.line())["result"]["structuredContent"]["action"] == "created"
        got = run_cli(store_dir, "get", "n", "--json", timeout=CALL_S)  # served by `keepui mcp`
        assert got.returncode == 0 and json.loads(got.stdout)["text"] == "kept on SIGTERM"
        child.proc.send_signal(signal.SIGTERM)
        assert child.proc.wait(timeout=CALL_S) == 0, "".join(child.stderr)
    finally:
        child.stop()
    assert child.rest() == []
    with open_workbench(store_dir, own=True) as wb:  # the lock and the socket were released
        assert wb.get("n").text == "kept on SIGTERM"


@pytest.mark.model
def test_stdout_stays_clean_while_the_real_model_loads(tmp_path: Path) -> None:
    lines, _ = rpc_session(
        [sys.executable, "-m", "keepui", "mcp", "--store", str(tmp_path / "store")],
        [
            ("tools/call", {"name": "put", "arguments": {"text": NOTES["recipe"], "id": "r"}}),
            ("tools/call", {"name": "find", "arguments": {"query": "baking bread"}}),
        ],
    )
    responses = assert_only_json_rpc(lines, answers=3)
    assert responses[2]["result"]["structuredContent"]["hits"][0]["id"] == "r"


@pytest.mark.model
async def test_a_real_mcp_process_with_the_real_model(tmp_path: Path) -> None:
    store = tmp_path / "store"  # no keepui.toml yet: the default model
    async with connect(mcp_params(store)) as client:
        assert {t.name for t in (await client.list_tools()).tools} == TOOLS
        for doc_id, text in NOTES.items():
            await call(client, "put", text=text, id=doc_id, tags=["kind=note"])
        found = data(await call(client, "find", query="which database did we choose", limit=3))
        running = data(await call(client, "find", query="schedule for the race", tags=["kind"]))
        ctx = data(await call(client, "context", query="who is stuck on the authentication bug"))
        flow = data(await call(client, "flow", query="how long to cook bread"))
        await call(client, "now", text="Comparing storage engines")
        now = data(await call(client, "now"))
        note = await read(client, "keepui://now")
        doc = await read(client, "keepui://db-choice")
    assert found["hits"][0]["id"] == "db-choice" and found["hits"][0]["similarity"] > 0.3
    assert running["hits"][0]["id"] == "marathon"
    assert ctx["passages"][0]["id"] == "meeting" and "[Source: meeting]" in ctx["text"]
    assert flow["status"] == "done" and flow["results"][0]["id"] == "recipe"
    assert now["version"] == 1 and note == now["text"] == "Comparing storage engines"
    assert doc == NOTES["db-choice"]


@contextmanager
def keepui_serve(store: Path) -> Iterator[Child]:
    """`keepui serve --json` on `store`, yielded once it has printed its ready line; it must
    then stop cleanly on SIGTERM."""
    serve = Child([sys.executable, "-m", "keepui", "serve", "--json", "--store", str(store)], False)
    try:
        ready = json.loads(serve.line())
        assert ready.get("state") == "serving", (ready, "".join(serve.stderr))
        yield serve
        serve.proc.terminate()
        assert serve.proc.wait(timeout=CALL_S) == 0, "".join(serve.stderr)
    finally:
        if serve.proc.poll() is None:
            serve.proc.kill()
            serve.proc.wait(timeout=CALL_S)


@pytest.mark.slow
async def test_uses_a_running_keepui_serve_as_its_owner(tmp_path: Path) -> None:
    store = make_fake_store(tmp_path / "store")
    errlog = tmp_path / "mcp.stderr"
    with keepui_serve(store), errlog.open("w") as err:
        with anyio.fail_after(120):
            transport = stdio_client(mcp_params(store), errlog=err)
            async with Client(transport, read_timeout_seconds=CALL_S) as client:
                await call(client, "put", text="written through MCP", id="via-mcp")
                found = data(await call(client, "find", query="written through"))
                got = await anyio.to_thread.run_sync(
                    lambda: run_cli(store, "get", "via-mcp", "--json", timeout=CALL_S)
                )
    assert found["hits"][0]["id"] == "via-mcp"
    assert got.returncode == 0, got.stderr
    assert json.loads(got.stdout)["text"] == "written through MCP"
    assert "using the keepui process that holds the store" in errlog.read_text()
