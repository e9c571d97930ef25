"""Export on an open store: the header, then items a page at a time in id order."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from keepui_engine.core.inputs import iso
from keepui_engine.store.tables import documents
from keepui_engine.store.tables import edges as graph
from keepui_engine.store.tables import parts as part_sql
from keepui_engine.transfer.records import FORMAT, FORMAT_VERSION, INCLUDES, encode_vector

if TYPE_CHECKING:
    from keepui_engine.ops.ports import Operations


def header(engine: Operations, include: dict[str, bool]) -> dict[str, Any]:
    """The first line: format, its version, the embedding model, the item count, options."""
    engine.settle()  # the store answers as its import will (derived data only)
    count = documents.count(engine.store.con, bool(include.get("system")))
    head: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "model": engine.embedder.name,
        "dim": engine.embedder.dim,
        "items": count,
        "include": {k: bool(include.get(k)) for k in INCLUDES},
    }
    links = graph.link_keys(engine.store.con)
    if links:  # link tags (from .tag/KEY docs), so edges survive an export without them
        head["links"] = dict(sorted(links.items()))
    return head


def page(
    engine: Operations, after: str | None, limit: int, include: dict[str, bool]
) -> list[dict[str, Any]]:
    """Up to `limit` items whose id sorts after `after`, as export records."""
    con = engine.store.con
    heads = documents.page(con, after or "", limit, bool(include.get("system")))
    if not heads:
        return []
    ids = [h.id for h in heads]
    versions: dict[str, list[Any]] = defaultdict(list)
    if include.get("versions"):
        for r in documents.versions_of(con, ids):
            versions[r[0]].append(r)
    parts: dict[str, list[Any]] = defaultdict(list)
    if include.get("parts"):
        for r in part_sql.export_rows(con, ids):
            parts[r[0]].append(r)
    out = []
    for head in heads:
        record: dict[str, Any] = {
            "id": head.id,
            "version": head.version,
            "text": head.text,
            "summary": head.summary,
            "tags": head.tags,
            "sys": head.sys,
            "content_hash": head.content_hash,
            "created": iso(head.created),
            "updated": iso(head.updated),
            "accessed": iso(head.accessed),
        }
        kept_versions = {head.version}
        if include.get("versions"):
            record["versions"] = [
                {
                    "version": r[1],
                    "text": r[2],
                    "summary": r[3],
                    "tags": json.loads(r[4]),
                    "sys": json.loads(r[5]),
                    "content_hash": r[6],
                    "updated": iso(r[7]),
                }
                for r in versions[head.id]
            ]
            kept_versions |= {v["version"] for v in record["versions"]}
        if include.get("parts"):
            record["parts"] = [
                {
                    "version": r[1],
                    "part": r[2],
                    "kind": r[3],
                    "title": r[4],
                    "position": r[5],
                    "text": r[6],
                    "summary": r[7],
                    "content_hash": r[8],
                }
                for r in parts[head.id]
                if r[1] in kept_versions
            ]
        out.append(record)
    if include.get("vectors"):
        _add_vectors(engine, out)
    return out


def _add_vectors(engine: Operations, records: list[dict[str, Any]]) -> None:
    """Each record's vectors by content hash (its versions' and parts' too), where cached."""
    wanted: dict[str, list[str]] = {}
    for record in records:
        hashes = [record["content_hash"]]
        hashes += [v["content_hash"] for v in record.get("versions", [])]
        hashes += [p["content_hash"] for p in record.get("parts", [])]
        wanted[record["id"]] = list(dict.fromkeys(hashes))
    every = sorted({h for hs in wanted.values() for h in hs})
    cached = documents.cached_vectors(
        engine.store.con, every, engine.embedder.name, engine.embedder.dim
    )
    for record in records:
        record["vectors"] = {
            h: encode_vector(cached[h]) for h in wanted[record["id"]] if h in cached
        }
