"""Search history kept in the store (the `searches` table), and comparing two result lists."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from keepui_engine.core.errors import UsageError
from keepui_engine.core.inputs import iso
from keepui_engine.core.types import FindQuery, ResultComparison, SearchRecord
from keepui_engine.store.tables import searches as table

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
        got = table.insert(store.con, at, q.query, q.to_dict(), list(ids))
    return SearchRecord(got, iso(at), q, list(ids))


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
    return [
        SearchRecord(key, iso(at), FindQuery.from_dict(params), ids)
        for key, at, params, ids in table.latest(store.con, limit)
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
