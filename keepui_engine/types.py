"""Frozen result types shared by the engine, the CLI and the TUI (each with to_dict/from_dict)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, TypeVar

TagValue = str | list[str]
Tags = dict[str, TagValue]

T = TypeVar("T")


class _Serialisable:
    """Mixin: plain-dict round trip for JSON output and the store socket."""

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict of the fields."""
        return asdict(self)  # type: ignore[call-overload,no-any-return]

    @classmethod
    def from_dict(cls: type[T], data: dict[str, Any]) -> T:
        """Rebuild from `to_dict` output, ignoring unknown keys."""
        names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass(frozen=True)
class Item(_Serialisable):
    """One version of a document as stored.

    Attributes:
        id: The document id.
        version: Ordinal of this version (1 = oldest).
        offset: Distance from the current head (0 = current, 1 = previous).
        versions: How many versions the document has, the head included.
        text: The stored text (None in summary-only mode).
        summary: The summary.
        tags: User tags plus system tags (`_`-prefixed).
        created: When the document was first stored (ISO-8601 UTC).
        updated: When this version was written (ISO-8601 UTC).
        accessed: When the document was last read (ISO-8601 UTC).
    """

    id: str
    version: int
    offset: int
    versions: int
    text: str | None
    summary: str
    tags: Tags
    created: str
    updated: str
    accessed: str


@dataclass(frozen=True)
class VersionInfo(_Serialisable):
    """One entry of a document's version timeline.

    Attributes:
        id: The document id.
        version: Ordinal (1 = oldest).
        offset: 0 for the current head, 1 for the previous, and so on.
        updated: When this version was written.
        summary: Its summary.
        size: Length of its text in characters.
        content_hash: Short hash of its text.
        change: What differs from the version before: created, text, tags, both or none.
    """

    id: str
    version: int
    offset: int
    updated: str
    summary: str
    size: int
    content_hash: str
    change: str


@dataclass(frozen=True)
class Hit(_Serialisable):
    """One ranked search result, lifted to its document.

    Attributes:
        id: The document id.
        version: Offset of the version that matched (0 = current head).
        score: Final score: similarity, BM25 or fused score, times decay (see `scores`).
        similarity: Cosine similarity of the query and the matched text (None in BM25 mode).
        decay: Recency factor 0.5 ** (age_days / half_life) (1.0 when disabled).
        summary: Summary of the matched version.
        tags: Tags of the matched version.
        created: When the document was first stored.
        updated: When the matched version was written.
        matched: The address that matched (`ID` or `ID@V{N}`).
        scores: Provenance: dense, dense_rank, bm25, bm25_rank, fused, decay, final (None
            where a channel did not return the document).
    """

    id: str
    version: int
    score: float
    similarity: float | None
    decay: float
    summary: str
    tags: Tags
    created: str
    updated: str
    matched: str
    scores: dict[str, float | int | None] = field(default_factory=dict)


@dataclass(frozen=True)
class FindResult(_Serialisable):
    """The answer to a find.

    Attributes:
        query: The query text.
        hits: Ranked hits, best first.
        limit: The limit asked for.
        searched: How many vectors the search considered after filters.
        method: `exact` or `hnsw` (the dense channel's search).
        notes: Remarks for the user (e.g. a filter that matched nothing).
        mode: `dense`, `bm25` or `hybrid`.
        hidden: step -> how many fetched hits it hid (`threshold`).
    """

    query: str
    hits: list[Hit]
    limit: int
    searched: int = 0
    method: str = "exact"
    notes: list[str] = field(default_factory=list)
    mode: str = "dense"
    hidden: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FindResult:
        """Rebuild, including the nested hits."""
        hits = [Hit.from_dict(h) for h in data.get("hits", [])]
        rest = {k: v for k, v in data.items() if k != "hits"}
        return super().from_dict({**rest, "hits": hits})  # type: ignore[misc,no-any-return]


@dataclass(frozen=True)
class PutResult(_Serialisable):
    """What a put did.

    Attributes:
        id: The document id.
        version: Ordinal of the current version after the put.
        action: `created`, `updated` or `unchanged`.
    """

    id: str
    version: int
    action: str


@dataclass(frozen=True)
class DeleteResult(_Serialisable):
    """What a delete did.

    Attributes:
        id: The document id.
        action: `reverted` (previous version restored), `deleted` or `purged`.
        version: Ordinal of the head after a revert, else 0.
        removed_versions: How many versions were removed.
    """

    id: str
    action: str
    version: int
    removed_versions: int


@dataclass(frozen=True)
class Stats(_Serialisable):
    """Counts and sizes of a store.

    Attributes:
        store: The store directory.
        items: Documents.
        versions: Versions, the current heads included.
        vectors: Live vectors in the index.
        store_bytes: Bytes on disk.
        model: Embedding model recorded for the index.
        dim: Its dimension.
    """

    store: str
    items: int
    versions: int
    vectors: int
    store_bytes: int
    model: str
    dim: int


@dataclass(frozen=True)
class PutSpec(_Serialisable):
    """One text to store.

    Attributes:
        text: The text.
        id: Document id; None gives the content-addressed `%` + 12 hex id.
        tags: Raw `KEY=VALUE` strings (`KEY=` removes the key).
        summary: A summary to keep instead of the truncated text.
        source: Where it came from (`inline`, `stdin`, `file`).
        content_type: MIME type of the text.
    """

    text: str
    id: str | None = None
    tags: list[str] = field(default_factory=list)
    summary: str | None = None
    source: str = "inline"
    content_type: str = "text/plain"


@dataclass(frozen=True)
class FindQuery(_Serialisable):
    """What a find asks for, passed whole from the facade to the engine.

    Attributes:
        query: The query text.
        tags: Filters: `KEY` (present) or `KEY=VALUE`; all must hold.
        limit: At most this many hits.
        since: Only versions written at or after (ISO date, datetime or duration).
        until: Only versions written before.
        mode: `dense`, `bm25` or `hybrid`; None means keepui.toml's `[search] mode`.
        min_score: Hide hits whose final score is below this; None means keepui.toml's.
    """

    query: str
    tags: list[str] = field(default_factory=list)
    limit: int = 10
    since: str | None = None
    until: str | None = None
    mode: str | None = None
    min_score: float | None = None
