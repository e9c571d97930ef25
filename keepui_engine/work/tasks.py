"""What each queued task does, on an open store: summarize, analyze, embed, reindex.

A handler raises on failure (the queue then backs off or dead-letters the task) and returns a
short description of what it did. Work for a version that is no longer the head finishes as
`stale` without doing anything: the newer version has its own task.

The slow step of a task (the summarizer, the embedding model) runs `gate.outside` the store:
in an owner, other requests, writes included, run meanwhile. So a handler reads its inputs,
lets go, computes, and writes only if the document is still the one it read (`_unchanged`).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import numpy as np

from keepui_engine.core.gate import outside
from keepui_engine.ingest.splitting import blocks_from_parts
from keepui_engine.store.tables import documents, structure
from keepui_engine.store.tables import keys as key_sql
from keepui_engine.store.tables import parts as part_sql

if TYPE_CHECKING:
    from keepui_engine.ops.ports import Operations
    from keepui_engine.store.tables.documents import Row
    from keepui_engine.store.tables.pending import Task


def _head(engine: Operations, task: Task) -> Row | None:
    head = documents.heads(engine.store.con, [task.doc_id]).get(task.doc_id)
    if head is None or (task.version is not None and head.version != task.version):
        return None
    return head


def _unchanged(engine: Operations, head: Row, *, parts: bool = False) -> bool:
    """Whether the document's head is still `head`: the same version of the same text (and,
    with `parts`, analyzed as it was); checked in the write transaction after a step that
    let go of the store (a delete and a new put can bring a version number back)."""
    now = documents.heads(engine.store.con, [head.id]).get(head.id)
    if now is None or (now.version, now.content_hash) != (head.version, head.content_hash):
        return False
    return not parts or now.sys == head.sys


def summarize(engine: Operations, task: Task) -> str:
    """Replace the head's summary (in place: a summary is derived, not a new version)."""
    head = _head(engine, task)
    if head is None:
        return "stale"
    text = head.text
    if text is None:
        return "no text kept (summary-only store)"
    summarizer = engine.summarizer
    context = None
    if summarizer.uses_context and head.tags:
        from keepui_engine.work.context import context_for

        context = context_for(engine.store.con, engine.store.index, head.id)
    with outside(getattr(engine.store, "lock", None)):
        summary = summarizer.summarize(text, context=context).strip()
    if not summary:
        raise RuntimeError(f"the {summarizer.name} summarizer returned nothing")
    con = engine.store.con
    with engine.store.transaction():
        if not _unchanged(engine, head):
            return "stale"
        documents.set_summary(con, head.id, head.version, summary)
        key_sql.set_summary(con, head.id, head.version, summary)
    return f"summarized by {summarizer.name}" + (f" with {len(context)} related" if context else "")


def analyze(engine: Operations, task: Task) -> str:
    """The queued form of `analyze_doc`."""
    return analyze_doc(
        engine,
        task.doc_id,
        task.version,
        force=bool(task.payload.get("force")),
        blocks=task.payload.get("blocks"),
    )


def analyze_doc(
    engine: Operations,
    doc_id: str,
    version: int | None,
    *,
    force: bool = False,
    blocks: list[dict[str, Any]] | None = None,
) -> str:
    """Split the head into parts (structure first, then size), replacing its parts.

    The structure is the one given, else the one recorded when the file was put (pages,
    slides, headings), else the one its current parts still show (stores older than the
    structure table), else paragraphs and Markdown headings of the text. Skipped when the text
    and the split settings are the ones last analyzed (`_analyzed_hash`) unless `force`.
    """
    from keepui_engine.core.types import PutSpec
    from keepui_engine.ingest.writing import analysis_key, plan_parts
    from keepui_engine.store.tables.postings import add_tail, drop_tail

    con = engine.store.con
    head = documents.heads(con, [doc_id]).get(doc_id)
    if head is None or (version is not None and head.version != version):
        return "stale"
    if head.text is None:
        return "no text kept (summary-only store)"
    h = head.content_hash
    done = analysis_key(h, engine)
    if head.sys.get("_analyzed_hash") == done and not force:
        return "unchanged since the last analyze"
    record = blocks
    if blocks is None:
        blocks = structure.load(con, head.id, h, head.text)
    if blocks is None:
        old = part_sql.of(con, head.id, head.version)
        legacy = blocks_from_parts([(p.kind, p.title, p.position, p.text or "") for p in old])
        record = blocks = None if legacy is None else [asdict(b) for b in legacy]
    plan = plan_parts(engine, PutSpec(head.text, id=head.id, blocks=blocks))
    texts = {p.content_hash: t for p, t in plan}
    vecs = engine.embed(list(texts)) if texts else np.empty((0, engine.embedder.dim))
    by_hash = dict(zip(texts, vecs, strict=True))
    rows = [p for p, _ in plan]
    with engine.store.transaction():
        if not _unchanged(engine, head, parts=True):
            return "stale"
        dropped = documents.drop_vector_keys(con, head.id, head.version, parts_only=True)
        drop_tail(con, dropped)
        part_sql.drop(con, head.id, head.version)
        part_sql.insert(con, head.id, head.version, rows)
        if record is not None:
            structure.save(con, [(head.id, h, head.text, record)])
        sys = {**head.sys, "_analyzed_hash": done}
        documents.set_sys(con, head.id, sys)
        keys = part_sql.new_keys(con, head.with_(sys=sys), rows, engine.embedder.name)
        add_tail(
            con, keys.tolist(), [t for _, t in plan], engine.fulltext.tokenize, [True] * len(keys)
        )
    if len(dropped):
        engine.store.index_remove(dropped)
    engine.index_new(keys, [p.content_hash for p in rows], by_hash)
    return f"{len(rows)} part(s)"


def embed(engine: Operations, task: Task) -> str:
    """Make sure the head's text (and parts) have vectors in the cache; with payload `all`
    (an import from another model), every version and part of the document, indexed too."""
    if task.payload.get("all"):
        return embed_all(engine, task.doc_id)
    head = _head(engine, task)
    if head is None:
        return "stale"
    texts = [head.text or head.summary] + [
        p.text or p.summary for p in part_sql.of(engine.store.con, head.id, head.version)
    ]
    engine.embed(texts)
    return f"{len(texts)} text(s) embedded"


def embed_all(engine: Operations, doc_id: str) -> str:
    """Embed what lacks a vector of every version and part of a document, and index it."""
    con = engine.store.con
    name, dim = engine.embedder.name, engine.embedder.dim
    recs = documents.texts_of(con, doc_id)
    if not recs:
        return "stale"
    texts = {h: t or s for t, s, h in recs}
    cached = documents.cached_vectors(con, list(texts), name, dim)
    todo = [h for h in texts if h not in cached]
    if todo:
        with outside(getattr(engine.store, "lock", None)):
            raw = engine.embedder.embed([texts[h] for h in todo])
        vecs = np.asarray(raw, np.float32)
        fresh = dict(zip(todo, vecs, strict=True))
        with engine.store.transaction():
            documents.store_vectors(con, fresh, name)
        cached.update(fresh)
    absent = engine.store.index.missing(key_sql.of_document(con, doc_id))
    got_keys, got_vecs = documents.vectors_for_keys(con, absent, name)
    if len(got_keys):
        engine.store.index_add(got_keys, got_vecs)
    return f"{len(todo)} text(s) embedded, {len(got_keys)} vector(s) indexed"


def reindex(engine: Operations, task: Task) -> str:
    """Re-embed every stored text with the configured model and rebuild the index."""
    stats = engine.reindex()
    return f"{stats.vectors} vectors re-embedded with {stats.model}"


def links(engine: Operations, task: Task) -> str:
    """URLs and `[[id]]` mentions in the head's text become `references` edges (a `[[id]]`
    that names nothing gets a stub item; a URL only links to an item stored under it)."""
    from datetime import UTC, datetime

    from keepui_engine.queue.after_write import mentions
    from keepui_engine.store.tables import edges as graph

    head = _head(engine, task)
    if head is None:
        return "stale"
    found = [(t, explicit) for t, explicit in mentions(head.text or "") if t != head.id]
    present = documents.heads(engine.store.con, [t for t, _ in found])
    targets = [t for t, explicit in found if (explicit and graph.valid_id(t)) or t in present]
    now = datetime.now(UTC).replace(tzinfo=None)
    with engine.store.transaction():
        made = graph.set_references(engine.store.con, head.id, targets, now)
    return f"{len(targets)} reference(s)" + (f", {made} stub(s)" if made else "")


HANDLERS: dict[str, Any] = {
    "summarize": summarize,
    "analyze": analyze,
    "embed": embed,
    "reindex": reindex,
    "links": links,
}
