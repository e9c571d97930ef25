"""The MCP tools (put, get, list, find, context, flow, now, delete): typed parameters,
structured results (their shapes are in keepui.agents.mcp.results)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from keepui.agents.mcp.errors import tool_words
from keepui.agents.mcp.results import (
    ContextOut,
    DeleteOut,
    FindOut,
    FlowOut,
    ItemOut,
    ListOut,
    PutOut,
    context_out,
    delete_out,
    find_out,
    flow_out,
    item_out,
    list_out,
)

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from keepui.agents.mcp.shared import SharedWorkbench

F = TypeVar("F", bound=Callable[..., Any])

Mode = Literal["hybrid", "dense", "bm25"]
Sort = Literal["updated", "created", "accessed", "id"]
Tags = Annotated[
    list[str] | None,
    Field(description='Tags as "key=value" (AND-ed together); "key" alone matches any value.'),
]
NewTags = Annotated[
    list[str] | None, Field(description='Tags to set, each "key=value", e.g. ["topic=auth"].')
]
History = Annotated[
    bool,
    Field(
        description="Also search older versions, each by its own tags; a hit on one has "
        "`archived` set and `matched` ID@V{N}. Default: current versions only."
    ),
]
All = Annotated[
    bool, Field(description="Also search the now notes and system documents (ids starting .).")
]

READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
FORGET = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)


def register_tools(server: MCPServer[Any], access: SharedWorkbench) -> None:
    """Add the tools to `server`; each runs its store calls through `access`."""
    wb = access.wb

    def tool(annotations: ToolAnnotations, name: str | None = None) -> Callable[[F], F]:
        def add(fn: F) -> F:  # the docstring, dedented, is what agents read
            server.add_tool(
                fn,
                name=name,
                description=inspect.cleandoc(fn.__doc__ or ""),
                annotations=annotations,
            )
            return fn

        return add

    @tool(WRITE)
    async def put(
        text: Annotated[str, Field(description="The note or document text to store.")],
        id: Annotated[  # noqa: A002 - the name agents see
            str | None,
            Field(description="Document id; omit for a content-addressed id (%HASH)."),
        ] = None,
        tags: NewTags = None,
        summary: Annotated[
            str | None, Field(description="A summary to keep instead of the generated one.")
        ] = None,
    ) -> PutOut:
        """Store a note in the keepui memory. An existing id gets a new version (the previous
        one is kept); the same text and tags again change nothing (action "unchanged")."""
        done = await access.tool("put", wb.put, text, id=id, tags=tags, summary=summary)
        return PutOut(id=done.id, version=done.version, action=done.action)

    @tool(READ)
    async def get(
        address: Annotated[
            str,
            Field(
                description="ID for the current version, ID@V{1} for the previous one "
                "(ID@V{N}: N versions back), ID@P{N} for part N of a long document."
            ),
        ],
    ) -> ItemOut:
        """Read one document (or an older version, or a part): text, summary, tags, times."""
        return item_out(await access.tool("get", wb.get, address))

    @tool(READ, name="list")
    async def list_documents(
        prefix: Annotated[
            str | None,
            Field(
                description='Only ids starting with this, e.g. "meeting-" (system documents, '
                'ids starting ".", are listed only for a prefix starting ".").'
            ),
        ] = None,
        tags: Tags = None,
        limit: Annotated[int, Field(ge=1, le=1000, description="Most documents.")] = 20,
        sort: Annotated[
            Sort,
            Field(description="updated (newest first, default), created, accessed or id."),
        ] = "updated",
    ) -> ListOut:
        """Browse the memory: current documents by id prefix and tags (no query, no ranking),
        each with its summary, tags, times and how many versions it has; `more` says whether
        others match too. Read one with `get`."""
        items = await access.tool(
            "list", wb.list_items, prefix, tags=tags, sort=sort, limit=limit + 1
        )
        return list_out(items, limit)

    @tool(READ)
    async def find(
        query: Annotated[str, Field(description="What to look for, in words.")],
        tags: Tags = None,
        since: Annotated[
            str | None,
            Field(description="Only versions written since: 2026-11-01, 2026-11-01T09:30, P7D."),
        ] = None,
        until: Annotated[
            str | None, Field(description="Only versions written before (same forms as since).")
        ] = None,
        mode: Annotated[
            Mode | None,
            Field(description="hybrid (meaning and words, default), dense or bm25."),
        ] = None,
        limit: Annotated[int, Field(ge=1, le=200, description="Most hits.")] = 10,
        min_score: Annotated[
            float | None, Field(description="Hide hits scoring under this.")
        ] = None,
        history: History = False,
        all: All = False,  # noqa: A002 - the name agents see (the CLI's --all)
    ) -> FindOut:
        """Search the memory by meaning and words. It answers about now: the current version
        of each document and its parts, filtered by their current tags and times; `history`
        also searches older versions, `all` the now notes and system documents. Each hit
        carries its score and where it came from (`scores`: dense and bm25 value and rank,
        fused, recency decay, final) and the address that matched (a version or part); read
        it with `get`."""
        found = await access.tool(
            "find",
            wb.find,
            query,
            tags=tags,
            limit=limit,
            since=since,
            until=until,
            mode=mode,
            min_score=min_score,
            history=history,
            include_system=all,
        )
        return find_out(found)

    @tool(READ)
    async def context(
        query: Annotated[str, Field(description="The question or topic to gather context for.")],
        top_k: Annotated[int, Field(ge=1, le=50, description="Most passages.")] = 5,
        min_score: Annotated[float, Field(description="Leave out hits scoring under this.")] = 0.1,
        max_tokens: Annotated[
            int, Field(ge=1, description="Budget in words, [Source: …] lines included.")
        ] = 2048,
        tags: Tags = None,
        mode: Annotated[Mode | None, Field(description="hybrid (default), dense or bm25.")] = None,
        history: History = False,
        all: All = False,  # noqa: A002 - the name agents see (the CLI's --all)
    ) -> Annotated[CallToolResult, ContextOut]:
        """Prompt-ready context for a question: the best passages, each followed by a
        [Source: ADDRESS] line, within a word budget. Cite the addresses in your answer.
        Current versions only unless `history`; the now notes only with `all`."""
        ctx = await access.tool(
            "context",
            wb.context,
            query,
            top_k=top_k,
            min_score=min_score,
            max_tokens=max_tokens,
            tags=tags,
            mode=mode,
            history=history,
            include_system=all,
        )
        out = context_out(ctx)
        text = ctx.text or "\n".join(ctx.notes) or f"no passages for {query!r}"
        return CallToolResult(
            content=[TextContent(type="text", text=text)], structured_content=dict(out)
        )

    @tool(READ)
    async def flow(
        query: Annotated[str, Field(description="The question to resolve.")],
        tags: Tags = None,
        mode: Annotated[Mode | None, Field(description="hybrid (default), dense or bm25.")] = None,
        limit: Annotated[int, Field(ge=1, le=200, description="Most results per search.")] = 10,
        budget: Annotated[
            int | None, Field(ge=1, le=100, description="Most ticks (default: the store's).")
        ] = None,
        cursor: Annotated[
            str | None,
            Field(description="Resume a run stopped by its budget (the query is then ignored)."),
        ] = None,
    ) -> FlowOut:
        """Resolve a question with the query-resolve flow: search, judge the results by their
        signals (margin, entropy, shared tags), then stop with a clear winner, narrow by tags,
        branch into facets or explore. Returns the outcome (status, reason), the results and
        a summary of each tick; a run stopped by its budget returns a cursor to resume."""
        params: dict[str, Any] = {"query": query, "limit": limit}
        if tags:
            params["tags"] = list(tags)
        if mode:
            params["mode"] = mode
        result = await access.tool(
            "flow",
            wb.run_flow,
            "query-resolve",
            None if cursor else params,
            budget=budget,
            cursor=cursor,
        )
        out = flow_out(result)
        out["reason"] = tool_words(out["reason"])  # the engine words these for `keepui flow`
        for tick in out["ticks"]:
            tick["outcome"] = tool_words(tick["outcome"])
        return out

    @tool(WRITE)
    async def now(
        text: Annotated[
            str | None,
            Field(description="Replace the note with this text; omit to read it."),
        ] = None,
        scope: Annotated[
            str | None, Field(description="A named note (now:SCOPE) instead of the shared one.")
        ] = None,
        tags: NewTags = None,
    ) -> ItemOut:
        """Read or replace the working-intentions note: what you are doing now and what is
        next. Replacing keeps the previous text as a version. Before the first write it is
        empty (version 0)."""
        return item_out(await access.tool("now", wb.now, text, scope=scope, tags=tags))

    @tool(FORGET)
    async def delete(
        id: Annotated[  # noqa: A002 - the name agents see
            str, Field(description="The document's id (not a version or part address).")
        ],
        purge: Annotated[
            bool,
            Field(description="Remove the document and its whole history, not just one version."),
        ] = False,
    ) -> Annotated[CallToolResult, DeleteOut]:
        """Forget: undo a document's latest version, so the previous one is current again (a
        document with one version is deleted); `purge` removes it with all its versions.
        `message` says what happened: reverted to version N, deleted or purged."""
        out = delete_out(await access.tool("delete", wb.delete, id, purge=purge))
        return CallToolResult(
            content=[TextContent(type="text", text=out["message"])],
            structured_content=dict(out),
        )
