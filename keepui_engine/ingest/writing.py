"""put: new documents and versions with their parts, embedded in one batch (on an open store)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from keepui_engine.core import inputs, interrupts
from keepui_engine.core.errors import StoreError, UsageError
from keepui_engine.core.inputs import content_hash, safe_yaml
from keepui_engine.core.types import PutResult, PutSpec
from keepui_engine.ingest import splitting
from keepui_engine.queue import after_write
from keepui_engine.store.tables import documents, structure
from keepui_engine.store.tables import edges as graph
from keepui_engine.store.tables import parts as part_sql
from keepui_engine.store.tables.documents import Row

if TYPE_CHECKING:
    from datetime import datetime

    from keepui_engine.ops.ports import Operations


def summarize(text: str, limit: int) -> str:
    """The text cut at a word boundary to at most `limit` characters."""
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip() + "…"


Plan = list[tuple[part_sql.PartRow, str]]


def split_sizes(engine: Operations) -> tuple[int, int, int, splitting.Count | None]:
    """(chunk_size, chunk_overlap, min_chunk_size, count): the store's [ingest] split settings
    in the embedding model's tokens (chunk_size 0 is its window), with its token counter;
    whitespace words for an embedder that cannot count tokens."""
    from keepui_engine.providers.base import TokenCounter

    st, embedder = engine.settings, engine.embedder
    counter = embedder if isinstance(embedder, TokenCounter) else None
    size = st.chunk_size or (counter.window if counter else 180)
    overlap = min(st.chunk_overlap, size // 2)
    return size, overlap, st.min_chunk_size, counter.count_tokens if counter else None


def analysis_key(content_hash: str, engine: Operations) -> str:
    """`_analyzed_hash`: the text and the split settings (and model) its parts were made with."""
    size, overlap, least, count = split_sizes(engine)
    unit = engine.embedder.name if count else "words"
    sizes = f"{size}/{overlap}/{least}/{unit}"
    return hashlib.sha256(f"{content_hash}:{sizes}".encode()).hexdigest()[:12]


def plan_parts(engine: Operations, spec: PutSpec) -> Plan:
    """The parts a text splits into under the store's [ingest] settings, with their texts."""
    st = engine.settings
    blocks = (
        None
        if spec.blocks is None
        else [
            splitting.Block(str(b["text"]), str(b["kind"]), int(b["index"]), b.get("title"))
            for b in spec.blocks
        ]
    )
    size, overlap, least, count = split_sizes(engine)
    pieces = splitting.split(
        spec.text, blocks, chunk_size=size, overlap=overlap, min_size=least, count=count
    )
    keep = st.keep_content
    return [
        (
            part_sql.PartRow(
                n,
                p.kind,
                p.title,
                p.position,
                p.text if keep else None,
                summarize(p.text, min(st.summary_max_chars, 300)),
                content_hash(p.text),
            ),
            p.text,
        )
        for n, p in enumerate(pieces, 1)
    ]


def check_meta_doc(doc_id: str, text: str) -> None:
    """Refuse a `.meta/NAME` document whose `when:` is not a mapping of tags."""
    data = safe_yaml(text)
    if not isinstance(data, dict) or not isinstance(data.get("when"), dict):
        raise UsageError(
            f"{doc_id}: a meta doc is YAML with `when:` (tags an item must have, e.g. "
            "`when: {project: atlas}`) and `note:` (what to show beside it)."
        )


def check_system_doc(doc_id: str, text: str) -> None:
    """Refuse a system document that would not work: a `.state/NAME` that does not parse
    (the message names the line), a `.tag/KEY` with a bad `_inverse:`, a `.meta/NAME`
    without `when:`."""
    if doc_id.startswith(".state/"):
        from keepui_engine.flows.actions import check_actions
        from keepui_engine.flows.loader import check_text

        doc = check_text(text, doc_id[len(".state/") :])
        if doc_id == after_write.DOC_ID:
            after_write.check(doc)
        else:
            check_actions(doc)
    elif doc_id.startswith(graph.TAG_PREFIX):
        graph.check_tag_doc(doc_id, text)
    elif doc_id.startswith(".meta/"):
        check_meta_doc(doc_id, text)


RETRIES = 20
T = TypeVar("T")


class Stale(Exception):
    """Another process wrote one of the documents between this put's reading and its commit."""


def put_many(engine: Operations, specs: list[PutSpec], now: datetime) -> list[PutResult]:
    """Store texts as new documents or new versions; unchanged ones are no-ops.

    On PostgreSQL, processes that put the same id at once each commit a version of their own:
    a put whose documents changed after it read them rolls back and plans again (the
    embeddings are cached, so a retry costs little), up to RETRIES times.
    """
    return retried(f"store {len(specs)} text(s)", lambda: _put_many(engine, specs, now))


def retried(what: str, attempt: Callable[[], T]) -> T:
    """`attempt()` again while another process wrote its documents first (Stale), up to
    RETRIES times; then a StoreError naming `what` could not be done."""
    for _ in range(RETRIES):
        try:
            return attempt()
        except Stale:
            continue
    raise StoreError(
        f"could not {what}: other processes kept writing the same documents ({RETRIES} tries)",
        "Write conflict",
        hint="run the command again",
    )


def hold(store: Any, ids: list[str], old: dict[str, Row]) -> None:
    """In a write transaction: lock the documents (PostgreSQL), and raise Stale when any of
    them has another head now than when the writer read them (`old`)."""
    if not store.lock_ids(ids):
        return  # DuckDB: one writer at a time, nothing can have moved
    if documents.head_versions(store.con, ids) != {i: r.version for i, r in old.items()}:
        raise Stale


def _put_many(engine: Operations, specs: list[PutSpec], now: datetime) -> list[PutResult]:
    prepared = []
    for spec in specs:
        if not spec.text or not spec.text.strip():
            raise UsageError(
                "nothing to store: the text is empty. Give some text, a file "
                "path, or - to read standard input."
            )
        doc_id = inputs.check_id(spec.id) if spec.id is not None else inputs.anonymous_id(spec.text)
        check_system_doc(doc_id, spec.text)
        changes = inputs.parse_tag_args(spec.tags, allow_bare=False)
        prepared.append((spec, doc_id, changes, content_hash(spec.text)))
    results: list[PutResult] = []
    con = engine.store.con
    old = documents.heads(con, [p[1] for p in prepared])
    new: dict[str, Row] = {}
    archive: list[Row] = []
    plans: dict[str, Plan] = {}
    explicit = {p[1]: p[0].summary is not None for p in prepared}
    shapes: list[tuple[str, str, str, structure.Blocks]] = []
    for spec, doc_id, changes, h in prepared:
        head = new.get(doc_id) or old.get(doc_id)
        tags = inputs.merge_tags(head.tags if head else {}, changes)
        summary = spec.summary or (
            head.summary
            if head and head.content_hash == h
            else summarize(spec.text, engine.settings.summary_max_chars)
        )
        same_summary = spec.summary is None or head is not None and head.summary == summary
        if head and head.content_hash == h and head.tags == tags and same_summary:
            results.append(PutResult(doc_id, head.version, "unchanged"))
            continue
        sys = {
            "_source": spec.source,
            "_content_type": spec.content_type,
            "_content_length": len(spec.text),
            "_content_hash": h[:12],
            **{k: v for k, v in spec.meta.items() if k.startswith("_")},
            "_analyzed_hash": analysis_key(h, engine),
        }
        row = Row(
            doc_id,
            head.version + 1 if head else 1,
            spec.text if engine.settings.keep_content else None,
            summary,
            tags,
            sys,
            h,
            head.created if head else now,
            now,
            now,
        )
        if head:
            archive.append(head)
        new[doc_id] = row
        if spec.blocks is None and head is not None and head.content_hash == h:
            # the same text again (say, new tags on a literal put): keep the file's structure
            kept = [b for i, k, _, b in shapes if (i, k) == (doc_id, h)]
            blocks = kept[-1] if kept else structure.load(con, doc_id, h, spec.text)
            spec = replace(spec, blocks=blocks)
        elif spec.blocks is not None and engine.settings.keep_content:
            shapes.append((doc_id, h, spec.text, spec.blocks))
        plans[doc_id] = plan_parts(engine, spec)
        results.append(PutResult(doc_id, row.version, "updated" if head else "created"))
    texts = {row.content_hash: row_text for row, row_text in _texts(new, prepared)}
    for plan in plans.values():
        texts.update(
            {part.content_hash: text for part, text in plan if part.content_hash not in texts}
        )
    hashes = list(texts)
    interrupts.checkpoint("embed")
    vectors = engine.embed([texts[h] for h in hashes]) if hashes else None
    by_hash = {h: vectors[i] for i, h in enumerate(hashes)} if vectors is not None else {}
    writes = [
        (row, old.get(row.id), _needs_summary(engine, row, old.get(row.id), explicit))
        for row in new.values()
    ]
    # Once the commit starts, Ctrl-C waits for it and for the index append (interrupts.Deferred).
    with interrupts.shield():
        with engine.store.transaction():
            interrupts.checkpoint("commit")
            hold(engine.store, [p[1] for p in prepared], old)
            keys, key_hashes = commit(engine, archive, list(new.values()), plans)
            graph.sync(engine.store.con, list(new), now)
            structure.save(engine.store.con, shapes)
            after_write.run(engine, writes, now)  # what .state/after-write queues
        engine.index_new(keys, key_hashes, by_hash)
    return results


LLM_PROVIDERS = ("openai-compatible", "mlx")


def _needs_summary(
    engine: Operations, row: Row, before: Row | None, explicit: dict[str, bool]
) -> bool:
    """Queue a summary for new text too long to be its own summary; and, for an LLM summarizer
    (whose context depends on them), when the user tags changed. The user's own summary stays."""
    st = engine.settings
    if st.summary_provider == "truncate" or explicit.get(row.id) or row.text is None:
        return False
    if len(row.text.strip()) <= st.summary_max_chars:
        return False
    if before is None or before.content_hash != row.content_hash:
        return True
    return st.summary_provider in LLM_PROVIDERS and before.tags != row.tags


def _texts(
    new: dict[str, Row], prepared: Sequence[tuple[PutSpec, str, object, str]]
) -> list[tuple[Row, str]]:
    """Each new head with the text to embed for it (the spec's text, kept or not)."""
    by_id = {doc_id: spec.text for spec, doc_id, _, _ in prepared}
    return [(row, by_id[doc_id]) for doc_id, row in new.items()]


def commit(
    engine: Operations,
    archive: list[Row],
    heads: list[Row],
    plans: dict[str, Plan],
) -> tuple[np.ndarray, list[str]]:
    """Write versions, heads, parts and their catalog rows; return new keys and their hashes."""
    con = engine.store.con
    documents.archive(con, archive)
    documents.write_heads(con, heads)
    model = engine.embedder.name
    keys = [documents.new_vector_keys(con, heads, model)]
    hashes = [r.content_hash for r in heads]
    texts = [r.text or r.summary for r in heads]
    for row in heads:
        plan = [part for part, _ in plans.get(row.id) or []]
        part_sql.insert(con, row.id, row.version, plan)
        keys.append(part_sql.new_keys(con, row, plan, model))
        hashes += [p.content_hash for p in plan]
        texts += [p.text or p.summary for p in plan]
    documents.set_heads(con, {r.id: r.version for r in heads if r.version > 1})
    from keepui_engine.store.tables.postings import add_tail

    all_keys = np.concatenate(keys) if keys else np.empty(0, np.int64)
    passages = [False] * len(keys[0]) + [True] * (len(all_keys) - len(keys[0]))
    add_tail(con, all_keys.tolist(), texts, engine.fulltext.tokenize, passages)
    return all_keys, hashes
