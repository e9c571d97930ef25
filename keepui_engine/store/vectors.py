"""The vector index: append-only float32 files for exact search plus a usearch HNSW graph beyond.

DuckDB holds the truth (vector_keys + embeddings); these files are derived from it and are
repaired on open, so a process killed mid-write never leaves the two out of step.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

META_NAME = "vectors.json"
HNSW_MIN_TAIL = 2048
EF_SEARCH = 256


class VectorIndex:
    """Keys and unit vectors of every searchable text, searchable by cosine similarity.

    Args:
        root: The store directory.
        model: Embedding model name the vectors come from.
        dim: Vector dimension.
        exact_max: Up to this many live vectors, search is exact; beyond, HNSW.
    """

    def __init__(self, root: Path, model: str, dim: int, exact_max: int = 30000) -> None:
        self.root = root
        self.model = model
        self.dim = dim
        self.exact_max = exact_max
        self._meta = self._read_meta()
        self._keys: np.ndarray = np.empty(0, np.int64)
        self._mat_cache: np.ndarray = np.empty((0, dim), np.float32)
        self._mat_rows = 0
        self._live: np.ndarray = np.empty(0, bool)
        self._hnsw: Any = None
        self._order: np.ndarray | None = None
        self._allowed: tuple[np.ndarray, np.ndarray] | None = None  # the last mask built

    # -- files ---------------------------------------------------------------------------
    def _read_meta(self) -> dict[str, Any]:
        path = self.root / META_NAME
        try:
            meta = json.loads(path.read_text())
        except (OSError, ValueError):
            meta = {}
        if meta.get("model") != self.model or meta.get("dim") != self.dim:
            meta = {
                "model": self.model,
                "dim": self.dim,
                "generation": int(meta.get("generation", 0)) + 1,
            }
            self._write_meta(meta)
        return meta

    def _write_meta(self, meta: dict[str, Any]) -> None:
        tmp = self.root / (META_NAME + ".tmp")
        tmp.write_text(json.dumps(meta))
        os.replace(tmp, self.root / META_NAME)

    def _paths(self, generation: int | None = None) -> tuple[Path, Path]:
        g = self._meta["generation"] if generation is None else generation
        return self.root / f"vectors.{g}.keys", self.root / f"vectors.{g}.f32"

    def _repair_tail(self) -> int:
        """Cut both files to the rows they both hold completely; return that row count."""
        kpath, vpath = self._paths()
        nk = kpath.stat().st_size // 8 if kpath.exists() else 0
        nv = vpath.stat().st_size // (4 * self.dim) if vpath.exists() else 0
        rows = min(nk, nv)
        for path, size in ((kpath, rows * 8), (vpath, rows * 4 * self.dim)):
            if path.exists() and path.stat().st_size != size:
                os.truncate(path, size)
        return rows

    def needs_hnsw_work(self) -> bool:
        """Whether the graph is due a build or an extension (from file sizes, no loading)."""
        rows, covered = self.file_rows(), int(self._meta.get("hnsw", 0))
        return rows > self.exact_max and rows - covered >= min(HNSW_MIN_TAIL, rows)

    def file_rows(self) -> int:
        """Rows in the vector files, from their sizes (no loading)."""
        _, vpath = self._paths()
        return vpath.stat().st_size // (4 * self.dim) if vpath.exists() else 0

    def append(self, keys: np.ndarray, vecs: np.ndarray) -> None:
        """Append rows (keys first, so a torn write loses the row rather than mislabels it)."""
        if len(keys) == 0:
            return
        self._repair_tail()
        kpath, vpath = self._paths()
        vecs = np.ascontiguousarray(vecs, dtype=np.float32).reshape(len(keys), self.dim)
        with open(kpath, "ab") as fk:
            fk.write(np.ascontiguousarray(keys, dtype=np.int64).tobytes())
        with open(vpath, "ab") as fv:
            fv.write(vecs.tobytes())
        self._keys = np.concatenate([self._keys, keys.astype(np.int64)])
        self._live = np.concatenate([self._live, np.ones(len(keys), bool)])
        self._mat_rows = -1
        self._order = None

    @property
    def _mat(self) -> np.ndarray:
        """The vectors, memory-mapped again after appends (never copied whole)."""
        rows = len(self._keys)
        if self._mat_rows != rows:
            _, vpath = self._paths()
            self._mat_cache = (
                np.memmap(vpath, dtype=np.float32, mode="r", shape=(rows, self.dim))
                if rows
                else np.empty((0, self.dim), np.float32)
            )
            self._mat_rows = rows
        return self._mat_cache

    def _load(self) -> None:
        rows = self._repair_tail()
        kpath, vpath = self._paths()
        self._keys = (
            np.fromfile(kpath, dtype=np.int64, count=rows) if rows else np.empty(0, np.int64)
        )
        self._mat_rows = -1
        self._order = None

    # -- reconcile with the database --------------------------------------------------------
    def open(self, live_keys: np.ndarray, fetch: Any) -> dict[str, int]:
        """Load the files and bring them in step with the database.

        Args:
            live_keys: Every key the database says is live.
            fetch: Callable(keys) -> (keys, vectors) reading vectors from the database.

        Returns:
            Counts of rows added and dead rows found.
        """
        self._load()
        live_keys = _sorted_unique(np.asarray(live_keys, dtype=np.int64))
        self._live = member(self._keys, live_keys)
        present = _sorted_unique(self._keys[self._live])
        missing = live_keys[~member(live_keys, present)]
        if len(missing):
            got_keys, got_vecs = fetch(missing)
            self.append(np.asarray(got_keys, np.int64), got_vecs)
        dead = int((~self._live).sum())
        if dead > 1000 and dead > len(self._keys) // 4:
            self._compact()
        return {"added": int(len(missing)), "dead": dead}

    def _compact(self) -> None:
        keys = self._keys[self._live]
        mat = np.asarray(self._mat[self._live], dtype=np.float32)
        meta = dict(self._meta, generation=self._meta["generation"] + 1)
        meta.pop("hnsw", None)
        kpath, vpath = self._paths(meta["generation"])
        kpath.write_bytes(keys.tobytes())
        vpath.write_bytes(mat.tobytes())
        old = self._paths()
        self._meta = meta
        self._write_meta(meta)
        for path in old:
            path.unlink(missing_ok=True)
        self._drop_hnsw_file()
        self._keys, self._live = keys, np.ones(len(keys), bool)
        self._mat_rows = -1
        self._order = None

    def remove(self, keys: np.ndarray) -> None:
        """Mark keys dead (the database row is already gone)."""
        if len(keys):
            self._live &= ~member(self._keys, np.unique(np.asarray(keys, np.int64)))
            self._allowed = None

    def missing(self, keys: np.ndarray) -> np.ndarray:
        """The keys among `keys` that have no live row in the index."""
        keys = np.asarray(keys, np.int64)
        return keys[~member(keys, _sorted_unique(self._keys[self._live]))]

    @property
    def live_count(self) -> int:
        """How many live vectors the index holds."""
        return int(self._live.sum())

    # -- HNSW ---------------------------------------------------------------------------------
    def _hnsw_path(self) -> Path:
        return self.root / f"vectors.{self._meta['generation']}.hnsw"

    def _drop_hnsw_file(self) -> None:
        for path in self.root.glob("vectors.*.hnsw"):
            path.unlink(missing_ok=True)

    def maybe_extend_hnsw(self) -> bool:
        """Build or extend the HNSW graph when the store outgrows exact search."""
        covered = int(self._meta.get("hnsw", 0))
        rows = len(self._keys)
        if rows <= self.exact_max or rows - covered < min(HNSW_MIN_TAIL, rows):
            return False
        from usearch.index import Index

        path = self._hnsw_path()
        index = _restore(path, view=False) if covered else None
        if index is not None:
            index.expansion_search = EF_SEARCH  # type: ignore[misc]  # settable at run time
        else:  # no graph yet, or an unreadable file: build from scratch
            index = Index(
                ndim=self.dim,
                metric="cos",
                dtype="f16",
                connectivity=16,
                expansion_add=128,
                expansion_search=EF_SEARCH,
            )
            covered = 0
        index.add(self._keys[covered:rows], np.asarray(self._mat[covered:rows]), threads=2)
        tmp = path.with_suffix(".tmp")
        index.save(str(tmp))
        os.replace(tmp, path)
        self._meta = dict(self._meta, hnsw=rows)
        self._write_meta(self._meta)
        self._hnsw = None
        return True

    def _hnsw_view(self) -> Any:
        if self._hnsw is None and self._meta.get("hnsw") and self._hnsw_path().exists():
            view = _restore(self._hnsw_path(), view=True)
            if view is None:  # unreadable graph file: search exactly until it is rebuilt
                self._meta = {k: v for k, v in self._meta.items() if k != "hnsw"}
                return None
            view.expansion_search = EF_SEARCH  # type: ignore[misc]  # not persisted in the file
            self._hnsw = view
        return self._hnsw

    # -- search -------------------------------------------------------------------------------
    def search(
        self, query: np.ndarray, k: int, allowed: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, str, int]:
        """Return (keys, cosine similarities, method, vectors considered), best first.

        Args:
            query: Unit query vector.
            k: How many to return at most.
            allowed: Sorted keys the filters let through, or None for all.
        """
        mask = self._live if allowed is None else self._mask_of(allowed)
        considered = int(mask.sum())
        if considered == 0 or k <= 0:
            return np.empty(0, np.int64), np.empty(0, np.float32), "exact", considered
        q = np.asarray(query, np.float32).reshape(-1)
        hnsw = self._hnsw_view() if considered > self.exact_max else None
        if hnsw is not None and considered >= 0.2 * len(self._keys):
            return (*self._search_hnsw(hnsw, q, k, mask), "hnsw", considered)
        if considered < len(mask) // 2:
            pos = np.nonzero(mask)[0]
            sims = np.asarray(self._mat[pos]) @ q
        else:
            pos = None
            sims = np.asarray(self._mat @ q)
            sims[~mask] = -np.inf
        top = _top(sims, min(k, considered))
        rows = top if pos is None else pos[top]
        return self._keys[rows], sims[top].astype(np.float32), "exact", considered

    def _mask_of(self, allowed: np.ndarray) -> np.ndarray:
        """Live rows whose key is allowed; the last mask is reused while the same key array
        (the engine's current keys, replaced after every write) comes back."""
        got = self._allowed
        if got is None or got[0] is not allowed or len(got[1]) != len(self._keys):
            got = (allowed, self._live & member(self._keys, allowed))
            self._allowed = got
        return got[1]

    def _search_hnsw(
        self, hnsw: Any, q: np.ndarray, k: int, mask: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        covered = int(self._meta.get("hnsw", 0))
        fetch = max(k * 4, 64)
        while True:
            found = hnsw.search(q, fetch)
            rows = self._rows_of(np.asarray(found.keys, np.int64))
            rows = rows[rows >= 0]
            rows = rows[mask[rows]]
            if len(rows) >= k or fetch >= covered:
                break
            fetch *= 4
        tail = np.arange(covered, len(self._keys))
        tail = tail[mask[tail]]
        cand = np.unique(np.concatenate([rows, tail]))
        sims = np.asarray(self._mat[cand]) @ q
        top = _top(sims, min(k, len(cand)))
        return self._keys[cand[top]], sims[top].astype(np.float32)

    def _rows_of(self, keys: np.ndarray) -> np.ndarray:
        if self._order is None:
            self._order = np.argsort(self._keys, kind="stable")
        sorted_keys = self._keys[self._order]
        idx = np.searchsorted(sorted_keys, keys).clip(0, max(len(sorted_keys) - 1, 0))
        hit = sorted_keys[idx] == keys if len(sorted_keys) else np.zeros(len(keys), bool)
        return np.where(hit, self._order[idx], -1)

    def vectors_for(self, keys: np.ndarray) -> np.ndarray:
        """Vectors of the given keys (rows of zeros for unknown keys)."""
        rows = self._rows_of(np.asarray(keys, np.int64))
        out = np.zeros((len(rows), self.dim), np.float32)
        ok = rows >= 0
        out[ok] = self._mat[rows[ok]]
        return out


def _restore(path: Path, *, view: bool) -> Any:
    """Open a saved usearch graph, or None when it is missing or unreadable."""
    from usearch.index import Index

    try:
        return Index.restore(str(path), view=view) if path.exists() else None
    except (ValueError, RuntimeError, OSError):
        return None


def _sorted_unique(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values (cheap when already sorted, as keys from the database are)."""
    if len(values) > 1 and not np.all(values[1:] > values[:-1]):
        values = np.sort(values, kind="stable")
        values = values[np.concatenate(([True], values[1:] != values[:-1]))]
    return values


def member(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """Boolean mask: which `values` are in the sorted array `sorted_set`."""
    if len(sorted_set) == 0 or len(values) == 0:
        return np.zeros(len(values), bool)
    idx = np.searchsorted(sorted_set, values).clip(0, len(sorted_set) - 1)
    return np.asarray(sorted_set[idx] == values)


def _top(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest scores, best first."""
    if k >= len(scores):
        return np.argsort(-scores, kind="stable")
    part = np.argpartition(-scores, k - 1)[:k]
    return part[np.argsort(-scores[part], kind="stable")]
