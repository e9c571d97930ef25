"""Writing operations beyond put and delete (the Engine's, which other operations call): tags,
summaries and parts asked for, and import."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from keepui_engine.core import inputs
from keepui_engine.core.errors import UsageError
from keepui_engine.core.types import PutResult
from keepui_engine.ops import reading
from keepui_engine.store.tables import documents
from keepui_engine.store.tables import edges as graph
from keepui_engine.store.tables import parts as part_sql

if TYPE_CHECKING:
    from keepui_engine.ops.ports import Operations


def tag(engine: Operations, doc_id: str, tags: list[str], remove: list[str]) -> PutResult:
    """Change a document's tags, archiving the previous version (again from the new head
    when another process wrote the document meanwhile: PostgreSQL)."""
    from keepui_engine.ingest.writing import retried

    return retried(f"tag {doc_id}", lambda: _tag_once(engine, doc_id, tags, remove))


def _tag_once(engine: Operations, doc_id: str, tags: list[str], remove: list[str]) -> PutResult:
    changes = inputs.parse_tag_args(tags, allow_bare=False)
    for key in remove:
        changes[inputs.tag_key(key)] = []
    if not changes:
        raise UsageError("nothing to change: give -t KEY=VALUE and/or -r KEY.")
    head = reading.head_of(engine, doc_id)
    merged = inputs.merge_tags(head.tags, changes)
    if merged == head.tags:
        return PutResult(doc_id, head.version, "unchanged")
    now = engine.now()
    row = head.with_(version=head.version + 1, tags=merged, updated=now, accessed=now)
    from keepui_engine.ingest.writing import commit

    kept = [(p, p.text or "") for p in part_sql.of(engine.store.con, doc_id, head.version)]
    from keepui_engine.ingest.writing import LLM_PROVIDERS, hold

    with engine.store.transaction():
        hold(engine.store, [doc_id], {doc_id: head})
        keys, hashes = commit(engine, [head], [row], {doc_id: kept})
        graph.sync(engine.store.con, [doc_id], now)
        needs = (
            engine.settings.summary_provider in LLM_PROVIDERS
            and len((head.text or "").strip()) > engine.settings.summary_max_chars
        )
        from keepui_engine.queue import after_write

        after_write.run(engine, [(row, head, needs)], now)
    vec = documents.cached_vectors(
        engine.store.con, hashes, engine.embedder.name, engine.embedder.dim
    )
    engine.index_new(keys, hashes, vec)
    return PutResult(doc_id, row.version, "updated")


def summarize(engine: Operations, doc_id: str) -> dict[str, Any]:
    """Queue a new summary of a document's current version."""
    from keepui_engine.work import service

    head = reading.head_of(engine, doc_id)
    return {
        "id": doc_id,
        "queued": service.enqueue(engine, "summarize", doc_id, head.version, {}),
    }


def analyze(
    engine: Operations, doc_id: str, queue: bool = False, force: bool = False
) -> dict[str, Any]:
    """Split a document into parts now (or queue it); unchanged documents are skipped."""
    from keepui_engine.work import service, tasks

    head = reading.head_of(engine, doc_id)
    if queue:
        tid = service.enqueue(engine, "analyze", doc_id, head.version, {"force": force})
        return {"id": doc_id, "queued": tid}
    done = tasks.analyze_doc(engine, doc_id, head.version, force=force)
    return {"id": doc_id, "result": done, "parts": len(reading.parts(engine, doc_id))}
