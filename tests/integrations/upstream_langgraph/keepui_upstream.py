"""The one adaptation of LangGraph's store tests: `InMemoryStore(index=...)` builds a KeepuiStore.

Each call opens a fresh keepui store under the test's tmp_path, embedding with the embedder
the conftest's parameter names: `character` wraps the test's own `index["embed"]` (upstream's
CharacterEmbeddings, deterministic), `model` uses keepui's shipped model. `index["fields"]`
becomes `index_fields`; `dims` is the embedder's own. The search mode is the parameter's:
dense (the adapter's default: cosine similarity alone, as LangGraph's stores search) or hybrid.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from support import make_fake_store

from keepui.agents.langchain import KeepuiStore
from keepui_engine import Workbench, open_workbench

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings
    from langgraph.store.base import IndexConfig

    from keepui_engine.providers.base import Embedder


class LangChainEmbedder:
    """keepui's Embedder protocol over a LangChain `Embeddings` (documents and queries alike).

    Args:
        embeddings: The LangChain embeddings.
        dim: Their dimension.
    """

    def __init__(self, embeddings: Embeddings, dim: int) -> None:
        self.embeddings = embeddings
        self.dim = dim
        self.name = f"langchain-{type(embeddings).__name__}-{dim}"

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit float32 vectors, one row per text."""
        out = np.asarray(self.embeddings.embed_documents(texts), np.float32).reshape(-1, self.dim)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms > 0, norms, 1.0)


@dataclass
class Stores:
    """The KeepuiStores one test opens, and how to open them.

    Attributes:
        root: Where their store directories go (the test's tmp_path).
        mode: The KeepuiStore's search mode.
        model: The shipped model's embedder, or None to embed with `index["embed"]`.
    """

    root: Path
    mode: str
    model: Embedder | None = None
    opened: list[Workbench] = field(default_factory=list)

    def make(self, index: IndexConfig | None) -> KeepuiStore:
        """A KeepuiStore over a fresh store embedding as the parameter says."""
        path = self.root / f"store{len(self.opened)}"
        embedder: Any = self.model
        if embedder is None:
            make_fake_store(path)  # the keepui fake's toml, its embedder replaced just below
            if index is not None:
                embedder = LangChainEmbedder(index["embed"], index["dims"])  # type: ignore[arg-type]
        wb = open_workbench(path, own=True, embedder=embedder)
        self.opened.append(wb)
        fields = None if index is None else index.get("fields")
        return KeepuiStore(wb, index_fields=fields, search_mode=self.mode)

    def close(self) -> None:
        """Close every store opened."""
        for wb in self.opened:
            wb.close()


ACTIVE: list[Stores] = []  # the running test's Stores (set by the conftest's autouse fixture)


def InMemoryStore(*, index: IndexConfig | None = None) -> KeepuiStore:  # noqa: N802
    """Stands in for `langgraph.store.memory.InMemoryStore` in the upstream tests."""
    return ACTIVE[-1].make(index)
