"""Reading operations: a document, its versions and parts, lists and facets (on an open store).

Each is called as `function(engine, **args)` through engine.registry; none writes, but `get`
touches the document's access time (best effort)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from keepui_engine.core import inputs
from keepui_engine.core.errors import NotFound, UsageError
from keepui_engine.core.inputs import iso
from keepui_engine.core.types import Item, Part, Stats, VersionInfo
from keepui_engine.search.ranking import public_tags
from keepui_engine.store.tables import documents, queries
from keepui_engine.store.tables import edges as graph
from keepui_engine.store.tables import parts as part_sql

if TYPE_CHECKING:
    from keepui_engine.ops.ports import Operations
    from keepui_engine.store.tables.documents import Row

SORTS = ("updated", "created", "accessed", "id")


def _checked_any(any_tags: dict[str, list[str]] | None) -> dict[str, list[str]] | None:
    """Facet selections with their keys checked like tag keys."""
    if not any_tags:
        return None
    return {inputs.tag_key(k): [str(v) for v in vs] for k, vs in any_tags.items()}


def head_of(engine: Operations, doc_id: str) -> Row:
    head = documents.heads(engine.store.con, [doc_id]).get(doc_id)
    if head is None:
        raise NotFound(f"no document with id {doc_id!r}. `keepui list` shows the ids.")
    return head


def resolve(engine: Operations, address: str, offset: int | None) -> tuple[Row, Row]:
    """(head, the asked version) for `ID`, `ID@V{N}` or ID with an explicit offset."""
    doc_id = address
    head = documents.heads(engine.store.con, [address]).get(address)
    if head is None:
        split = inputs.split_version(address)
        if split is None:
            raise NotFound(f"no document with id {address!r}. `keepui list` shows the ids.")
        doc_id, parsed = split
        offset = parsed if offset is None else offset
        head = head_of(engine, doc_id)
    if not offset:
        return head, head
    ordinal = head.version - offset if offset > 0 else -offset
    if not 1 <= ordinal <= head.version:
        raise NotFound(
            f"{doc_id!r} has {head.version} version(s): use -V 0..{head.version - 1}"
            f" (from the current) or -V -1..-{head.version} (from the oldest)."
        )
    if ordinal == head.version:
        return head, head
    rows = documents.archived(engine.store.con, doc_id, ordinal)
    if not rows:
        raise NotFound(f"version {ordinal} of {doc_id!r} does not exist.")
    return head, rows[0]


def item(head: Row, row: Row) -> Item:
    return Item(
        id=row.id,
        version=row.version,
        offset=head.version - row.version,
        versions=head.version,
        text=row.text,
        summary=row.summary,
        tags=public_tags(row.tags, row.sys, head.created, row.updated, head.accessed),
        created=iso(head.created),
        updated=iso(row.updated),
        accessed=iso(head.accessed),
    )


def get(engine: Operations, address: str, offset: int | None = None) -> Item:
    """A document, one of its versions or one of its parts; touches its access time."""
    part = inputs.split_part(address)
    if part is not None and documents.heads(engine.store.con, [address]).get(address) is None:
        base, number = part
        every = parts(engine, base, offset)
        found = [p for p in every if p.part == number]
        if not found:
            raise NotFound(f"{base!r} has no part {number}: `keepui get {base} --parts`.")
        p = found[0]
        shown = {
            "index": number,
            "count": len(every),
            "title": p.title,
            "kind": p.kind,
            "position": p.position,
            "span": p.span,
        }
        whole = get(engine, base, offset)
        return replace(whole, text=p.text, summary=p.summary, part=shown)
    head, row = resolve(engine, address, offset)
    now = engine.now()
    from keepui_engine.store.duckdb.readonly import try_write

    # best effort: a get on a full disk or a read-only store still answers (issue 23)
    sql = "UPDATE documents SET accessed = $1 WHERE id = $2"
    if not try_write(engine.store, sql, [now, head.id]):
        now = head.accessed
    from keepui_engine.work.service import for_doc

    return replace(
        item(head.with_(accessed=now), row),
        pending=for_doc(engine, head.id),
        edges=graph.edges_of(engine.store.con, head.id),
    )


def parts(engine: Operations, address: str, offset: int | None = None) -> list[Part]:
    """The parts of a document version (the current one by default), in order."""
    head, row = resolve(engine, address, offset)
    out = []
    for p in part_sql.of(engine.store.con, row.id, row.version):
        at = row.id if row is head else f"{row.id}@V{{{head.version - row.version}}}"
        out.append(
            Part(
                row.id,
                p.part,
                f"{at}@P{{{p.part}}}",
                p.kind,
                p.title,
                p.position,
                p.text or "",
                p.summary,
                part_sql.span_of(p.position),
            )
        )
    return out


def history(engine: Operations, address: str) -> list[VersionInfo]:
    """Every version of a document, newest first, with what each changed."""
    head, _ = resolve(engine, address, 0)
    rows = [head, *documents.archived(engine.store.con, head.id)]
    out = []
    for i, row in enumerate(rows):
        older = rows[i + 1] if i + 1 < len(rows) else None
        if older is None:
            change = "created"
        else:
            text, tags = row.content_hash != older.content_hash, row.tags != older.tags
            change = "both" if text and tags else "text" if text else "tags" if tags else "none"
        out.append(
            VersionInfo(
                head.id,
                row.version,
                head.version - row.version,
                iso(row.updated),
                row.summary,
                row.sys.get("_content_length", 0),
                row.content_hash[:12],
                change,
            )
        )
    return out


def list_items(
    engine: Operations,
    prefix: str | None = None,
    tags: list[str] | None = None,
    sort: str = "updated",
    limit: int = 20,
    any_tags: dict[str, list[str]] | None = None,
    include_system: bool = False,
) -> list[Item]:
    """Current documents, newest first (or by id), without their text."""
    if sort not in SORTS:
        raise UsageError(f"--sort {sort!r}: choose one of {', '.join(SORTS)}.")
    if limit < 1:
        raise UsageError(f"--limit {limit}: give a number of 1 or more.")
    filters = inputs.parse_tag_args(tags, allow_bare=True)
    ids = queries.list_ids(
        engine.store.con, prefix, filters, sort, limit, _checked_any(any_tags), include_system
    )
    heads = documents.heads(engine.store.con, ids)
    return [item(heads[i], heads[i].with_(text=None)) for i in ids]


def facets(
    engine: Operations,
    tags: list[str] | None = None,
    any_tags: dict[str, list[str]] | None = None,
    ids: list[str] | None = None,
    prefix: str | None = None,
) -> dict[str, dict[str, int]]:
    """Tag KEY -> VALUE -> count over current documents passing the filters (or `ids`)."""
    filters = inputs.parse_tag_args(tags, allow_bare=True)
    return queries.facets(engine.store.con, filters, _checked_any(any_tags), ids, prefix)


def stats(engine: Operations) -> Stats:
    """Counts of documents, versions and vectors, and the store's size."""
    items, versions, vectors, system = queries.counts(engine.store.con)
    return Stats(
        str(engine.store.root),
        items,
        versions,
        vectors,
        engine.store.size_bytes(),
        engine.embedder.name,
        engine.embedder.dim,
        system,
    )
