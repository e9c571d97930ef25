"""SQL for relevance judgments: one row per (query, document id), the latest grade wins."""

from __future__ import annotations

from datetime import datetime
from typing import Any


def has_document(con: Any, doc_id: str) -> bool:
    """Whether a document of that id exists."""
    return con.execute("SELECT 1 FROM documents WHERE id = $1", [doc_id]).fetchone() is not None


def documents_of(con: Any, ids: list[str]) -> set[str]:
    """Those of `ids` that are documents of the store."""
    got = con.execute("SELECT id FROM documents WHERE id IN (SELECT unnest($1))", [ids])
    return {r[0] for r in got.fetchall()}


def upsert(con: Any, query: str, doc_id: str, grade: int, when: datetime) -> None:
    """Record a grade, replacing an earlier one of the same query and id."""
    con.execute(
        "INSERT INTO judgments VALUES ($1, $2, $3, $4) ON CONFLICT (query, id) "
        "DO UPDATE SET grade = EXCLUDED.grade, judged_at = EXCLUDED.judged_at",
        [query, doc_id, grade, when],
    )


def delete(con: Any, query: str, doc_id: str) -> bool:
    """Forget one judgment; whether there was one."""
    found = con.execute(
        "DELETE FROM judgments WHERE query = $1 AND id = $2 RETURNING 1", [query, doc_id]
    ).fetchall()
    return bool(found)


def rows(con: Any, query: str | None = None) -> list[tuple[str, str, int, datetime]]:
    """(query, id, grade, judged_at) by query then id; one query's only, when given."""
    where, params = ("WHERE query = $1", [query]) if query is not None else ("", [])
    return list(
        con.execute(
            f"SELECT query, id, grade, judged_at FROM judgments {where} ORDER BY query, id",
            params,
        ).fetchall()
    )
