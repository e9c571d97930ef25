"""SQL over `vector_keys` beyond writing them (documents.py): which keys a document has, which
hold its current whole text, and the model every key was embedded with."""

from __future__ import annotations

from typing import Any

import numpy as np


def of_document(con: Any, doc_id: str) -> np.ndarray:
    """Every vector key of a document's versions and parts (int64)."""
    got = con.execute("SELECT key FROM vector_keys WHERE doc_id = $1", [doc_id]).fetchnumpy()
    return np.asarray(got["key"], np.int64)


def whole_text(con: Any, ids: list[str]) -> dict[str, int]:
    """doc id -> the key of its current version's whole text (documents that have one)."""
    if not ids:
        return {}
    recs = con.execute(
        "SELECT doc_id, key FROM vector_keys WHERE doc_id IN (SELECT unnest($1)) "
        "AND version = head AND part = 0",
        [list(ids)],
    ).fetchall()
    return {doc: int(key) for doc, key in recs}


def rows(con: Any, keys: list[int]) -> list[tuple[int, str, int, int]]:
    """(key, doc id, version, head) of the given keys."""
    return list(
        con.execute(
            "SELECT key, doc_id, version, head FROM vector_keys WHERE key = ANY($1)", [keys]
        ).fetchall()
    )


def set_summary(con: Any, doc_id: str, version: int, summary: str) -> None:
    """The summary a version's whole-text key shows in hits."""
    con.execute(
        "UPDATE vector_keys SET summary = $3 WHERE doc_id = $1 AND version = $2 AND part = 0",
        [doc_id, version, summary],
    )


def set_model(con: Any, model: str) -> None:
    """Mark every key as embedded with `model` (after a reindex re-embedded them all)."""
    con.execute("UPDATE vector_keys SET model = $1", [model])
