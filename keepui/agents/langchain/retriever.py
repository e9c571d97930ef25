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

SEARCH_KWARGS = ("k", "filter_tags", "mode", "min_score")
PASSED_THROUGH = frozenset(("verbose",))  # BaseRetriever.invoke reads it and passes it on


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

    Each of `k`, `filter_tags`, `mode` and `min_score` can also be given for one call:
    `retriever.invoke("query", k=1, filter_tags=["kind=note"])`; any other keyword is a
    TypeError (never silently dropped).
    """

    workbench: Workbench
    k: int = Field(default=4, ge=1)
    filter_tags: list[str] | None = None
    mode: str | None = None
    min_score: float | None = None

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        found = self.workbench.find(query, **self._search_args(kwargs))
        return [self._document(hit) for hit in found.hits]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        return await asyncio.to_thread(
            self._get_relevant_documents, query, run_manager=run_manager.get_sync(), **kwargs
        )

    def _search_args(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """find's arguments: the fields, overridden by the call's keywords.

        Raises:
            TypeError: A keyword that is not one of SEARCH_KWARGS.
            ValueError: `k` is not a whole number of 1 or more.
        """
        kwargs = {name: v for name, v in kwargs.items() if name not in PASSED_THROUGH}
        unknown = sorted(set(kwargs) - set(SEARCH_KWARGS))
        if unknown:
            raise TypeError(
                f"KeepuiRetriever does not take {', '.join(unknown)}; a call can set "
                f"{', '.join(SEARCH_KWARGS)}."
            )
        k = kwargs.get("k", self.k)
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k={k!r}: give a whole number of documents, 1 or more.")
        return {
            "tags": kwargs.get("filter_tags", self.filter_tags),
            "limit": k,
            "mode": kwargs.get("mode", self.mode),
            "min_score": kwargs.get("min_score", self.min_score),
        }

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
