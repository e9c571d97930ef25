"""Relevance judgments: the user's own test collection, scored like BEIR (on an open store).

A judgment says how relevant document ID is to a query: 0 not relevant, 1 somewhat,
2 relevant, 3 the answer (TREC's graded scale). The latest judgment of a (query, id) pair
wins. Queries are kept as typed (whitespace normalised); their TREC id is `q` + the first 10
hex of the query's sha1, so qrels written twice name them the same.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from keepui_engine.core.errors import NotFound, UsageError
from keepui_engine.core.inputs import iso
from keepui_engine.core.types import _Serialisable
from keepui_engine.store.tables import judgments as table

if TYPE_CHECKING:
    import duckdb

GRADES = (0, 1, 2, 3)


@dataclass(frozen=True)
class Judgment(_Serialisable):
    """One relevance judgment.

    Attributes:
        query: The query as judged (whitespace normalised).
        id: The document id.
        grade: 0 not relevant .. 3 the answer.
        when: When it was recorded (ISO-8601 UTC).
        qid: The query's TREC id.
    """

    query: str
    id: str
    grade: int
    when: str
    qid: str


def normalise(query: str) -> str:
    """The query with runs of whitespace made one space; UsageError when empty."""
    text = " ".join(query.split())
    if not text:
        raise UsageError("the query is empty: judge a document for the words you searched.")
    return text


def qid(query: str) -> str:
    """The TREC query id of a query."""
    return "q" + hashlib.sha1(normalise(query).encode("utf-8")).hexdigest()[:10]


def check_grade(grade: int, what: str) -> None:
    """UsageError naming `what` unless the grade is one of GRADES."""
    if grade not in GRADES:
        raise UsageError(
            f"{what}: give 0 (not relevant), 1 (somewhat), 2 (relevant) or 3 (the answer)."
        )


def record(con: duckdb.DuckDBPyConnection, query: str, doc_id: str, grade: int) -> Judgment:
    """Store a judgment (replacing an earlier one of the same query and id)."""
    check_grade(grade, f"--grade {grade}")
    text = normalise(query)
    if not table.has_document(con, doc_id):
        raise NotFound(f"no document with id {doc_id!r}. `keepui list` shows the ids.")
    now = datetime.now(UTC).replace(tzinfo=None)
    table.upsert(con, text, doc_id, grade, now)
    return Judgment(text, doc_id, grade, iso(now), qid(text))


def record_many(
    con: duckdb.DuckDBPyConnection, rows: list[tuple[str, str, int]]
) -> tuple[int, list[str]]:
    """Store judgments (query, id, grade) of the documents the store has, each replacing an
    earlier one of its query and id; (how many were stored, the ids the store lacks).

    Raises:
        UsageError: A grade outside 0..3 or an empty query (nothing is stored).
    """
    checked = []
    for query, doc_id, grade in rows:
        check_grade(grade, f"grade {grade} of {doc_id!r} for {query!r}")
        checked.append((normalise(query), str(doc_id), int(grade)))
    ids = sorted({d for _, d, _ in checked})
    stored = table.documents_of(con, ids)
    now = datetime.now(UTC).replace(tzinfo=None)
    kept = [(q, d, g) for q, d, g in checked if d in stored]
    for q, d, g in kept:
        table.upsert(con, q, d, g, now)
    return len(kept), [d for d in ids if d not in stored]


def remove(con: duckdb.DuckDBPyConnection, query: str, doc_id: str) -> bool:
    """Forget a judgment; whether there was one."""
    return table.delete(con, normalise(query), doc_id)


def listing(con: duckdb.DuckDBPyConnection, query: str | None = None) -> list[Judgment]:
    """Judgments, by query then id (one query's only, when given)."""
    recs = table.rows(con, None if query is None else normalise(query))
    return [Judgment(q, d, g, iso(w), qid(q)) for q, d, g, w in recs]


def qrels(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, int]]:
    """query text -> {doc id: grade} of every judged query."""
    out: dict[str, dict[str, int]] = {}
    for j in listing(con):
        out.setdefault(j.query, {})[j.id] = j.grade
    return out


def qrels_lines(judged: list[Judgment]) -> list[str]:
    """TREC qrels lines: `qid 0 docid grade`."""
    return [f"{j.qid} 0 {j.id} {j.grade}" for j in judged]


def queries_lines(judged: list[Judgment]) -> list[dict[str, Any]]:
    """BEIR queries.jsonl rows ({"_id", "text"}) of the judged queries."""
    seen: dict[str, str] = {}
    for j in judged:
        seen.setdefault(j.qid, j.query)
    return [{"_id": k, "text": v} for k, v in seen.items()]
