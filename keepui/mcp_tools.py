"""The MCP tools (put, get, find, context, flow, now): typed parameters, structured results."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field
from typing_extensions import TypedDict

if TYPE_CHECKING:
    from mcp.server import MCPServer

    from keepui.mcp_server import StoreAccess
    from keepui_engine import ContextResult, FindResult, FlowResult, Item

F = TypeVar("F", bound=Callable[..., Any])

Mode = Literal["hybrid", "dense", "bm25"]
Tags = Annotated[
    list[str] | None,
    Field(description='Tags as "key=value" (AND-ed together); "key" alone matches any value.'),
]
NewTags = Annotated[
    list[str] | None, Field(description='Tags to set, each "key=value", e.g. ["topic=auth"].')
]

READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


class PutOut(TypedDict):
    """What a put did: `created`, `updated` (a new version) or `unchanged`."""

    id: str
    version: int
    action: str


class ItemOut(TypedDict):
    """One version of a document (version 0 and empty text: a now note never written)."""

    id: str
    version: int
    versions: int
    offset: int
    text: str | None
    summary: str
    tags: dict[str, Any]
    created: str
    updated: str
    part: dict[str, Any] | None
    pending: list[dict[str, Any]]


class HitOut(TypedDict):
    """One ranked hit; `scores` says where `score` came from (dense/bm25 value and rank,
    fused, decay, final), `matched` is the address that matched (ID, ID@V{N}, ID@P{N})."""

    id: str
    matched: str
    version: int
    score: float
    similarity: float | None
    decay: float
    scores: dict[str, float | int | None]
    summary: str
    tags: dict[str, Any]
    updated: str
    part: dict[str, Any] | None
    duplicates: list[str]


class FindOut(TypedDict):
    """Ranked hits, best first, with the search's notes and what the filters hid."""

    query: str
    mode: str
    hits: list[HitOut]
    searched: int
    notes: list[str]
    hidden: dict[str, int]


class PassageOut(TypedDict):
    """One passage of a context, cited by `matched`."""

    id: str
    matched: str
    text: str
    score: float
    tokens: int
    truncated: bool


class ContextOut(TypedDict):
    """Prompt-ready passages: `text` is every passage followed by its [Source: ADDRESS]."""

    query: str
    text: str
    tokens: int
    budget: int
    passages: list[PassageOut]
    dropped: int
    below_min_score: int
    notes: list[str]


class FlowActionOut(TypedDict):
    """One action of a tick: a search (query, how many results) or another step."""

    rule: str
    action: str
    query: str | None
    results: int | None


class FlowTickOut(TypedDict):
    """One tick: the state evaluated, what it did and where it went."""

    tick: int
    state: str
    outcome: str
    actions: list[FlowActionOut]
    elapsed_ms: float


class FlowOut(TypedDict):
    """How the flow ended (status done/stopped/error and why), its results and its ticks."""

    flow: str
    status: str
    reason: str
    state: str
    results: list[dict[str, Any]]
    ticks: list[FlowTickOut]
    history: list[str]
    tried: list[str]
    cursor: str | None
    budget: int
    elapsed_ms: float


def item_out(item: Item) -> ItemOut:
    """An Item as the get/now tools return it."""
    return ItemOut(
        id=item.id,
        version=item.version,
        versions=item.versions,
        offset=item.offset,
        text=item.text,
        summary=item.summary,
        tags=dict(item.tags),
        created=item.created,
        updated=item.updated,
        part=item.part,
        pending=item.pending,
    )


def find_out(found: FindResult) -> FindOut:
    """A FindResult as the find tool returns it (each hit with its score provenance)."""
    hits = [
        HitOut(
            id=h.id,
            matched=h.matched,
            version=h.version,
            score=h.score,
            similarity=h.similarity,
            decay=h.decay,
            scores=dict(h.scores),
            summary=h.summary,
            tags=dict(h.tags),
            updated=h.updated,
            part=h.part,
            duplicates=list(h.duplicates),
        )
        for h in found.hits
    ]
    return FindOut(
        query=found.query,
        mode=found.mode,
        hits=hits,
        searched=found.searched,
        notes=list(found.notes),
        hidden=dict(found.hidden),
    )


def context_out(ctx: ContextResult) -> ContextOut:
    """A ContextResult as the context tool's structured result."""
    passages = [
        PassageOut(
            id=p.id,
            matched=p.matched,
            text=p.text,
            score=p.score,
            tokens=p.tokens,
            truncated=p.truncated,
        )
        for p in ctx.passages
    ]
    return ContextOut(
        query=ctx.query,
        text=ctx.text,
        tokens=ctx.tokens,
        budget=ctx.budget,
        passages=passages,
        dropped=ctx.dropped,
        below_min_score=ctx.below_min_score,
        notes=list(ctx.notes),
    )


def flow_out(result: FlowResult) -> FlowOut:
    """A FlowResult with each tick summarised (its actions without their bulky outputs)."""
    searched = {id(a) for t in result.ticks for a in t.searches}
    ticks = [
        FlowTickOut(
            tick=t.tick,
            state=t.state,
            outcome=t.outcome,
            actions=[
                FlowActionOut(
                    rule=a.rule,
                    action=a.action,
                    query=a.args.get("query") if isinstance(a.args.get("query"), str) else None,
                    results=len(a.output["results"]) if id(a) in searched else None,
                )
                for a in t.actions
            ],
            elapsed_ms=t.elapsed_ms,
        )
        for t in result.ticks
    ]
    return FlowOut(
        flow=result.flow,
        status=result.status,
        reason=result.reason,
        state=result.state,
        results=result.results,
        ticks=ticks,
        history=result.history,
        tried=result.tried,
        cursor=result.cursor,
        budget=result.budget,
        elapsed_ms=result.elapsed_ms,
    )


def register_tools(server: MCPServer[Any], access: StoreAccess) -> None:
    """Add the tools to `server`; each runs its store calls through `access`."""
    wb = access.wb

    def tool(annotations: ToolAnnotations) -> Callable[[F], F]:
        def add(fn: F) -> F:  # the docstring, dedented, is what agents read
            server.add_tool(
                fn, description=inspect.cleandoc(fn.__doc__ or ""), annotations=annotations
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
        done = await access.tool(wb.put, text, id=id, tags=tags, summary=summary)
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
        return item_out(await access.tool(wb.get, address))

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
    ) -> FindOut:
        """Search the memory by meaning and words. Each hit carries its score and where it
        came from (`scores`: dense and bm25 value and rank, fused, recency decay, final) and
        the address that matched (a version or part); read it with `get`."""
        found = await access.tool(
            wb.find,
            query,
            tags=tags,
            limit=limit,
            since=since,
            until=until,
            mode=mode,
            min_score=min_score,
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
    ) -> Annotated[CallToolResult, ContextOut]:
        """Prompt-ready context for a question: the best passages, each followed by a
        [Source: ADDRESS] line, within a word budget. Cite the addresses in your answer."""
        ctx = await access.tool(
            wb.context,
            query,
            top_k=top_k,
            min_score=min_score,
            max_tokens=max_tokens,
            tags=tags,
            mode=mode,
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
            wb.run_flow,
            "query-resolve",
            None if cursor else params,
            budget=budget,
            cursor=cursor,
        )
        return flow_out(result)

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
        return item_out(await access.tool(wb.now, text, scope=scope, tags=tags))
