"""Search operations: find (and its deep form), why, related, reflect, the search history and
relevance judgments, each run on an open store's Operations."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from keepui_engine.core.types import FindQuery, FindResult, SearchRecord
    from keepui_engine.ops.ports import Operations
    from keepui_engine.search.judgments import Judgment
    from keepui_engine.search.why import WhyResult


def find(engine: Operations, q: FindQuery) -> FindResult:
    """Rank documents for a query (see `finding.find`)."""
    from keepui_engine.search.finding import find

    return find(engine, q, first=True)


def find_deep(engine: Operations, q: FindQuery, per_hit: int = 3) -> FindResult:
    """A find whose hits carry their edge and vector neighbours (see `deep`)."""
    from keepui_engine.search.deep import find_deep

    return find_deep(engine, q, per_hit)


def related(
    engine: Operations, doc_id: str, seen: list[str], per_hit: int = 3
) -> list[dict[str, Any]]:
    """A document's edge neighbours and its `per_hit` nearest by vector, none in `seen`."""
    from keepui_engine.search.deep import related

    return related(engine, doc_id, set(seen) | {doc_id}, per_hit)


def why(engine: Operations, q: FindQuery, doc_id: str) -> WhyResult:
    """Where a document ranked for a query, and what kept it out (see `why.why`)."""
    from keepui_engine.search.why import why

    return why(engine, q, doc_id)


def record_search(engine: Operations, q: FindQuery, ids: list[str]) -> SearchRecord:
    """Append a search to the store's search history (see `searches.record`)."""
    from keepui_engine.search import searches

    return searches.record(engine.store, q, ids)


def searches(engine: Operations, limit: int = 100) -> list[SearchRecord]:
    """The latest searches, newest first (see `searches.recent`)."""
    from keepui_engine.search import searches

    return searches.recent(engine.store, limit)


def judge(engine: Operations, query: str, doc_id: str, grade: int) -> Judgment:
    """Record how relevant `doc_id` is to `query` (0..3)."""
    from keepui_engine.search import judgments

    with engine.store.transaction():
        return judgments.record(engine.store.con, query, doc_id, grade)


def unjudge(engine: Operations, query: str, doc_id: str) -> bool:
    """Forget a judgment; whether there was one."""
    from keepui_engine.search import judgments

    with engine.store.transaction():
        return judgments.remove(engine.store.con, query, doc_id)


def judgments(engine: Operations, query: str | None = None) -> list[Judgment]:
    """Every judgment (or one query's), by query then id."""
    from keepui_engine.search import judgments

    return judgments.listing(engine.store.con, query)


def reflect(
    engine: Operations, query: str, kind: str, passages: list[dict[str, Any]]
) -> dict[str, Any]:
    """A summary or key points of passages for a query (see `reflection`): through the
    [summarization] LLM when one is configured, else extractive with the embedder."""
    from keepui_engine.ingest.writing import LLM_PROVIDERS
    from keepui_engine.search import reflection

    reflection.check_kind(kind)
    if engine.settings.summary_provider in LLM_PROVIDERS:
        model = engine.summarizer
        messages = reflection.llm_messages(query, passages, kind)
        reply = model.complete(messages, reflection.LLM_MAX_CHARS)  # type: ignore[attr-defined]
        return reflection.from_llm(reply, kind, model.name)
    return reflection.extractive(engine.embedder.embed, query, passages, kind)
