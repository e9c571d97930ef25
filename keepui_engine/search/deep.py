"""find --deep: the hits, then each hit's neighbours by edge and by vector (on an open store).

A hit's vector neighbours are the documents nearest its own stored vector (the current
version's whole text: "similar to", not a search for its summary), scored by cosine; its edge
neighbours are the documents it links to or is linked from (scored by the cosine of the two
documents too, when both have vectors). A document already in the hit list, or already
listed under an earlier hit, is never repeated; system documents and empty stubs are left out.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from keepui_engine.core.inputs import is_system_or_now
from keepui_engine.core.types import FindQuery, FindResult
from keepui_engine.store.tables import documents, queries
from keepui_engine.store.tables import edges as graph
from keepui_engine.store.tables import keys as key_sql

if TYPE_CHECKING:
    from keepui_engine.ops.ports import Operations

PER_HIT = 3


def head_keys(engine: Operations, ids: list[str]) -> dict[str, int]:
    """doc id -> the vector key of its current version's whole text."""
    return key_sql.whole_text(engine.store.con, ids)


def _visible(doc_id: str, row: queries.KeyRow | None = None) -> bool:
    """A neighbour worth showing: a research document (not a system one nor a now note), and
    by its current version (the store answers about now)."""
    if is_system_or_now(doc_id):
        return False
    return row is None or (not row.sys.get("_stub") and row.version == row.head_version)


def related(
    engine: Operations, doc_id: str, seen: set[str], per_hit: int = PER_HIT
) -> list[dict[str, Any]]:
    """Up to `per_hit` vector neighbours and every edge neighbour of a document, unseen ones
    only; adds what it returns to `seen`."""
    index = engine.store.index
    out: list[dict[str, Any]] = []
    edge_ids = [n for n in graph.neighbours(engine.store.con, doc_id) if n["id"] not in seen]
    keys = head_keys(engine, [doc_id, *[n["id"] for n in edge_ids]])
    own = keys.get(doc_id)
    vec = index.vectors_for(np.asarray([own], np.int64))[0] if own is not None else None
    summaries = documents.heads(engine.store.con, [n["id"] for n in edge_ids])
    for n in edge_ids:
        if n["id"] in seen or n["id"].startswith("."):
            continue
        score = None
        if vec is not None and n["id"] in keys:
            other = index.vectors_for(np.asarray([keys[n["id"]]], np.int64))[0]
            score = round(float(other @ vec), 6) if other.any() else None
        head = summaries.get(n["id"])
        summary = head.summary if head is not None else ""
        out.append({"id": n["id"], "via": n["via"], "score": score, "summary": summary})
        seen.add(n["id"])
    if vec is None or not vec.any():
        return out
    fetch = 4 * per_hit + len(seen) + 30  # the document's own parts and versions come first
    found_keys, sims, _, _ = index.search(vec, fetch, engine.current_keys())
    rows = queries.hydrate(engine.store.con, found_keys.tolist())
    added = 0
    for key, sim in zip(found_keys.tolist(), sims.tolist(), strict=True):
        row = rows.get(key)
        if row is None or row.doc_id in seen or not _visible(row.doc_id, row):
            continue
        out.append(
            {
                "id": row.doc_id,
                "via": "similar",
                "score": round(float(sim), 6),
                "summary": row.summary,
            }
        )
        seen.add(row.doc_id)
        added += 1
        if added == per_hit:
            break
    return out


def find_deep(engine: Operations, q: FindQuery, per_hit: int = PER_HIT) -> FindResult:
    """A find whose hits each carry `related`: their edge and vector neighbours."""
    from keepui_engine.search.finding import find

    found = find(engine, q)
    seen = {h.id for h in found.hits}
    hits = [replace(h, related=related(engine, h.id, seen, per_hit)) for h in found.hits]
    return replace(found, hits=hits)
