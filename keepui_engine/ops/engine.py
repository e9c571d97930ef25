"""The Engine: an open store's state and infrastructure (its settings, backend, embedder, query
vector cache, clock, key catalog) plus the writes other operations build on (put, delete,
reindex). Every other operation is a function of an ops/ module run on it through the
registry (ops/registry.py); none of them imports this module."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from keepui_engine.core import interrupts
from keepui_engine.core.types import (
    DeleteResult,
    PutResult,
    PutSpec,
    Stats,
)
from keepui_engine.ops import reading
from keepui_engine.ops.embedding import EmbeddingCache
from keepui_engine.store.protocol import RebuiltFullText
from keepui_engine.store.tables import documents, structure
from keepui_engine.store.tables import edges as graph
from keepui_engine.store.tables import keys as key_sql
from keepui_engine.store.tables import parts as part_sql
from keepui_engine.store.tables.catalog import KeyCatalog

if TYPE_CHECKING:
    from keepui_engine.core.config import Settings
    from keepui_engine.providers.base import Embedder, Summarizer
    from keepui_engine.store.protocol import Backend, FullTextChannel


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


class Engine:
    """Operations on one open store.

    Args:
        settings: The store's settings.
        store: The open store (its lock held by the caller): a DuckDB Store, or a PgStore, which
            offers the same interface with a connection that speaks DuckDB's execute API.
        embedder: The embedding provider.
    """

    def __init__(self, settings: Settings, store: Backend, embedder: Embedder) -> None:
        self.settings = settings
        self.store = store
        self.embedder = embedder
        self.vectors = EmbeddingCache(store, embedder)
        self._fulltext: FullTextChannel | None = None
        self._summarizer: Summarizer | None = None
        self._catalog: tuple[int, KeyCatalog] | None = None

    @property
    def fulltext(self) -> FullTextChannel:
        """The BM25 channel, opened on first use."""
        if self._fulltext is None:
            self._fulltext = self.store.open_fulltext()
        return self._fulltext

    def live_keys(self) -> np.ndarray:
        """Every live vector key, sorted; cached until the next committed write."""
        got = self.catalog()
        return self.store.live_keys() if got is None else got.keys

    def current_keys(self) -> np.ndarray | None:
        """The keys of every document's current version and its parts, sorted, cached until
        the next committed write: what a find may return unless asked about the past. None on
        PostgreSQL, whose channels drop archived keys from what they return instead (reading
        every current key per find would cost more there than it saves)."""
        got = self.catalog()
        return None if got is None else got.current

    def catalog(self) -> KeyCatalog | None:
        """Every vector key's document, version and head, read once per committed write; None
        on PostgreSQL (other processes write too: nothing is cached)."""
        if self.store.dialect != "duckdb":
            return None
        if self._catalog is None or self._catalog[0] != self.store.writes:
            self._catalog = (self.store.writes, KeyCatalog.read(self.store.con))
        return self._catalog[1]

    def now(self) -> datetime:
        """Now as the store records times (naive UTC): the one clock of the operations (tests
        replace `_now` to freeze it)."""
        return _now()

    def settle(self) -> None:
        """Fold the BM25 tail into the base now, so scores depend on what is stored and not on
        when it was written: export does this first and an import last, so a round trip
        finds the same ids in the same order."""
        ft = self.fulltext
        if not isinstance(ft, RebuiltFullText):  # PostgreSQL: one set of statistics at all times
            return
        live = self.live_keys()
        if len(live) and not ft.settled(live):
            keys, texts = documents.texts_for_keys(self.store.con)
            ft.rebuild(keys, texts)

    def maintain(self) -> None:
        """Rebuild the BM25 base and extend the HNSW graph when they have fallen behind (after
        each write, and at the end of a bulk import)."""
        ft = self.fulltext
        if not isinstance(ft, RebuiltFullText):  # PostgreSQL: both indexes are kept up to date
            return
        live = self.live_keys()
        if ft.needs_rebuild(live):
            keys, texts = documents.texts_for_keys(self.store.con)
            ft.rebuild(keys, texts)
        self.store.maybe_extend_hnsw()

    def embed(self, texts: list[str]) -> np.ndarray:
        """Vectors for texts (see EmbeddingCache.embed)."""
        return self.vectors.embed(texts)

    def flush(self) -> None:
        """Persist query vectors computed since the last flush."""
        self.vectors.flush()

    # -- writing ------------------------------------------------------------------------------
    def put_many(self, specs: list[PutSpec]) -> list[PutResult]:
        """Store texts as new documents or new versions; unchanged ones are no-ops."""
        from keepui_engine.ingest.writing import put_many

        return put_many(self, specs, _now())

    def index_new(
        self, keys: np.ndarray, hashes: list[str], by_hash: dict[str, np.ndarray]
    ) -> None:
        """Add vectors of newly committed keys (`hashes[i]` is the content of `keys[i]`)."""
        if len(keys):
            self.store.index_add(keys, np.stack([by_hash[h] for h in hashes]))
            self.maintain()

    def delete(self, doc_id: str, purge: bool = False) -> DeleteResult:
        """Revert to the previous version, or delete when there is none (purge: all of it);
        from the new head when another process wrote the document meanwhile (PostgreSQL)."""
        from keepui_engine.ingest.writing import retried

        return retried(f"delete {doc_id}", lambda: self._delete_once(doc_id, purge))

    def _delete_once(self, doc_id: str, purge: bool) -> DeleteResult:
        from keepui_engine.ingest.writing import hold

        head = reading.head_of(self, doc_id)
        con = self.store.con
        with self.store.transaction():
            hold(self.store, [doc_id], {doc_id: head})
            prev = documents.archived(con, doc_id)
            if purge or not prev:
                documents.delete_document(con, doc_id)
                part_sql.drop(con, doc_id)
                dropped = documents.drop_vector_keys(con, doc_id)
                result = DeleteResult(doc_id, "purged" if purge else "deleted", 0, 1 + len(prev))
            else:
                back = prev[0].with_(created=head.created, accessed=_now())
                documents.delete_archived(con, doc_id, back.version)
                documents.write_heads(con, [back])
                part_sql.drop(con, doc_id, head.version)
                dropped = documents.drop_vector_keys(con, doc_id, head.version)
                documents.set_heads(con, {doc_id: back.version})
                result = DeleteResult(doc_id, "reverted", back.version, 1)
                from keepui_engine.queue import after_write

                # the text's references follow the version now current
                graph.set_references(con, doc_id, [], _now())
                after_write.run(self, [(back, head, False)], _now())
            structure.prune(con, doc_id)
            graph.sync(con, [doc_id], _now())
            from keepui_engine.store.tables.postings import drop_tail

            drop_tail(con, dropped)
        self.store.index_remove(dropped)
        return result

    def reindex(self, progress: Any = None) -> Stats:
        """Re-embed every stored version with the configured model and rebuild the index.

        Texts already embedded with this model (by an earlier, interrupted run) are skipped;
        the index switches to the new model only once every text has its vector, so an
        interrupted run leaves the store as it was, and running it again continues.
        `progress(done, total)` is called after each committed batch."""
        con = self.store.con
        name = self.embedder.name
        recs = documents.unembedded(con, name)
        batch = max(self.settings.batch_size * 8, 256)
        if progress:
            progress(0, len(recs))
        for start in range(0, len(recs), batch):
            chunk = recs[start : start + batch]
            interrupts.checkpoint("embed")
            vecs = self.embedder.embed([t for _, t in chunk])
            interrupts.check()
            with interrupts.shield(), self.store.transaction():
                documents.store_vectors(
                    con, {h: v for (h, _), v in zip(chunk, vecs, strict=True)}, name
                )
            if progress:
                progress(start + len(chunk), len(recs))
        with interrupts.shield(), self.store.transaction():
            key_sql.set_model(con, name)
            self.store.set_model(name, self.embedder.dim)
        self.store.reset_index()
        from keepui_engine.ops.doctor import rebuild_words

        rebuild_words(self)  # the word index too: reindex is also the cure for a damaged one
        return reading.stats(self)

    # -- background work (see keepui_engine/work) ------------------------------------------------
    @property
    def summarizer(self) -> Summarizer:
        """The [summarization] provider, created on first use."""
        if self._summarizer is None:
            from keepui_engine.providers.summary import SummaryConfig, create_summarizer

            st = self.settings
            config = SummaryConfig(
                provider=st.summary_provider,
                max_chars=st.summary_max_chars,
                sentences=st.summary_sentences,
                base_url=st.summary_base_url,
                model=st.summary_model,
                api_key_env=st.summary_api_key_env,
                timeout_s=st.summary_timeout_s,
            )
            self._summarizer = create_summarizer(config, self.embedder.embed)
        return self._summarizer
