"""`keepui mcp`: the store's tools and resources for AI agents over MCP on stdio.

stdout carries protocol messages only. Before anything else runs, the real stdin and stdout
are duplicated for the transport; fd 1 then points at stderr and fd 0 at /dev/null, and
`sys.stdout` is `sys.stderr`, so a print, a C library's write or a child process cannot
corrupt the protocol. Logs go to stderr.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Iterator
from io import TextIOWrapper
from typing import Any, BinaryIO, TypeVar, cast

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
from mcp.server import MCPServer
from mcp.server.mcpserver.resources import ResourceSecurity
from mcp.server.stdio import stdio_server

from keepui import __version__
from keepui.agents.mcp.shared import SharedWorkbench
from keepui.agents.mcp.tools import register_tools
from keepui_engine import StoreError, Workbench, open_workbench

log = logging.getLogger("keepui.mcp")
T = TypeVar("T")

INSTRUCTIONS = """\
keepui is a versioned memory store of notes and documents, searched by meaning and words.
- find: ranked hits for a query (tags, time range, mode); each hit says where its score came from.
  It searches current versions only; history=true adds older versions, all=true the now notes.
- context: prompt-ready passages for a question, each followed by [Source: ADDRESS]; cite them.
- get: read a document by id; ID@V{1} is its previous version, ID@P{N} its part N.
- list: browse documents by id prefix and tags, newest first (or by created, accessed, id).
- put: save a note; putting to the same id keeps the old text as a version.
- delete: undo a document's last version (or delete it if it has no other); purge=true forgets it.
- flow: resolve a question by searching, judging the results and refining (query-resolve).
- now: read or replace the working-intentions note (what you are doing now, what is next).
Resources: keepui://now (the note) and keepui://{id} (a document's text)."""


def register_resources(server: MCPServer[Any], access: SharedWorkbench) -> None:
    """Add keepui://now and the keepui://{+id} template (a document's text) to `server`."""
    wb = access.wb

    @server.resource("keepui://now", name="now", title="Working intentions", mime_type="text/plain")
    async def now_note() -> str:
        """The working-intentions note (empty before the first write)."""
        item = await access.resource(wb.now)
        return item.text or ""

    @server.resource(
        "keepui://{+id}",
        name="document",
        title="A document's text",
        mime_type="text/plain",
        # Ids are store keys, never paths: `..`, `/abs` and `file:///…` are ordinary ids.
        security=ResourceSecurity(exempt_params={"id"}),
    )
    async def document(id: str) -> str:  # noqa: A002 - the template variable
        """A document's text by id (ID@V{N}: a version, ID@P{N}: a part); encode % ? # as %XX."""
        item = await access.resource(wb.get, id)
        return item.text if item.text is not None else item.summary


def build_server(access: SharedWorkbench) -> MCPServer[Any]:
    """The MCP server (tools and resources) over the store `access` holds."""
    server: MCPServer[Any] = MCPServer(
        "keepui",
        title="keepui memory",
        version=__version__,
        instructions=INSTRUCTIONS,
        log_level="WARNING",
    )
    register_tools(server, access)
    register_resources(server, access)
    return server


def open_store(store: str | None) -> Workbench:
    """The Workbench the server runs on.

    When another keepui process (`keepui serve`, the workbench) holds the store, a client of
    it; otherwise this process holds the store while it runs, with the model loaded, and
    serves it to other keepui commands and drains the background queue as `keepui serve`
    does.
    """
    try:
        wb = open_workbench(store, own=True)
    except StoreError as err:
        log.info("using the keepui process that holds the store: %s", err.message)
        return open_workbench(store)
    try:
        wb.warm_up()
        wb.serve()
    except BaseException:
        wb.close()
        raise
    log.info("holding and serving %s", wb.store)
    return wb


@contextlib.contextmanager
def claim_stdio() -> Iterator[tuple[BinaryIO, BinaryIO]]:
    """Take the real stdin and stdout for the protocol; yield them as binary files.

    Meanwhile fd 0 reads /dev/null, fd 1 writes to stderr and `sys.stdout` is `sys.stderr`;
    all three are restored on exit. The wire descriptors are never closed here: the reader
    thread may still be blocked on stdin, and the process is about to end.
    """
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    saved = sys.stdout
    sys.stdout = sys.stderr
    try:
        yield os.fdopen(wire_in, "rb", closefd=False), os.fdopen(wire_out, "wb", closefd=False)
    finally:
        sys.stdout = saved
        os.dup2(wire_out, 1)
        os.dup2(wire_in, 0)


class StdinLines:
    """The protocol's input lines, read by a daemon thread.

    anyio's file wrappers read in a worker thread that a cancellation waits for, so a SIGTERM
    while the client keeps stdin open would never end the server; a daemon thread is left
    behind instead.
    """

    def __init__(self, raw: BinaryIO) -> None:
        self._raw = raw
        self._send, self._recv = anyio.create_memory_object_stream[str](16)

    def start(self) -> None:
        """Start reading (call from the event loop)."""
        token = anyio.lowlevel.current_token()
        threading.Thread(
            target=self._pump, args=(token,), name="keepui-mcp-stdin", daemon=True
        ).start()

    def _pump(self, token: anyio.lowlevel.EventLoopToken) -> None:
        try:
            for line in iter(self._raw.readline, b""):
                anyio.from_thread.run(self._send.send, line.decode("utf-8", "replace"), token=token)
        except Exception:  # noqa: BLE001 - the loop has ended or nobody reads any more
            return
        with contextlib.suppress(Exception):
            anyio.from_thread.run_sync(self._send.close, token=token)

    def __aiter__(self) -> StdinLines:
        return self

    async def __anext__(self) -> str:
        try:
            return await self._recv.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


async def _stop_on_signal(scope: anyio.CancelScope) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for signum in signals:
            log.info("%s: stopping", signal.Signals(signum).name)
            scope.cancel()
            return


async def serve_stdio(server: MCPServer[Any], wire_in: BinaryIO, wire_out: BinaryIO) -> None:
    """Answer MCP requests from `wire_in` on `wire_out` until EOF, SIGTERM or SIGINT."""
    lines = StdinLines(wire_in)
    out = anyio.wrap_file(TextIOWrapper(wire_out, encoding="utf-8"))
    # MCPServer.run_stdio_async takes no streams, so run its low-level server as the SDK's
    # own Client does: with explicit streams, stdio_server leaves fd 0 and 1 to claim_stdio.
    lowlevel = server._lowlevel_server
    async with anyio.create_task_group() as tg:
        tg.start_soon(_stop_on_signal, tg.cancel_scope)
        lines.start()
        async with stdio_server(stdin=cast(Any, lines), stdout=out) as (read, write):
            await lowlevel.run(read, write, lowlevel.create_initialization_options())
        tg.cancel_scope.cancel()


def setup_logging() -> None:
    """Log to stderr: warnings from libraries, and what this server does."""
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.WARNING,
        format="keepui mcp: %(levelname)s %(name)s: %(message)s",
    )
    log.setLevel(logging.INFO)


def run_stdio(store: str | None) -> Workbench:
    """Serve the store over MCP on stdin/stdout until the client closes stdin or a signal;
    return the closed Workbench (its caller exits at once if a thread of it is still busy).

    Args:
        store: The store directory; None means $KEEPUI_STORE or ~/.keepui.

    Raises:
        KeepuiError: The store cannot be opened.
    """
    with claim_stdio() as (wire_in, wire_out):
        setup_logging()
        wb = open_store(store)
        previous = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            anyio.run(serve_stdio, build_server(SharedWorkbench(wb)), wire_in, wire_out)
        finally:
            for signum, handler in previous.items():
                if handler is not None:  # the loop left its own handler (or the default)
                    signal.signal(signum, handler)
            wb.close()
    log.info("stopped")
    return wb
