"""Backend: what the engine and its operations use of an open store (DuckDB Store or PgStore)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np

    from keepui_engine.store.fulltext import FullText
    from keepui_engine.store.pg_bm25 import PgFullText
    from keepui_engine.store.pg_search import PgVectorIndex
    from keepui_engine.store.vectors import VectorIndex


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
    def index(self) -> VectorIndex | PgVectorIndex: ...

    def transaction(self) -> contextlib.AbstractContextManager[None]: ...

    def lock_ids(self, ids: list[str]) -> bool: ...

    def open_fulltext(self) -> FullText | PgFullText: ...

    def live_keys(self) -> np.ndarray: ...

    def index_add(self, keys: np.ndarray, vecs: np.ndarray) -> None: ...

    def index_remove(self, keys: np.ndarray) -> None: ...

    def maybe_extend_hnsw(self) -> bool: ...

    def set_model(self, model: str, dim: int) -> None: ...

    def reset_index(self) -> None: ...

    def size_bytes(self) -> int: ...

    def close(self) -> None: ...
