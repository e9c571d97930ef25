"""Edges from tags: a `.tag/KEY` document whose YAML says `_inverse: VERB` makes tag KEY a link.

Tagging A with KEY=B records the edge A -KEY-> B in the `edges` table, in the transaction of
the tag change, and creates an empty stub item B when there is none; `get B` shows the
inverse (`VERB: A`), `get A` the forward edge (`KEY: B`). Edges always mirror the current
versions' tags: removing the tag, deleting or purging A removes A's edges (archived versions
keep the tags they had). Creating or changing a `.tag/KEY` document back-fills (or removes)
the edges of every document tagged KEY.
"""

from __future__ import annotations

import io
from datetime import datetime
from typing import TYPE_CHECKING, Any

from keepui_engine.core.errors import KeepuiError, UsageError
from keepui_engine.core.inputs import check_id, content_hash
from keepui_engine.store.tables import dialect, documents
from keepui_engine.store.tables.documents import Row

if TYPE_CHECKING:
    import duckdb

TAG_PREFIX = ".tag/"
REFERENCES, REFERENCED_BY = "references", "referenced_by"  # edges from the text's mentions


def inverse_of(text: str | None) -> str | None:
    """The `_inverse:` verb of a tag document's YAML, or None (no verb, or not YAML)."""
    if not text or "_inverse" not in text:
        return None
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        data = YAML(typ="safe", pure=True).load(io.StringIO(text))
    except YAMLError:
        return None
    verb = data.get("_inverse") if isinstance(data, dict) else None
    return verb.strip() if isinstance(verb, str) and verb.strip() else None


def check_tag_doc(doc_id: str, text: str) -> None:
    """Refuse a `.tag/KEY` document whose `_inverse:` is not a plain verb."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        data = YAML(typ="safe", pure=True).load(io.StringIO(text))
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(exc, "problem", exc)
        raise UsageError(f"{doc_id}: {where}not valid YAML ({problem}).") from exc
    if isinstance(data, dict) and "_inverse" in data:
        verb = data["_inverse"]
        if not isinstance(verb, str) or not verb.strip() or " " in verb.strip():
            raise UsageError(
                f"{doc_id}: _inverse must be one word, the verb read from the other side "
                f"(e.g. `_inverse: said` for speaker), not {verb!r}."
            )


def link_keys(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """Tag key -> inverse verb, for every `.tag/KEY` document that declares one."""
    recs = con.execute(
        "SELECT id, text, summary FROM documents WHERE starts_with(id, $1)", [TAG_PREFIX]
    ).fetchall()
    out = {}
    for doc_id, text, summary in recs:
        verb = inverse_of(text if text is not None else summary)
        if verb:
            out[doc_id[len(TAG_PREFIX) :].casefold()] = verb
    return out


def _stub(doc_id: str, now: datetime) -> Row:
    sys = {"_source": "stub", "_content_type": "text/plain", "_content_length": 0, "_stub": True}
    return Row(doc_id, 1, "", "", {}, sys, content_hash(""), now, now, now)


def valid_id(target: str) -> bool:
    """Whether a string can be an item id."""
    return _valid(target)


def set_references(
    con: duckdb.DuckDBPyConnection, doc_id: str, targets: list[str], now: datetime
) -> int:
    """Replace a document's `references` edges (inside the caller's transaction); create
    stubs for targets that do not exist; return how many."""
    con.execute("DELETE FROM edges WHERE source = $1 AND key = $2", [doc_id, REFERENCES])
    if not targets:
        return 0
    con.execute(
        "INSERT INTO edges SELECT $1, $2, unnest($3), $4", [doc_id, REFERENCES, targets, now]
    )
    present = documents.heads(con, targets)
    stubs = [_stub(t, now) for t in targets if t not in present]
    documents.write_heads(con, stubs)
    return len(stubs)


def _valid(target: str) -> bool:
    try:
        check_id(target)
    except KeepuiError:
        return False
    return True


def sync(con: duckdb.DuckDBPyConnection, ids: list[str], now: datetime) -> int:
    """Make the edges of `ids` match their current tags (inside the caller's transaction).

    A `.tag/KEY` document among `ids` re-syncs every document tagged KEY or holding a KEY
    edge. Returns how many stub items were created.
    """
    tag_keys = {i[len(TAG_PREFIX) :].casefold() for i in ids if i.startswith(TAG_PREFIX)}
    links = link_keys(con)
    if not links and not tag_keys:
        has_edges = con.execute(
            "SELECT 1 FROM edges WHERE source IN (SELECT unnest($1)) LIMIT 1", [ids]
        ).fetchone()
        if not has_edges:
            return 0
    affected = {i for i in ids if not i.startswith(".")}
    pg = dialect(con) == "postgres"
    has_key = "(tags)::jsonb ? $1" if pg else "json_exists(tags, $1)"
    for key in tag_keys:
        affected.update(
            r[0]
            for r in con.execute(
                f"SELECT id FROM documents WHERE {has_key} AND NOT starts_with(id, '.') "
                "UNION SELECT source FROM edges WHERE key = $2",
                [key if pg else f'$."{key}"', key],
            ).fetchall()
        )
    if not affected:
        return 0
    heads = documents.heads(con, list(affected))
    gone = [i for i in affected if i not in heads]
    if gone:
        con.execute("DELETE FROM edges WHERE source IN (SELECT unnest($1))", [gone])
    con.execute(  # the text's references are the links task's to keep
        "DELETE FROM edges WHERE source IN (SELECT unnest($1)) AND key <> $2",
        [list(affected), REFERENCES],
    )
    rows = sorted(
        {
            (doc_id, key, target)
            for doc_id, head in heads.items()
            for key, values in head.tags.items()
            if key in links
            for target in values
            if target != doc_id and _valid(target)
        }
    )
    if not rows:
        return 0
    con.execute(
        "INSERT INTO edges SELECT unnest($1), unnest($2), unnest($3), $4",
        [[r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], now],
    )
    targets = sorted({r[2] for r in rows})
    present = documents.heads(con, targets)
    stubs = [_stub(t, now) for t in targets if t not in present]
    documents.write_heads(con, stubs)
    return len(stubs)


def edges_of(con: duckdb.DuckDBPyConnection, doc_id: str) -> dict[str, list[str]]:
    """A document's edges: `KEY: [targets]` out of it and `VERB: [sources]` into it."""
    links = link_keys(con)
    out: dict[str, list[str]] = {}
    for key, target in con.execute(
        "SELECT key, target FROM edges WHERE source = $1 ORDER BY key, target", [doc_id]
    ).fetchall():
        out.setdefault(key, []).append(target)
    for key, source in con.execute(
        "SELECT key, source FROM edges WHERE target = $1 ORDER BY key, source", [doc_id]
    ).fetchall():
        verb = REFERENCED_BY if key == REFERENCES else links.get(key, f"{key}_of")
        out.setdefault(verb, []).append(source)
    return out


def neighbours(con: duckdb.DuckDBPyConnection, doc_id: str) -> list[dict[str, Any]]:
    """Edge neighbours of a document: {"id", "via": "edge:KEY" or "edge:VERB"}."""
    return [
        {"id": target, "via": f"edge:{verb}"}
        for verb, ids in edges_of(con, doc_id).items()
        for target in ids
    ]
