"""SIGKILL at random moments: acknowledged writes survive and the vector files heal on open.

DuckDB rows are the truth. The vector files (`vectors.<gen>.keys` / `.f32`) are appended after
the DuckDB commit and repaired when the index is opened: torn tails are cut, keys the database
has but the files lack are re-added from the embeddings table, keys the database dropped are
masked. These tests kill writers at seeded random moments (and damage the files by hand) and
check all of that from the outside.
"""

from __future__ import annotations

import random
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from mp_support import (
    LineReader,
    check_store,
    child_env,
    keepui_exe,
    note_text,
    size_of,
    spawn_python,
    start_server,
    vector_files,
    wait_until,
)

from keepui_engine import open_workbench
from keepui_engine.core.server import socket_path

pytestmark = pytest.mark.slow

# The victim: puts forever (single puts, put_many batches, new versions of acknowledged ids,
# and now and then a find so the index is loaded and reconciled in this process too). It prints
# "ACK ID VERSION" for every document right after the call that stored it returned.
CHILD = r"""
import random, sys
from keepui_engine import PutSpec, open_workbench
from mp_support import note_text

store, prefix, seed, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
rng = random.Random(seed)
wb = open_workbench(store, own=(mode == "owner"))
print("READY", flush=True)
acked = {}
n = 0
for step in range(100000):
    r = rng.random()
    if r < 0.12 and acked:
        doc_id = rng.choice(sorted(acked))
        hit = wb.find(note_text(doc_id, acked[doc_id]), limit=1).hits[0]
        if hit.id != doc_id or hit.version != 0:
            raise SystemExit(f"find for {doc_id} returned {hit}")
        continue
    size = 1 if r < 0.55 else rng.randint(2, 5)
    batch = {}
    while len(batch) < size:
        if acked and rng.random() < 0.2:
            doc_id = rng.choice(sorted(acked))
            if doc_id in batch:
                continue
            batch[doc_id] = acked[doc_id] + 1
        else:
            batch[f"{prefix}-{n:05d}"] = 1
            n += 1
    if size == 1:
        [(doc_id, version)] = batch.items()
        results = [wb.put(note_text(doc_id, version), id=doc_id)]
    else:
        results = wb.put_many([PutSpec(note_text(d, v), d) for d, v in batch.items()])
    for res, (doc_id, version) in zip(results, batch.items()):
        if (res.id, res.version) != (doc_id, version):
            raise SystemExit(f"put {doc_id} v{version} returned {res}")
    print("\n".join(f"ACK {d} {v}" for d, v in batch.items()), flush=True)
    for d, v in batch.items():
        acked[d] = v
"""

ROUNDS = 8
SEED = 20261122


def _raw_files(store: Path) -> dict[str, float]:
    """The vector files as the killed process left them (before anything repairs them)."""
    files = vector_files(store)
    if files is None:
        return {}
    return {"key_rows": size_of(files[0]) / 8, "vec_rows": size_of(files[1]) / (4 * 64)}


def test_sigkill_at_random_moments(store: Path, children) -> None:
    """8 rounds: start a writer, SIGKILL it after a seeded random delay, check the store."""
    rng = random.Random(SEED)
    lo, hi = 0.05, 1.5
    delays = [lo + (hi - lo) * (r + rng.random()) / ROUNDS for r in range(ROUNDS)]
    rng.shuffle(delays)
    acked: dict[str, int] = {}
    log = []
    for rnd, delay in enumerate(delays):
        mode = "owner" if rnd % 2 else "client"
        proc = children.add(spawn_python(CHILD, str(store), f"r{rnd}", str(SEED + rnd), mode))
        reader = LineReader(proc.stdout)
        assert reader.wait_for(lambda lines: "READY" in lines, 60), proc.stderr.read()
        try:
            rc = proc.wait(timeout=delay)  # the randomized moment of the kill is the point
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            rc = proc.wait(timeout=30)
        reader.join(30)
        assert rc == -signal.SIGKILL, f"round {rnd}: child exited {rc}:\n{proc.stderr.read()}"
        round_acked: dict[str, int] = {}
        for line in reader.snapshot()[1:]:
            tag, doc_id, version = line.split()
            assert tag == "ACK", line
            round_acked[doc_id] = max(round_acked.get(doc_id, 0), int(version))
        acked.update(round_acked)
        earlier = sorted(set(acked) - set(round_acked))
        must_find = sorted(round_acked) + rng.sample(earlier, min(20, len(earlier)))
        raw = _raw_files(store)
        counts = check_store(store, acked, must_find)
        log.append(
            f"round {rnd} ({mode}, kill after {delay:.2f} s): "
            f"{len(round_acked)} acked, files before reopen {raw}, after {counts}"
        )
    print("\n".join(log))
    assert sum(acked.values()) > 0, "no round acknowledged anything; the delays are too short"


def _fill(store: Path, n: int) -> list[str]:
    ids = [f"t-{i:03d}" for i in range(n)]
    with open_workbench(store, own=True) as wb:
        for i in range(0, n, 7):
            wb.put_many([_spec(d) for d in ids[i : i + 7]])
    return ids


def _spec(doc_id: str):  # noqa: ANN202
    from keepui_engine import PutSpec

    return PutSpec(note_text(doc_id), doc_id)


def _assert_all_found(store: Path, ids: list[str]) -> None:
    wb = open_workbench(store)  # a client, as the CLI would open it
    for doc_id in ids:
        hits = wb.find(note_text(doc_id), limit=2).hits
        assert hits and hits[0].id == doc_id and hits[0].similarity > 0.999, (doc_id, hits[:1])


@pytest.mark.parametrize("damage", ["torn-tails", "keys-shorter", "files-gone", "stray-rows"])
def test_vector_files_damaged_by_hand(store: Path, damage: str) -> None:
    """Cut the .f32 file mid-row and the .keys file short (and other damage); reopen; search."""
    ids = _fill(store, 40)
    dim = 64
    files = vector_files(store)
    assert files is not None
    kpath, vpath = files
    row = 4 * dim
    assert kpath.stat().st_size == 8 * 40 and vpath.stat().st_size == row * 40
    if damage == "torn-tails":  # vectors: 37.5 rows; keys: 35 rows and 3 bytes of a 36th
        with open(vpath, "r+b") as f:
            f.truncate(37 * row + row // 2)
        with open(kpath, "r+b") as f:
            f.truncate(35 * 8 + 3)
    elif damage == "keys-shorter":  # keys cut far below the vectors
        with open(kpath, "r+b") as f:
            f.truncate(10 * 8)
        with open(vpath, "r+b") as f:
            f.truncate(39 * row + 5)
    elif damage == "files-gone":
        kpath.unlink()
        vpath.unlink()
    elif damage == "stray-rows":  # rows whose keys DuckDB never had (and a torn one after)
        with open(kpath, "ab") as f:
            f.write(np.asarray([10_000, 10_001], np.int64).tobytes())
        with open(vpath, "ab") as f:
            stray = np.ones((2, dim), np.float32) / np.sqrt(dim)
            f.write(stray.tobytes() + b"\x00" * 7)

    _assert_all_found(store, ids)
    counts = check_store(store, {d: 1 for d in ids}, ids[:5])
    assert counts["items"] == 40
    if damage == "stray-rows":
        assert counts["dead_rows"] == 2
    else:
        assert counts["dead_rows"] == 0 and counts["file_rows"] == 40


def test_deleted_documents_stay_masked_after_reopen(store: Path) -> None:
    """Keys DuckDB dropped stay in the files but never come back from a search."""
    ids = _fill(store, 30)
    with open_workbench(store, own=True) as wb:
        for doc_id in ids[:5]:
            assert wb.delete(doc_id).action == "deleted"
        wb.put(note_text(ids[5], 2), id=ids[5])
        assert wb.delete(ids[5]).action == "reverted"
    wb = open_workbench(store)
    for doc_id in ids[:5]:
        hits = wb.find(note_text(doc_id), limit=3).hits
        assert doc_id not in [h.id for h in hits]
    _assert_all_found(store, ids[5:])
    counts = check_store(store, {d: 1 for d in ids[5:]}, ids[5:10])
    assert counts["dead_rows"] == 6


def test_server_killed_leaves_stale_socket(store: Path, children) -> None:
    """A SIGKILLed `keepui serve` leaves a stale socket file: clients fall back to the lock."""
    server = start_server(children, store)
    sock = socket_path(store)
    for i in range(5):
        res = subprocess.run(
            [keepui_exe(), "put", note_text(f"k-{i}"), "-i", f"k-{i}", "--store", str(store)],
            capture_output=True,
            text=True,
            env=child_env(),
            timeout=60,
        )
        assert res.returncode == 0, res.stderr
    server.send_signal(signal.SIGKILL)
    assert server.wait(timeout=30) == -signal.SIGKILL
    assert sock.exists(), "expected the killed server to leave its socket file"

    started = time.monotonic()
    res = subprocess.run(
        [keepui_exe(), "put", note_text("k-5"), "-i", "k-5", "--store", str(store)],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=60,
    )
    assert res.returncode == 0, res.stderr
    assert time.monotonic() - started < 30
    ids = [f"k-{i}" for i in range(6)]
    _assert_all_found(store, ids)
    check_store(store, {d: 1 for d in ids}, ids)

    # A new server replaces the stale socket.
    server2 = children.add(
        subprocess.Popen(
            [keepui_exe(), "serve", "--store", str(store)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=child_env(),
        )
    )
    wait_until(
        lambda: (
            (store / "store.lock").read_text().strip() == str(server2.pid)
            or server2.poll() is not None
        ),
        60,
        "the new server to take the lock",
    )
    wait_until(lambda: _answers(store) or server2.poll() is not None, 60, "the new server")
    assert server2.poll() is None, server2.stderr.read()
    _assert_all_found(store, ids)
    server2.send_signal(signal.SIGTERM)
    assert server2.wait(timeout=30) == 0, server2.stderr.read()
    assert not sock.exists()


def _answers(store: Path) -> bool:
    from keepui_engine.core import server

    conn = server.connect(store, timeout=5)
    if conn is None:
        return False
    conn.close()
    return True


# A victim killed at a chosen point inside the vector-file append that follows a DuckDB commit.
TRAP = r"""
import os, signal, sys
from keepui_engine import PutSpec, open_workbench
from keepui_engine.store.duckdb import vectors
from mp_support import note_text

store, mode, point = sys.argv[1], sys.argv[2], sys.argv[3]
wb = open_workbench(store, own=(mode == "owner"))
if mode == "owner":
    wb.find("warm the index up")
for i in range(10):
    wb.put(note_text(f"a-{i}"), id=f"a-{i}")
    print(f"ACK a-{i} 1", flush=True)

def die():
    os.kill(os.getpid(), signal.SIGKILL)

class Trap:
    def __init__(self, f, name):
        self.f, self.name = f, name
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        self.f.close()
    def write(self, data):
        if point == "mid-keys" and self.name.endswith(".keys"):
            self.f.write(data[:13]); self.f.flush(); die()
        if point == "after-keys" and self.name.endswith(".f32"):
            die()
        if point == "mid-vectors" and self.name.endswith(".f32"):
            self.f.write(data[: len(data) // 2 + 3]); self.f.flush(); die()
        return self.f.write(data)

real_append = vectors.VectorIndex.append
def append(self, keys, vecs):
    if point == "before-append":
        die()
    return real_append(self, keys, vecs)

vectors.VectorIndex.append = append
vectors.open = lambda path, mode="r", *a, **k: Trap(open(path, mode, *a, **k), str(path))
wb.put_many([PutSpec(note_text(f"b-{i}"), f"b-{i}") for i in range(3)])
print("NOT KILLED", flush=True)
"""


@pytest.mark.parametrize("mode", ["client", "owner"])
@pytest.mark.parametrize("point", ["before-append", "mid-keys", "after-keys", "mid-vectors"])
def test_kill_inside_vector_append(store: Path, children, mode: str, point: str) -> None:
    """Killed after the DuckDB commit but before/while the vector files are appended: the
    committed batch is in the store and searchable after reopen."""
    proc = children.add(spawn_python(TRAP, str(store), mode, point))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, out, err)
    assert "NOT KILLED" not in out
    acked = {line.split()[1]: 1 for line in out.splitlines() if line.startswith("ACK ")}
    assert len(acked) == 10
    raw = _raw_files(store)
    assert raw["key_rows"] <= 13 and raw["vec_rows"] <= 13, raw
    committed = {f"b-{i}": 1 for i in range(3)}
    counts = check_store(store, {**acked, **committed}, sorted({**acked, **committed}))
    assert counts["items"] == 13 and counts["file_rows"] == 13, counts
