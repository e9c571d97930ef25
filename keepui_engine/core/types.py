"""Frozen result types shared by the engine, the CLI and the TUI (each with to_dict/from_dict)."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

TagValue = str | list[str]
Tags = dict[str, TagValue]

T = TypeVar("T")


class _Serialisable:
    """Mixin: plain-dict round trip for JSON output and the store socket."""

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict of the fields (as `dataclasses.asdict`, without its deep
        copy of every leaf value: a find's JSON spent a tenth of its time copying strings)."""
        return _plain_fields(self)

    @classmethod
    def from_dict(cls: type[T], data: dict[str, Any]) -> T:
        """Rebuild from `to_dict` output, ignoring unknown keys."""
        names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
        return cls(**{k: v for k, v in data.items() if k in names})


_NAMES: dict[type, tuple[str, ...]] = {}


def _plain_fields(obj: Any) -> dict[str, Any]:
    cls = type(obj)
    names = _NAMES.get(cls)
    if names is None:
        names = _NAMES[cls] = tuple(f.name for f in fields(obj))
    return {name: _plain(getattr(obj, name)) for name in names}


def _plain(value: Any) -> Any:
    """A value with its containers copied and dataclasses turned into dicts (leaves shared:
    they are immutable str, int, float, bool or None)."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if hasattr(value, "__dataclass_fields__") and not isinstance(value, type):
        return _plain_fields(value)
    return copy.deepcopy(value)


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
        part: For a part (`ID@P{N}`): {"index": N, "count": how many parts the version has,
            "title", "kind", "position"}; None for the whole document.
        pending: Unfinished background work for the document (task, state, attempts, error).
        edges: Links from tags declared by `.tag/KEY` docs: `KEY: [targets]` out of this
            document and `VERB: [sources]` into it (the `_inverse` verb).
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
    part: dict[str, Any] | None = None
    pending: list[dict[str, Any]] = field(default_factory=list)
    edges: dict[str, list[str]] = field(default_factory=dict)


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
class Part(_Serialisable):
    """One part of a long document (`ID@P{N}`), split by structure then by size.

    Attributes:
        id: The document id.
        part: 1-based part number.
        address: `ID@P{N}`.
        kind: What bounds it: page, slide, heading, paragraph, body (a size chunk of one).
        title: Its heading or slide title, when there is one.
        position: Where it sits, e.g. `page 3`, `slide 2`, `chars 0-2048`.
        text: Its text.
        summary: Its summary.
        span: [start, end) of its text in the document's text, in characters (None for a
            part stored before keepui recorded spans, or one its extractor reworded).
    """

    id: str
    part: int
    address: str
    kind: str
    title: str | None
    position: str
    text: str
    summary: str
    span: list[int] | None = None


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
        matched: The address that matched (`ID`, `ID@V{N}`, `ID@P{N}` or `ID@V{N}@P{N}`).
        scores: Provenance: dense, dense_rank, bm25, bm25_rank, fused, decay, final (None
            where a channel did not return the document), plus `rerank` under a mixed rerank.
        duplicates: Ids of near-duplicate hits folded into this one (it is the newest).
        part: The passage (part) that matched, {"index": N, "title": its heading or slide
            title or None, "kind": page, slide, heading, paragraph, ..., "position": its place
            (`page 3`, `section 2, words 181-420`), "excerpt": about 200 characters of its
            text around the query's words}; None when the whole text matched. `matched` then
            ends in `@P{N}`.
        related: With find --deep: the hit's neighbours, [{"id", "via": "edge:VERB" or
            "similar", "score"}] (none repeats a hit or an earlier neighbour); else None.
        archived: With find --history, when an older version matched: {"version": its
            number, "of": the current version's number, "text_differs": whether the current
            text is another}; else None (absent from JSON).
        passages: The document's next best passages of the same version, [{"index": N,
            "score": its own final score}] best first (at most 2; hybrid search only), which
            `context` hands over too when they outscore other documents; None (absent from
            JSON) when there are none.
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
    duplicates: list[str] = field(default_factory=list)
    part: dict[str, Any] | None = None
    related: list[dict[str, Any]] | None = None
    archived: dict[str, Any] | None = None
    passages: list[dict[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready; `related` only when find --deep filled it, `archived` only for a hit
        on an older version (find --history), `passages` only when there are some."""
        data = super().to_dict()
        for name in ("related", "archived", "passages"):
            if data.get(name) is None:
                data.pop(name, None)
        return data

    @property
    def part_index(self) -> int:
        """The number of the part that matched, 0 for the whole text."""
        return int(self.part["index"]) if self.part else 0

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Hit:
        """Rebuild from `to_dict` output (a bare part number, as older servers send, too)."""
        part = data.get("part")
        if isinstance(part, int):
            data = {**data, "part": {"index": part, "title": None, "excerpt": ""} if part else None}
        return super().from_dict(data)  # type: ignore[misc,no-any-return]


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
        hidden: step -> how many fetched hits it hid (`no_evidence`, `threshold`, `dedup`).
    """

    query: str
    hits: list[Hit]
    limit: int
    searched: int = 0
    method: str = "exact"
    notes: list[str] = field(default_factory=list)
    mode: str = "hybrid"
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
        system_items: System documents (ids starting with `.`), not counted in `items`.
    """

    store: str
    items: int
    versions: int
    vectors: int
    store_bytes: int
    model: str
    dim: int
    system_items: int = 0


@dataclass(frozen=True)
class PutSpec(_Serialisable):
    """One text to store.

    Attributes:
        text: The text.
        id: Document id; None gives the content-addressed `%` + 12 hex id.
        tags: Raw `KEY=VALUE` strings (`KEY=` removes the key).
        summary: A summary to keep instead of the truncated text.
        source: Where it came from (`inline`, `stdin`, `file`, `url`).
        content_type: MIME type of the original.
        meta: More system tags to record (`_source_uri`, `_file_size`, `_file_mtime`, ...).
        blocks: The document's structure from its extractor (dicts of text, kind, index,
            title: pages, slides, headings); None derives paragraphs and headings from the text.
    """

    text: str
    id: str | None = None
    tags: list[str] = field(default_factory=list)
    summary: str | None = None
    source: str = "inline"
    content_type: str = "text/plain"
    meta: dict[str, Any] = field(default_factory=dict)
    blocks: list[dict[str, Any]] | None = None


@dataclass(frozen=True)
class IngestEntry(_Serialisable):
    """What happened to one source of a put.

    Attributes:
        source: The path or URL.
        id: The document id it was stored under (None when it was not stored).
        status: created, updated, unchanged, skipped or failed.
        version: The version stored (None when not stored).
        reason: Why it was skipped or failed.
        notes: Remarks (OCR, pages capped, metadata-only).
    """

    source: str
    id: str | None
    status: str
    version: int | None = None
    reason: str | None = None
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class IngestReport:
    """The outcome of putting files, directories and URLs: one entry per source."""

    entries: list[IngestEntry]

    def group(self, *statuses: str) -> list[IngestEntry]:
        """Entries with one of these statuses."""
        return [e for e in self.entries if e.status in statuses]

    @property
    def failed(self) -> list[IngestEntry]:
        """Sources that could not be stored."""
        return self.group("failed")

    def to_dict(self) -> dict[str, Any]:
        """indexed / unchanged / skipped / failed lists and their counts."""
        groups = {
            "indexed": self.group("created", "updated"),
            "unchanged": self.group("unchanged"),
            "skipped": self.group("skipped"),
            "failed": self.group("failed"),
        }
        out: dict[str, Any] = {k: [e.to_dict() for e in v] for k, v in groups.items()}
        out["counts"] = {k: len(v) for k, v in groups.items()}
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> IngestReport:
        """Rebuild from `to_dict` output (entry order: by group)."""
        keys = ("indexed", "unchanged", "skipped", "failed")
        return cls([IngestEntry.from_dict(e) for k in keys for e in data.get(k, [])])


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
        fusion: Hybrid fusion, `score` or `rrf`; None means keepui.toml's.
        dedup: Fold near-duplicate hits; None means keepui.toml's.
        rerank: `relevance`, `recency` or `mix`; None means keepui.toml's.
        as_of: Search the versions that were current at this moment (ISO date: the end of
            that day; date-time in local time), with recency decay counted from then.
        include_system: Also return system documents (ids starting with `.`) and the now
            notes (`now`, `now:SCOPE`).
        history: Also search archived versions, each filtered by its own tags and time (by
            default only current versions and their parts are searched).
        keep_weak: Keep hits no channel found evidence for (no query word and a cosine of 0
            or less) instead of hiding them; LangGraph's stores return every item that passes
            the filter, up to the limit.
        decay: Apply recency decay (the default); False ranks by relevance alone (decay 1.0),
            as LangGraph's stores do.
        config: A search configuration (`[search.configs.NAME]`) whose settings stand in
            for [search]'s; the fields above that are not None still win. None: [search].
    """

    query: str
    tags: list[str] = field(default_factory=list)
    limit: int = 10
    since: str | None = None
    until: str | None = None
    mode: str | None = None
    min_score: float | None = None
    fusion: str | None = None
    dedup: bool | None = None
    rerank: str | None = None
    as_of: str | None = None
    include_system: bool = False
    history: bool = False
    keep_weak: bool = False
    decay: bool = True
    config: str | None = None


@dataclass(frozen=True)
class DiffRow(_Serialisable):
    """One row of a side-by-side diff of two texts.

    Attributes:
        kind: `equal`, `change` (a line edited in place), `delete` (left only) or `insert`
            (right only).
        left_no: 1-based line number in the left text (None when the row has no left line).
        left: The left line ("" when there is none).
        right_no: 1-based line number in the right text (None when the row has no right line).
        right: The right line ("" when there is none).
        left_spans: `[start, end)` character ranges of the left line that changed (change rows).
        right_spans: `[start, end)` character ranges of the right line that changed.
    """

    kind: str
    left_no: int | None
    left: str
    right_no: int | None
    right: str
    left_spans: list[list[int]] = field(default_factory=list)
    right_spans: list[list[int]] = field(default_factory=list)


@dataclass(frozen=True)
class VersionDiff(_Serialisable):
    """Two versions of a document compared line by line (left = older side as asked).

    Attributes:
        id: The document id.
        left_version: Ordinal of the left version (1 = oldest).
        left_offset: Its offset from the current head (0 = current).
        left_updated: When the left version was written.
        right_version: Ordinal of the right version.
        right_offset: Its offset from the current head.
        right_updated: When the right version was written.
        rows: The text diff, one row per aligned line pair.
        tags: The user tags diff, one `key=value` line per row (sorted).
        added: Lines only on the right.
        removed: Lines only on the left.
        changed: Lines edited in place.
    """

    id: str
    left_version: int
    left_offset: int
    left_updated: str
    right_version: int
    right_offset: int
    right_updated: str
    rows: list[DiffRow]
    tags: list[DiffRow]
    added: int = 0
    removed: int = 0
    changed: int = 0

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> VersionDiff:
        """Rebuild, including the nested rows."""
        rows = [DiffRow.from_dict(r) for r in data.get("rows", [])]
        tags = [DiffRow.from_dict(r) for r in data.get("tags", [])]
        rest = {k: v for k, v in data.items() if k not in ("rows", "tags")}
        return super().from_dict({**rest, "rows": rows, "tags": tags})  # type: ignore[misc,no-any-return]


@dataclass(frozen=True)
class SearchRecord(_Serialisable):
    """One search remembered in the store's search history.

    Attributes:
        id: Its number in the history (increasing).
        at: When it ran (ISO-8601 UTC).
        q: Everything the search asked for.
        ids: The ids it returned, best first.
    """

    id: int
    at: str
    q: FindQuery
    ids: list[str]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SearchRecord:
        """Rebuild, including the nested query."""
        return cls(int(data["id"]), data["at"], FindQuery.from_dict(data["q"]), list(data["ids"]))


@dataclass(frozen=True)
class ResultComparison(_Serialisable):
    """How a second result list differs from a first one.

    Attributes:
        entered: Ids only in the second list, in its order.
        left: Ids only in the first list, in its order.
        moved: `[id, rank in first, rank in second]` for ids whose 1-based rank changed.
        kept: Ids at the same rank in both.
    """

    entered: list[str]
    left: list[str]
    moved: list[tuple[str, int, int]]
    kept: list[str]
