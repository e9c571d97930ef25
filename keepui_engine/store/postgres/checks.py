"""Consistency of a PostgreSQL store's derived tables (`keepui doctor`): the vectors against the
versions, and the BM25 documents, statistics and term bounds against the postings; each check
with the statements that rebuild what it covers from the tables it derives from."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from keepui_engine.store.postgres.sql import PgConnection

# The derived tables' writers queue behind a repair (and it behind them) instead of
# interleaving with it.
LOCK = "LOCK TABLE bm25_tail, bm25_docs, bm25_stats, bm25_terms, key_vectors IN EXCLUSIVE MODE"

STATS = [
    "DELETE FROM bm25_stats",
    "INSERT INTO bm25_stats SELECT 0, count(*), coalesce(sum(dl), 0), count(*) FILTER "
    "(WHERE passage), coalesce(sum(dl) FILTER (WHERE passage), 0) FROM bm25_docs",
]
DOCS = [
    "DELETE FROM bm25_docs d WHERE NOT EXISTS (SELECT 1 FROM bm25_tail t WHERE t.key = d.key)",
    "INSERT INTO bm25_docs SELECT DISTINCT ON (key) key, dl, passage FROM bm25_tail "
    "ORDER BY key ON CONFLICT (key) DO UPDATE SET dl = EXCLUDED.dl, passage = EXCLUDED.passage",
    *STATS,
]
TERMS = [
    "DELETE FROM bm25_terms",
    "INSERT INTO bm25_terms SELECT term, 0, count(*), max(tf), min(dl), count(*) FILTER "
    "(WHERE passage) FROM bm25_tail GROUP BY term",
]

# name -> (SQL counting what is inconsistent, what that count means, the repair)
CHECKS: dict[str, tuple[str, str, list[str]]] = {
    "vectors": (
        "SELECT count(*) FROM vector_keys k WHERE NOT EXISTS "
        "(SELECT 1 FROM key_vectors v WHERE v.key = k.key)",
        "version(s) have no row in key_vectors",
        [],  # added from the embedding cache by PgVectorIndex.repair (the caller)
    ),
    "stray vectors": (
        "SELECT count(*) FROM key_vectors v WHERE NOT EXISTS "
        "(SELECT 1 FROM vector_keys k WHERE k.key = v.key)",
        "row(s) of key_vectors belong to no version",
        [
            "DELETE FROM key_vectors v WHERE NOT EXISTS "
            "(SELECT 1 FROM vector_keys k WHERE k.key = v.key)"
        ],
    ),
    "word postings": (
        "SELECT count(DISTINCT key) FROM bm25_tail t WHERE NOT EXISTS "
        "(SELECT 1 FROM vector_keys k WHERE k.key = t.key)",
        "version(s) no longer stored still have BM25 postings",
        [
            "DELETE FROM bm25_tail t WHERE NOT EXISTS "
            "(SELECT 1 FROM vector_keys k WHERE k.key = t.key)"
        ],
    ),
    "word documents": (
        "SELECT (SELECT count(*) FROM bm25_docs d WHERE NOT EXISTS "
        "(SELECT 1 FROM bm25_tail t WHERE t.key = d.key)) + (SELECT count(*) FROM "
        "(SELECT DISTINCT key, dl, passage FROM bm25_tail) t WHERE NOT EXISTS "
        "(SELECT 1 FROM bm25_docs d WHERE d.key = t.key AND d.dl = t.dl "
        "AND d.passage = t.passage))",
        "row(s) of bm25_docs disagree with the postings",
        DOCS,
    ),
    "word statistics": (
        "SELECT count(*) FROM (SELECT coalesce(sum(n), 0) AS n, coalesce(sum(dl_sum), 0) AS dl, "
        "coalesce(sum(n_part), 0) AS np, coalesce(sum(dl_part), 0) AS dp FROM bm25_stats) s, "
        "(SELECT count(*) AS n, coalesce(sum(dl), 0) AS dl, count(*) FILTER (WHERE passage) "
        "AS np, coalesce(sum(dl) FILTER (WHERE passage), 0) AS dp FROM bm25_docs) d "
        "WHERE s.n <> d.n OR s.dl <> d.dl OR s.np <> d.np OR s.dp <> d.dp",
        "total(s) in bm25_stats disagree with bm25_docs",
        STATS,
    ),
    "word terms": (
        "SELECT count(*) FROM (SELECT term, sum(df) AS df, sum(df_part) AS dp, max(max_tf) "
        "AS mt, min(min_dl) AS md FROM bm25_terms GROUP BY term) a FULL JOIN (SELECT term, "
        "count(*) AS df, count(*) FILTER (WHERE passage) AS dp, max(tf) AS mt, min(dl) AS md "
        "FROM bm25_tail GROUP BY term) b USING (term) WHERE coalesce(a.df, 0) <> "
        "coalesce(b.df, 0) OR coalesce(a.dp, 0) <> coalesce(b.dp, 0) OR a.mt < b.mt "
        "OR a.md > b.md",
        "term(s) in bm25_terms disagree with the postings (counts or score bounds)",
        TERMS,
    ),
}


def problems(con: PgConnection) -> dict[str, str | None]:
    """What each check finds inconsistent, or None where all is consistent."""
    out: dict[str, str | None] = {}
    for name, (sql, meaning, _) in CHECKS.items():
        row = con.raw(sql).fetchone()
        count = int(row[0]) if row and row[0] is not None else 0
        out[name] = f"{count} {meaning}" if count else None
    return out


def repair(con: PgConnection, names: list[str]) -> None:
    """Rebuild what the named checks cover (inside the caller's transaction)."""
    con.raw(LOCK)
    for name in CHECKS:  # postings before the tables derived from them
        if name in names:
            for sql in CHECKS[name][2]:
                con.raw(sql)


def rebuild_words(con: PgConnection) -> None:
    """Recount every BM25 table from the postings (reindex; inside a transaction)."""
    con.raw(LOCK)
    for sql in [*CHECKS["word postings"][2], *DOCS, *TERMS]:
        con.raw(sql)
