"""Backend: what the engine and its operations use of an open store (DuckDB Store or PgStore)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np

    from keepui_engine.store.tables.bm25_stats import Tokenizer


@runtime_checkable
class FullTextChannel(Protocol):
    """The BM25 channel of either backend: what a find and a put use of it."""

    rebuildable: bool  # False: the database keeps it up to date (PostgreSQL)
    tokenize: Tokenizer

    def search(
        self, query: str, k: int, live: np.ndarray, allowed: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]: ...

    def idf(self, query: str) -> np.ndarray: ...


@runtime_checkable
class RebuiltFullText(FullTextChannel, Protocol):
    """A BM25 channel whose base index is files rebuilt when it falls behind (DuckDB's): what
    maintenance, export and doctor add to a find's use of it."""

    dir: Path

    def needs_rebuild(self, live: np.ndarray) -> bool: ...

    def settled(self, live: np.ndarray) -> bool: ...

    def rebuild(self, keys: list[int], texts: list[str]) -> None: ...

    def check(self, gen: int | None = None, *, full: bool = False) -> str | None: ...

    def repair(self, problem: str) -> None: ...

    def base_keys(self) -> np.ndarray: ...


@runtime_checkable
class VectorSearch(Protocol):
    """The vector index of either backend."""

    @property
    def live_count(self) -> int: ...

    def search(
        self, query: np.ndarray, k: int, allowed: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, str, int]: ...

    def vectors_for(self, keys: np.ndarray) -> np.ndarray: ...

    def missing(self, keys: np.ndarray) -> np.ndarray: ...

    def maybe_extend_hnsw(self) -> bool: ...


@runtime_checkable
class Backend(Protocol):
    """The open tables, vector index and BM25 channel of one store, whichever database holds it.

    `con` speaks DuckDB's execute API on both backends (PgStore's through PgConnection).
    """

    dialect: str
    writes: int
    notify: str  # SQL a write transaction runs before COMMIT ("" when nobody listens)

    @property
    def con(self) -> Any: ...  # duckdb.DuckDBPyConnection or pg_sql.PgConnection

    @property
    def root(self) -> Path | str: ...

    @property
    def index(self) -> VectorSearch: ...

    def transaction(self) -> contextlib.AbstractContextManager[None]: ...

    def lock_ids(self, ids: list[str]) -> bool: ...

    def open_fulltext(self) -> FullTextChannel: ...

    def live_keys(self) -> np.ndarray: ...

    def index_add(self, keys: np.ndarray, vecs: np.ndarray) -> None: ...

    def index_remove(self, keys: np.ndarray) -> None: ...

    def maybe_extend_hnsw(self) -> bool: ...

    def set_model(self, model: str, dim: int) -> None: ...

    def reset_index(self) -> None: ...

    def size_bytes(self) -> int: ...

    def close(self) -> None: ...
