"""The durable pending queue: enqueue with supersede, atomic claim, backoff, dead letters.

States: `queued` (runnable from `run_after`), `running` (claimed by `owner` = pid:thread),
`failed` (waiting out a backoff, then runnable again), `dead` (gave up after max_attempts;
kept with its last error), `superseded` (newer work for the same item and task arrived before
it was claimed). Finished tasks are deleted. Every function takes the time as an argument, so
tests drive the clock.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from keepui_engine.store.tables import dialect

if TYPE_CHECKING:
    from collections.abc import Callable

    import duckdb

TASKS = ("summarize", "embed", "reindex", "ocr", "analyze", "flow", "links")
RUNNABLE = ("queued", "failed")
# PostgreSQL: a claim older than this goes back to the queue (its worker died or hangs)
LEASE_S = 600.0
COLS = (
    "id, task, doc_id, version, payload, state, attempts, owner, claimed_at, run_after, "
    "last_error, created"
)


@dataclass(frozen=True)
class Task:
    """One row of the queue."""

    id: int
    task: str
    doc_id: str
    version: int | None
    payload: dict[str, Any]
    state: str
    attempts: int
    owner: str | None
    claimed_at: datetime | None
    run_after: datetime
    last_error: str | None
    created: datetime


def _task(rec: tuple[Any, ...]) -> Task:
    return Task(*rec[:4], json.loads(rec[4]), *rec[5:])  # type: ignore[arg-type, call-arg]


def enqueue(
    con: duckdb.DuckDBPyConnection,
    task: str,
    doc_id: str,
    version: int | None,
    payload: dict[str, Any],
    now: datetime,
) -> int:
    """Queue work; older unclaimed work for the same item and task is marked superseded."""
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}")
    con.execute(
        "UPDATE pending SET state = 'superseded', updated = $3 "
        "WHERE task = $1 AND doc_id = $2 AND state IN ('queued', 'failed')",
        [task, doc_id, now],
    )
    row = con.execute(
        "INSERT INTO pending (task, doc_id, version, payload, state, attempts, run_after, "
        "created, updated) VALUES ($1, $2, $3, $4::JSON, 'queued', 0, $5, $5, $5) RETURNING id",
        [task, doc_id, version, json.dumps(payload), now],
    ).fetchone()
    assert row is not None
    return int(row[0])


def owner_id() -> str:
    """`pid:thread-id` of the calling thread: who holds a claim."""
    import threading

    return f"{os.getpid()}:{threading.get_ident()}"


def claim(
    con: duckdb.DuckDBPyConnection, owner: str, now: datetime, tasks: tuple[str, ...] = TASKS
) -> Task | None:
    """Claim the oldest runnable task (its `run_after` has come), or None.

    One statement picks and marks the task. On DuckDB the caller holds the store (the
    cross-process lock and the owner's serial lock), so no other claim runs at the same time;
    on PostgreSQL many processes claim at once and `FOR UPDATE SKIP LOCKED` gives each a
    different task.
    """
    skip = " FOR UPDATE SKIP LOCKED" if dialect(con) == "postgres" else ""
    got = con.execute(
        "UPDATE pending SET state = 'running', owner = $2, claimed_at = $1, "
        "attempts = attempts + 1, updated = $1 WHERE id = (SELECT id FROM pending "
        "WHERE state IN ('queued', 'failed') AND run_after <= $1 AND task = ANY($3) "
        f"ORDER BY run_after, id LIMIT 1{skip}) RETURNING {COLS}",
        [now, owner, list(tasks)],
    ).fetchone()
    return None if got is None else _task(got)


def complete(con: duckdb.DuckDBPyConnection, task_id: int) -> None:
    """A claimed task finished: remove it."""
    con.execute("DELETE FROM pending WHERE id = $1", [task_id])


def renew(con: duckdb.DuckDBPyConnection, task_id: int, owner: str, now: datetime) -> bool:
    """Extend a running claim's lease (PostgreSQL: a claim is judged by its age); False when
    the claim is no longer this owner's."""
    got = con.execute(
        "UPDATE pending SET claimed_at = $3 WHERE id = $1 AND owner = $2 AND state = 'running' "
        "RETURNING id",
        [task_id, owner, now],
    ).fetchone()
    return got is not None


def release(con: duckdb.DuckDBPyConnection, task_id: int, now: datetime) -> None:
    """A claimed task was interrupted before it finished: queue it again, attempt uncounted."""
    con.execute(
        "UPDATE pending SET state = 'queued', owner = NULL, run_after = $2, updated = $2, "
        "attempts = greatest(attempts - 1, 0) WHERE id = $1 AND state = 'running'",
        [task_id, now],
    )


def release_owned(con: duckdb.DuckDBPyConnection, owner: str, now: datetime) -> int:
    """Queue again, attempts uncounted, the tasks an owner has claimed and will not finish
    (its worker was stopped in the middle); return how many."""
    got = con.execute(
        "UPDATE pending SET state = 'queued', owner = NULL, run_after = $2, updated = $2, "
        "attempts = greatest(attempts - 1, 0) WHERE owner = $1 AND state = 'running' "
        "RETURNING id",
        [owner, now],
    ).fetchall()
    return len(got)


def fail(
    con: duckdb.DuckDBPyConnection,
    task: Task,
    error: str,
    now: datetime,
    *,
    max_attempts: int = 5,
    backoff_min_s: float = 30.0,
    backoff_max_s: float = 3600.0,
) -> str:
    """Record a failure: back off exponentially, or dead-letter after `max_attempts`."""
    if task.attempts >= max_attempts:
        con.execute(
            "UPDATE pending SET state = 'dead', owner = NULL, last_error = $2, updated = $3 "
            "WHERE id = $1",
            [task.id, error[:2000], now],
        )
        return "dead"
    delay = min(backoff_min_s * 2 ** max(task.attempts - 1, 0), backoff_max_s)
    con.execute(
        "UPDATE pending SET state = 'failed', owner = NULL, last_error = $2, run_after = $3, "
        "updated = $4 WHERE id = $1",
        [task.id, error[:2000], now + timedelta(seconds=delay), now],
    )
    return "failed"


def pid_alive(owner: str) -> bool:
    """Whether the process named in an owner id is still running (on this machine)."""
    try:
        pid = int(owner.split(":", 1)[0])
        os.kill(pid, 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return True


def recover(
    con: duckdb.DuckDBPyConnection,
    now: datetime,
    *,
    alive: Callable[[str], bool] = pid_alive,
    live_owners: set[str] | None = None,
    lease_s: float = LEASE_S,
) -> int:
    """Give claims whose owner is gone back to the queue; return how many.

    A claim is stale when its process has died, or when it belongs to this process but to a
    thread that is no longer working (`live_owners` lists the claims this process still runs).
    The attempt it used stays counted, so a task that kills its worker dead-letters.
    On PostgreSQL the owner may run on another machine, so its pid says nothing: a claim is
    stale when its lease (`lease_s` since it was claimed or last renewed) has run out.
    """
    me = f"{os.getpid()}:"
    pg = dialect(con) == "postgres"
    stale = [
        tid
        for tid, owner, claimed in con.execute(
            "SELECT id, owner, claimed_at FROM pending WHERE state = 'running'"
        ).fetchall()
        if owner is None
        or (pg and (claimed is None or claimed <= now - timedelta(seconds=lease_s)))
        or (not pg and not alive(owner))
        or (
            not pg and live_owners is not None and owner.startswith(me) and owner not in live_owners
        )
    ]
    if stale:
        con.execute(
            "UPDATE pending SET state = 'queued', owner = NULL, run_after = $2, updated = $2 "
            "WHERE id = ANY($1)",
            [stale, now],
        )
    return len(stale)


def counts(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, int]]:
    """task -> state -> count (superseded rows excluded)."""
    out: dict[str, dict[str, int]] = {}
    for task, state, n in con.execute(
        "SELECT task, state, count(*) FROM pending WHERE state <> 'superseded' "
        "GROUP BY task, state ORDER BY task, state"
    ).fetchall():
        out.setdefault(task, {})[state] = int(n)
    return out


def listing(
    con: duckdb.DuckDBPyConnection, states: tuple[str, ...], doc_id: str | None = None
) -> list[Task]:
    """Tasks in these states (optionally of one document), oldest first."""
    where = "state = ANY($1)" + (" AND doc_id = $2" if doc_id is not None else "")
    params: list[Any] = [list(states)] + ([doc_id] if doc_id is not None else [])
    recs = con.execute(f"SELECT {COLS} FROM pending WHERE {where} ORDER BY id", params).fetchall()
    return [_task(r) for r in recs]


def next_runnable(con: duckdb.DuckDBPyConnection) -> datetime | None:
    """When the earliest waiting task becomes runnable."""
    row = con.execute(
        "SELECT min(run_after) FROM pending WHERE state IN ('queued', 'failed')"
    ).fetchone()
    return None if row is None else row[0]


def retry_dead(con: duckdb.DuckDBPyConnection, now: datetime) -> int:
    """Move dead letters back to the queue with a fresh attempt count."""
    row = con.execute(
        "UPDATE pending SET state = 'queued', attempts = 0, run_after = $1, updated = $1 "
        "WHERE state = 'dead' RETURNING id",
        [now],
    ).fetchall()
    return len(row)


def purge_dead(con: duckdb.DuckDBPyConnection) -> int:
    """Delete dead letters (and superseded rows); return how many dead ones went."""
    n = con.execute("SELECT count(*) FROM pending WHERE state = 'dead'").fetchone()
    con.execute("DELETE FROM pending WHERE state IN ('dead', 'superseded')")
    return int(n[0]) if n else 0


def rebuilding(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether a reindex is queued or running."""
    rec = con.execute(
        "SELECT count(*) FROM pending WHERE task = 'reindex' AND state IN ('queued', 'running')"
    ).fetchone()
    return bool(rec and rec[0])


def runnable_count(con: duckdb.DuckDBPyConnection, now: datetime) -> int:
    """How many tasks could run now."""
    rec = con.execute(
        "SELECT count(*) FROM pending WHERE state IN ('queued', 'failed') AND run_after <= $1",
        [now],
    ).fetchone()
    return int(rec[0]) if rec else 0
