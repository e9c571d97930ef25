"""The engine proper: every operation on an open store (the caller holds the store lock)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

import numpy as np

from keepui_engine import inputs
from keepui_engine.embedding import EmbeddingCache
from keepui_engine.errors import NotFound, UsageError
from keepui_engine.inputs import content_hash, iso
from keepui_engine.search import public_tags
from keepui_engine.store import documents, queries
from keepui_engine.store.documents import Row
from keepui_engine.types import (
    DeleteResult,
    FindQuery,
    FindResult,
    Item,
    PutResult,
    PutSpec,
    Stats,
    VersionInfo,
)

if TYPE_CHECKING:
    from keepui_engine.config import Settings
    from keepui_engine.fulltext import FullText
    from keepui_engine.providers.base import Embedder
    from keepui_engine.store import Store
    from keepui_engine.why import WhyResult

SORTS = ("updated", "created", "accessed", "id")


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


class Engine:
    """Operations on one open store.

    Args:
        settings: The store's settings.
        store: The open store (its lock held by the caller).
        embedder: The embedding provider.
    """

    def __init__(self, settings: Settings, store: Store, embedder: Embedder) -> None:
        self.settings = settings
        self.store = store
        self.embedder = embedder
        self.vectors = EmbeddingCache(store, embedder)
        self._fulltext: FullText | None = None

    @property
    def fulltext(self) -> FullText:
        """The BM25 channel, opened on first use."""
        if self._fulltext is None:
            from keepui_engine.fulltext import FullText

            self._fulltext = FullText(self.store.root, self.store.con)
        return self._fulltext

    def _maintain(self) -> None:
        """Rebuild the BM25 base and extend the HNSW graph when they have fallen behind."""
        live = documents.live_keys(self.store.con)
        if self.fulltext.needs_rebuild(live):
            keys, texts = documents.texts_for_keys(self.store.con)
            self.fulltext.rebuild(keys, texts)
        self.store.maybe_extend_hnsw()

    def embed(self, texts: list[str]) -> np.ndarray:
        """Vectors for texts (see EmbeddingCache.embed)."""
        return self.vectors.embed(texts)

    def flush(self) -> None:
        """Persist query vectors computed since the last flush."""
        self.vectors.flush()

    # -- writing ------------------------------------------------------------------------------
    def _summary(self, text: str) -> str:
        limit = self.settings.summary_max_chars
        if len(text) <= limit:
            return text
        cut = text[: limit - 1]
        space = cut.rfind(" ")
        return (cut[:space] if space > limit // 2 else cut).rstrip() + "…"

    def put_many(self, specs: list[PutSpec]) -> list[PutResult]:
        """Store texts as new documents or new versions; unchanged ones are no-ops."""
        prepared = []
        for spec in specs:
            if not spec.text or not spec.text.strip():
                raise UsageError(
                    "nothing to store: the text is empty. Give some text, a file "
                    "path, or - to read standard input."
                )
            doc_id = (
                inputs.check_id(spec.id) if spec.id is not None else inputs.anonymous_id(spec.text)
            )
            changes = inputs.parse_tag_args(spec.tags, allow_bare=False)
            prepared.append((spec, doc_id, changes, content_hash(spec.text)))
        vectors = self.embed([p[0].text for p in prepared])
        by_hash = {p[3]: vectors[i] for i, p in enumerate(prepared)}
        results: list[PutResult] = []
        now = _now()
        with self.store.transaction():
            old = documents.heads(self.store.con, [p[1] for p in prepared])
            new: dict[str, Row] = {}
            archive: list[Row] = []
            for spec, doc_id, changes, h in prepared:
                head = new.get(doc_id) or old.get(doc_id)
                tags = inputs.merge_tags(head.tags if head else {}, changes)
                summary = spec.summary if spec.summary else self._summary(spec.text)
                if (
                    head
                    and head.content_hash == h
                    and head.tags == tags
                    and head.summary == summary
                ):
                    results.append(PutResult(doc_id, head.version, "unchanged"))
                    continue
                sys = {
                    "_source": spec.source,
                    "_content_type": spec.content_type,
                    "_content_length": len(spec.text),
                    "_content_hash": h[:12],
                }
                row = Row(
                    doc_id,
                    head.version + 1 if head else 1,
                    spec.text if self.settings.keep_content else None,
                    summary,
                    tags,
                    sys,
                    h,
                    head.created if head else now,
                    now,
                    now,
                )
                if head:
                    archive.append(head)
                new[doc_id] = row
                results.append(PutResult(doc_id, row.version, "updated" if head else "created"))
            keys = self._commit(archive, list(new.values()))
        self._index_new(keys, [r.content_hash for r in new.values()], by_hash)
        return results

    def _commit(self, archive: list[Row], heads: list[Row]) -> np.ndarray:
        documents.archive(self.store.con, archive)
        documents.write_heads(self.store.con, heads)
        keys = documents.new_vector_keys(self.store.con, heads, self.embedder.name)
        documents.set_heads(self.store.con, {r.id: r.version for r in heads if r.version > 1})
        from keepui_engine.fulltext import add_tail

        add_tail(
            self.store.con,
            keys.tolist(),
            [r.text or r.summary for r in heads],
            self.fulltext.tokenize,
        )
        return keys

    def _index_new(
        self, keys: np.ndarray, hashes: list[str], by_hash: dict[str, np.ndarray]
    ) -> None:
        if len(keys):
            self.store.index_add(keys, np.stack([by_hash[h] for h in hashes]))
            self._maintain()

    def tag(self, doc_id: str, tags: list[str], remove: list[str]) -> PutResult:
        """Change a document's tags, archiving the previous version."""
        changes = inputs.parse_tag_args(tags, allow_bare=False)
        for key in remove:
            changes[inputs.tag_key(key)] = []
        if not changes:
            raise UsageError("nothing to change: give -t KEY=VALUE and/or -r KEY.")
        head = self._head(doc_id)
        merged = inputs.merge_tags(head.tags, changes)
        if merged == head.tags:
            return PutResult(doc_id, head.version, "unchanged")
        now = _now()
        row = head.with_(version=head.version + 1, tags=merged, updated=now, accessed=now)
        with self.store.transaction():
            keys = self._commit([head], [row])
        vec = documents.cached_vectors(
            self.store.con, [head.content_hash], self.embedder.name, self.embedder.dim
        )
        self._index_new(keys, [head.content_hash], vec)
        return PutResult(doc_id, row.version, "updated")

    def delete(self, doc_id: str, purge: bool = False) -> DeleteResult:
        """Revert to the previous version, or delete when there is none (purge: all of it)."""
        head = self._head(doc_id)
        con = self.store.con
        with self.store.transaction():
            prev = documents.archived(con, doc_id)
            if purge or not prev:
                con.execute("DELETE FROM documents WHERE id = $1", [doc_id])
                con.execute("DELETE FROM versions WHERE id = $1", [doc_id])
                dropped = documents.drop_vector_keys(con, doc_id)
                result = DeleteResult(doc_id, "purged" if purge else "deleted", 0, 1 + len(prev))
            else:
                back = prev[0].with_(created=head.created, accessed=_now())
                con.execute(
                    "DELETE FROM versions WHERE id = $1 AND version = $2", [doc_id, back.version]
                )
                documents.write_heads(con, [back])
                dropped = documents.drop_vector_keys(con, doc_id, head.version)
                documents.set_heads(con, {doc_id: back.version})
                result = DeleteResult(doc_id, "reverted", back.version, 1)
            from keepui_engine.fulltext import drop_tail

            drop_tail(con, dropped)
        self.store.index_remove(dropped)
        return result

    # -- reading ------------------------------------------------------------------------------
    def _head(self, doc_id: str) -> Row:
        head = documents.heads(self.store.con, [doc_id]).get(doc_id)
        if head is None:
            raise NotFound(f"no document with id {doc_id!r}. `keepui list` shows the ids.")
        return head

    def _resolve(self, address: str, offset: int | None) -> tuple[Row, Row]:
        """(head, the asked version) for `ID`, `ID@V{N}` or ID with an explicit offset."""
        doc_id = address
        head = documents.heads(self.store.con, [address]).get(address)
        if head is None:
            split = inputs.split_version(address)
            if split is None:
                raise NotFound(f"no document with id {address!r}. `keepui list` shows the ids.")
            doc_id, parsed = split
            offset = parsed if offset is None else offset
            head = self._head(doc_id)
        if not offset:
            return head, head
        ordinal = head.version - offset if offset > 0 else -offset
        if not 1 <= ordinal <= head.version:
            raise NotFound(
                f"{doc_id!r} has {head.version} version(s): use -V 0..{head.version - 1}"
                f" (from the current) or -V -1..-{head.version} (from the oldest)."
            )
        if ordinal == head.version:
            return head, head
        rows = documents.archived(self.store.con, doc_id, ordinal)
        if not rows:
            raise NotFound(f"version {ordinal} of {doc_id!r} does not exist.")
        return head, rows[0]

    def _item(self, head: Row, row: Row) -> Item:
        return Item(
            id=row.id,
            version=row.version,
            offset=head.version - row.version,
            versions=head.version,
            text=row.text,
            summary=row.summary,
            tags=public_tags(row.tags, row.sys, head.created, row.updated, head.accessed),
            created=iso(head.created),
            updated=iso(row.updated),
            accessed=iso(head.accessed),
        )

    def get(self, address: str, offset: int | None = None) -> Item:
        """A document (or one of its versions); touches its access time."""
        head, row = self._resolve(address, offset)
        now = _now()
        with self.store.transaction():
            self.store.con.execute(
                "UPDATE documents SET accessed = $1 WHERE id = $2", [now, head.id]
            )
        return self._item(head.with_(accessed=now), row)

    def history(self, address: str) -> list[VersionInfo]:
        """Every version of a document, newest first, with what each changed."""
        head, _ = self._resolve(address, 0)
        rows = [head, *documents.archived(self.store.con, head.id)]
        out = []
        for i, row in enumerate(rows):
            older = rows[i + 1] if i + 1 < len(rows) else None
            if older is None:
                change = "created"
            else:
                text, tags = row.content_hash != older.content_hash, row.tags != older.tags
                change = "both" if text and tags else "text" if text else "tags" if tags else "none"
            out.append(
                VersionInfo(
                    head.id,
                    row.version,
                    head.version - row.version,
                    iso(row.updated),
                    row.summary,
                    row.sys.get("_content_length", 0),
                    row.content_hash[:12],
                    change,
                )
            )
        return out

    def find(self, q: FindQuery) -> FindResult:
        """Rank documents for a query (see `finding.find`)."""
        from keepui_engine.finding import find

        return find(self, q)

    def why(self, q: FindQuery, doc_id: str) -> WhyResult:
        """Where a document ranked for a query, and what kept it out (see `why.why`)."""
        from keepui_engine.why import why

        return why(self, q, doc_id)

    def list_items(
        self,
        prefix: str | None = None,
        tags: list[str] | None = None,
        sort: str = "updated",
        limit: int = 20,
    ) -> list[Item]:
        """Current documents, newest first (or by id), without their text."""
        if sort not in SORTS:
            raise UsageError(f"--sort {sort!r}: choose one of {', '.join(SORTS)}.")
        if limit < 1:
            raise UsageError(f"--limit {limit}: give a number of 1 or more.")
        filters = inputs.parse_tag_args(tags, allow_bare=True)
        ids = queries.list_ids(self.store.con, prefix, filters, sort, limit)
        heads = documents.heads(self.store.con, ids)
        return [self._item(heads[i], heads[i].with_(text=None)) for i in ids]

    def reindex(self) -> Stats:
        """Re-embed every stored version with the configured model and rebuild the index."""
        con = self.store.con
        recs = con.execute(
            "SELECT content_hash, any_value(COALESCE(text, summary)) FROM ("
            " SELECT content_hash, text, summary FROM documents UNION ALL"
            " SELECT content_hash, text, summary FROM versions) GROUP BY content_hash"
        ).fetchall()
        batch = max(self.settings.batch_size * 8, 256)
        for start in range(0, len(recs), batch):
            chunk = recs[start : start + batch]
            vecs = self.embedder.embed([t for _, t in chunk])
            with self.store.transaction():
                documents.store_vectors(
                    con, {h: v for (h, _), v in zip(chunk, vecs, strict=True)}, self.embedder.name
                )
        with self.store.transaction():
            con.execute("UPDATE vector_keys SET model = $1", [self.embedder.name])
            self.store.set_model(self.embedder.name, self.embedder.dim)
        self.store.reset_index()
        return self.stats()

    def stats(self) -> Stats:
        """Counts of documents, versions and vectors, and the store's size."""
        items, versions, vectors = queries.counts(self.store.con)
        return Stats(
            str(self.store.root),
            items,
            versions,
            vectors,
            self.store.size_bytes(),
            self.embedder.name,
            self.embedder.dim,
        )
