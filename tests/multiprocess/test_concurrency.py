"""Several real OS processes on one store: direct-mode clients, a `keepui serve` owner, and both.

Every keepui process takes the flock on <store>/store.lock before it opens DuckDB; a long-lived
owner serves the others over <store>/keepui.sock. These tests check that no write is lost, no
process fails and every find answers sensibly while the processes interleave.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from mp_support import (
    LineReader,
    check_hits,
    check_store,
    child_env,
    keepui_exe,
    note_text,
    spawn_python,
    start_server,
    wait_until,
)

from keepui_engine import open_workbench
from keepui_engine.core.server import socket_path

pytestmark = pytest.mark.slow

# A writer: one put per Workbench call, printing "ID sock|lock pre|post" once the call returned.
# "sock" = the call went through the store server; "post" = the stop file existed before the
# call began. Without a stop file it does exactly N puts; with one it keeps going (up to N) until
# AFTER puts began after the stop file appeared.
WRITER = r"""
import os, sys
import keepui_engine.core.server as srv
from keepui_engine import open_workbench
from mp_support import note_text

store, prefix, stop_file = sys.argv[1], sys.argv[2], sys.argv[4]
n, after = int(sys.argv[3]), int(sys.argv[5])
_call = srv.call  # the Workbench's request over the socket (is_up probes do not count)
state = {"sock": 0}
def call(*a, **k):
    state["sock"] += 1
    return _call(*a, **k)
srv.call = call

wb = open_workbench(store)
post = 0
for i in range(n):
    stopped = stop_file != "-" and os.path.exists(stop_file)
    if stopped and post >= after:
        break
    doc_id = f"{prefix}-{i:04d}"
    before = state["sock"]
    r = wb.put(note_text(doc_id), id=doc_id)
    if (r.id, r.version, r.action) != (doc_id, 1, "created"):
        raise SystemExit(f"unexpected put result {r}")
    post += stopped
    print(doc_id, "sock" if state["sock"] > before else "lock", "post" if stopped else "pre",
          flush=True)
"""

# A finder: finds in a loop until the stop file exists (one last round after it appears).
# Everything listed before a find must be searchable by it, and the exact text of a listed
# note must find that note first (the fake embedder gives identical texts cosine 1.0).
FINDER = r"""
import json, os, random, sys
from keepui_engine import open_workbench
from mp_support import check_hits, note_text

store, stop_file, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = random.Random(seed)
wb = open_workbench(store)
finds = exact = last = 0
while True:
    stopping = os.path.exists(stop_file)
    items = wb.list_items(limit=10000, sort="id")
    r = wb.find("note version", limit=10)
    check_hits([h.to_dict() for h in r.hits], 10, r.searched)
    assert r.searched >= len(items), f"find searched {r.searched} < {len(items)} listed before"
    assert r.searched >= last, f"searched went down: {last} -> {r.searched}"
    last = r.searched
    finds += 1
    if items:
        target = rng.choice(items).id
        r = wb.find(note_text(target), limit=3)
        check_hits([h.to_dict() for h in r.hits], 3, r.searched)
        assert r.hits[0].id == target, (target, [h.id for h in r.hits])
        assert r.hits[0].similarity > 0.999, r.hits[0]
        exact += 1
    print("FIND", last, flush=True)
    if stopping:
        break
print(json.dumps({"finds": finds, "exact": exact, "searched": last}), flush=True)
"""


def _start_writer(
    children, store: Path, prefix: str, n: int, stop_file: Path | None = None, after: int = 0
) -> tuple[subprocess.Popen[str], LineReader]:
    proc = children.add(
        spawn_python(
            WRITER, str(store), prefix, str(n), str(stop_file) if stop_file else "-", str(after)
        )
    )
    return proc, LineReader(proc.stdout)


def _finish(proc: subprocess.Popen[str], reader: LineReader, timeout: float) -> list[str]:
    rc = proc.wait(timeout=timeout)
    reader.join(10)
    err = proc.stderr.read() if proc.stderr else ""
    assert rc == 0, f"child {proc.pid} exited {rc}:\n{err}"
    return reader.snapshot()


def _wait_for_progress(writers: list[tuple[subprocess.Popen[str], LineReader]], n: int) -> None:
    """Wait until the writers together acknowledged n puts, all of them still running."""
    readers = [reader for _, reader in writers]
    wait_until(
        lambda: (
            sum(len(r.snapshot()) for r in readers) >= n
            or any(p.poll() is not None for p, _ in writers)
        ),
        60,
        f"{n} acknowledged puts",
    )
    for proc, _ in writers:
        assert proc.poll() is None, f"writer {proc.pid} exited {proc.returncode} too early"


def _stop_server(proc: subprocess.Popen[str], store: Path) -> str:
    proc.send_signal(signal.SIGTERM)
    rc = proc.wait(timeout=30)
    err = proc.stderr.read()
    assert rc == 0, f"keepui serve exited {rc} on SIGTERM:\n{err}"
    assert "stopped" in err, err
    assert not socket_path(store).exists(), "the server left its socket behind"
    return err


def _cli(store: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [keepui_exe(), *args, "--store", str(store)],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=timeout,
    )


def _all_ids(store: Path) -> list[str]:
    wb = open_workbench(store)
    return sorted(i.id for i in wb.list_items(limit=100000, sort="id"))


# Puts per writer: enough for the writers' opens, commits and the finder's reads to interleave
# many times over (the processes take turns on the lock every few milliseconds).
PUTS = 40
CLI_PUTS = 12


def test_direct_mode_writers_and_finder(store: Path, children, tmp_path: Path) -> None:
    """4 writers x 40 puts (each its own locked open/close) while a fifth process finds."""
    started = time.monotonic()
    stop = tmp_path / "stop-finder"
    finder = children.add(spawn_python(FINDER, str(store), str(stop), "7"))
    finder_out = LineReader(finder.stdout)
    assert finder_out.wait_for(lambda lines: len(lines) >= 1, 60), "the finder never found"
    writers = [_start_writer(children, store, f"w{w}", PUTS) for w in range(4)]

    acked: list[str] = []
    for proc, reader in writers:
        # a deadline for a hang, not a speed claim: 400 puts took 75 s alone on 2 cores and
        # past 120 s beside another pytest-xdist worker
        lines = _finish(proc, reader, timeout=300)
        assert len(lines) == PUTS
        assert all(line.endswith(" lock pre") for line in lines), "no server: all calls direct"
        acked += [line.split()[0] for line in lines]
    stop.touch()
    finder_lines = _finish(finder, finder_out, timeout=60)
    summary = json.loads(finder_lines[-1])
    during = sum(1 for line in finder_lines[:-1] if 0 < int(line.split()[1]) < 4 * PUTS)

    expected = sorted(f"w{w}-{i:04d}" for w in range(4) for i in range(PUTS))
    assert sorted(acked) == expected
    assert _all_ids(store) == expected
    stats = open_workbench(store).stats()
    assert (stats.items, stats.versions, stats.vectors) == (4 * PUTS,) * 3
    assert summary["finds"] >= 2 and summary["searched"] == 4 * PUTS, summary
    print(
        f"direct mode: {summary['finds']} finds ({during} while writes were under way), "
        f"{time.monotonic() - started:.1f} s"
    )


def test_server_mode_cli_writers_and_finds(store: Path, children) -> None:
    """`keepui serve` owns the store; 4 x 12 CLI puts and CLI finds go through its socket."""
    started = time.monotonic()
    server = start_server(children, store)
    done = threading.Event()
    acked: list[str] = []
    acked_lock = threading.Lock()

    def writer(w: int) -> list[str]:
        ids = []
        for i in range(CLI_PUTS):
            doc_id = f"s{w}-{i:04d}"
            res = _cli(store, "put", note_text(doc_id), "-i", doc_id)
            assert res.returncode == 0, (doc_id, res.returncode, res.stderr)
            assert res.stdout == f"{doc_id}\n", res.stdout
            assert f"created {doc_id} (version 1)" in res.stderr, res.stderr
            with acked_lock:
                acked.append(doc_id)
            ids.append(doc_id)
        return ids

    def finder() -> int:
        rng = random.Random(11)
        n = 0
        while True:
            last_round = done.is_set()
            with acked_lock:
                target = rng.choice(acked) if acked else None
            query = note_text(target) if target else "note version"
            res = _cli(store, "find", query, "--json", "-n", "5")
            assert res.returncode == 0, (res.returncode, res.stderr)
            payload = json.loads(res.stdout)
            assert payload["schema"] == 1 and payload["query"] == query, payload
            check_hits(payload["hits"], 5, payload["searched"])
            if target:
                assert payload["hits"][0]["id"] == target, (target, payload["hits"])
                assert payload["hits"][0]["similarity"] > 0.999
            n += 1
            if last_round:
                return n

    with ThreadPoolExecutor(5) as pool:
        find_job = pool.submit(finder)
        write_jobs = [pool.submit(writer, w) for w in range(4)]
        written = [job.result(timeout=180) for job in write_jobs]
        done.set()
        finds = find_job.result(timeout=60)

    expected = sorted(f"s{w}-{i:04d}" for w in range(4) for i in range(CLI_PUTS))
    assert sorted(sum(written, [])) == expected
    assert _all_ids(store) == expected  # through the server
    assert (store / "store.lock").read_text().strip() == str(server.pid), (
        "a client took the store lock while the server held it"
    )
    _stop_server(server, store)

    # Direct mode afterwards: the lock is free and the socket gone.
    res = _cli(store, "stats", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["items"] == 4 * CLI_PUTS
    res = _cli(store, "put", note_text("after-serve"), "-i", "after-serve")
    assert res.returncode == 0, res.stderr
    res = _cli(store, "find", note_text("s2-0007"), "--json", "-n", "3")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["hits"][0]["id"] == "s2-0007"
    assert _all_ids(store) == sorted([*expected, "after-serve"])
    print(f"server mode: {finds} CLI finds, {time.monotonic() - started:.1f} s")


def test_server_starts_while_direct_clients_run(store: Path, children, tmp_path: Path) -> None:
    """Direct-mode clients mid-flight switch to the socket once a server comes up."""
    started = time.monotonic()
    stop = tmp_path / "stop"
    writers = [_start_writer(children, store, f"c{w}", 5000, stop, after=15) for w in range(3)]
    finder = children.add(spawn_python(FINDER, str(store), str(stop), "5"))
    finder_out = LineReader(finder.stdout)
    _wait_for_progress(writers, 15)

    t_server = time.monotonic()
    server = start_server(children, store)
    server_wait = time.monotonic() - t_server
    stop.touch()

    total: list[str] = []
    direct = 0
    for proc, reader in writers:
        lines = _finish(proc, reader, timeout=120)
        post = [line for line in lines if line.endswith(" post")]
        assert len(post) == 15, lines[-20:]
        assert all(line.split()[1] == "sock" for line in post), (
            f"calls made after the socket appeared did not use it: {post}"
        )
        direct += sum(1 for line in lines if line.endswith(" lock pre"))
        total += [line.split()[0] for line in lines]
    summary = json.loads(_finish(finder, finder_out, timeout=60)[-1])

    assert direct >= 15, "the writers never ran in direct mode"
    assert len(set(total)) == len(total)
    assert _all_ids(store) == sorted(total)
    stats = open_workbench(store).stats()
    assert stats.items == stats.vectors == len(total)
    _stop_server(server, store)
    assert _all_ids(store) == sorted(total)  # direct mode after the server left
    print(
        f"server start mid-flight: {len(total)} puts, {summary['finds']} finds, server up "
        f"after {server_wait:.1f} s, {time.monotonic() - started:.1f} s"
    )


def test_server_stops_while_clients_run(store: Path, children, tmp_path: Path) -> None:
    """SIGTERM the server while clients use it: it exits 0, clients fall back to the lock."""
    started = time.monotonic()
    stop = tmp_path / "stop"
    server = start_server(children, store)
    writers = [_start_writer(children, store, f"d{w}", 5000, stop, after=10) for w in range(3)]
    finder = children.add(spawn_python(FINDER, str(store), str(stop), "3"))
    finder_out = LineReader(finder.stdout)
    _wait_for_progress(writers, 15)

    server.send_signal(signal.SIGTERM)
    problems = []
    try:
        rc = server.wait(timeout=15)
    except subprocess.TimeoutExpired:
        problems.append("keepui serve ignored SIGTERM for 15 s (still serving); killed it")
        server.send_signal(signal.SIGKILL)
        rc = server.wait(timeout=30)
    err = server.stderr.read()
    stop.touch()
    if rc != 0 or "stopped" not in err:
        problems.append(f"keepui serve exited {rc} on SIGTERM:\n{err}")
    if socket_path(store).exists():
        problems.append("the server left its socket behind")
        if rc == -signal.SIGKILL:
            socket_path(store).unlink()  # so the clients below can tell it is gone
    acked: dict[str, int] = {}
    for proc, reader in writers:
        rc_w = proc.wait(timeout=120)
        reader.join(10)
        lines = reader.snapshot()
        acked.update({line.split()[0]: 1 for line in lines})
        if rc_w != 0:
            problems.append(f"writer {proc.pid} exited {rc_w}: {proc.stderr.read()[-400:]}")
            continue
        post = [line for line in lines if line.endswith(" post")]
        if not post or any(line.split()[1] != "lock" for line in post):
            problems.append(f"writer {proc.pid}: calls after the stop did not use the lock")
    rc_f = finder.wait(timeout=60)
    finder_out.join(10)
    if rc_f != 0:
        problems.append(f"finder exited {rc_f}: {finder.stderr.read()[-400:]}")
    # Whatever happened to the processes, the store must hold every acknowledged write.
    check_store(store, acked, sorted(acked)[:: max(1, len(acked) // 30)])
    assert not problems, "\n\n".join(problems)
    print(f"server stop mid-flight: {len(acked)} puts, {time.monotonic() - started:.1f} s")
