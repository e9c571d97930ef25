"""The PostgreSQL store's schema: the shared migrations (store/schema.py) as PostgreSQL runs
them, recorded in `_migrations`: whatever is missing is applied in one transaction under an
advisory lock, so processes opening a new database at once create it once.

Databases written before the shared migrations recorded one schema version in `keepui_schema`
(1 to 4); they are brought to version 4 by the steps below, which is where the shared
migrations start, and adopted: every migration is recorded as applied. `keepui_schema` stays
at 4, so the keepui that wrote them still opens them.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from keepui_engine.core.errors import StoreError
from keepui_engine.store.schema import (
    BM25_STATS,
    BM25_TERMS,
    TYPES,
    Migration,
    for_dialect,
    migrations_table,
)

if TYPE_CHECKING:
    from keepui_engine.store.postgres.sql import PgConnection

NAMES = [m.name for m in for_dialect("postgres")]
LEGACY_VERSION = 4  # the keepui_schema version the shared migrations start from

# Each step brings a keepui_schema database from the version before it to the next one.
LEGACY_STEPS = {
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


def _pg(sql: str) -> str:
    for token, name in TYPES["postgres"].items():
        sql = sql.replace(token, name)
    return sql


def vector_table(dim: int) -> list[str]:
    """The vectors of the searchable versions, in pgvector's half precision, HNSW cosine
    (m011_vectors; a reindex to a model of another dimension makes it again)."""
    step = next(m for m in for_dialect("postgres") if m.name == "m011_vectors")
    return step.statements("postgres", dim)


def ensure(con: PgConnection, url: str, dim: int) -> None:
    """Create the schema in an empty database, or bring the one there up to date.

    Raises:
        StoreError: pgvector is missing, or the database holds a schema this keepui does not
            know (written by a newer keepui).
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
    done = check(con, url)
    if done is not None and not [n for n in NAMES if n not in done]:
        return
    con.raw("BEGIN")
    try:
        con.raw("SELECT pg_advisory_xact_lock($1)", [LOCK_ID])
        done = check(con, url)  # another process may have done it while we waited
        if done is None:
            legacy = _legacy_version(con)
            if legacy is not None:
                _upgrade_legacy(con, legacy)
            con.raw(migrations_table("postgres"))
            done = set(NAMES) if legacy is not None else set()
            for name in sorted(done):
                con.raw("INSERT INTO _migrations VALUES ($1, now())", [name])
        _apply(con, [m for m in for_dialect("postgres") if m.name not in done], dim)
        con.raw("COMMIT")
    except BaseException:
        con.raw("ROLLBACK")
        raise


def _apply(con: PgConnection, steps: list[Migration], dim: int) -> None:
    for step in steps:
        for sql in step.statements("postgres", dim):
            con.raw(sql)
        con.raw("INSERT INTO _migrations VALUES ($1, now())", [step.name])


def _upgrade_legacy(con: PgConnection, found: int) -> None:
    for version in range(found + 1, LEGACY_VERSION + 1):
        for ddl in LEGACY_STEPS[version]:
            con.raw(_pg(ddl))
        con.raw("UPDATE keepui_schema SET version = $1", [version])


def exists(con: PgConnection) -> bool:
    """Whether the database holds a keepui schema (of either scheme)."""
    return _applied(con) is not None or _legacy_version(con) is not None


def check(con: PgConnection, url: str) -> set[str] | None:
    """The migrations the database records (None: it records none yet).

    Raises:
        StoreError: It records migrations, or a keepui_schema version, this keepui does not
            know: a newer keepui wrote it.
    """
    done = _applied(con)
    newer = None
    if done is None:
        legacy = _legacy_version(con)
        if legacy is not None and legacy > LEGACY_VERSION:
            newer = f"schema version {legacy}"
    elif unknown := sorted(done - set(NAMES)):
        newer = f"schema migrations this keepui does not know ({', '.join(unknown)})"
    if newer is not None:
        raise StoreError(
            f"the database at {redact(url)} holds keepui {newer}: a newer keepui wrote it. "
            "Install the keepui release that wrote it, run keepui export there and keepui "
            "import into an empty database.",
            "Other schema version",
        )
    return done


def _applied(con: PgConnection) -> set[str] | None:
    if con.raw("SELECT to_regclass('_migrations')").fetchone()[0] is None:
        return None
    return {str(r[0]) for r in con.raw("SELECT name FROM _migrations").fetchall()}


def _legacy_version(con: PgConnection) -> int | None:
    if con.raw("SELECT to_regclass('keepui_schema')").fetchone()[0] is None:
        return None
    row = con.raw("SELECT max(version) FROM keepui_schema").fetchone()
    return None if row is None or row[0] is None else int(row[0])


def redact(url: str) -> str:
    """The URL without its password."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1@", url)
