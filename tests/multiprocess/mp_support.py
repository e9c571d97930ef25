"""Helpers shared by the multi-process tests and the child scripts they run.

The child scripts put this directory on sys.path and import `note_text` from here, so parent
and children agree on every document's text without passing it around.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PYTHON = sys.executable
ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def keepui_exe() -> str:
    """The `keepui` console script of the interpreter running the tests."""
    exe = Path(PYTHON).parent / "keepui"
    if not exe.exists():
        raise RuntimeError(f"no keepui console script next to {PYTHON}")
    return str(exe)


def fake_toml() -> str:
    """The default keepui.toml with the fake embedder selected."""
    from keepui_engine.core.config import DEFAULT_TOML

    old = 'provider = "sentence-transformers"'
    assert DEFAULT_TOML.count(old) == 1, "DEFAULT_TOML no longer has the provider line"
    return DEFAULT_TOML.replace(old, 'provider = "fake"')


def make_store(path: Path) -> Path:
    """A store directory whose keepui.toml (written before first use) selects the fake embedder."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "keepui.toml").write_text(fake_toml(), encoding="utf-8")
    return path


def note_text(doc_id: str, version: int = 1) -> str:
    """A deterministic text with several words no other document shares (fake-embedder friendly)."""
    digest = hashlib.sha256(f"{doc_id}/{version}".encode()).hexdigest()
    words = " ".join(digest[i : i + 5] for i in range(0, 40, 5))
    return f"note {doc_id} version {version}: {words}"


def child_env() -> dict[str, str]:
    """Environment for child processes: the test's, plus the repo on PYTHONPATH."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(HERE), env.get("PYTHONPATH", "")])
    env["PYTHONUNBUFFERED"] = "1"
    return env


def spawn_python(script: str, *args: str, stderr: Any = subprocess.PIPE) -> subprocess.Popen[str]:
    """Start `python -c script args...` with line-oriented text pipes."""
    return subprocess.Popen(
        [PYTHON, "-c", script, *args],
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        env=child_env(),
        cwd=str(REPO),
    )


class LineReader:
    """Collects a child's complete stdout lines in a background thread.

    A line only counts once its newline arrived, so a line torn by SIGKILL is never read as an
    acknowledgement.
    """

    def __init__(self, stream: Any) -> None:
        self.lines: list[str] = []
        self.partial = ""
        self._cond = threading.Condition()
        self._done = False
        self._thread = threading.Thread(target=self._run, args=(stream,), daemon=True)
        self._thread.start()

    def _run(self, stream: Any) -> None:
        try:
            for line in stream:
                with self._cond:
                    if line.endswith("\n"):
                        self.lines.append(line[:-1])
                    else:
                        self.partial = line
                    self._cond.notify_all()
        finally:
            with self._cond:
                self._done = True
                self._cond.notify_all()

    def wait_for(self, pred: Callable[[list[str]], bool], timeout: float) -> bool:
        """Wait until pred(lines) holds or the stream ends or the deadline passes."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not pred(self.lines):
                left = deadline - time.monotonic()
                if self._done or left <= 0:
                    return pred(self.lines)
                self._cond.wait(left)
            return True

    def join(self, timeout: float) -> None:
        """Wait for the end of the stream (the child exited and closed stdout)."""
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "child stdout did not reach EOF"

    def snapshot(self) -> list[str]:
        """The complete lines read so far."""
        with self._cond:
            return list(self.lines)


def wait_until(pred: Callable[[], bool], timeout: float, what: str, poll: float = 0.01) -> None:
    """Poll a condition with a deadline (never a fixed sleep hoping something happened)."""
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(poll)


def check_hits(hits: list[dict[str, Any]], limit: int, searched: int) -> None:
    """Structural checks on one find answer's hits (dicts as in --json output)."""
    assert len(hits) <= limit
    assert len(hits) == min(limit, searched), (len(hits), limit, searched)
    ids = [h["id"] for h in hits]
    assert len(set(ids)) == len(ids), f"duplicate ids in hits: {ids}"
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True), scores
    for h in hits:
        assert ID_RE.match(h["id"]), h["id"]
        assert h["version"] == 0, h
        assert math.isfinite(h["score"]) and math.isfinite(h["similarity"]), h
        assert -1.001 <= h["similarity"] <= 1.001, h
        assert 0.0 < h["decay"] <= 1.0, h
        assert h["summary"].startswith(f"note {h['id']} version "), h


def vector_files(store: Path) -> tuple[Path, Path] | None:
    """The current generation's (keys, f32) vector files, from vectors.json (no side effects)."""
    import json

    try:
        gen = json.loads((store / "vectors.json").read_text())["generation"]
    except (OSError, ValueError, KeyError):
        return None
    return store / f"vectors.{gen}.keys", store / f"vectors.{gen}.f32"


def size_of(path: Path) -> int:
    """A file's size, 0 when it does not exist."""
    return path.stat().st_size if path.exists() else 0


def check_store(store: Path, acked: dict[str, int], must_find: list[str]) -> dict[str, int]:
    """Open the store in this process and check it against the acknowledgements.

    Args:
        store: The store directory (no other process has it open).
        acked: Highest acknowledged version of every acknowledged id.
        must_find: Ids whose current text must find them first.

    Returns:
        A few counts for the log.
    """
    from keepui_engine import open_workbench
    from keepui_engine.store.tables import documents

    wb = open_workbench(store, own=True)
    try:
        engine = wb._engine
        assert engine is not None
        con = engine.store.con
        stats = wb.stats()

        heads = {
            d: (v, t)
            for d, v, t in con.execute("SELECT id, version, text FROM documents").fetchall()
        }
        for doc_id, version in acked.items():
            assert doc_id in heads, f"acknowledged {doc_id} v{version} is missing"
            stored = heads[doc_id][0]
            # At most one unacknowledged write per id (the one the kill interrupted).
            assert version <= stored <= version + 1, (doc_id, version, stored)
        for doc_id, (version, text) in heads.items():
            assert text == note_text(doc_id, version), f"{doc_id} v{version} has a wrong text"
        archived = con.execute("SELECT id, version, text FROM versions").fetchall()
        for doc_id, version, text in archived:
            assert text == note_text(doc_id, version), f"{doc_id}@v{version} has a wrong text"
            assert version < heads[doc_id][0]
        assert len(archived) == sum(v - 1 for v, _ in heads.values()), "a version went missing"

        key_rows = con.execute("SELECT key, doc_id, version FROM vector_keys").fetchall()
        assert len({(d, v) for _, d, v in key_rows}) == len(key_rows) == stats.versions
        assert stats.items == len(heads)
        assert stats.vectors == len(key_rows)

        for doc_id in must_find:
            version = heads[doc_id][0]
            hits = wb.find(note_text(doc_id, version), limit=3).hits
            assert hits and hits[0].id == doc_id and hits[0].version == 0, (doc_id, hits[:1])
            assert hits[0].similarity > 0.999, hits[0]

        # The reopened index agrees with DuckDB: one live row per vector key, the right vector.
        index = engine.store.index
        assert index.live_count == stats.vectors
        live = index._keys[index._live]
        assert len(np.unique(live)) == len(live), "a live key appears twice in the vector files"
        db_keys = np.sort(np.asarray([k for k, _, _ in key_rows], np.int64))
        assert np.array_equal(np.sort(live), db_keys)
        if len(db_keys):
            got = index.vectors_for(db_keys)
            keys, vecs = documents.vectors_for_keys(con, db_keys, engine.embedder.name)
            want = dict(zip(keys.tolist(), vecs, strict=True))
            assert np.array_equal(got, np.stack([want[int(k)] for k in db_keys])), (
                "a vector row holds the wrong vector"
            )
        files = vector_files(store)
        assert files is not None, "vectors.json is missing after the index was opened"
        kpath, vpath = files
        rows = len(index._keys)
        assert size_of(kpath) == 8 * rows
        assert size_of(vpath) == 4 * engine.embedder.dim * rows
        return {
            "items": stats.items,
            "versions": stats.versions,
            "file_rows": rows,
            "dead_rows": rows - index.live_count,
        }
    finally:
        wb.close()


def start_server(children: Any, store: Path) -> subprocess.Popen[str]:
    """Start `keepui serve` on a store (registered for cleanup) and wait for its socket."""
    from keepui_engine.core.server import socket_path

    proc = children.add(
        subprocess.Popen(
            [keepui_exe(), "serve", "--store", str(store)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=child_env(),
        )
    )
    sock = socket_path(store)
    wait_until(lambda: sock.exists() or proc.poll() is not None, 60, "the server socket")
    assert proc.poll() is None, f"keepui serve exited {proc.returncode}: {proc.stderr.read()}"
    return proc  # type: ignore[no-any-return]
