"""SQL for the search history (the `searches` table): what each search asked and returned."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any


def insert(con: Any, at: datetime, query: str, params: dict[str, Any], ids: list[str]) -> int:
    """Append one search; its id."""
    got = con.execute(
        "INSERT INTO searches (ran_at, query, params, result_ids) "
        "VALUES ($1, $2, $3::JSON, $4::JSON) RETURNING id",
        [at, query, json.dumps(params), json.dumps(list(ids))],
    ).fetchone()
    assert got is not None
    return int(got[0])


def latest(con: Any, limit: int) -> list[tuple[int, datetime, dict[str, Any], list[str]]]:
    """(id, ran_at, params, result ids) of the latest searches, newest first."""
    recs = con.execute(
        "SELECT id, ran_at, params, result_ids FROM searches ORDER BY id DESC LIMIT $1", [limit]
    ).fetchall()
    return [(int(r[0]), r[1], json.loads(r[2]), json.loads(r[3])) for r in recs]
