"""SQL for document structure: the pages, slides and headings a file's extractor found.

Analyze re-splits a document long after its put, so the structure is kept per document and
text (`id`, `content_hash`): it survives new versions with the same text (a tag change) and a
store reopen. A block is kept as a span of the document's text (its kind, number, title and
`start`/`end` offsets) so the text is not stored twice; a block not found verbatim keeps its
own text.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import duckdb

Blocks = list[dict[str, Any]]


def encode(text: str, blocks: Blocks) -> Blocks:
    """Blocks as spans of `text` where they are found in order, else with their own text."""
    out: Blocks = []
    cursor = 0
    for b in blocks:
        body = str(b["text"])
        head = {"kind": b["kind"], "index": int(b["index"]), "title": b.get("title")}
        at = text.find(body, cursor) if body else -1
        if at < 0:
            out.append({**head, "text": body})
        else:
            cursor = at + len(body)
            out.append({**head, "start": at, "end": cursor})
    return out


def decode(text: str, stored: Blocks) -> Blocks:
    """The blocks (text, kind, index, title) of `text` from their stored form."""
    return [
        {
            "text": b["text"] if "text" in b else text[int(b["start"]) : int(b["end"])],
            "kind": b["kind"],
            "index": b["index"],
            "title": b.get("title"),
        }
        for b in stored
    ]


def save(con: duckdb.DuckDBPyConnection, entries: list[tuple[str, str, str, Blocks]]) -> None:
    """Record the structure of texts: (doc id, content hash, text, blocks) each."""
    if not entries:
        return
    con.execute(
        "INSERT INTO structure SELECT unnest($1), unnest($2), unnest($3)::JSON "
        "ON CONFLICT (id, content_hash) DO UPDATE SET blocks = EXCLUDED.blocks",
        [
            [e[0] for e in entries],
            [e[1] for e in entries],
            [json.dumps(encode(e[2], e[3])) for e in entries],
        ],
    )


def load(
    con: duckdb.DuckDBPyConnection, doc_id: str, content_hash: str, text: str
) -> Blocks | None:
    """The recorded structure of a document's text, or None when none was recorded."""
    rec = con.execute(
        "SELECT blocks FROM structure WHERE id = $1 AND content_hash = $2", [doc_id, content_hash]
    ).fetchone()
    return None if rec is None else decode(text, json.loads(rec[0]))


def prune(con: duckdb.DuckDBPyConnection, doc_id: str) -> None:
    """Forget the structure of texts no version of the document holds any more."""
    con.execute(
        "DELETE FROM structure WHERE id = $1 AND content_hash NOT IN ("
        "SELECT content_hash FROM documents WHERE id = $1 UNION "
        "SELECT content_hash FROM versions WHERE id = $1)",
        [doc_id],
    )
