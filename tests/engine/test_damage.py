"""Damaged index files: every file x every kind of damage is repaired with a note (or refused
with a clear error), never answered silently wrong (issue 23, points 5 and 6)."""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from support import make_fake_store

from keepui_engine import PutSpec, open_workbench

N_BASE, N_TAIL = 250, 5  # 250 puts build the BM25 base; the last 5 stay in its tail
DIM = 64


def _fill(root: Path) -> None:
    with open_workbench(root) as wb:
        wb.put_many([PutSpec(_text("d", i), id=f"d{i}") for i in range(N_BASE)])
        wb.put_many([PutSpec(_text("t", i), id=f"t{i}") for i in range(N_TAIL)])


def _text(prefix: str, i: int) -> str:
    return f"note {prefix}{i} about subject{prefix}{i} with ordinary shared words"


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One filled store (exact search), copied for each case."""
    root = make_fake_store(tmp_path_factory.mktemp("seed") / "store")
    _fill(root)
    return root


@pytest.fixture(scope="module")
def seeded_graph(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One filled store past its exact-search limit, so it has an HNSW graph file."""
    root = make_fake_store(tmp_path_factory.mktemp("seed") / "store", exact_max_vectors=100)
    _fill(root)
    return root


def _copy(seed: Path, tmp_path: Path) -> Path:
    root = tmp_path / "store"
    shutil.copytree(seed, root)
    return root


def _generation(root: Path) -> int:
    return int(json.loads((root / "vectors.json").read_text())["generation"])


def _file(root: Path, name: str) -> Path:
    """`name` with G standing for the current vector generation, g* for the BM25 base's."""
    if name.startswith("bm25/"):
        (base,) = (root / "bm25").glob("g*")
        return base / name.split("/", 1)[1]
    return root / name.replace("G", str(_generation(root)))


def _truncate(path: Path) -> None:
    os.truncate(path, path.stat().st_size // 2)


def _garble(path: Path) -> None:
    data = bytearray(path.read_bytes())
    rng = np.random.default_rng(23)
    start = len(data) // 3
    span = max(1, min(64, len(data) - start))
    data[start : start + span] = rng.integers(0, 256, span, dtype=np.uint8).tobytes()
    if data == path.read_bytes():  # pragma: no cover - the random bytes happened to match
        data[start] ^= 0xFF
    path.write_bytes(bytes(data))


def _garble_keep_times(path: Path) -> None:
    """Garble, then put the old mtime back (as `touch -r` would): the ctime still moves."""
    st = path.stat()
    _garble(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _delete(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink()


def _rows(path: Path) -> np.ndarray:
    return np.fromfile(path, np.float32).reshape(-1, DIM)


def _permute(path: Path) -> None:
    keys = np.fromfile(path, np.int64)
    np.random.default_rng(23).permutation(keys).tofile(path)


def _random(path: Path) -> None:
    rows = _rows(path)
    vecs = np.random.default_rng(23).normal(size=rows.shape).astype(np.float32)
    (vecs / np.linalg.norm(vecs, axis=1, keepdims=True)).tofile(path)


def _zeros(path: Path) -> None:
    np.zeros_like(_rows(path)).tofile(path)


def _nan(path: Path) -> None:
    rows = _rows(path)
    rows[7] = np.nan
    rows.tofile(path)


DAMAGE: dict[str, Callable[[Path], None]] = {
    "truncate": _truncate,
    "garble": _garble,
    "garble-keep-mtime": _garble_keep_times,
    "delete": _delete,
    "permute": _permute,
    "random": _random,
    "zeros": _zeros,
    "nan": _nan,
}
BM25_FILES = [
    "bm25/stats.json",
    "bm25/keys.npy",
    "bm25/data.csc.index.npy",
    "bm25/indices.csc.index.npy",
    "bm25/indptr.csc.index.npy",
    "bm25/vocab.index.json",
    "bm25/params.index.json",
    "bm25/manifest.json",
]
FILE_DAMAGE = ["truncate", "garble", "delete"]
CASES = [
    *[(f, d, "word index") for f in BM25_FILES for d in FILE_DAMAGE],
    ("bm25/data.csc.index.npy", "garble-keep-mtime", "word index"),
    ("bm25", "delete", "word index"),
    *[("vectors.json", d, "vector files") for d in FILE_DAMAGE],
    *[("vectors.G.keys", d, "vector files") for d in [*FILE_DAMAGE, "permute"]],
    *[
        ("vectors.G.f32", d, "vector files")
        for d in [*FILE_DAMAGE, "garble-keep-mtime", "random", "zeros", "nan"]
    ],
]


def _assert_right(root: Path) -> None:
    """Words and meaning both find the right document first, in the base and the tail."""
    wb = open_workbench(root)  # a client, as the CLI opens it
    for doc in ("d7", "d201", "t3"):
        prefix, i = doc[0], int(doc[1:])
        got = wb.find(f"subject{prefix}{i}", mode="bm25", limit=3).hits
        assert got and got[0].id == doc, (doc, [h.id for h in got])
        got = wb.find(_text(prefix, i), mode="dense", limit=3).hits
        assert got and got[0].id == doc and (got[0].similarity or 0) > 0.999, (doc, got[:1])


def _notes(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "keepui_engine.repair"]


@pytest.mark.parametrize(("name", "damage", "what"), CASES, ids=[f"{n}-{d}" for n, d, _ in CASES])
def test_damaged_index_file_is_rebuilt_and_said(
    seeded: Path,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    name: str,
    damage: str,
    what: str,
) -> None:
    root = _copy(seeded, tmp_path)
    DAMAGE[damage](_file(root, name))
    with caplog.at_level(logging.WARNING, logger="keepui_engine.repair"):
        _assert_right(root)
    notes = _notes(caplog)
    assert len(notes) == 1 and f"the {what}" in notes[0] and "rebuilt" in notes[0], notes
    caplog.clear()
    _assert_right(root)  # repaired for good: nothing to say the second time
    assert not _notes(caplog)
    with open_workbench(root) as wb:
        report = wb.doctor()
    assert report.healthy, report.checks


@pytest.mark.parametrize("damage", FILE_DAMAGE)
def test_damaged_graph_falls_back_to_exact_search_and_is_rebuilt(
    seeded_graph: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: str
) -> None:
    root = _copy(seeded_graph, tmp_path)
    graph = _file(root, "vectors.G.hnsw")
    assert graph.exists()
    DAMAGE[damage](graph)
    with caplog.at_level(logging.WARNING, logger="keepui_engine.repair"):
        _assert_right(root)
    notes = _notes(caplog)
    assert notes and "vector graph was damaged" in notes[0], notes
    with open_workbench(root) as wb:
        wb.put("one more note to trigger the rebuild", id="more")  # a write rebuilds the graph
        assert wb.find(_text("d", 9), limit=1).hits[0].id == "d9"
    assert graph.exists()
    with open_workbench(root) as wb:
        checks = {c.name: c for c in wb.doctor().checks}
    assert checks["vector graph"].status == "ok" and "covers" in checks["vector graph"].detail


def test_a_tail_written_after_the_manifest_is_kept_when_it_matches(
    seeded: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A process killed between its append and the manifest leaves rows the manifest does not
    vouch for: they are compared with the database, kept, and nothing is reported."""
    root = _copy(seeded, tmp_path)
    before = json.loads((root / "vectors.json").read_text())
    with open_workbench(root) as wb:
        wb.put(_text("x", 1), id="x1")
    (root / "vectors.json").write_text(json.dumps(before))  # as if killed before the manifest
    with caplog.at_level(logging.WARNING, logger="keepui_engine.repair"):
        _assert_right(root)
        assert open_workbench(root).find(_text("x", 1), mode="dense").hits[0].id == "x1"
    assert not _notes(caplog)
    assert json.loads((root / "vectors.json").read_text())["rows"] == N_BASE + N_TAIL + 1


def test_reindex_rebuilds_the_word_index(seeded: Path, tmp_path: Path) -> None:
    root = _copy(seeded, tmp_path)
    (old,) = (root / "bm25").glob("g*")
    with open_workbench(root) as wb:
        wb.reindex()
        engine = wb._engine  # noqa: SLF001 - look at the tables the reindex left
    (new,) = (root / "bm25").glob("g*")
    assert new.name != old.name and (new / "manifest.json").exists()
    import duckdb

    con = duckdb.connect(str(root / "keepui.duckdb"))
    assert con.execute("SELECT count(*) FROM bm25_tail").fetchone() == (0,)  # all in the base
    con.close()
    assert engine is None
    _assert_right(root)


def test_doctor_reports_then_repairs(seeded: Path, tmp_path: Path) -> None:
    root = _copy(seeded, tmp_path)
    _zeros(_file(root, "vectors.G.f32"))
    _delete(_file(root, "bm25/stats.json"))
    with open_workbench(root) as wb:
        report = wb.doctor()
    status = {c.name: c.status for c in report.checks}
    assert not report.healthy
    assert status["vectors"] == "damaged" and status["word index"] == "damaged"
    assert all(s == "ok" for n, s in status.items() if n not in ("vectors", "word index"))
    assert _rows(_file(root, "vectors.G.f32")).any() == 0  # looking changed nothing
    with open_workbench(root) as wb:
        fixed = wb.doctor(repair=True)
    assert fixed.healthy and {c.name for c in fixed.checks if c.status == "repaired"} == {
        "vectors",
        "word index",
    }
    with open_workbench(root) as wb:
        again = wb.doctor()
    assert again.healthy and all(c.status == "ok" for c in again.checks)
    assert json.loads(json.dumps(again.to_dict()))["healthy"] is True
    _assert_right(root)
