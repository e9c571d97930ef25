"""Many processes on one PostgreSQL store at once: no file lock, each put one transaction,
queue claims with FOR UPDATE SKIP LOCKED, a killed worker's claim recovered by its lease."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from pg_support import make_pg_store

from keepui_engine import open_workbench
from keepui_engine.store.postgres.sql import PgConnection
from keepui_engine.store.tables import pending

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]

WRITER = """
import sys
from keepui_engine import open_workbench
store, who, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open_workbench(store) as wb:
    for i in range(n):
        doc = f"{who}-{i}"
        wb.put(f"note {doc} written by {who} marker{who}x{i}", id=doc, tags=[f"writer={who}"])
        print(doc, flush=True)  # acknowledged: put returned
"""

CLAIMER = """
import sys
from datetime import datetime
from keepui_engine.store.postgres.sql import PgConnection
from keepui_engine.store.tables import pending
con = PgConnection(sys.argv[1])
me = sys.argv[2]
print("ready", flush=True)
sys.stdin.readline()  # start together
while True:
    con.execute("BEGIN")
    task = pending.claim(con, me, datetime.utcnow())
    if task is None:
        con.execute("COMMIT")
        break
    if sys.argv[3] == "hang":
        con.execute("COMMIT")
        print(task.id, flush=True)
        sys.stdin.readline()  # killed here, mid-task
    pending.complete(con, task.id)
    con.execute("COMMIT")
    print(task.id, flush=True)
"""


def _spawn(script: str, *args: str) -> subprocess.Popen[str]:
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    )
    return subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=str(REPO),
    )


def test_writers_at_once_lose_no_acknowledged_write(tmp_path: Path, pg_url: str) -> None:
    store = make_pg_store(tmp_path / "s", pg_url)
    with open_workbench(store) as wb:
        wb.put("schema first", id="first")  # the writers race on data, not on CREATE TABLE
    writers = [_spawn(WRITER, str(store), f"w{k}", "25") for k in range(4)]
    acked: list[str] = []
    for proc in writers:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        acked += out.split()
    assert len(acked) == 100
    with open_workbench(store) as wb:
        assert wb.stats().items == 101
        for doc in acked:
            assert wb.get(doc).text.startswith(f"note {doc} ")
        who, i = acked[-1].split("-")
        hits = wb.find(f"marker{who}x{i}", mode="bm25", tags=[f"writer={who}"]).hits
        assert hits[0].id == acked[-1]
        dense = wb.find(f"note {acked[0]} written by", mode="dense", limit=1).hits
        assert dense[0].id == acked[0]
    _postings_agree(pg_url)


def _postings_agree(pg_url: str) -> None:
    """The trigger-kept sums match the postings they sum, after writers raced: N and the
    total length (bm25_stats), and each term's df (bm25_terms)."""
    con = PgConnection(pg_url)
    try:
        docs = con.raw("SELECT count(*), sum(dl) FROM bm25_docs").fetchone()
        assert con.raw("SELECT sum(n), sum(dl_sum) FROM bm25_stats").fetchone() == docs
        kept = "SELECT term, sum(df) FROM bm25_terms GROUP BY term HAVING sum(df) > 0"
        counted = "SELECT term, count(*) FROM bm25_tail GROUP BY term"
        assert sorted(con.raw(kept).fetchall()) == sorted(con.raw(counted).fetchall())
    finally:
        con.close()


def _queue(pg_url: str, n: int) -> list[int]:
    con = PgConnection(pg_url)
    now = datetime.utcnow() - timedelta(seconds=1)
    with con_tx(con):
        ids = [pending.enqueue(con, "summarize", f"d{i}", 1, {}, now) for i in range(n)]
    con.close()
    return ids


class con_tx:  # noqa: N801 - a tiny transaction helper for the tests
    def __init__(self, con: PgConnection) -> None:
        self.con = con

    def __enter__(self) -> None:
        self.con.execute("BEGIN")

    def __exit__(self, *exc: object) -> None:
        self.con.execute("COMMIT" if exc[0] is None else "ROLLBACK")


def test_skip_locked_claims_run_each_task_once(tmp_path: Path, pg_url: str) -> None:
    store = make_pg_store(tmp_path / "s", pg_url)
    with open_workbench(store) as wb:
        wb.stats()  # creates the schema
    ids = _queue(pg_url, 60)
    claimers = [_spawn(CLAIMER, pg_url, f"c{k}:1", "run") for k in range(4)]
    for proc in claimers:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    for proc in claimers:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    done: list[int] = []
    for proc in claimers:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        done += [int(x) for x in out.split()]
    assert sorted(done) == sorted(ids)  # every task once, none twice


def test_a_killed_workers_claim_comes_back_after_its_lease(tmp_path: Path, pg_url: str) -> None:
    store = make_pg_store(tmp_path / "s", pg_url)
    with open_workbench(store) as wb:
        wb.stats()
    (task_id,) = _queue(pg_url, 1)
    worker = _spawn(CLAIMER, pg_url, "w:1", "hang")
    assert worker.stdout is not None and worker.stdin is not None
    assert worker.stdout.readline().strip() == "ready"
    worker.stdin.write("go\n")
    worker.stdin.flush()
    assert int(worker.stdout.readline()) == task_id  # claimed and committed, now mid-task
    worker.send_signal(signal.SIGKILL)
    worker.wait(timeout=30)
    con = PgConnection(pg_url)
    now = datetime.utcnow()
    with con_tx(con):
        assert pending.recover(con, now) == 0  # the lease still runs
        assert pending.claim(con, "other:1", now) is None
    later = now + timedelta(seconds=pending.LEASE_S + 1)
    with con_tx(con):
        assert pending.recover(con, later) == 1
        again = pending.claim(con, "other:1", later)
        assert again is not None and again.id == task_id and again.attempts == 2
        pending.complete(con, again.id)
    with con_tx(con):
        assert pending.claim(con, "third:1", later) is None  # it ran once more, and only once
    con.close()


def test_a_claim_skips_a_task_another_transaction_holds(tmp_path: Path, pg_url: str) -> None:
    store = make_pg_store(tmp_path / "s", pg_url)
    with open_workbench(store) as wb:
        wb.stats()
    first, second = _queue(pg_url, 2)
    a, b = PgConnection(pg_url), PgConnection(pg_url)
    b.raw("SET lock_timeout = '5s'")  # waiting on a's row lock would fail the test, not hang it
    now = datetime.utcnow()
    with con_tx(a):
        assert pending.claim(a, "a:1", now).id == first  # type: ignore[union-attr]
        with con_tx(b):  # a has not committed: its row is locked
            got = pending.claim(b, "b:1", now)
            assert got is not None and got.id == second
    a.close()
    b.close()


SAME_ID = """
import sys
from keepui_engine import open_workbench
store, who, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open_workbench(store) as wb:
    for i in range(n):
        wb.put(f"shared note, text {i} from {who}", id="shared")
        print(i, flush=True)  # acknowledged
"""


def test_writers_of_the_same_id_each_commit_a_version(tmp_path: Path, pg_url: str) -> None:
    store = make_pg_store(tmp_path / "store", pg_url)
    with open_workbench(store) as wb:
        wb.put("the first text", id="shared")
    writers = [_spawn(SAME_ID, str(store), f"w{k}", "10") for k in range(4)]
    for proc in writers:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert len(out.split()) == 10
    with open_workbench(store) as wb:
        timeline = wb.history("shared")
        assert [v.version for v in timeline] == list(range(41, 0, -1))
        texts = {wb.get(f"shared@V{{{41 - v.version}}}").text for v in timeline}
    assert texts == {"the first text"} | {
        f"shared note, text {i} from w{k}" for i in range(10) for k in range(4)
    }
    _postings_agree(pg_url)


def test_a_task_longer_than_its_lease_keeps_its_claim(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from keepui_engine.work.tasks import HANDLERS

    store = make_pg_store(tmp_path / "store", pg_url, lease_s=2)  # renewed every 0.5 s
    renewed, checked = threading.Event(), {}
    real_renew = pending.renew

    def counting(con: object, task_id: int, owner: str, now: datetime) -> bool:
        ok = real_renew(con, task_id, owner, now)  # type: ignore[arg-type]
        checked["renewals"] = checked.get("renewals", 0) + 1
        if checked["renewals"] >= 6:  # 3 s after the claim: past the lease
            renewed.set()
        return ok

    def slow(engine: object, task: object) -> str:
        assert renewed.wait(60), "the lease was never renewed"
        other = PgConnection(pg_url)  # another machine's worker looks for dead claims now
        checked["requeued"] = pending.recover(other, datetime.utcnow(), lease_s=2.0)
        other.close()
        return "summarized slowly"

    monkeypatch.setattr(pending, "renew", counting)
    monkeypatch.setitem(HANDLERS, "summarize", slow)
    with open_workbench(store) as wb:
        wb.put(" ".join(f"Sentence {i} about tides and harbours." for i in range(80)), id="long")
        done = wb.work_once()
    assert done is not None and done["outcome"] == "done", done
    assert checked["requeued"] == 0  # 3 s into a 2 s lease, yet not taken for dead
    with open_workbench(store) as wb:
        report = wb.pending()
    assert report["running"] == [] and report["failures"] == []


def test_a_batch_of_many_new_ids_fits_the_servers_lock_table(tmp_path: Path, pg_url: str) -> None:
    from keepui_engine import PutSpec

    store = make_pg_store(tmp_path / "store", pg_url)
    n = 20000  # one lock per id overflowed the lock table ("out of shared memory")
    with open_workbench(store) as wb:
        done = wb.put_many([PutSpec(f"note number {i}", id=f"n{i}") for i in range(n)])
        assert len(done) == n and wb.stats().items == n


TAGGER = """
import sys
from keepui_engine import open_workbench
store, who, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open_workbench(store) as wb:
    for i in range(n):
        wb.tag("shared", tags=[f"{who}x{i}=yes"])
        print(i, flush=True)
"""


def test_taggers_of_the_same_document_each_commit_a_version(tmp_path: Path, pg_url: str) -> None:
    store = make_pg_store(tmp_path / "store", pg_url)
    with open_workbench(store) as wb:
        wb.put("the text every tagger tags", id="shared")
    taggers = [_spawn(TAGGER, str(store), f"w{k}", "8") for k in range(4)]
    for proc in taggers:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    with open_workbench(store) as wb:
        doc = wb.get("shared")
        assert [v.version for v in wb.history("shared")][0] == 33
    assert {f"w{k}x{i}" for k in range(4) for i in range(8)} <= set(doc.tags)
