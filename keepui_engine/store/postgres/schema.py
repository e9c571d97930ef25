"""The PostgreSQL schema: the DuckDB store's tables, plus vectors, postings statistics and
settings; one schema version recorded in `keepui_schema`."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from keepui_engine.core.errors import StoreError

if TYPE_CHECKING:
    from keepui_engine.store.postgres.sql import PgConnection

SCHEMA_VERSION = 4
# Text columns sort by code point (COLLATE "C"), as DuckDB's do: export pages by `id > $1`.
T = 'TEXT COLLATE "C"'

# bm25_docs follows bm25_tail, whoever writes the postings, and bm25_stats sums it (N and
# the total length, for BM25's idf and mean length without scanning bm25_docs per query; the
# passages' share apart, since idf counts whole texts and each kind has its own mean length).
# The sums are spread over STAT_SHARDS rows by backend, so concurrent writers do not queue
# on one row; a reader adds them up.
STAT_SHARDS = 16
BM25_STATS = [
    "CREATE TABLE IF NOT EXISTS bm25_stats (shard INTEGER PRIMARY KEY, n BIGINT NOT NULL, "
    "dl_sum BIGINT NOT NULL, n_part BIGINT NOT NULL DEFAULT 0, dl_part BIGINT NOT NULL "
    "DEFAULT 0)",
    f"""CREATE OR REPLACE FUNCTION keepui_docs_add() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        WITH ins AS (INSERT INTO bm25_docs SELECT DISTINCT key, dl, passage FROM new_rows
                     ON CONFLICT DO NOTHING RETURNING dl, passage)
        INSERT INTO bm25_stats SELECT pg_backend_pid() % {STAT_SHARDS}, count(*), sum(dl),
            count(*) FILTER (WHERE passage), coalesce(sum(dl) FILTER (WHERE passage), 0)
        FROM ins HAVING count(*) > 0 ON CONFLICT (shard) DO UPDATE
        SET n = bm25_stats.n + excluded.n, dl_sum = bm25_stats.dl_sum + excluded.dl_sum,
            n_part = bm25_stats.n_part + excluded.n_part,
            dl_part = bm25_stats.dl_part + excluded.dl_part;
        RETURN NULL; END $$""",
    f"""CREATE OR REPLACE FUNCTION keepui_docs_drop() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        WITH del AS (DELETE FROM bm25_docs d USING (SELECT DISTINCT key FROM old_rows) o
                     WHERE d.key = o.key AND NOT EXISTS
                     (SELECT 1 FROM bm25_tail t WHERE t.key = o.key) RETURNING d.dl, d.passage)
        INSERT INTO bm25_stats SELECT pg_backend_pid() % {STAT_SHARDS}, -count(*), -sum(dl),
            -count(*) FILTER (WHERE passage), -coalesce(sum(dl) FILTER (WHERE passage), 0)
        FROM del HAVING count(*) > 0 ON CONFLICT (shard) DO UPDATE
        SET n = bm25_stats.n + excluded.n, dl_sum = bm25_stats.dl_sum + excluded.dl_sum,
            n_part = bm25_stats.n_part + excluded.n_part,
            dl_part = bm25_stats.dl_part + excluded.dl_part;
        RETURN NULL; END $$""",
]

# bm25_terms keeps, per term, its document frequency and the largest tf and smallest length
# of any posting it ever had: idf without counting postings, and an upper bound of the term's
# contribution (PgFullText prunes with it). Sharded by backend like bm25_stats, so writers
# on two shards share no row, and two on one shard queue on that shard's bm25_stats row first
# (triggers fire in name order: bm25_docs_* before bm25_terms_*), so they cannot deadlock.
# A delete lowers df only: the bounds stay bounds. df_part counts the passages among df
# (idf counts whole texts: df - df_part).
BM25_TERMS = [
    f"CREATE TABLE IF NOT EXISTS bm25_terms (term {T} NOT NULL, shard INTEGER NOT NULL, "
    "df BIGINT NOT NULL, max_tf INTEGER NOT NULL, min_dl INTEGER NOT NULL, "
    "df_part BIGINT NOT NULL DEFAULT 0, PRIMARY KEY (term, shard))",
    f"""CREATE OR REPLACE FUNCTION keepui_terms_add() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO bm25_terms SELECT term, pg_backend_pid() % {STAT_SHARDS}, count(*),
            max(tf), min(dl), count(*) FILTER (WHERE passage) FROM new_rows GROUP BY term
            ORDER BY term
        ON CONFLICT (term, shard) DO UPDATE SET df = bm25_terms.df + excluded.df,
            df_part = bm25_terms.df_part + excluded.df_part,
            max_tf = greatest(bm25_terms.max_tf, excluded.max_tf),
            min_dl = least(bm25_terms.min_dl, excluded.min_dl);
        RETURN NULL; END $$""",
    f"""CREATE OR REPLACE FUNCTION keepui_terms_drop() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO bm25_terms SELECT term, pg_backend_pid() % {STAT_SHARDS}, -count(*),
            max(tf), min(dl), -count(*) FILTER (WHERE passage) FROM old_rows GROUP BY term
            ORDER BY term
        ON CONFLICT (term, shard) DO UPDATE SET df = bm25_terms.df + excluded.df,
            df_part = bm25_terms.df_part + excluded.df_part;
        RETURN NULL; END $$""",
    "CREATE OR REPLACE TRIGGER bm25_terms_add AFTER INSERT ON bm25_tail "
    "REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION keepui_terms_add()",
    "CREATE OR REPLACE TRIGGER bm25_terms_drop AFTER DELETE ON bm25_tail "
    "REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION keepui_terms_drop()",
]

TABLES = [
    f"""CREATE TABLE documents (
        id {T} PRIMARY KEY, version INTEGER NOT NULL, text TEXT, summary TEXT NOT NULL,
        tags JSON NOT NULL, sys JSON NOT NULL, content_hash {T} NOT NULL,
        created TIMESTAMP NOT NULL, updated TIMESTAMP NOT NULL, accessed TIMESTAMP NOT NULL)""",
    f"""CREATE TABLE versions (
        id {T} NOT NULL, version INTEGER NOT NULL, text TEXT, summary TEXT NOT NULL,
        tags JSON NOT NULL, sys JSON NOT NULL, content_hash {T} NOT NULL,
        updated TIMESTAMP NOT NULL, PRIMARY KEY (id, version))""",
    "CREATE SEQUENCE vector_key_seq START 1",
    f"""CREATE TABLE vector_keys (
        key BIGINT PRIMARY KEY, doc_id {T} NOT NULL, version INTEGER NOT NULL,
        part INTEGER NOT NULL DEFAULT 0, content_hash {T} NOT NULL, model {T} NOT NULL,
        head INTEGER NOT NULL, summary TEXT NOT NULL, tags JSON NOT NULL, sys JSON NOT NULL,
        created TIMESTAMP NOT NULL, updated TIMESTAMP NOT NULL)""",
    "CREATE INDEX vector_keys_doc ON vector_keys (doc_id)",
    "CREATE INDEX vector_keys_updated ON vector_keys (updated)",
    f"""CREATE TABLE embeddings (
        key {T} PRIMARY KEY, content_hash {T} NOT NULL, model {T} NOT NULL,
        vec BYTEA NOT NULL, created TIMESTAMP NOT NULL)""",
    "CREATE INDEX embeddings_hash ON embeddings (content_hash, model)",
    f"CREATE TABLE meta (key {T} PRIMARY KEY, value TEXT NOT NULL)",
    # BM25 postings: one row per (version key, term); dl and whether the key is a passage
    # repeated as in the DuckDB tail table
    f"CREATE TABLE bm25_tail (key BIGINT NOT NULL, term {T} NOT NULL, tf INTEGER NOT NULL, "
    "dl INTEGER NOT NULL, passage BOOLEAN NOT NULL DEFAULT false, "
    "PRIMARY KEY (term, key) INCLUDE (tf, dl, passage))",
    "CREATE INDEX bm25_tail_key ON bm25_tail (key)",
    # one row per indexed version: N and the mean length without scanning the postings
    "CREATE TABLE bm25_docs (key BIGINT PRIMARY KEY, dl INTEGER NOT NULL, "
    "passage BOOLEAN NOT NULL DEFAULT false)",
    f"""CREATE TABLE parts (
        id {T} NOT NULL, version INTEGER NOT NULL, part INTEGER NOT NULL, kind {T} NOT NULL,
        title TEXT, position TEXT NOT NULL, text TEXT, summary TEXT NOT NULL,
        content_hash {T} NOT NULL, PRIMARY KEY (id, version, part))""",
    "CREATE SEQUENCE search_id_seq START 1",
    """CREATE TABLE searches (
        id BIGINT PRIMARY KEY DEFAULT nextval('search_id_seq'), ran_at TIMESTAMP NOT NULL,
        query TEXT NOT NULL, params JSON NOT NULL, result_ids JSON NOT NULL)""",
    "CREATE SEQUENCE pending_seq START 1",
    f"""CREATE TABLE pending (
        id BIGINT PRIMARY KEY DEFAULT nextval('pending_seq'), task {T} NOT NULL,
        doc_id {T} NOT NULL, version INTEGER, payload JSON NOT NULL, state {T} NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0, owner TEXT, claimed_at TIMESTAMP,
        run_after TIMESTAMP NOT NULL, last_error TEXT, created TIMESTAMP NOT NULL,
        updated TIMESTAMP NOT NULL)""",
    "CREATE INDEX pending_doc ON pending (doc_id)",
    "CREATE INDEX pending_runnable ON pending (run_after, id) WHERE state IN ('queued', 'failed')",
    f"""CREATE TABLE structure (
        id {T} NOT NULL, content_hash {T} NOT NULL, blocks JSON NOT NULL,
        PRIMARY KEY (id, content_hash))""",
    f"""CREATE TABLE judgments (
        query {T} NOT NULL, id {T} NOT NULL, grade INTEGER NOT NULL,
        judged_at TIMESTAMP NOT NULL, PRIMARY KEY (query, id))""",
    f"""CREATE TABLE edges (
        source {T} NOT NULL, key {T} NOT NULL, target {T} NOT NULL,
        created TIMESTAMP NOT NULL, PRIMARY KEY (source, key, target))""",
    "CREATE INDEX edges_target ON edges (target)",
    # the store's keepui.toml, shared by every process and machine that opens the URL
    "CREATE TABLE settings (name TEXT PRIMARY KEY, toml TEXT NOT NULL)",
    *BM25_STATS,
    "CREATE TRIGGER bm25_docs_add AFTER INSERT ON bm25_tail REFERENCING NEW TABLE AS new_rows "
    "FOR EACH STATEMENT EXECUTE FUNCTION keepui_docs_add()",
    "CREATE TRIGGER bm25_docs_drop AFTER DELETE ON bm25_tail REFERENCING OLD TABLE AS old_rows "
    "FOR EACH STATEMENT EXECUTE FUNCTION keepui_docs_drop()",
    *BM25_TERMS,
]

# Each step brings a database from the version before it to the next one.
MIGRATIONS = {
    2: [  # version 1 scanned bm25_docs for N and the mean length on every query
        *BM25_STATS,
        "INSERT INTO bm25_stats SELECT 0, count(*), coalesce(sum(dl), 0) FROM bm25_docs "
        "ON CONFLICT (shard) DO NOTHING",
    ],
    3: [  # version 2 counted each query term's postings for its df, and read tf and dl from
        # the table's rows: with them in the index, a term's postings are one index-only scan
        "ALTER TABLE bm25_tail DROP CONSTRAINT bm25_tail_pkey, "
        "ADD PRIMARY KEY (term, key) INCLUDE (tf, dl)",
        *BM25_TERMS,
        "INSERT INTO bm25_terms SELECT term, 0, count(*), max(tf), min(dl) FROM bm25_tail "
        "GROUP BY term",
    ],
    4: [  # version 3 counted passages in idf and mixed their lengths with whole texts'
        "ALTER TABLE bm25_tail ADD COLUMN IF NOT EXISTS passage BOOLEAN NOT NULL DEFAULT false",
        "UPDATE bm25_tail t SET passage = true FROM vector_keys k WHERE k.key = t.key "
        "AND k.part > 0",
        "ALTER TABLE bm25_tail DROP CONSTRAINT bm25_tail_pkey, "
        "ADD PRIMARY KEY (term, key) INCLUDE (tf, dl, passage)",
        "ALTER TABLE bm25_docs ADD COLUMN IF NOT EXISTS passage BOOLEAN NOT NULL DEFAULT false",
        "UPDATE bm25_docs d SET passage = true FROM vector_keys k WHERE k.key = d.key "
        "AND k.part > 0",
        "ALTER TABLE bm25_stats ADD COLUMN IF NOT EXISTS n_part BIGINT NOT NULL DEFAULT 0, "
        "ADD COLUMN IF NOT EXISTS dl_part BIGINT NOT NULL DEFAULT 0",
        "ALTER TABLE bm25_terms ADD COLUMN IF NOT EXISTS df_part BIGINT NOT NULL DEFAULT 0",
        *BM25_STATS,
        *BM25_TERMS,
        "DELETE FROM bm25_stats",
        "INSERT INTO bm25_stats SELECT 0, count(*), coalesce(sum(dl), 0), "
        "count(*) FILTER (WHERE passage), coalesce(sum(dl) FILTER (WHERE passage), 0) "
        "FROM bm25_docs",
        "DELETE FROM bm25_terms",
        "INSERT INTO bm25_terms SELECT term, 0, count(*), max(tf), min(dl), "
        "count(*) FILTER (WHERE passage) FROM bm25_tail GROUP BY term",
    ],
}

# Takes a transaction-level advisory lock so that processes opening a new database at once
# create the schema once.
LOCK_ID = 0x6B656570  # "keep"


def vector_table(dim: int) -> list[str]:
    """The vectors of the searchable versions, in pgvector's half precision, HNSW cosine."""
    return [
        f"CREATE TABLE key_vectors (key BIGINT PRIMARY KEY, vec halfvec({dim}) NOT NULL)",
        "CREATE INDEX key_vectors_hnsw ON key_vectors USING hnsw (vec halfvec_cosine_ops) "
        "WITH (m = 16, ef_construction = 128)",
    ]


def ensure(con: PgConnection, url: str, dim: int) -> None:
    """Create the schema in an empty database, or check the one there.

    Raises:
        StoreError: pgvector is missing, or the database holds another schema version.
    """
    if not con.has_vector:
        try:
            con.raw("CREATE EXTENSION IF NOT EXISTS vector")
        except Exception as exc:
            raise StoreError(
                f"the PostgreSQL server at {redact(url)} has no pgvector extension ({exc}). "
                "Install pgvector on the server (https://github.com/pgvector/pgvector) and run "
                "CREATE EXTENSION vector as a superuser, or use keepui serve-pg DIR.",
                "pgvector missing",
            ) from exc
        con.register_vector()
    found = version(con)
    if found == SCHEMA_VERSION:
        return
    if found is not None and found < SCHEMA_VERSION:
        _migrate(con)
        return
    if found is not None:
        raise StoreError(
            f"the database at {redact(url)} holds keepui schema version {found}; this keepui "
            f"reads version {SCHEMA_VERSION}. Install the keepui release that wrote it, run "
            "keepui export there and keepui import into an empty database.",
            "Other schema version",
        )
    con.raw("BEGIN")
    try:
        con.raw("SELECT pg_advisory_xact_lock($1)", [LOCK_ID])
        if version(con) is None:
            for ddl in [*TABLES, *vector_table(dim)]:
                con.raw(ddl)
            con.raw("CREATE TABLE keepui_schema (version INTEGER NOT NULL)")
            con.raw("INSERT INTO keepui_schema VALUES ($1)", [SCHEMA_VERSION])
        con.raw("COMMIT")
    except BaseException:
        con.raw("ROLLBACK")
        raise


def _migrate(con: PgConnection) -> None:
    """Bring an older keepui schema up to SCHEMA_VERSION, once, whoever opens it first."""
    con.raw("BEGIN")
    try:
        con.raw("SELECT pg_advisory_xact_lock($1)", [LOCK_ID])
        found = version(con) or SCHEMA_VERSION
        for step in range(found + 1, SCHEMA_VERSION + 1):
            for ddl in MIGRATIONS[step]:
                con.raw(ddl)
            con.raw("UPDATE keepui_schema SET version = $1", [step])
        con.raw("COMMIT")
    except BaseException:
        con.raw("ROLLBACK")
        raise


def version(con: PgConnection) -> int | None:
    """The schema version the database holds, or None when it holds none."""
    if con.raw("SELECT to_regclass('keepui_schema')").fetchone()[0] is None:
        return None
    row = con.raw("SELECT max(version) FROM keepui_schema").fetchone()
    return None if row is None or row[0] is None else int(row[0])


def redact(url: str) -> str:
    """The URL without its password."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1@", url)
