"""The embedding cache: vectors by content hash, persistent in the store, with a memory layer."""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

import numpy as np

from keepui_engine.core.errors import ProviderError
from keepui_engine.core.gate import outside
from keepui_engine.core.inputs import content_hash
from keepui_engine.store.tables import documents

if TYPE_CHECKING:
    from keepui_engine.providers.base import Embedder
    from keepui_engine.store.protocol import Backend

QUERY_MEMORY = 4096
QUERY_FLUSH = 32


class EmbeddingCache:
    """Embeds texts once per model: identical texts share a vector, across processes.

    Args:
        store: The open store holding the persistent cache.
        embedder: The embedding provider.
    """

    def __init__(self, store: Backend, embedder: Embedder) -> None:
        self.store = store
        self.embedder = embedder
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._unsaved: dict[str, np.ndarray] = {}

    def embed(self, texts: list[str]) -> np.ndarray:
        """Vectors for texts, from the persistent cache where possible, batched otherwise."""
        hashes = [content_hash(t) for t in texts]
        cached = documents.cached_vectors(
            self.store.con, hashes, self.embedder.name, self.embedder.dim
        )
        todo = {h: t for h, t in zip(hashes, texts, strict=True) if h not in cached}
        if todo:
            # the model runs outside the store: an owner serves reads meanwhile (work.gate)
            with outside(getattr(self.store, "lock", None)):
                raw = self.embedder.embed(list(todo.values()))
            vecs = self._check(raw, len(todo))
            fresh = dict(zip(todo, vecs, strict=True))
            with self.store.transaction():
                documents.store_vectors(self.store.con, fresh, self.embedder.name)
            cached.update(fresh)
        return np.stack([cached[h] for h in hashes]) if hashes else np.empty((0, 0), np.float32)

    def embed_query(self, query: str) -> np.ndarray:
        """A query's vector: from memory, else the persistent cache, else the model.

        New query vectors are written to the cache in batches (see `flush`), so a find does
        not pay for a write transaction.
        """
        h = content_hash(query)
        vec = self._queries.get(h)
        if vec is None:
            vec = documents.cached_vectors(
                self.store.con, [h], self.embedder.name, self.embedder.dim
            ).get(h)
        if vec is None:
            # in a find's opening step an owner lends the store meanwhile (work.gate)
            with outside(getattr(self.store, "lock", None)):
                raw = self.embedder.embed([query])
            vec = self._check(raw, 1)[0]
            self._unsaved[h] = vec
            if len(self._unsaved) >= QUERY_FLUSH:
                self.flush()
        self._queries[h] = vec
        self._queries.move_to_end(h)
        while len(self._queries) > QUERY_MEMORY:
            self._queries.popitem(last=False)
        return vec

    def flush(self) -> None:
        """Write query vectors computed since the last flush to the persistent cache.

        Best effort: a read never fails for its cache. When the store cannot be written (a
        full disk, a read-only store) the vectors stay in memory for a later flush, at most
        QUERY_MEMORY of them.
        """
        if not self._unsaved:
            return
        try:
            with self.store.transaction():
                documents.store_vectors(self.store.con, self._unsaved, self.embedder.name)
        except Exception:  # noqa: BLE001 - a cache write may fail; the find it served did not
            if len(self._unsaved) > QUERY_MEMORY:
                self._unsaved = {}
            return
        self._unsaved = {}

    def _check(self, vecs: np.ndarray, n: int) -> np.ndarray:
        if vecs.shape != (n, self.embedder.dim) or not np.all(np.isfinite(vecs)):
            raise ProviderError(
                f"the embedder {self.embedder.name} returned vectors of shape {vecs.shape}; "
                f"expected ({n}, {self.embedder.dim}). Nothing was stored."
            )
        return vecs
