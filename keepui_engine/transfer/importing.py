"""Import on an open store: checked items written with their history, parts and vectors.

An item whose id is new is written whole: its archived versions, its head, its parts (the
file's, else the text split as `put` splits it when the file carried no parts) and a catalog
row per version and part, as `put` leaves them. Vectors come from the file when it was made
with the store's model, else from the embedding cache, else from the model now; when the file
names another model, what the cache lacks is left to an `embed` task on the queue.

An item whose id exists: `replace` purges the store's item (history and all) and writes the
file's; `merge` leaves it when text and tags are the same, else puts the file's text, summary
and tags as a new version on top (the store's history stays, the file's is not merged in).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from keepui_engine.core.types import PutSpec
from keepui_engine.store.tables import documents, pending
from keepui_engine.store.tables import edges as graph
from keepui_engine.store.tables import parts as part_sql
from keepui_engine.store.tables.documents import Row
from keepui_engine.store.tables.postings import add_tail
from keepui_engine.transfer.records import unwire

if TYPE_CHECKING:
    from keepui_engine.ops.ports import Operations

MODES = ("merge", "replace")


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def _rows(item: dict[str, Any]) -> tuple[list[Row], Row]:
    """(archived versions oldest first, head) of an item."""
    created, accessed = item["created"], item["accessed"]
    archived = [
        Row(
            item["id"],
            v["version"],
            v["text"],
            v["summary"] if v["summary"] is not None else _short(v["text"]),
            v["tags"],
            v["sys"],
            v["content_hash"],
            created,
            v["updated"],
            accessed,
        )
        for v in item["versions"]
    ]
    head = Row(
        item["id"],
        item["version"],
        item["text"],
        item["summary"] if item["summary"] is not None else _short(item["text"]),
        item["tags"],
        item["sys"],
        item["content_hash"],
        created,
        item["updated"],
        accessed,
    )
    return archived, head


def _short(text: str | None) -> str:
    from keepui_engine.ingest.writing import summarize

    return summarize(text or "", 500)


def _parts(engine: Operations, item: dict[str, Any], head: Row) -> dict[int, list[Any]]:
    """version -> [(PartRow, text to embed)]: the file's parts, else the head split as put does."""
    by_version: dict[int, list[Any]] = {}
    for p in item["parts"]:
        row = part_sql.PartRow(
            p["part"],
            p["kind"],
            p["title"],
            p["position"],
            p["text"],
            p["summary"],
            p["content_hash"],
        )
        by_version.setdefault(p["version"], []).append((row, p["text"] or p["summary"]))
    if not item["has_parts"] and head.text is not None:
        from keepui_engine.ingest.writing import plan_parts

        by_version[head.version] = plan_parts(engine, PutSpec(head.text, id=head.id))
    return by_version


def import_items(
    engine: Operations,
    items: list[dict[str, Any]],
    mode: str,
    model: str | None,
    dim: int | None,
    last: bool = True,
) -> list[dict[str, Any]]:
    """Write a batch of checked items (in `records.wire` form); return {"id", "action"} each."""
    con = engine.store.con
    checked = [unwire(i, dim) for i in items]
    old = documents.heads(con, [i["id"] for i in checked])
    results: list[dict[str, Any]] = []
    fresh: list[dict[str, Any]] = []
    for item in checked:
        head = old.get(item["id"])
        if head is None:
            fresh.append(item)
            results.append({"id": item["id"], "action": "created"})
        elif mode == "replace":
            engine.delete(item["id"], purge=True)
            fresh.append(item)
            results.append({"id": item["id"], "action": "replaced"})
        else:
            results.append({"id": item["id"], "action": _merge(engine, head, item)})
    if fresh:
        _write(engine, fresh, model, maintain=last)
    elif last:
        engine.maintain()
    if last:
        engine.settle()  # as export did: scores from one set of statistics
    return results


def _merge(engine: Operations, head: Row, item: dict[str, Any]) -> str:
    """The file's item on top of the store's (a new version) unless they are the same."""
    if head.content_hash == item["content_hash"] and head.tags == item["tags"]:
        return "unchanged"
    if item["text"] is None:
        return "unchanged (the file keeps no text to put)"
    tags = [f"{k}={v}" for k, values in item["tags"].items() for v in values]
    tags += [f"{k}=" for k in head.tags if k not in item["tags"]]
    spec = PutSpec(item["text"], item["id"], tags, item["summary"], "import")
    return "merged" if engine.put_many([spec])[0].action != "unchanged" else "unchanged"


def _write(
    engine: Operations, items: list[dict[str, Any]], model: str | None, maintain: bool
) -> None:
    con = engine.store.con
    name, dim = engine.embedder.name, engine.embedder.dim
    same_model = model in (None, name)
    plans = []
    texts: dict[str, str] = {}
    for item in items:
        archived, head = _rows(item)
        parts = _parts(engine, item, head)
        plans.append((item, archived, head, parts))
        for row in [*archived, head]:
            texts.setdefault(row.content_hash, row.text or row.summary)
        for rows in parts.values():
            for prow, text in rows:
                texts.setdefault(prow.content_hash, text)
    given = {
        h: v
        for item in items
        for h, v in item["vectors"].items()
        if same_model and len(v) == dim and h in texts
    }
    with engine.store.transaction():
        documents.store_vectors(con, given, name)
    by_hash = documents.cached_vectors(con, list(texts), name, dim)
    missing = [h for h in texts if h not in by_hash]
    if missing and same_model:
        vecs = engine.embedder.embed([texts[h] for h in missing])
        fresh = dict(zip(missing, np.asarray(vecs, np.float32), strict=True))
        with engine.store.transaction():
            documents.store_vectors(con, fresh, name)
        by_hash.update(fresh)
    now = _now()
    every = [row for _, archived, head, _ in plans for row in (*archived, head)]
    searchable = [row for row in every if not row.sys.get("_stub")]  # stubs: nothing to search
    with engine.store.transaction():  # whole batches: one statement per table, not per item
        documents.archive(con, [row for _, archived, _, _ in plans for row in archived])
        documents.write_heads(con, [head for _, _, head, _ in plans])
        keys = [documents.new_vector_keys(con, searchable, name)]
        key_hashes = [row.content_hash for row in searchable]
        key_texts = [texts[row.content_hash] for row in searchable]
        for _item, archived, head, parts in plans:
            for row in (*archived, head):
                rows = [p for p, _ in parts.get(row.version, [])]
                if not rows or row.sys.get("_stub"):
                    continue
                part_sql.insert(con, row.id, row.version, rows)
                keys.append(part_sql.new_keys(con, row, rows, name))
                key_hashes += [p.content_hash for p in rows]
                key_texts += [t for _, t in parts[row.version]]
            lacking = {row.content_hash for row in (*archived, head)} | {
                p.content_hash for rows in parts.values() for p, _ in rows
            }
            if lacking - set(by_hash):
                pending.enqueue(con, "embed", head.id, head.version, {"all": True}, now)
        documents.set_heads(con, {head.id: head.version for _, _, head, _ in plans})
        graph.sync(con, [head.id for _, _, head, _ in plans], now)
        all_keys = np.concatenate(keys) if keys else np.empty(0, np.int64)
        passages = [False] * len(keys[0]) + [True] * (len(all_keys) - len(keys[0]))
        add_tail(con, all_keys.tolist(), key_texts, engine.fulltext.tokenize, passages)
    ready = [i for i, h in enumerate(key_hashes) if h in by_hash]
    if maintain:
        engine.index_new(all_keys[ready], [key_hashes[i] for i in ready], by_hash)
    elif ready:  # the BM25 rebuild and HNSW extension wait for the last batch
        engine.store.index_add(all_keys[ready], np.stack([by_hash[key_hashes[i]] for i in ready]))
