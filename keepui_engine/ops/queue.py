"""Queue operations: run the next task, report, retry and purge dead letters."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from keepui_engine.ops.ports import Operations


def work_once(
    engine: Operations, owner: str, live_owners: list[str] | None = None
) -> dict[str, Any] | None:
    """Run the next runnable queued task (see `work.service.work_once`)."""
    from keepui_engine.work import service

    return service.work_once(engine, owner, None if live_owners is None else set(live_owners))


def pending(engine: Operations, doc_id: str | None = None) -> dict[str, Any]:
    """The queue's counts, failures and next due time."""
    from keepui_engine.work import service

    return service.report(engine, doc_id)


def pending_retry(engine: Operations) -> int:
    """Move dead letters back to the queue."""
    from keepui_engine.work import service

    return service.retry(engine)


def pending_purge(engine: Operations) -> int:
    """Delete dead letters."""
    from keepui_engine.work import service

    return service.purge(engine)
