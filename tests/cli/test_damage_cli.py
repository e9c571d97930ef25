"""Damage through the real CLI (issue 23, points 5 to 8): the database and its WAL deleted, cut
or garbled stop with exit 2 and what to do; damaged index files are rebuilt with a note on
stderr; `keepui doctor` reports (exit 2) and `--repair` repairs (exit 0)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from support import make_fake_store, run_cli

from keepui_engine import PutSpec, open_workbench

OLD, NEW = 20, 3


def _text(prefix: str, i: int) -> str:
    return f"{prefix} note {i} about {prefix}topic{i}"


@pytest.fixture(scope="module")
def crashed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store as a crash leaves it: 20 notes checkpointed into keepui.duckdb, then 3 more
    committed to its WAL only (the folder copied while their process still held it)."""
    base = tmp_path_factory.mktemp("crash")
    root = make_fake_store(base / "live")
    with open_workbench(root) as wb:
        wb.put_many([PutSpec(_text("old", i), id=f"old{i}") for i in range(OLD)])
    wb = open_workbench(root, own=True)
    try:
        for i in range(NEW):
            wb.put(_text("new", i), id=f"new{i}")
        shutil.copytree(root, base / "crashed")
    finally:
        wb.close()
    assert (base / "crashed" / "keepui.duckdb.wal").stat().st_size > 0
    return base / "crashed"


def _copy(seed: Path, tmp_path: Path) -> Path:
    root = tmp_path / "store"
    shutil.copytree(seed, root)
    return root


def _garble(path: Path) -> None:
    data = bytearray(path.read_bytes())
    at = len(data) // 3
    data[at : at + 64] = np.random.default_rng(23).integers(0, 256, 64, dtype=np.uint8).tobytes()
    path.write_bytes(bytes(data))


def _top(root: Path, query: str) -> str:
    got = run_cli(root, "find", query, "--ids", "-n", "1")
    assert got.returncode == 0, got.stderr
    return got.stdout.strip()


def test_the_crashed_store_itself_is_whole(crashed: Path, tmp_path: Path) -> None:
    root = _copy(crashed, tmp_path)
    assert _top(root, "newtopic2") == "new2" and _top(root, "oldtopic5") == "old5"


# (file, damage) -> (exit code of `find`, words stderr must hold, what `doctor --repair` leaves)
DB_CASES = {
    ("keepui.duckdb.wal", "delete"): (2, ["lost committed writes", "doctor --repair"], 0),
    ("keepui.duckdb.wal", "truncate"): (2, ["lost committed writes", "doctor --repair"], 0),
    ("keepui.duckdb.wal", "garble"): (2, ["write-ahead log", "is damaged", "backup"], 2),
    ("keepui.duckdb", "delete"): (2, ["is missing", "backup", "move the folder aside"], 2),
    ("keepui.duckdb", "truncate"): (2, ["database file is damaged", "backup"], 2),
}


@pytest.mark.parametrize(("name", "damage"), list(DB_CASES), ids=[f"{n}-{d}" for n, d in DB_CASES])
def test_a_damaged_database_stops_with_what_to_do(
    crashed: Path, tmp_path: Path, name: str, damage: str
) -> None:
    root = _copy(crashed, tmp_path)
    path = root / name
    if damage == "delete":
        path.unlink()
    elif damage == "truncate":
        os.truncate(path, path.stat().st_size // 2)
    else:
        _garble(path)
    code, words, after_repair = DB_CASES[(name, damage)]
    got = run_cli(root, "find", "oldtopic5")
    assert got.returncode == code and got.stdout == "", (got.stdout, got.stderr)
    assert all(w in got.stderr for w in words) and "please report" not in got.stderr, got.stderr
    assert "Traceback" not in got.stderr
    put = run_cli(root, "put", "a new note", "--id", "fresh")
    assert put.returncode == 2, put.stderr  # nothing is written over the damage
    assert (root / "keepui.duckdb").exists() == (name != "keepui.duckdb" or damage != "delete")
    doctor = run_cli(root, "doctor", "--json")
    assert doctor.returncode == 2, doctor.stderr
    fixed = run_cli(root, "doctor", "--repair")
    assert fixed.returncode == after_repair, (fixed.stdout, fixed.stderr)
    if after_repair == 0:  # the lost writes stay lost; what the database holds is found again
        assert "repaired  writes" in fixed.stdout
        assert _top(root, "oldtopic5") == "old5"
        assert run_cli(root, "get", "new2").returncode == 2
        assert run_cli(root, "doctor").returncode == 0


def test_missing_database_doctor_reports_without_creating_one(
    crashed: Path, tmp_path: Path
) -> None:
    root = _copy(crashed, tmp_path)
    (root / "keepui.duckdb").unlink()
    (root / "keepui.duckdb.wal").unlink()
    got = run_cli(root, "doctor", "--json")
    assert got.returncode == 2
    report = json.loads(got.stdout)
    assert report["schema"] == 1 and report["healthy"] is False
    assert report["checks"][0]["name"] == "database" and "missing" in report["checks"][0]["detail"]
    assert not (root / "keepui.duckdb").exists()


def test_damaged_word_index_is_rebuilt_and_said_on_stderr(crashed: Path, tmp_path: Path) -> None:
    root = _copy(crashed, tmp_path)
    assert run_cli(root, "reindex").returncode == 0  # folds everything into a BM25 base
    (base,) = (root / "bm25").glob("g*")
    (base / "stats.json").unlink()  # once: every word search found nothing, exit 0, forever
    got = run_cli(root, "find", "oldtopic5", "--mode", "bm25", "--ids")
    assert got.returncode == 0 and got.stdout.split()[:1] == ["old5"], got
    assert "keepui: the word index was damaged (bm25/" in got.stderr
    assert "stats.json is missing" in got.stderr and "rebuilt" in got.stderr
    again = run_cli(root, "find", "newtopic1", "--mode", "bm25", "--ids")
    assert again.stdout.split()[:1] == ["new1"] and "damaged" not in again.stderr


def test_doctor_reports_repairs_and_then_finds_the_store_healthy(
    crashed: Path, tmp_path: Path
) -> None:
    root = _copy(crashed, tmp_path)
    assert run_cli(root, "doctor").returncode == 0
    meta = json.loads((root / "vectors.json").read_text())
    vectors = root / f"vectors.{meta['generation']}.f32"
    rows = np.fromfile(vectors, np.float32)
    np.random.default_rng(23).permutation(rows.reshape(-1, 64)).tofile(vectors)
    before = vectors.read_bytes()
    found = run_cli(root, "doctor")
    assert found.returncode == 2, found.stdout
    assert "DAMAGED   vectors: vectors." in found.stdout and "checksum" in found.stdout
    assert "to fix: run keepui doctor --repair" in found.stderr
    assert vectors.read_bytes() == before  # looking changed nothing
    fixed = run_cli(root, "doctor", "--repair", "--json")
    assert fixed.returncode == 0, fixed.stdout
    report = json.loads(fixed.stdout)
    assert report["schema"] == 1 and report["healthy"] and report["repair"]
    assert [c["name"] for c in report["checks"] if c["status"] == "repaired"] == ["vectors"]
    assert run_cli(root, "doctor").returncode == 0
    hits = run_cli(root, "find", _text("old", 7), "--mode", "dense", "--json")
    assert json.loads(hits.stdout)["hits"][0]["id"] == "old7"
