"""KeepuiRetriever: a LangChain retriever over keepui's find (documents carry score provenance)."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import Field

from keepui_engine import Hit, Workbench


class KeepuiRetriever(BaseRetriever):
    """Documents for a query from a keepui store, best first.

    Each Document's `page_content` is the text that matched: the part's text when a part of a
    long document matched (`ID@P{N}`), else the matched version's text (its summary in a
    summary-only store). Its metadata: `id`, `matched` (the address), `score`, `scores` (the
    provenance: dense, dense_rank, bm25, bm25_rank, fused, decay, final), `similarity`,
    `version` (0 = current), `part` (index, title, excerpt, or None), `summary`, `tags`,
    `created` and `updated`.

    Attributes:
        workbench: The keepui store (owned or a client of `keepui serve`).
        k: How many documents at most.
        filter_tags: keepui tag filters, `KEY` or `KEY=VALUE`, all of which must hold (named
            so because `tags` is LangChain's field for callback tags).
        mode: dense, bm25 or hybrid; None means the store's keepui.toml.
        min_score: Leave out hits scoring below this; None means the store's keepui.toml.
    """

    workbench: Workbench
    k: int = Field(default=4, ge=1)
    filter_tags: list[str] | None = None
    mode: str | None = None
    min_score: float | None = None

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        found = self.workbench.find(
            query, tags=self.filter_tags, limit=self.k, mode=self.mode, min_score=self.min_score
        )
        return [self._document(hit) for hit in found.hits]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        return await asyncio.to_thread(
            self._get_relevant_documents, query, run_manager=run_manager.get_sync()
        )

    def _document(self, hit: Hit) -> Document:
        """The matched text of a hit, with its address, scores and tags as metadata."""
        item = self.workbench.get(hit.matched)
        metadata: dict[str, Any] = {
            "id": hit.id,
            "matched": hit.matched,
            "score": hit.score,
            "scores": dict(hit.scores),
            "similarity": hit.similarity,
            "version": hit.version,
            "part": hit.part,
            "summary": hit.summary,
            "tags": dict(hit.tags),
            "created": hit.created,
            "updated": hit.updated,
        }
        return Document(page_content=item.text or item.summary, metadata=metadata, id=hit.matched)
