"""What the MCP tools return: TypedDicts (their output schemas) built from engine results."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from typing_extensions import TypedDict

if TYPE_CHECKING:
    from keepui_engine import ContextResult, DeleteResult, FindResult, FlowResult, Item


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


class ArchivedOut(TypedDict):
    """A hit on an older version (find with history): its number, the current version's
    number, and whether the current text differs (else only the tags do)."""

    version: int
    of: int
    text_differs: bool


class HitOut(TypedDict):
    """One ranked hit; `scores` says where `score` came from (dense/bm25 value and rank,
    fused, decay, final), `matched` is the address that matched (ID, ID@V{N}, ID@P{N});
    `archived` is set when an older version matched (find with history), else null."""

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
    archived: ArchivedOut | None


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


class DocumentOut(TypedDict):
    """One current document as `list` shows it (no text: read it with `get`)."""

    id: str
    versions: int
    summary: str
    tags: dict[str, Any]
    created: str
    updated: str
    accessed: str


class ListOut(TypedDict):
    """Current documents in the asked order; `more` is true when others also match."""

    documents: list[DocumentOut]
    more: bool


class DeleteOut(TypedDict):
    """What a delete did: `reverted` (to `version`), `deleted` or `purged`, in words too."""

    id: str
    action: str
    version: int
    removed_versions: int
    message: str


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


def list_out(items: list[Item], limit: int) -> ListOut:
    """The first `limit` of `items` (asked for one more, to tell whether there are more)."""
    documents = [
        DocumentOut(
            id=i.id,
            versions=i.versions,
            summary=i.summary,
            tags=dict(i.tags),
            created=i.created,
            updated=i.updated,
            accessed=i.accessed,
        )
        for i in items[:limit]
    ]
    return ListOut(documents=documents, more=len(items) > limit)


def delete_out(done: DeleteResult) -> DeleteOut:
    """A DeleteResult with a sentence saying what happened."""
    if done.action == "reverted":
        message = f"reverted {done.id} to version {done.version} (its latest version was removed)"
    elif done.action == "purged":
        message = f"purged {done.id} and its history ({done.removed_versions} version(s))"
    else:
        message = f"deleted {done.id} (it had no earlier version)"
    return DeleteOut(
        id=done.id,
        action=done.action,
        version=done.version,
        removed_versions=done.removed_versions,
        message=message,
    )


def archived_out(archived: dict[str, Any] | None) -> ArchivedOut | None:
    """A hit's `archived` record, or None for a hit on a current version."""
    if archived is None:
        return None
    return ArchivedOut(
        version=int(archived["version"]),
        of=int(archived["of"]),
        text_differs=bool(archived["text_differs"]),
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
            archived=archived_out(h.archived),
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
