"""Reading a store that cannot be written (a read-only mount, a full disk, files without write
permission): the read-only DuckDB store, and the writes a read does without."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np

from keepui_engine.core.errors import StoreError
from keepui_engine.core.writable import not_writable
from keepui_engine.store.duckdb.fulltext import FullText
from keepui_engine.store.duckdb.schema import NAMES
from keepui_engine.store.duckdb.store import DB_NAME, Store

__all__ = ["ReadOnlyStore", "not_writable", "try_write"]


def try_write(store: Any, sql: str, params: list[Any]) -> bool:
    """Run one statement a read can do without (an access time) in its own transaction;
    False when the store could not take it (a full disk, a read-only store): the read goes on.
    """
    try:
        with store.transaction():
            store.con.execute(sql, params)
    except Exception:  # noqa: BLE001 - any failure of a best-effort write is the same to a read
        return False
    return True


class _ReadOnlyFullText(FullText):
    """The BM25 channel as it is on disk: never rebuilt (a rebuild would write)."""

    def needs_rebuild(self, live: np.ndarray) -> bool:
        return False

    def settled(self, live: np.ndarray) -> bool:
        return True

    def rebuild(self, keys: list[int], texts: list[str]) -> None:
        raise _refusal(self.dir.parent, "rebuild the word index")


def _refusal(root: Path, what: str) -> StoreError:
    return StoreError(
        f"cannot {what}: the store {root} is open read-only (it cannot be written). Reading "
        "commands (find, get, list, stats, export) work; to change it, make it writable or "
        "copy it somewhere writable.",
        "Store is read-only",
    )


class ReadOnlyStore(Store):
    """A DuckDB store opened read-only: what reading commands need, nothing written.

    Args:
        root: Store directory.
        model: Embedding model name (checked against the store's, never recorded).
        dim: Embedding dimension.
        exact_max: Exact search limit passed to the vector index.
    """

    def __init__(  # noqa: D107 - documented on the class
        self, root: Path, model: str, dim: int, exact_max: int = 30000, *, check_model: bool = True
    ) -> None:
        import duckdb

        self.root = root
        self.model = model
        self.dim = dim
        self.exact_max = exact_max
        self.lock = threading.RLock()
        self.writes = 0
        self.in_transaction = False
        self._index = None
        try:
            self.con = duckdb.connect(str(root / DB_NAME), read_only=True)
            done = {r[0] for r in self.con.execute("SELECT name FROM _migrations").fetchall()}
        except duckdb.Error as exc:
            raise StoreError(
                f"cannot open {root / DB_NAME} read-only: {exc}. If a keepui process is "
                "writing it, run the command again when it is done; if the file is damaged, "
                "restore it from a backup."
            ) from exc
        if set(NAMES) - done:
            self.close()
            raise StoreError(
                f"the store {root} was written by an older keepui and needs an upgrade, which "
                "writes; it cannot be written here. Open it once where it is writable.",
                "Store is read-only",
            )
        if check_model:
            self._check_model()

    def _check_model(self) -> None:
        meta = dict(self.con.execute("SELECT key, value FROM meta").fetchall())
        if meta and (meta.get("model"), meta.get("dim")) != (self.model, str(self.dim)):
            (keys,) = self.con.execute("SELECT count(*) FROM vector_keys").fetchone() or (0,)
            if keys:
                super()._check_model()  # raises: the model changed

    def set_model(self, model: str, dim: int) -> None:
        """Refused: a read-only store keeps its model."""
        raise _refusal(self.root, "change the embedding model")

    def reset_index(self) -> None:
        """Refused: the vector files cannot be dropped."""
        raise _refusal(self.root, "rebuild the vector index")

    def open_fulltext(self) -> FullText:
        """The BM25 channel as it is on disk."""
        return _ReadOnlyFullText(self.root, self.con)

    def maybe_extend_hnsw(self) -> bool:
        """Never: that would write the vector files."""
        return False

    def index_add(self, keys: np.ndarray, vecs: np.ndarray) -> None:
        """Refused: nothing is written to a read-only store."""
        raise _refusal(self.root, "add vectors")
