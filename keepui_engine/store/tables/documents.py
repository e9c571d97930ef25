"""SQL for documents, archived versions, vector keys and the embedding cache."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import duckdb

COLS = "id, version, text, summary, tags, sys, content_hash, created, updated, accessed"
VCOLS = "id, version, text, summary, tags, sys, content_hash, updated"


@dataclass(frozen=True)
class Row:
    """One version of a document as the tables hold it (tags as key -> list of values)."""

    id: str
    version: int
    text: str | None
    summary: str
    tags: dict[str, list[str]]
    sys: dict[str, Any]
    content_hash: str
    created: datetime
    updated: datetime
    accessed: datetime

    def with_(self, **changes: Any) -> Row:
        """Copy with some fields changed."""
        return replace(self, **changes)


def _row(rec: tuple[Any, ...]) -> Row:
    return Row(
        rec[0],
        rec[1],
        rec[2],
        rec[3],
        json.loads(rec[4]),
        json.loads(rec[5]),
        rec[6],
        rec[7],
        rec[8],
        rec[9],
    )


def heads(con: duckdb.DuckDBPyConnection, ids: list[str]) -> dict[str, Row]:
    """Current heads of the given ids (missing ids are absent from the result)."""
    if not ids:
        return {}
    recs = con.execute(
        f"SELECT {COLS} FROM documents WHERE id IN (SELECT unnest($1))", [list(set(ids))]
    ).fetchall()
    return {r[0]: _row(r) for r in recs}


def archived(con: duckdb.DuckDBPyConnection, doc_id: str, version: int | None = None) -> list[Row]:
    """Archived versions of a document, newest first (or just `version`)."""
    where = "id = $1" + (" AND version = $2" if version is not None else "")
    params: list[Any] = [doc_id] + ([version] if version is not None else [])
    recs = con.execute(
        f"SELECT {VCOLS}, d.created, d.accessed FROM versions v "
        f"JOIN (SELECT created, accessed FROM documents WHERE id = $1) d ON true "
        f"WHERE {where} ORDER BY version DESC",
        params,
    ).fetchall()
    return [_row((*r[:7], r[8], r[7], r[9])) for r in recs]


def write_heads(con: duckdb.DuckDBPyConnection, rows: list[Row]) -> None:
    """Replace (or insert) the head rows of these documents."""
    if not rows:
        return
    con.execute("DELETE FROM documents WHERE id IN (SELECT unnest($1))", [[r.id for r in rows]])
    con.execute(
        "INSERT INTO documents SELECT unnest($1), unnest($2), unnest($3), unnest($4), "
        "unnest($5)::JSON, unnest($6)::JSON, unnest($7), unnest($8), unnest($9), unnest($10)",
        _columns(rows, with_created=True),
    )


def archive(con: duckdb.DuckDBPyConnection, rows: list[Row]) -> None:
    """Insert rows into the versions table."""
    if rows:
        cols = _columns(rows, with_created=False)
        con.execute(
            "INSERT INTO versions SELECT unnest($1), unnest($2), unnest($3), unnest($4), "
            "unnest($5)::JSON, unnest($6)::JSON, unnest($7), unnest($8)",
            cols,
        )


def _columns(rows: list[Row], *, with_created: bool) -> list[list[Any]]:
    cols: list[list[Any]] = [
        [r.id for r in rows],
        [r.version for r in rows],
        [r.text for r in rows],
        [r.summary for r in rows],
        [json.dumps(r.tags) for r in rows],
        [json.dumps(r.sys) for r in rows],
        [r.content_hash for r in rows],
    ]
    if with_created:
        cols += [[r.created for r in rows], [r.updated for r in rows], [r.accessed for r in rows]]
    else:
        cols += [[r.updated for r in rows]]
    return cols


def allocate_keys(con: duckdb.DuckDBPyConnection, n: int) -> list[int]:
    """n fresh vector keys from the store's sequence (keys are never derived from ids)."""
    return [
        k
        for (k,) in con.execute(
            "SELECT nextval('vector_key_seq') FROM generate_series(1, $1)", [n]
        ).fetchall()
    ]


def new_vector_keys(con: duckdb.DuckDBPyConnection, rows: list[Row], model: str) -> np.ndarray:
    """Allocate a vector key for each new version row and record it in the search catalog."""
    if not rows:
        return np.empty(0, np.int64)
    keys = allocate_keys(con, len(rows))
    con.execute(
        "INSERT INTO vector_keys SELECT unnest($1), unnest($2), unnest($3), 0, unnest($4), $5, "
        "unnest($3), unnest($6), unnest($7)::JSON, unnest($8)::JSON, unnest($9), unnest($10)",
        [
            keys,
            [r.id for r in rows],
            [r.version for r in rows],
            [r.content_hash for r in rows],
            model,
            [r.summary for r in rows],
            [json.dumps(r.tags) for r in rows],
            [json.dumps(r.sys) for r in rows],
            [r.created for r in rows],
            [r.updated for r in rows],
        ],
    )
    return np.asarray(keys, np.int64)


def set_heads(con: duckdb.DuckDBPyConnection, heads: dict[str, int]) -> None:
    """Record each document's current version on all its catalog rows."""
    if heads:
        con.execute(
            "UPDATE vector_keys SET head = h.head FROM "
            "(SELECT unnest($1) AS id, unnest($2) AS head) h WHERE vector_keys.doc_id = h.id",
            [list(heads), list(heads.values())],
        )


def drop_vector_keys(
    con: duckdb.DuckDBPyConnection,
    doc_id: str,
    version: int | None = None,
    *,
    parts_only: bool = False,
) -> np.ndarray:
    """Delete the vector keys of a document (or of one version, or only its parts); return them."""
    where = "doc_id = $1" + (" AND version = $2" if version is not None else "")
    where += " AND part > 0" if parts_only else ""
    params: list[Any] = [doc_id] + ([version] if version is not None else [])
    keys = [
        k for (k,) in con.execute(f"SELECT key FROM vector_keys WHERE {where}", params).fetchall()
    ]
    if keys:
        con.execute("DELETE FROM vector_keys WHERE key IN (SELECT unnest($1))", [keys])
    return np.asarray(keys, np.int64)


def cached_vectors(
    con: duckdb.DuckDBPyConnection, hashes: list[str], model: str, dim: int
) -> dict[str, np.ndarray]:
    """Vectors already embedded for these content hashes with this model."""
    if not hashes:
        return {}
    if len(hashes) == 1:
        recs = con.execute(
            "SELECT content_hash, vec FROM embeddings WHERE key = $1", [f"{model}:{hashes[0]}"]
        ).fetchall()
    else:
        recs = con.execute(
            "SELECT content_hash, vec FROM embeddings WHERE key IN (SELECT unnest($1))",
            [[f"{model}:{h}" for h in set(hashes)]],
        ).fetchall()
    return {h: np.frombuffer(v, np.float32) for h, v in recs if len(v) == 4 * dim}


def store_vectors(con: duckdb.DuckDBPyConnection, items: dict[str, np.ndarray], model: str) -> None:
    """Add vectors to the embedding cache (existing entries are kept)."""
    if items:
        con.execute(
            "INSERT INTO embeddings SELECT $3 || ':' || h, h, $3, v, now() "
            "FROM (SELECT unnest($1) AS h, unnest($2) AS v) ON CONFLICT DO NOTHING",
            [list(items), [np.asarray(v, np.float32).tobytes() for v in items.values()], model],
        )


def vectors_for_keys(
    con: duckdb.DuckDBPyConnection, keys: np.ndarray, model: str
) -> tuple[np.ndarray, np.ndarray]:
    """(keys, vectors) for live keys, read from the embedding cache (the index's source)."""
    recs = con.execute(
        "SELECT k.key, e.vec FROM vector_keys k JOIN embeddings e "
        "ON e.content_hash = k.content_hash AND e.model = k.model "
        "WHERE k.key IN (SELECT unnest($1))",
        [[int(k) for k in keys]],
    ).fetchall()
    if not recs:
        return np.empty(0, np.int64), np.empty((0, 0), np.float32)
    return (
        np.asarray([r[0] for r in recs], np.int64),
        np.stack([np.frombuffer(r[1], np.float32) for r in recs]),
    )


def texts_for_keys(con: duckdb.DuckDBPyConnection) -> tuple[list[int], list[str]]:
    """(keys, texts) of every live version, in key order (the summary where no text is kept)."""
    recs = con.execute(
        "SELECT k.key, CASE WHEN k.part > 0 THEN COALESCE(p.text, p.summary) "
        "ELSE COALESCE(v.text, v.summary, d.text, d.summary) END FROM vector_keys k "
        "JOIN documents d ON d.id = k.doc_id LEFT JOIN versions v ON v.id = k.doc_id "
        "AND v.version = k.version AND k.version <> d.version "
        "LEFT JOIN parts p ON k.part > 0 AND p.id = k.doc_id AND p.version = k.version "
        "AND p.part = k.part ORDER BY k.key"
    ).fetchall()
    return [r[0] for r in recs], [r[1] for r in recs]


def live_keys(con: duckdb.DuckDBPyConnection) -> np.ndarray:
    """Every vector key the database holds."""
    got = con.execute("SELECT key FROM vector_keys ORDER BY key").fetchnumpy()["key"]
    return np.asarray(got, np.int64)


def delete_document(con: duckdb.DuckDBPyConnection, doc_id: str) -> None:
    """Remove a document's head and every archived version (parts and keys are separate)."""
    con.execute("DELETE FROM documents WHERE id = $1", [doc_id])
    con.execute("DELETE FROM versions WHERE id = $1", [doc_id])


def delete_archived(con: duckdb.DuckDBPyConnection, doc_id: str, version: int) -> None:
    """Remove one archived version (it is becoming the head again)."""
    con.execute("DELETE FROM versions WHERE id = $1 AND version = $2", [doc_id, version])


def head_versions(con: duckdb.DuckDBPyConnection, ids: list[str]) -> dict[str, int]:
    """id -> head version of the documents that exist."""
    recs = con.execute(
        "SELECT id, version FROM documents WHERE id IN (SELECT unnest($1))", [list(set(ids))]
    ).fetchall()
    return dict(recs)


def same_text_as_head(con: duckdb.DuckDBPyConnection, doc_id: str, version: int) -> bool:
    """Whether an archived version's text is the head's (same content hash)."""
    rec = con.execute(
        "SELECT (SELECT content_hash FROM versions WHERE id = $1 AND version = $2) "
        "= (SELECT content_hash FROM documents WHERE id = $1)",
        [doc_id, version],
    ).fetchone()
    return bool(rec and rec[0])


def tags_of(con: duckdb.DuckDBPyConnection, doc_id: str) -> str | None:
    """A document's tags (JSON text), or None when there is no such document."""
    row = con.execute("SELECT tags FROM documents WHERE id = $1", [doc_id]).fetchone()
    return None if row is None else str(row[0])


def others_tags(con: duckdb.DuckDBPyConnection, doc_id: str) -> list[tuple[str, str, str]]:
    """(id, tags JSON, summary) of every other document."""
    return list(
        con.execute("SELECT id, tags, summary FROM documents WHERE id <> $1", [doc_id]).fetchall()
    )


def set_summary(con: duckdb.DuckDBPyConnection, doc_id: str, version: int, summary: str) -> None:
    """A head version's summary (nothing when the head moved on)."""
    con.execute(
        "UPDATE documents SET summary = $3 WHERE id = $1 AND version = $2",
        [doc_id, version, summary],
    )


def set_sys(con: duckdb.DuckDBPyConnection, doc_id: str, sys: dict[str, Any]) -> None:
    """A head's system fields."""
    con.execute("UPDATE documents SET sys = $2::JSON WHERE id = $1", [doc_id, json.dumps(sys)])


def texts_of(con: duckdb.DuckDBPyConnection, doc_id: str) -> list[tuple[str | None, str, str]]:
    """(text, summary, content hash) of a document's head, archived versions and parts."""
    return list(
        con.execute(
            "SELECT text, summary, content_hash FROM documents WHERE id = $1 UNION ALL "
            "SELECT text, summary, content_hash FROM versions WHERE id = $1 UNION ALL "
            "SELECT text, summary, content_hash FROM parts WHERE id = $1",
            [doc_id],
        ).fetchall()
    )


def unembedded(con: duckdb.DuckDBPyConnection, model: str) -> list[tuple[str, str]]:
    """(content hash, text or summary) of every stored text with no vector of `model`."""
    return list(
        con.execute(
            "SELECT content_hash, any_value(COALESCE(text, summary)) FROM ("
            " SELECT content_hash, text, summary FROM documents UNION ALL"
            " SELECT content_hash, text, summary FROM versions UNION ALL"
            " SELECT content_hash, text, summary FROM parts) t"
            " WHERE content_hash NOT IN (SELECT content_hash FROM embeddings WHERE model = $1)"
            " GROUP BY content_hash",
            [model],
        ).fetchall()
    )


# Export: items a page at a time in id order (system items, ids starting with ".", on request)
_USER = " AND NOT starts_with(id, '.')"


def count(con: duckdb.DuckDBPyConnection, system: bool) -> int:
    """How many documents (system ones too, when asked)."""
    (n,) = con.execute(
        f"SELECT count(*) FROM documents WHERE true{'' if system else _USER}"
    ).fetchone() or (0,)
    return int(n)


def page(con: duckdb.DuckDBPyConnection, after: str, limit: int, system: bool) -> list[Row]:
    """Up to `limit` heads whose id sorts after `after`."""
    recs = con.execute(
        f"SELECT {COLS} FROM documents WHERE id > $1{'' if system else _USER} ORDER BY id LIMIT $2",
        [after, limit],
    ).fetchall()
    return [_row(r) for r in recs]


def versions_of(con: duckdb.DuckDBPyConnection, ids: list[str]) -> list[tuple[Any, ...]]:
    """Archived version rows (VCOLS) of these documents, by id then version."""
    return list(
        con.execute(
            f"SELECT {VCOLS} FROM versions WHERE id IN (SELECT unnest($1)) ORDER BY id, version",
            [ids],
        ).fetchall()
    )
