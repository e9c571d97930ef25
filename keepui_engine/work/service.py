"""The queue's operations on an open store: run one task, report, retry, purge, enqueue."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from keepui_engine.core import interrupts
from keepui_engine.core.inputs import iso
from keepui_engine.store.tables import dialect, pending

if TYPE_CHECKING:
    from keepui_engine.ops.ports import Operations


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def work_once(
    engine: Operations,
    owner: str,
    live_owners: set[str] | None = None,
    now: datetime | None = None,
) -> dict[str, Any] | None:
    """Recover stale claims, claim the next runnable task, run it, record the outcome.

    Returns:
        {"id", "task", "doc_id", "outcome": done|failed|dead, "detail"}, or None when nothing
        is runnable now.
    """
    from keepui_engine.work.tasks import HANDLERS

    con = engine.store.con
    now = now or _now()
    with engine.store.transaction():
        pending.recover(con, now, live_owners=live_owners, lease_s=engine.settings.queue_lease_s)
        task = pending.claim(con, owner, now, tuple(HANDLERS))
    if task is None:
        return None
    try:
        interrupts.checkpoint(f"task {task.task}")
        with _lease(engine, task.id, owner):
            detail = HANDLERS[task.task](engine, task)
    except KeyboardInterrupt:  # Ctrl-C: the task goes back to the queue, the attempt uncounted
        with interrupts.shield(), engine.store.transaction():
            pending.release(con, task.id, _now())
        raise
    except Exception as exc:  # noqa: BLE001 - every failure is recorded on the task
        message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
        st = engine.settings
        with engine.store.transaction():
            outcome = pending.fail(
                con,
                task,
                message,
                _now(),
                max_attempts=st.queue_max_attempts,
                backoff_min_s=st.queue_backoff_min_s,
                backoff_max_s=st.queue_backoff_max_s,
            )
        return {
            "id": task.id,
            "task": task.task,
            "doc_id": task.doc_id,
            "outcome": outcome,
            "detail": message,
        }
    with engine.store.transaction():
        pending.complete(con, task.id)
    return {"id": task.id, "task": task.task, "doc_id": task.doc_id, "outcome": "done",
            "detail": detail}  # fmt: skip


@contextmanager
def _lease(engine: Operations, task_id: int, owner: str) -> Iterator[None]:
    """On PostgreSQL, renew the claim every quarter lease while the task runs, so a task
    longer than the lease is not taken for a dead worker's and run twice."""
    if dialect(engine.store.con) != "postgres":
        yield
        return
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(engine.settings.queue_lease_s / 4):
            with engine.store.transaction():
                if not pending.renew(engine.store.con, task_id, owner, _now()):
                    return

    thread = threading.Thread(target=beat, name=f"lease-{task_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _entry(t: pending.Task) -> dict[str, Any]:
    return {
        "id": t.id,
        "task": t.task,
        "doc_id": t.doc_id,
        "version": t.version,
        "state": t.state,
        "attempts": t.attempts,
        "error": t.last_error,
        "next_attempt": iso(t.run_after) if t.state in pending.RUNNABLE else None,
        "owner": t.owner,
    }


def report(engine: Operations, doc_id: str | None = None) -> dict[str, Any]:
    """Counts by task and state, the failures with their errors, and when work is next due."""
    con = engine.store.con
    failures = pending.listing(con, ("failed", "dead"), doc_id)
    now = _now()
    nxt = pending.next_runnable(con)
    runnable = pending.runnable_count(con, now)
    return {
        "counts": pending.counts(con),
        "runnable": runnable,
        "next_attempt": iso(nxt) if nxt is not None and nxt > now else None,
        "failures": [_entry(t) for t in failures],
        "running": [_entry(t) for t in pending.listing(con, ("running",), doc_id)],
    }


def for_doc(engine: Operations, doc_id: str) -> list[dict[str, Any]]:
    """Unfinished work for one document (queued, running, failed, dead), with errors."""
    states = ("queued", "running", "failed", "dead")
    return [_entry(t) for t in pending.listing(engine.store.con, states, doc_id)]


def give_back(engine: Operations, owner: str) -> int:
    """Queue again the tasks a stopped worker had claimed (see `pending.release_owned`)."""
    with engine.store.transaction():
        return pending.release_owned(engine.store.con, owner, _now())


def retry(engine: Operations) -> int:
    """Move dead letters back to the queue."""
    with engine.store.transaction():
        return pending.retry_dead(engine.store.con, _now())


def purge(engine: Operations) -> int:
    """Delete dead letters."""
    with engine.store.transaction():
        return pending.purge_dead(engine.store.con)


def enqueue(
    engine: Operations, task: str, doc_id: str, version: int | None, payload: dict[str, Any]
) -> int:
    """Queue one task (in its own transaction)."""
    with engine.store.transaction():
        return pending.enqueue(engine.store.con, task, doc_id, version, payload, _now())
