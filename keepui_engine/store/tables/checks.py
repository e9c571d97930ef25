"""What `keepui doctor` asks of the tables on either backend: versions with no stored vector,
and BM25 tail rows against the versions they index."""

from __future__ import annotations

from typing import Any

import numpy as np


def lacking_vectors(con: Any) -> int:
    """Versions whose text has no vector in the embedding cache (the index cannot hold them
    until `keepui reindex` embeds them)."""
    row = con.execute(
        "SELECT count(*) FROM vector_keys k WHERE NOT EXISTS (SELECT 1 FROM embeddings e "
        "WHERE e.content_hash = k.content_hash AND e.model = k.model)"
    ).fetchone()
    return int(row[0]) if row else 0


def model_of(con: Any) -> tuple[str | None, str | None]:
    """(model, dim) the store's vectors were made with, or Nones while it holds none."""
    row = con.execute("SELECT count(*) FROM vector_keys").fetchone()
    if not row or not row[0]:
        return None, None
    meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
    return meta.get("model"), meta.get("dim")


def tail_keys(con: Any) -> np.ndarray:
    """The distinct keys of the DuckDB BM25 tail, sorted."""
    got = con.execute("SELECT DISTINCT key FROM bm25_tail ORDER BY key").fetchnumpy()["key"]
    return np.asarray(got, np.int64)


def drop_tail_except(con: Any, live: np.ndarray) -> None:
    """Delete the tail rows of versions no longer stored (inside the caller's transaction)."""
    con.execute(
        "DELETE FROM bm25_tail WHERE key NOT IN (SELECT unnest($1))", [[int(k) for k in live]]
    )
