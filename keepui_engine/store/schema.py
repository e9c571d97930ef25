"""The store's schema, written once for both backends: ordered, named migrations.

Each migration holds the statements both backends run (`both`, in the portable SQL with type
tokens) and the ones only one of them runs (`duckdb`, `postgres`: DuckDB's bm25s tail without
a key, PostgreSQL's postings statistics and their triggers, its settings and pgvector tables).
A backend records the names it applied in `_migrations`; a migration with no statement for a
backend is neither run nor recorded there. DuckDB applies each in its own transaction
(duckdb/schema.py); PostgreSQL applies what is missing in one transaction under an advisory
lock, so processes opening a new database at once create it once (postgres/schema.py).

Type tokens: `{key}` a text compared and sorted (ids, hashes, names: code-point order on
both, as export pages by `id > $1`), `{text}` free text, `{blob}` bytes, `{dim}` the
embedding's dimension (PostgreSQL's vector column).
"""

from __future__ import annotations

from dataclasses import dataclass

TYPES = {
    "duckdb": {"{key}": "VARCHAR", "{text}": "VARCHAR", "{blob}": "BLOB"},
    "postgres": {"{key}": 'TEXT COLLATE "C"', "{text}": "TEXT", "{blob}": "BYTEA"},
}


@dataclass(frozen=True)
class Migration:
    """One step of the schema (see the module docstring)."""

    name: str
    doc: str
    both: tuple[str, ...] = ()
    duckdb: tuple[str, ...] = ()
    postgres: tuple[str, ...] = ()

    def statements(self, dialect: str, dim: int = 0) -> list[str]:
        """The statements `dialect` runs, its types filled in."""
        out = []
        for sql in (*self.both, *(self.duckdb if dialect == "duckdb" else self.postgres)):
            for token, name in TYPES[dialect].items():
                sql = sql.replace(token, name)
            out.append(sql.replace("{dim}", str(dim)))
        return out


def for_dialect(dialect: str) -> list[Migration]:
    """The migrations a backend applies and records, in order."""
    return [m for m in MIGRATIONS if m.statements(dialect)]


# PostgreSQL keeps BM25's statistics in tables its triggers maintain (bm25_docs follows
# bm25_tail, whoever writes the postings; bm25_stats sums N and lengths; bm25_terms each
# term's df and bounds: postgres/bm25.py reads them). The sums are spread over STAT_SHARDS
# rows by backend, so concurrent writers do not queue on one row; a reader adds them up.
STAT_SHARDS = 16
_SUMS = (
    "SET n = bm25_stats.n + excluded.n, dl_sum = bm25_stats.dl_sum + excluded.dl_sum, "
    "n_part = bm25_stats.n_part + excluded.n_part, dl_part = bm25_stats.dl_part + excluded.dl_part"
)
BM25_STATS = (
    "CREATE TABLE IF NOT EXISTS bm25_stats (shard INTEGER PRIMARY KEY, n BIGINT NOT NULL, "
    "dl_sum BIGINT NOT NULL, n_part BIGINT NOT NULL DEFAULT 0, dl_part BIGINT NOT NULL "
    "DEFAULT 0)",
    f"""CREATE OR REPLACE FUNCTION keepui_docs_add() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        WITH ins AS (INSERT INTO bm25_docs SELECT DISTINCT key, dl, passage FROM new_rows
                     ON CONFLICT DO NOTHING RETURNING dl, passage)
        INSERT INTO bm25_stats SELECT pg_backend_pid() % {STAT_SHARDS}, count(*), sum(dl),
            count(*) FILTER (WHERE passage), coalesce(sum(dl) FILTER (WHERE passage), 0)
        FROM ins HAVING count(*) > 0 ON CONFLICT (shard) DO UPDATE {_SUMS};
        RETURN NULL; END $$""",
    f"""CREATE OR REPLACE FUNCTION keepui_docs_drop() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        WITH del AS (DELETE FROM bm25_docs d USING (SELECT DISTINCT key FROM old_rows) o
                     WHERE d.key = o.key AND NOT EXISTS
                     (SELECT 1 FROM bm25_tail t WHERE t.key = o.key) RETURNING d.dl, d.passage)
        INSERT INTO bm25_stats SELECT pg_backend_pid() % {STAT_SHARDS}, -count(*), -sum(dl),
            -count(*) FILTER (WHERE passage), -coalesce(sum(dl) FILTER (WHERE passage), 0)
        FROM del HAVING count(*) > 0 ON CONFLICT (shard) DO UPDATE {_SUMS};
        RETURN NULL; END $$""",
)
# Per term: its document frequency and the largest tf and smallest length of any posting it
# ever had (idf without counting postings, and an upper bound PgFullText prunes with). Sharded
# like bm25_stats; triggers fire in name order (bm25_docs_* before bm25_terms_*), so two
# writers on one shard queue on its bm25_stats row first and cannot deadlock. A delete lowers
# df only: the bounds stay bounds. df_part counts the passages among df.
BM25_TERMS = (
    "CREATE TABLE IF NOT EXISTS bm25_terms (term {key} NOT NULL, shard INTEGER NOT NULL, "
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
)

MIGRATIONS = [
    Migration(
        "m001_core",
        "Documents, archived versions, vector keys, the embedding cache and store metadata. "
        "vector_keys is also the search catalog: each row carries what a hit shows and what "
        "the filters test, so a find reads one table. The embedding cache is keyed by one "
        "column, `model:content_hash` (DuckDB answers point lookups on it ~7x faster).",
        both=(
            """CREATE TABLE documents (
                id {key} PRIMARY KEY, version INTEGER NOT NULL, text {text},
                summary {text} NOT NULL, tags JSON NOT NULL, sys JSON NOT NULL,
                content_hash {key} NOT NULL, created TIMESTAMP NOT NULL,
                updated TIMESTAMP NOT NULL, accessed TIMESTAMP NOT NULL)""",
            """CREATE TABLE versions (
                id {key} NOT NULL, version INTEGER NOT NULL, text {text},
                summary {text} NOT NULL, tags JSON NOT NULL, sys JSON NOT NULL,
                content_hash {key} NOT NULL, updated TIMESTAMP NOT NULL,
                PRIMARY KEY (id, version))""",
            "CREATE SEQUENCE vector_key_seq START 1",
            """CREATE TABLE vector_keys (
                key BIGINT PRIMARY KEY, doc_id {key} NOT NULL, version INTEGER NOT NULL,
                part INTEGER NOT NULL DEFAULT 0, content_hash {key} NOT NULL,
                model {key} NOT NULL, head INTEGER NOT NULL, summary {text} NOT NULL,
                tags JSON NOT NULL, sys JSON NOT NULL, created TIMESTAMP NOT NULL,
                updated TIMESTAMP NOT NULL)""",
            "CREATE INDEX vector_keys_doc ON vector_keys (doc_id)",
            """CREATE TABLE embeddings (
                key {key} PRIMARY KEY, content_hash {key} NOT NULL, model {key} NOT NULL,
                vec {blob} NOT NULL, created TIMESTAMP NOT NULL)""",
            "CREATE TABLE meta (key {key} PRIMARY KEY, value {text} NOT NULL)",
        ),
        postgres=(
            "CREATE INDEX vector_keys_updated ON vector_keys (updated)",
            "CREATE INDEX embeddings_hash ON embeddings (content_hash, model)",
        ),
    ),
    Migration(
        "m002_bm25_tail",
        "BM25 postings (key, term, tf, dl): DuckDB's tail of versions written since its bm25s "
        "base was built; PostgreSQL's only index, with the statistics its triggers keep.",
        duckdb=(
            "CREATE TABLE bm25_tail (key BIGINT NOT NULL, term VARCHAR NOT NULL, "
            "tf INTEGER NOT NULL, dl INTEGER NOT NULL)",
        ),
        postgres=(
            "CREATE TABLE bm25_tail (key BIGINT NOT NULL, term {key} NOT NULL, "
            "tf INTEGER NOT NULL, dl INTEGER NOT NULL, passage BOOLEAN NOT NULL DEFAULT false, "
            "PRIMARY KEY (term, key) INCLUDE (tf, dl, passage))",
            "CREATE INDEX bm25_tail_key ON bm25_tail (key)",
            "CREATE TABLE bm25_docs (key BIGINT PRIMARY KEY, dl INTEGER NOT NULL, "
            "passage BOOLEAN NOT NULL DEFAULT false)",
            *BM25_STATS,
            "CREATE TRIGGER bm25_docs_add AFTER INSERT ON bm25_tail REFERENCING NEW TABLE AS "
            "new_rows FOR EACH STATEMENT EXECUTE FUNCTION keepui_docs_add()",
            "CREATE TRIGGER bm25_docs_drop AFTER DELETE ON bm25_tail REFERENCING OLD TABLE AS "
            "old_rows FOR EACH STATEMENT EXECUTE FUNCTION keepui_docs_drop()",
            *BM25_TERMS,
        ),
    ),
    Migration(
        "m003_parts",
        "Parts of long document versions (`ID@P{N}`): text, place, summary, content hash.",
        both=(
            """CREATE TABLE parts (
                id {key} NOT NULL, version INTEGER NOT NULL, part INTEGER NOT NULL,
                kind {key} NOT NULL, title {text}, position {text} NOT NULL, text {text},
                summary {text} NOT NULL, content_hash {key} NOT NULL,
                PRIMARY KEY (id, version, part))""",
        ),
    ),
    Migration(
        "m004_searches",
        "The search history: every search the workbench ran, its parameters and result ids.",
        both=(
            "CREATE SEQUENCE search_id_seq START 1",
            """CREATE TABLE searches (
                id BIGINT PRIMARY KEY DEFAULT nextval('search_id_seq'),
                ran_at TIMESTAMP NOT NULL, query {text} NOT NULL, params JSON NOT NULL,
                result_ids JSON NOT NULL)""",
        ),
    ),
    Migration(
        "m005_pending",
        "The pending queue of background work (store/tables/pending.py).",
        both=(
            "CREATE SEQUENCE pending_seq START 1",
            """CREATE TABLE pending (
                id BIGINT PRIMARY KEY DEFAULT nextval('pending_seq'), task {key} NOT NULL,
                doc_id {key} NOT NULL, version INTEGER, payload JSON NOT NULL,
                state {key} NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, owner {text},
                claimed_at TIMESTAMP, run_after TIMESTAMP NOT NULL, last_error {text},
                created TIMESTAMP NOT NULL, updated TIMESTAMP NOT NULL)""",
            "CREATE INDEX pending_doc ON pending (doc_id)",
        ),
        postgres=(
            "CREATE INDEX pending_runnable ON pending (run_after, id) "
            "WHERE state IN ('queued', 'failed')",
        ),
    ),
    Migration(
        "m006_structure",
        "The structure (pages, slides, headings) of each document text, for analyze.",
        both=(
            """CREATE TABLE structure (
                id {key} NOT NULL, content_hash {key} NOT NULL, blocks JSON NOT NULL,
                PRIMARY KEY (id, content_hash))""",
        ),
    ),
    Migration(
        "m007_judgments",
        "Relevance judgments: how relevant a document is to a query (0..3), the latest kept.",
        both=(
            """CREATE TABLE judgments (
                query {key} NOT NULL, id {key} NOT NULL, grade INTEGER NOT NULL,
                judged_at TIMESTAMP NOT NULL, PRIMARY KEY (query, id))""",
        ),
    ),
    Migration(
        "m008_edges",
        "Edges from link tags: document `source` is tagged `key`=`target` (a `.tag/KEY` doc "
        "declares the key a link, with the verb of its inverse).",
        both=(
            """CREATE TABLE edges (
                source {key} NOT NULL, key {key} NOT NULL, target {key} NOT NULL,
                created TIMESTAMP NOT NULL, PRIMARY KEY (source, key, target))""",
            "CREATE INDEX edges_target ON edges (target)",
        ),
    ),
    Migration(
        "m009_bm25_passage",
        "Whether a tail row's key is a passage: idf counts whole texts, and each kind has its "
        "own mean length (store/tables/bm25_stats.py). PostgreSQL's tail has had it from m002.",
        duckdb=(
            "ALTER TABLE bm25_tail ADD COLUMN passage BOOLEAN DEFAULT false",
            "UPDATE bm25_tail SET passage = true WHERE key IN "
            "(SELECT key FROM vector_keys WHERE part > 0)",
        ),
    ),
    Migration(
        "m010_settings",
        "PostgreSQL: the store's keepui.toml, shared by every process and machine that opens "
        "the URL (a DuckDB store keeps it as a file beside its database).",
        postgres=("CREATE TABLE settings (name TEXT PRIMARY KEY, toml TEXT NOT NULL)",),
    ),
    Migration(
        "m011_vectors",
        "PostgreSQL: the vectors of the searchable versions, in pgvector's half precision, "
        "HNSW cosine (DuckDB's are files beside the database).",
        postgres=(
            "CREATE TABLE key_vectors (key BIGINT PRIMARY KEY, vec halfvec({dim}) NOT NULL)",
            "CREATE INDEX key_vectors_hnsw ON key_vectors USING hnsw (vec halfvec_cosine_ops) "
            "WITH (m = 16, ef_construction = 128)",
        ),
    ),
]

# What each backend has applied, by name.
MIGRATIONS_TABLE = (
    "CREATE TABLE IF NOT EXISTS _migrations (name {key} PRIMARY KEY, applied TIMESTAMP)"
)


def migrations_table(dialect: str) -> str:
    """The DDL of `_migrations` for `dialect`."""
    sql = MIGRATIONS_TABLE
    for token, name in TYPES[dialect].items():
        sql = sql.replace(token, name)
    return sql
