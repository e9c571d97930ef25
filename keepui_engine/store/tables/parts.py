"""SQL for parts: the pieces of a long document version, each with its own vector key."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import duckdb

    from keepui_engine.store.tables.documents import Row


_SPAN = re.compile(r"chars (\d+)-(\d+)")


def span_of(position: str) -> list[int] | None:
    """[start, end) character span a part's position records, if it records one."""
    m = _SPAN.search(position or "")
    return [int(m.group(1)), int(m.group(2))] if m else None


@dataclass(frozen=True)
class PartRow:
    """One part of one document version as the parts table holds it."""

    part: int
    kind: str
    title: str | None
    position: str
    text: str | None
    summary: str
    content_hash: str


def insert(con: duckdb.DuckDBPyConnection, doc_id: str, version: int, rows: list[PartRow]) -> None:
    """Record the parts of a version."""
    if not rows:
        return
    con.execute(
        "INSERT INTO parts SELECT $1, $2, unnest($3), unnest($4), unnest($5), unnest($6), "
        "unnest($7), unnest($8), unnest($9)",
        [
            doc_id,
            version,
            [r.part for r in rows],
            [r.kind for r in rows],
            [r.title for r in rows],
            [r.position for r in rows],
            [r.text for r in rows],
            [r.summary for r in rows],
            [r.content_hash for r in rows],
        ],
    )


def of(con: duckdb.DuckDBPyConnection, doc_id: str, version: int) -> list[PartRow]:
    """The parts of one version, in order."""
    recs = con.execute(
        "SELECT part, kind, title, position, text, summary, content_hash FROM parts "
        "WHERE id = $1 AND version = $2 ORDER BY part",
        [doc_id, version],
    ).fetchall()
    return [PartRow(*r) for r in recs]


def lookup(
    con: duckdb.DuckDBPyConnection, wanted: list[tuple[str, int, int]]
) -> dict[tuple[str, int, int], tuple[str | None, str, str, str]]:
    """(title, text or summary, position, kind) of parts given as (doc id, version, part)."""
    recs = con.execute(
        "SELECT p.id, p.version, p.part, p.title, COALESCE(p.text, p.summary), p.position, "
        "p.kind FROM parts p "
        "JOIN (SELECT unnest($1) AS id, unnest($2) AS version, unnest($3) AS part) w "
        "ON p.id = w.id AND p.version = w.version AND p.part = w.part",
        [[w[0] for w in wanted], [w[1] for w in wanted], [w[2] for w in wanted]],
    ).fetchall()
    return {(r[0], r[1], r[2]): (r[3], r[4], r[5], r[6]) for r in recs}


def drop(con: duckdb.DuckDBPyConnection, doc_id: str, version: int | None = None) -> None:
    """Delete the parts of a document (or of one version)."""
    where = "id = $1" + (" AND version = $2" if version is not None else "")
    params: list[Any] = [doc_id] + ([version] if version is not None else [])
    con.execute(f"DELETE FROM parts WHERE {where}", params)


def new_keys(
    con: duckdb.DuckDBPyConnection, row: Row, rows: list[PartRow], model: str
) -> np.ndarray:
    """Allocate catalog rows (part = N) for the parts of a head version; return their keys."""
    if not rows:
        return np.empty(0, np.int64)
    from keepui_engine.store.tables.documents import allocate_keys

    keys = allocate_keys(con, len(rows))
    con.execute(
        "INSERT INTO vector_keys SELECT unnest($1), $2, $3, unnest($4), unnest($5), $6, $3, "
        "unnest($7), $8::JSON, $9::JSON, $10, $11",
        [
            keys,
            row.id,
            row.version,
            [r.part for r in rows],
            [r.content_hash for r in rows],
            model,
            [r.summary for r in rows],
            json.dumps(row.tags),
            json.dumps(row.sys),
            row.created,
            row.updated,
        ],
    )
    return np.asarray(keys, np.int64)


def export_rows(con: duckdb.DuckDBPyConnection, ids: list[str]) -> list[tuple[Any, ...]]:
    """(id, version, part, kind, title, position, text, summary, content hash) of these
    documents' parts, by id, version and part."""
    return list(
        con.execute(
            "SELECT id, version, part, kind, title, position, text, summary, content_hash "
            "FROM parts WHERE id IN (SELECT unnest($1)) ORDER BY id, version, part",
            [ids],
        ).fetchall()
    )
