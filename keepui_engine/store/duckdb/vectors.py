"""The vector index: append-only float32 files for exact search plus a usearch HNSW graph beyond.

DuckDB holds the truth (vector_keys + embeddings); these files are derived from it and are
repaired on open. vectors.json is their manifest (see vector_files): files that differ from it
(cut, garbled, permuted, deleted) are rebuilt from the embedding cache, and the repair is
reported; rows appended after it (a process killed between the two) are kept where they equal
the database's vectors, so a kill mid-write never leaves the two out of step.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from keepui_engine.store.duckdb import manifest
from keepui_engine.store.duckdb.vector_files import BLOCK_ROWS, META_NAME, VectorFiles

__all__ = ["META_NAME", "VectorIndex", "member"]

HNSW_MIN_TAIL = 2048
EF_SEARCH = 256


class VectorIndex:
    """Keys and unit vectors of every searchable text, searchable by cosine similarity.

    Args:
        root: The store directory.
        model: Embedding model name the vectors come from.
        dim: Vector dimension.
        exact_max: Up to this many live vectors, search is exact; beyond, HNSW.
        readonly: Never change a file (`keepui doctor` without --repair).
    """

    def __init__(
        self, root: Path, model: str, dim: int, exact_max: int = 30000, *, readonly: bool = False
    ) -> None:
        self.root = root
        self.model = model
        self.dim = dim
        self.exact_max = exact_max
        self.files = VectorFiles(root, model, dim, readonly=readonly)
        self.repaired: str | None = None  # what open() found damaged and rebuilt
        self._keys: np.ndarray = np.empty(0, np.int64)
        self._mat_cache: np.ndarray = np.empty((0, dim), np.float32)
        self._mat_rows = 0
        self._live: np.ndarray = np.empty(0, bool)
        self._hnsw: Any = None
        self._order: np.ndarray | None = None
        self._allowed: tuple[np.ndarray, np.ndarray] | None = None  # the last mask built

    # -- files ---------------------------------------------------------------------------
    def _paths(self, generation: int | None = None) -> tuple[Path, Path]:
        return self.files.paths(generation)

    def _repair_tail(self) -> int:
        """Cut both files to the rows they both hold completely; return that row count."""
        kpath, vpath = self._paths()
        nk = kpath.stat().st_size // 8 if kpath.exists() else 0
        nv = vpath.stat().st_size // (4 * self.dim) if vpath.exists() else 0
        rows = min(nk, nv)
        for path, size in ((kpath, rows * 8), (vpath, rows * 4 * self.dim)):
            if not self.files.readonly and path.exists() and path.stat().st_size != size:
                os.truncate(path, size)
        return rows

    def needs_hnsw_work(self) -> bool:
        """Whether the graph is due a build or an extension (from file sizes, no loading)."""
        rows, covered = self.file_rows(), int(self.files.meta.get("hnsw", 0))
        return rows > self.exact_max and rows - covered >= min(HNSW_MIN_TAIL, rows)

    def file_rows(self) -> int:
        """Rows in the vector files, from their sizes (no loading)."""
        return self.files.file_rows()

    def append(self, keys: np.ndarray, vecs: np.ndarray) -> None:
        """Append committed rows (keys first, so a torn write loses the row rather than
        mislabels it), then record them in the manifest."""
        if len(keys) == 0:
            return
        rows, meta = self._repair_tail(), self.files.meta
        follows = rows == self.files.attested and self.files.stamps() == meta.get("stamps")
        kpath, vpath = self._paths()
        vecs = np.ascontiguousarray(vecs, dtype=np.float32).reshape(len(keys), self.dim)
        kbytes = np.ascontiguousarray(keys, dtype=np.int64).tobytes()
        with open(kpath, "ab") as fk:
            fk.write(kbytes)
        with open(vpath, "ab") as fv:
            fv.write(vecs.tobytes())
        self.files.appended(rows, follows, kbytes, vecs.tobytes(), int(np.max(keys)))
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
        kpath, _ = self._paths()
        self._keys = (
            np.fromfile(kpath, dtype=np.int64, count=rows) if rows else np.empty(0, np.int64)
        )
        self._mat_rows = -1
        self._order = None

    # -- reconcile with the database --------------------------------------------------------
    def open(self, live_keys: np.ndarray, fetch: Any, *, full: bool = False) -> dict[str, int]:
        """Load and check the files (see `check`) and bring them in step with the database:
        damaged files are rebuilt from it, and `repaired` says why.

        Args:
            live_keys: Every key the database says is live.
            fetch: Callable(keys) -> (keys, vectors) reading vectors from the database.
            full: Checksum every file and compare every live row with the database
                (`keepui doctor --repair`), whatever the stamps say.

        Returns:
            Counts of rows added and dead rows found.
        """
        live_keys = _sorted_unique(np.asarray(live_keys, dtype=np.int64))
        problem = self.check(live_keys, fetch, full=full)
        if problem is not None and self.files.readonly:
            raise self.files.unrepairable(problem)
        if problem is not None:
            self._rebuild()
        self._live = member(self._keys, live_keys)
        present = _sorted_unique(self._keys[self._live])
        missing = live_keys[~member(live_keys, present)]
        for at in range(0, len(missing), BLOCK_ROWS):
            got_keys, got_vecs = fetch(missing[at : at + BLOCK_ROWS])
            self.append(np.asarray(got_keys, np.int64), got_vecs)
        if problem is not None:
            lost = len(self.missing(live_keys))
            self.repaired = (
                f"the vector files were damaged ({problem}): rebuilt them from the database "
                f"({len(live_keys) - lost} vector(s)"
                + (f"; {lost} have no stored vector: run keepui reindex)" if lost else ")")
            )
            manifest.repaired(self.repaired)
        dead = int((~self._live).sum())
        if dead > 1000 and dead > len(self._keys) // 4 and not self.files.readonly:
            self._compact()
        return {"added": int(len(missing)), "dead": dead}

    def check(self, live_keys: np.ndarray, fetch: Any, *, full: bool = False) -> str | None:
        """Load the files and say what is wrong with them, or None; a tail after the manifest
        is cut at its first row that differs from the database, and the rest vouched for.

        Args:
            live_keys: Every key the database says is live, sorted.
            fetch: Callable(keys) -> (keys, vectors) reading vectors from the database.
            full: Checksum the files and compare every live row with the database.
        """
        problem = self.files.verify(full=full)
        if problem is not None:
            return problem
        self._load()
        attested = self.files.attested
        vouched = len(self._keys) if attested is None else attested  # older files: all
        bad = self._first_bad(0 if full or attested is None else vouched, live_keys, fetch)
        if bad is not None and bad < vouched:
            return f"row {bad} of {self._paths()[1].name} differs from the database"
        if bad is not None and not self.files.readonly:
            self._cut(bad)  # a tail written after the manifest: keep what is right
        if vouched != len(self._keys) or self.files.stamps() != self.files.meta.get("stamps"):
            self.files.adopt(len(self._keys))
        self._live = member(self._keys, live_keys)
        return None

    def _first_bad(self, start: int, live: np.ndarray, fetch: Any) -> int | None:
        """The first row from `start` on whose key is live and whose vector is not the one
        the database holds (rows of dead keys are masked, rows with no stored vector kept)."""
        keys = self._keys[start:]
        pos = np.nonzero(member(keys, live))[0]
        for at in range(0, len(pos), BLOCK_ROWS):
            rows = pos[at : at + BLOCK_ROWS]
            got_keys, got_vecs = fetch(keys[rows])
            got_keys = np.asarray(got_keys, np.int64)
            if not len(got_keys):
                continue
            order = np.argsort(got_keys)
            idx = np.searchsorted(got_keys[order], keys[rows]).clip(0, len(order) - 1)
            found = got_keys[order][idx] == keys[rows]
            theirs = np.asarray(got_vecs, np.float32)[order][idx]
            bad = found & ~np.all(np.asarray(self._mat[start + rows]) == theirs, axis=1)
            if bad.any():
                return int(start + rows[int(np.argmax(bad))])
        return None

    def _cut(self, rows: int) -> None:
        """Drop the rows from `rows` on."""
        for path, size in zip(self._paths(), (8 * rows, 4 * self.dim * rows), strict=True):
            os.truncate(path, size)
        self._keys = self._keys[:rows]
        self._mat_rows = -1

    def _rebuild(self) -> None:
        """Start a new generation of empty files (the caller fills them from the database)."""
        self.files.restart()
        self._keys, self._mat_rows, self._order, self._hnsw = np.empty(0, np.int64), -1, None, None

    def _compact(self) -> None:
        keys = self._keys[self._live]
        mat = np.asarray(self._mat[self._live], dtype=np.float32)
        self.files.next_generation(keys.tobytes(), mat.tobytes())
        self._hnsw = None
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
        return self.files.graph_path()

    def maybe_extend_hnsw(self) -> bool:
        """Build or extend the HNSW graph when the store outgrows exact search."""
        covered = int(self.files.meta.get("hnsw", 0))
        rows = len(self._keys)
        if rows <= self.exact_max or rows - covered < min(HNSW_MIN_TAIL, rows):
            return False
        from usearch.index import Index

        path = self._hnsw_path()
        sound = covered and self.files.graph_problem() is None
        index = _restore(path, view=False) if sound else None
        if index is not None:
            index.expansion_search = EF_SEARCH  # type: ignore[misc]  # settable at run time
        else:  # no graph yet, or a damaged file: build from scratch
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
        self.files.graph_built(rows)
        self._hnsw = None
        return True

    def _hnsw_view(self) -> Any:
        if self._hnsw is None and self.files.meta.get("hnsw"):
            problem = self.files.graph_problem()
            view = None if problem else _restore(self._hnsw_path(), view=True)
            if view is None:  # a damaged graph: search exactly until a write rebuilds it
                self.files.drop_graph()
                manifest.repaired(
                    f"the vector graph was damaged ({problem or 'unreadable'}): searching "
                    "every vector until the next write rebuilds it"
                )
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
        covered = int(self.files.meta.get("hnsw", 0))
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
