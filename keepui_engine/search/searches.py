"""Search history kept in the store (the `searches` table), and comparing two result lists."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from keepui_engine.core.errors import UsageError
from keepui_engine.core.inputs import iso
from keepui_engine.core.types import FindQuery, ResultComparison, SearchRecord

if TYPE_CHECKING:
    from keepui_engine.store.protocol import Backend


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def record(store: Backend, q: FindQuery, ids: list[str]) -> SearchRecord:
    """Append one search and the ids it returned to the history.

    Args:
        store: The open store.
        q: What the search asked for.
        ids: The ids it returned, best first.

    Returns:
        The stored record.
    """
    at = _now()
    with store.transaction():
        got = store.con.execute(
            "INSERT INTO searches (ran_at, query, params, result_ids) "
            "VALUES ($1, $2, $3::JSON, $4::JSON) RETURNING id",
            [at, q.query, json.dumps(q.to_dict()), json.dumps(list(ids))],
        ).fetchone()
    assert got is not None
    return SearchRecord(int(got[0]), iso(at), q, list(ids))


def recent(store: Backend, limit: int = 100) -> list[SearchRecord]:
    """The latest searches, newest first.

    Args:
        store: The open store.
        limit: At most this many.

    Raises:
        UsageError: The limit is below 1.
    """
    if limit < 1:
        raise UsageError(f"limit {limit}: give a number of 1 or more.")
    rows = store.con.execute(
        "SELECT id, ran_at, params, result_ids FROM searches ORDER BY id DESC LIMIT $1", [limit]
    ).fetchall()
    return [
        SearchRecord(int(r[0]), iso(r[1]), FindQuery.from_dict(json.loads(r[2])), json.loads(r[3]))
        for r in rows
    ]


def compare_results(first: list[str], second: list[str]) -> ResultComparison:
    """Which ids entered, left, moved or kept their rank between two result lists.

    Args:
        first: Ids of the earlier result list, best first.
        second: Ids of the later one.

    Returns:
        The comparison (ranks are 1-based).
    """
    rank_a = {doc_id: i + 1 for i, doc_id in enumerate(first)}
    rank_b = {doc_id: i + 1 for i, doc_id in enumerate(second)}
    moved = [(d, rank_a[d], r) for d, r in rank_b.items() if d in rank_a and rank_a[d] != r]
    return ResultComparison(
        entered=[d for d in second if d not in rank_a],
        left=[d for d in first if d not in rank_b],
        moved=moved,
        kept=[d for d, r in rank_b.items() if rank_a.get(d) == r],
    )
