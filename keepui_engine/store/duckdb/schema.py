"""DDL as ordered, named migrations recorded in the `_migrations` table."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb


def m001_core(con: duckdb.DuckDBPyConnection) -> None:
    """Documents, archived versions, vector keys, the embedding cache and store metadata."""
    con.execute("""
        CREATE TABLE documents (
            id VARCHAR PRIMARY KEY,
            version INTEGER NOT NULL,
            text VARCHAR,
            summary VARCHAR NOT NULL,
            tags JSON NOT NULL,
            sys JSON NOT NULL,
            content_hash VARCHAR NOT NULL,
            created TIMESTAMP NOT NULL,
            updated TIMESTAMP NOT NULL,
            accessed TIMESTAMP NOT NULL
        )""")
    con.execute("""
        CREATE TABLE versions (
            id VARCHAR NOT NULL,
            version INTEGER NOT NULL,
            text VARCHAR,
            summary VARCHAR NOT NULL,
            tags JSON NOT NULL,
            sys JSON NOT NULL,
            content_hash VARCHAR NOT NULL,
            updated TIMESTAMP NOT NULL,
            PRIMARY KEY (id, version)
        )""")
    con.execute("CREATE SEQUENCE vector_key_seq START 1")
    # vector_keys is also the search catalog: each row carries what a hit shows and what the
    # filters test (its version's summary, tags and time, and the document's head version),
    # so a find reads one table instead of joining documents and versions.
    con.execute("""
        CREATE TABLE vector_keys (
            key BIGINT PRIMARY KEY,
            doc_id VARCHAR NOT NULL,
            version INTEGER NOT NULL,
            part INTEGER NOT NULL DEFAULT 0,
            content_hash VARCHAR NOT NULL,
            model VARCHAR NOT NULL,
            head INTEGER NOT NULL,
            summary VARCHAR NOT NULL,
            tags JSON NOT NULL,
            sys JSON NOT NULL,
            created TIMESTAMP NOT NULL,
            updated TIMESTAMP NOT NULL
        )""")
    con.execute("CREATE INDEX vector_keys_doc ON vector_keys (doc_id)")
    # The embedding cache is keyed by one column, `model:content_hash`: DuckDB answers point
    # lookups on it about 7x faster than on a composite key.
    con.execute("""
        CREATE TABLE embeddings (
            key VARCHAR PRIMARY KEY,
            content_hash VARCHAR NOT NULL,
            model VARCHAR NOT NULL,
            vec BLOB NOT NULL,
            created TIMESTAMP NOT NULL
        )""")
    con.execute("CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL)")


def m002_bm25_tail(con: duckdb.DuckDBPyConnection) -> None:
    """Term counts of versions written since the BM25 base index was last built."""
    con.execute("""
        CREATE TABLE bm25_tail (
            key BIGINT NOT NULL,
            term VARCHAR NOT NULL,
            tf INTEGER NOT NULL,
            dl INTEGER NOT NULL
        )""")


def m003_parts(con: duckdb.DuckDBPyConnection) -> None:
    """Parts of long document versions (`ID@P{N}`): text, place, summary, content hash."""
    con.execute("""
        CREATE TABLE parts (
            id VARCHAR NOT NULL,
            version INTEGER NOT NULL,
            part INTEGER NOT NULL,
            kind VARCHAR NOT NULL,
            title VARCHAR,
            position VARCHAR NOT NULL,
            text VARCHAR,
            summary VARCHAR NOT NULL,
            content_hash VARCHAR NOT NULL,
            PRIMARY KEY (id, version, part)
        )""")


def m004_searches(con: duckdb.DuckDBPyConnection) -> None:
    """The search history: every search the workbench ran, its parameters and result ids."""
    con.execute("CREATE SEQUENCE search_id_seq START 1")
    con.execute("""
        CREATE TABLE searches (
            id BIGINT PRIMARY KEY DEFAULT nextval('search_id_seq'),
            ran_at TIMESTAMP NOT NULL,
            query VARCHAR NOT NULL,
            params JSON NOT NULL,
            result_ids JSON NOT NULL
        )""")


def m005_pending(con: duckdb.DuckDBPyConnection) -> None:
    """The pending queue of background work (see keepui_engine/work/pending.py)."""
    con.execute("CREATE SEQUENCE pending_seq START 1")
    con.execute("""
        CREATE TABLE pending (
            id BIGINT PRIMARY KEY DEFAULT nextval('pending_seq'),
            task VARCHAR NOT NULL,
            doc_id VARCHAR NOT NULL,
            version INTEGER,
            payload JSON NOT NULL,
            state VARCHAR NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            owner VARCHAR,
            claimed_at TIMESTAMP,
            run_after TIMESTAMP NOT NULL,
            last_error VARCHAR,
            created TIMESTAMP NOT NULL,
            updated TIMESTAMP NOT NULL
        )""")
    con.execute("CREATE INDEX pending_doc ON pending (doc_id)")


def m006_structure(con: duckdb.DuckDBPyConnection) -> None:
    """The structure (pages, slides, headings) of each document text, for analyze."""
    con.execute("""
        CREATE TABLE structure (
            id VARCHAR NOT NULL,
            content_hash VARCHAR NOT NULL,
            blocks JSON NOT NULL,
            PRIMARY KEY (id, content_hash)
        )""")


def m007_judgments(con: duckdb.DuckDBPyConnection) -> None:
    """Relevance judgments: how relevant a document is to a query (0..3), the latest kept."""
    con.execute("""
        CREATE TABLE judgments (
            query VARCHAR NOT NULL,
            id VARCHAR NOT NULL,
            grade INTEGER NOT NULL,
            judged_at TIMESTAMP NOT NULL,
            PRIMARY KEY (query, id)
        )""")


def m008_edges(con: duckdb.DuckDBPyConnection) -> None:
    """Edges from link tags: document `source` is tagged `key`=`target` (a `.tag/KEY` doc
    declares the key a link, with the verb of its inverse)."""
    con.execute("""
        CREATE TABLE edges (
            source VARCHAR NOT NULL,
            key VARCHAR NOT NULL,
            target VARCHAR NOT NULL,
            created TIMESTAMP NOT NULL,
            PRIMARY KEY (source, key, target)
        )""")
    con.execute("CREATE INDEX edges_target ON edges (target)")


def m009_bm25_passage(con: duckdb.DuckDBPyConnection) -> None:
    """Whether a tail row's key is a passage: idf counts whole texts, and each kind has its
    own mean length (store/bm25_stats.py)."""
    con.execute("ALTER TABLE bm25_tail ADD COLUMN passage BOOLEAN DEFAULT false")
    con.execute(
        "UPDATE bm25_tail SET passage = true WHERE key IN "
        "(SELECT key FROM vector_keys WHERE part > 0)"
    )


MIGRATIONS: list[tuple[str, Callable[[duckdb.DuckDBPyConnection], None]]] = [
    ("m001_core", m001_core),
    ("m002_bm25_tail", m002_bm25_tail),
    ("m003_parts", m003_parts),
    ("m004_searches", m004_searches),
    ("m005_pending", m005_pending),
    ("m006_structure", m006_structure),
    ("m007_judgments", m007_judgments),
    ("m008_edges", m008_edges),
    ("m009_bm25_passage", m009_bm25_passage),
]


def migrate(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Apply every migration not yet recorded, each in its own transaction.

    Returns:
        The names of the migrations applied now.
    """
    con.execute(
        "CREATE TABLE IF NOT EXISTS _migrations (name VARCHAR PRIMARY KEY, applied TIMESTAMP)"
    )
    done = {row[0] for row in con.execute("SELECT name FROM _migrations").fetchall()}
    applied = []
    for name, fn in MIGRATIONS:
        if name in done:
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            fn(con)
            con.execute("INSERT INTO _migrations VALUES (?, now())", [name])
            con.execute("COMMIT")
        except Exception:
            con.execute("ROLLBACK")
            raise
        applied.append(name)
    return applied
