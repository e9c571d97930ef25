"""Operations: what the operation modules (find, why, put, work, transfer …) use of the engine."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from datetime import datetime

    import numpy as np

    from keepui_engine.core.config import Settings
    from keepui_engine.core.types import DeleteResult, PutResult, PutSpec, Stats
    from keepui_engine.ops.embedding import EmbeddingCache
    from keepui_engine.providers.base import Embedder, Summarizer
    from keepui_engine.store.protocol import Backend, FullTextChannel
    from keepui_engine.store.tables.catalog import KeyCatalog


class Operations(Protocol):
    """The open store with its providers, as the operations see it; the Engine is the one
    implementation and the one place that composes the operations."""

    settings: Settings
    store: Backend
    embedder: Embedder
    vectors: EmbeddingCache

    @property
    def fulltext(self) -> FullTextChannel: ...

    @property
    def summarizer(self) -> Summarizer: ...

    def live_keys(self) -> np.ndarray: ...

    def current_keys(self) -> np.ndarray | None: ...

    def catalog(self) -> KeyCatalog | None: ...

    def embed(self, texts: list[str]) -> np.ndarray: ...

    def index_new(
        self, keys: np.ndarray, hashes: list[str], by_hash: dict[str, np.ndarray]
    ) -> None: ...

    def maintain(self) -> None: ...

    def now(self) -> datetime: ...

    def settle(self) -> None: ...

    def put_many(self, specs: list[PutSpec]) -> list[PutResult]: ...

    def delete(self, doc_id: str, purge: bool = False) -> DeleteResult: ...

    def reindex(self, progress: Any = None) -> Stats: ...
