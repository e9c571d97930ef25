"""The pending queue with an injected clock, and the work it does on a real (fake-model) store."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import pytest
from support import break_summarizer, make_fake_store

from keepui_engine import Workbench, open_workbench
from keepui_engine.store.duckdb.schema import migrate
from keepui_engine.store.tables import pending

T0 = datetime(2026, 11, 22, 12, 0, 0)


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    db = duckdb.connect(":memory:")
    migrate(db)
    return db


def test_claim_is_exclusive_and_oldest_first(con: duckdb.DuckDBPyConnection) -> None:
    a = pending.enqueue(con, "summarize", "a", 1, {}, T0)
    b = pending.enqueue(con, "analyze", "b", 1, {}, T0 + timedelta(seconds=1))
    first = pending.claim(con, "1:1", T0 + timedelta(seconds=5))
    second = pending.claim(con, "1:2", T0 + timedelta(seconds=5))
    assert (first.id, second.id) == (a, b)  # type: ignore[union-attr]
    assert first.state == "running" and first.attempts == 1 and first.owner == "1:1"  # type: ignore[union-attr]
    assert pending.claim(con, "1:3", T0 + timedelta(seconds=5)) is None
    pending.complete(con, a)
    assert pending.counts(con) == {"analyze": {"running": 1}}


def test_backoff_doubles_from_30s_to_an_hour_then_dead_letter(
    con: duckdb.DuckDBPyConnection,
) -> None:
    pending.enqueue(con, "summarize", "a", 1, {}, T0)
    now, waits = T0, []
    for _ in range(5):
        task = pending.claim(con, "1:1", now)
        assert task is not None
        state = pending.fail(con, task, "boom", now, max_attempts=5)
        if state == "dead":
            break
        nxt = pending.next_runnable(con)
        waits.append((nxt - now).total_seconds())  # type: ignore[operator]
        assert pending.claim(con, "1:1", now + timedelta(seconds=waits[-1] - 1)) is None
        now = nxt  # type: ignore[assignment]
    assert waits == [30, 60, 120, 240]
    (dead,) = pending.listing(con, ("dead",))
    assert dead.attempts == 5 and dead.last_error == "boom"
    assert pending.claim(con, "1:1", now + timedelta(days=1)) is None
    assert pending.retry_dead(con, now) == 1
    again = pending.claim(con, "1:1", now)
    assert again is not None and again.attempts == 1
    pending.fail(con, again, "x", now, max_attempts=1)
    assert pending.purge_dead(con) == 1 and pending.counts(con) == {}
    task = pending.enqueue(con, "summarize", "b", 1, {}, now)
    claimed = pending.claim(con, "1:1", now)
    assert claimed is not None and claimed.id == task
    for _ in range(10):
        claimed = pending.claim(con, "1:1", now) or claimed
    pending.fail(con, claimed, "y", now, backoff_min_s=1000, backoff_max_s=3600, max_attempts=9)
    assert (pending.next_runnable(con) - now).total_seconds() == 1000  # type: ignore[operator]


def test_new_work_supersedes_unclaimed_work_for_the_same_item(
    con: duckdb.DuckDBPyConnection,
) -> None:
    old = pending.enqueue(con, "summarize", "a", 1, {}, T0)
    other = pending.enqueue(con, "analyze", "a", 1, {}, T0)
    new = pending.enqueue(con, "summarize", "a", 2, {}, T0)
    states = dict(con.execute("SELECT id, state FROM pending").fetchall())
    assert states == {old: "superseded", other: "queued", new: "queued"}
    running = pending.claim(con, "1:1", T0)
    assert running is not None and running.id == other
    newer = pending.enqueue(con, "analyze", "a", 3, {}, T0)  # a claimed task is not superseded
    assert dict(con.execute("SELECT id, state FROM pending").fetchall())[other] == "running"
    assert pending.counts(con)["analyze"] == {"queued": 1, "running": 1} and newer


def test_claims_of_dead_owners_go_back_to_the_queue(con: duckdb.DuckDBPyConnection) -> None:
    pending.enqueue(con, "summarize", "a", 1, {}, T0)
    pending.enqueue(con, "summarize", "b", 1, {}, T0)
    pending.claim(con, "111:1", T0)
    pending.claim(con, "222:1", T0)
    back = pending.recover(con, T0, alive=lambda owner: owner.startswith("222:"))
    assert back == 1
    again = pending.claim(con, "333:1", T0)
    assert again is not None and again.doc_id == "a" and again.attempts == 2


LONG = " ".join(
    f"Sentence {i} talks about the harbour, the boats and the tides in some detail."
    for i in range(30)
)


def test_put_queues_a_summary_and_drain_writes_it_in_place(wb: Workbench) -> None:
    wb.put(LONG, id="long")
    wb.put("short note", id="short")
    item = wb.get("long")
    assert [w["task"] for w in item.pending] == ["summarize"] and item.summary.endswith("…")
    assert wb.get("short").pending == []
    done = wb.drain()
    assert [(r["task"], r["outcome"]) for r in done] == [("summarize", "done")]
    after = wb.get("long")
    assert after.pending == [] and after.version == 1 and not after.summary.endswith("…")
    assert after.summary != item.summary and after.summary.split(". ")[0] in LONG
    assert wb.find("harbour boats tides").hits[0].summary == after.summary
    assert wb.put(LONG, id="long").action == "unchanged"  # the new summary is not a change
    assert wb.pending()["counts"] == {}


def test_failures_are_visible_in_get_and_pending(tmp_path: Path) -> None:
    store = make_fake_store(tmp_path / "s")
    break_summarizer(store)
    with open_workbench(store, own=True) as wb:
        wb.put(LONG, id="long")
        (result,) = wb.drain()
        assert result["outcome"] == "failed" and "127.0.0.1:9" in result["detail"]
        (work,) = wb.get("long").pending
        assert work["state"] == "failed" and work["attempts"] == 1 and work["error"]
        report = wb.pending()
        assert report["counts"] == {"summarize": {"failed": 1}} and report["next_attempt"]
        assert report["runnable"] == 0 and wb.drain() == []
