"""One Workbench shared by every MCP request (see SharedWorkbench)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import anyio.to_thread
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError

from keepui.agents.mcp.errors import error_text
from keepui_engine import KeepuiError, NotFound, Workbench

T = TypeVar("T")


class SharedWorkbench:
    """One Workbench shared by every MCP request: each call runs in a worker thread, one at a
    time (a Workbench serves one caller; a flow or a context is several store calls in a row).

    Args:
        wb: The Workbench, owning the store or a client of the process that owns it.
    """

    def __init__(self, wb: Workbench) -> None:
        self.wb = wb
        self._lock = anyio.Lock()

    async def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run `fn(*args, **kwargs)` in a worker thread once the calls before it have ended."""
        async with self._lock:
            return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs))

    async def tool(self, name: str, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """`call` for the tool `name`, with a KeepuiError turned into an MCP tool error (an
        isError result) whose hint names the tool's arguments."""
        try:
            return await self.call(fn, *args, **kwargs)
        except KeepuiError as err:
            raise ToolError(error_text(err, name)) from err

    async def resource(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """`call`, with NotFound as an unknown resource and other KeepuiErrors as read errors."""
        try:
            return await self.call(fn, *args, **kwargs)
        except NotFound as err:
            raise ResourceNotFoundError(error_text(err)) from err
        except KeepuiError as err:
            raise ResourceError(error_text(err)) from err
