"""PgStore: the store's tables in PostgreSQL with pgvector, opened by a `postgresql://` URL.

It offers what the DuckDB Store (store.duckdb.store) offers (con, transaction, index, fulltext,
model checks, sizes), so the engine above runs unchanged. No file lock and no socket server: every
process connects directly; each write is one transaction, and PostgreSQL's row locks and MVCC
let any number of processes write and read at once.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

import numpy as np

from keepui_engine.core.errors import StoreError
from keepui_engine.core.pg_url import is_url
from keepui_engine.store.postgres import schema as pg_schema
from keepui_engine.store.postgres.bm25 import PgFullText
from keepui_engine.store.postgres.notify import NOTIFY
from keepui_engine.store.postgres.schema import redact
from keepui_engine.store.postgres.search import EF_SEARCH, PgVectorIndex
from keepui_engine.store.postgres.sql import PgConnection
from keepui_engine.store.tables import meta

LOCK_SLOTS = 64  # advisory locks a put's ids share (PostgreSQL's lock table is 64 a session)


def connect(url: str) -> PgConnection:
    """A connection, or a StoreError saying what to check."""
    try:
        import psycopg
    except ImportError as exc:
        raise StoreError(
            f"{redact(url)} is a PostgreSQL store, but psycopg is not installed: "
            "pip install 'keepui[postgres]'.",
            "PostgreSQL support missing",
        ) from exc
    try:
        return PgConnection(url)
    except psycopg.Error as exc:
        raise StoreError(
            f"cannot connect to {redact(url)}: {str(exc).strip()}. Check that the server runs "
            "and the URL (host, port, user, database) is right; keepui serve-pg DIR starts a "
            "local one.",
            "Cannot reach PostgreSQL",
        ) from exc


UPSERT_META = " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value"


class PgStore:
    """The open tables of one PostgreSQL store.

    Args:
        url: The database URL.
        model: Embedding model name (recorded on first open, checked after).
        dim: Embedding dimension.
        settings_toml: The keepui.toml text recorded for a new store.
        exact_max: Up to this many vectors, search is exact; beyond, HNSW.
    """

    dialect = "postgres"
    notify = NOTIFY  # sent in every write transaction (see pg_notify)

    def __init__(
        self,
        url: str,
        model: str,
        dim: int,
        *,
        check_model: bool = True,
        settings_toml: str | None = None,
        exact_max: int = 30000,
    ) -> None:
        self.url = url
        self.root = redact(url)  # what stats and messages show
        self.model = model
        self.dim = dim
        self.exact_max = exact_max
        self.lock = threading.RLock()
        self.writes = 0
        self.in_transaction = False
        self.con = connect(url)
        try:
            pg_schema.ensure(self.con, url, dim)
            if settings_toml is not None:
                self.con.raw(
                    "INSERT INTO settings VALUES ('keepui.toml', $1) ON CONFLICT DO NOTHING",
                    [settings_toml],
                )
            self.con.raw(f"SET hnsw.ef_search = {EF_SEARCH}")
            self.con.raw("SET hnsw.iterative_scan = relaxed_order")
            if check_model:
                self._check_model()
        except BaseException:
            self.con.close()
            raise
        self._index: PgVectorIndex | None = None

    def _check_model(self) -> None:
        meta.check_model(self, "the settings table", "keepui reindex --store URL")

    def set_model(self, model: str, dim: int) -> None:
        """Record a new model after a reindex (the caller re-embeds everything)."""
        row = self.con.raw(
            "SELECT atttypmod FROM pg_attribute WHERE attrelid = 'key_vectors'::regclass "
            "AND attname = 'vec'"
        ).fetchone()
        if row is None or int(row[0]) != dim:
            self.con.raw("DROP TABLE IF EXISTS key_vectors")
            for ddl in pg_schema.vector_table(dim):
                self.con.raw(ddl)
        self.con.execute(
            "INSERT INTO meta VALUES ('model', $1), ('dim', $2)" + UPSERT_META, [model, str(dim)]
        )
        self.model, self.dim = model, dim
        self._index = None

    def reset_index(self) -> None:
        """Drop the stored vectors; the next use fills them again from the embedding cache."""
        self.con.raw("DELETE FROM key_vectors")
        self._index = None

    def transaction(self) -> contextlib.AbstractContextManager[None]:
        """Run a block in one PostgreSQL transaction (see `store.transaction`)."""
        from keepui_engine.store import transaction

        return transaction(self)

    def lock_ids(self, ids: list[str]) -> bool:
        """Hold each document id until this transaction ends (advisory locks, taken in one
        order, so two writers of the same ids queue instead of deadlocking). Ids share
        LOCK_SLOTS locks by hash, so a batch of 20,000 ids takes at most that many (the
        server's lock table is small). True: the caller must check that what it read before
        the transaction is still current."""
        self.con.raw(
            "SELECT pg_advisory_xact_lock(1264, h) FROM (SELECT DISTINCT "
            "abs(hashtext(i) % $2) AS h FROM unnest($1::text[]) AS i ORDER BY h) AS s",
            [sorted(set(ids)), LOCK_SLOTS],
        )
        return True

    @property
    def index(self) -> PgVectorIndex:
        """The vector table, repaired on first use in this process."""
        if self._index is None:
            index = PgVectorIndex(self.con, self.dim, self.exact_max)
            with self.lock:
                index.repair(self.model)
            self._index = index
        return self._index

    def open_fulltext(self) -> PgFullText:
        """The BM25 channel."""
        return PgFullText(self.con)

    def live_keys(self) -> np.ndarray:
        """Every vector key the database holds, sorted."""
        recs = self.con.raw("SELECT key FROM vector_keys ORDER BY key").fetchall()
        return np.asarray([r[0] for r in recs], np.int64)

    def index_add(self, keys: np.ndarray, vecs: np.ndarray) -> None:
        """Store the vectors of committed keys."""
        PgVectorIndex(self.con, self.dim).append(keys, vecs)

    def maybe_extend_hnsw(self) -> bool:
        """PostgreSQL keeps its HNSW index up to date on every insert."""
        return False

    def index_remove(self, keys: np.ndarray) -> None:
        """Drop the vectors of deleted keys."""
        PgVectorIndex(self.con, self.dim).remove(keys)

    def size_bytes(self) -> int:
        """Bytes the keepui tables and their indexes use."""
        row = self.con.raw(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'r' "
            "AND n.nspname = current_schema()"
        ).fetchone()
        return int(row[0]) if row else 0

    def close(self) -> None:
        """Close the connection."""
        with contextlib.suppress(Exception):
            self.con.close()


def settings_text(url: str) -> str | None:
    """The keepui.toml text a PostgreSQL store records, or None for a new database."""
    con = connect(url)
    try:
        if not pg_schema.exists(con):
            return None
        pg_schema.check(con, url)  # a newer keepui's schema: the error naming what to do
        row = con.raw("SELECT toml FROM settings WHERE name = 'keepui.toml'").fetchone()
        return None if row is None else str(row[0])
    finally:
        con.close()


def describe(store: Any) -> str:
    """How a store shows itself in messages."""
    return redact(store) if is_url(store) else str(store)
