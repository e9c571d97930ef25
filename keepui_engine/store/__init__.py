"""Store: one DuckDB file plus the vector index files, opened and closed together."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from keepui_engine import interrupts, private
from keepui_engine.errors import StoreError
from keepui_engine.store import documents
from keepui_engine.store.schema import migrate
from keepui_engine.store.vectors import VectorIndex

if TYPE_CHECKING:
    from keepui_engine.store.fulltext import FullText

DB_NAME = "keepui.duckdb"


@contextmanager
def transaction(store: Any) -> Iterator[None]:
    """Run a block in one transaction of `store.con` under `store.lock`; each commit counts in
    `store.writes` (what caches of derived state compare against). Both backends use it: the
    PostgreSQL connection reads `BEGIN TRANSACTION` as `BEGIN`, and sends `store.notify` (a
    NOTIFY that other processes' change feeds hear) before it commits."""
    with store.lock:
        store.con.execute("BEGIN TRANSACTION")
        try:
            yield
        except BaseException:
            store.con.execute("ROLLBACK")
            raise
        with interrupts.shield():  # Ctrl-C never lands between COMMIT and its bookkeeping
            if store.notify:  # PostgreSQL: tell listeners (delivered at the commit)
                store.con.execute(store.notify)
            store.con.execute("COMMIT")
            store.writes += 1


class Store:
    """The open tables and vector index of one store directory.

    The caller holds the store's StoreLock for as long as the Store is open.

    Args:
        root: Store directory.
        model: Embedding model name (recorded on first open, checked after).
        dim: Embedding dimension.
        exact_max: Exact search limit passed to the vector index.
    """

    dialect = "duckdb"

    notify = ""  # no other process listens: DuckDB is one process's file

    def __init__(
        self, root: Path, model: str, dim: int, exact_max: int = 30000, *, check_model: bool = True
    ) -> None:
        import duckdb

        self.root = root
        self.model = model
        self.dim = dim
        self.exact_max = exact_max
        self.lock = threading.RLock()
        try:
            self.con = duckdb.connect(str(root / DB_NAME))
            private.tighten(root)
            self.writes = 0  # committed transactions: lets readers cache what writes change
            migrate(self.con)
        except duckdb.Error as exc:
            raise StoreError(
                f"cannot open {root / DB_NAME}: {exc}. If another program holds "
                "the file, close it; if the file is damaged, restore it from a "
                "backup."
            ) from exc
        if check_model:
            self._check_model()
        self._index: VectorIndex | None = None

    def _check_model(self) -> None:
        meta = dict(self.con.execute("SELECT key, value FROM meta").fetchall())
        if not meta:
            self.con.execute(
                "INSERT INTO meta VALUES ('model', $1), ('dim', $2)", [self.model, str(self.dim)]
            )
            return
        if not self.con.execute("SELECT count(*) FROM vector_keys").fetchone()[0]:  # type: ignore[index]
            self.set_model(self.model, self.dim)
            return
        if meta.get("model") != self.model or meta.get("dim") != str(self.dim):
            raise StoreError(
                f"the store {self.root} was indexed with {meta.get('model')} "
                f"({meta.get('dim')} dimensions) but keepui.toml now asks for {self.model} "
                f"({self.dim}). Run `keepui reindex --store {self.root}` to re-embed everything "
                "with the new model, or set the old model back in keepui.toml.",
                "Embedding model changed",
            )

    def set_model(self, model: str, dim: int) -> None:
        """Record a new model after a reindex (the caller re-embeds everything)."""
        self.con.execute(
            "INSERT OR REPLACE INTO meta VALUES ('model', $1), ('dim', $2)", [model, str(dim)]
        )
        self.model, self.dim = model, dim
        self._index = None

    def reset_index(self) -> None:
        """Drop the vector files; the next use rebuilds them from the tables."""
        for path in self.root.glob("vectors.*"):
            path.unlink(missing_ok=True)
        self._index = None

    def lock_ids(self, ids: list[str]) -> bool:
        """Nothing to lock: one process writes a DuckDB file at a time (the store lock), so
        what a writer read before its transaction is still current (False: no check)."""
        return False

    def transaction(self) -> contextlib.AbstractContextManager[None]:
        """Run a block in one DuckDB transaction under the write lock."""
        return transaction(self)

    @property
    def index(self) -> VectorIndex:
        """The vector index, loaded and reconciled with the tables on first use."""
        if self._index is None:
            index = VectorIndex(self.root, self.model, self.dim, self.exact_max)
            with self.lock:
                index.open(
                    documents.live_keys(self.con),
                    lambda keys: documents.vectors_for_keys(self.con, keys, self.model),
                )
            self._index = index
        return self._index

    def open_fulltext(self) -> FullText:
        """The BM25 channel: a bm25s base in `bm25/` plus the DuckDB tail."""
        from keepui_engine.store.fulltext import FullText

        return FullText(self.root, self.con)

    def live_keys(self) -> np.ndarray:
        """Every vector key the database holds, sorted."""
        return documents.live_keys(self.con)

    def index_add(self, keys: np.ndarray, vecs: np.ndarray) -> None:
        """Append committed vectors to the index files (and the loaded index, if any)."""
        if self._index is not None:
            self._index.append(keys, vecs)
        elif len(keys):
            VectorIndex(self.root, self.model, self.dim, self.exact_max).append(keys, vecs)

    def maybe_extend_hnsw(self) -> bool:
        """Build or extend the HNSW graph once the vector files outgrow exact search."""
        probe = self._index or VectorIndex(self.root, self.model, self.dim, self.exact_max)
        if not probe.needs_hnsw_work():
            return False
        return self.index.maybe_extend_hnsw()

    def index_remove(self, keys: np.ndarray) -> None:
        """Forget deleted keys in the loaded index (files are reconciled on the next open)."""
        if self._index is not None:
            self._index.remove(keys)

    def size_bytes(self) -> int:
        """Bytes used by the store directory."""
        return sum(p.stat().st_size for p in self.root.iterdir() if p.is_file())

    def close(self) -> None:
        """Checkpoint and close the database."""
        with contextlib.suppress(Exception):  # closing must not mask the caller's error
            self.con.close()
