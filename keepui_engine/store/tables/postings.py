"""BM25 postings of new versions and parts: the rows of `bm25_tail`, written in the transaction
that writes them (DuckDB's tail until the next base rebuild; PostgreSQL's only index)."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import duckdb
    import numpy as np

    from keepui_engine.store.tables.bm25_stats import Tokenizer


def tail_rows(
    keys: list[int], texts: list[str], tokenize: Tokenizer, passages: list[bool]
) -> list[list[Any]]:
    """Columns (key, term, tf, dl, passage) of the tail rows for new versions and parts."""
    cols: list[list[Any]] = [[], [], [], [], []]
    for key, tokens, passage in zip(keys, tokenize(texts), passages, strict=True):
        for term, tf in Counter(tokens).items():
            cols[0].append(key)
            cols[1].append(term)
            cols[2].append(tf)
            cols[3].append(len(tokens))
            cols[4].append(passage)
    return cols


def add_tail(
    con: duckdb.DuckDBPyConnection,
    keys: list[int],
    texts: list[str],
    tokenize: Tokenizer,
    passages: list[bool],
) -> None:
    """Record the term counts of new versions and parts (inside the caller's transaction);
    `passages` says which keys are passages (parts) rather than whole texts."""
    cols = tail_rows(keys, texts, tokenize, passages)
    if cols[0]:
        con.execute(
            "INSERT INTO bm25_tail (key, term, tf, dl, passage) SELECT unnest($1), unnest($2), "
            "unnest($3), unnest($4), unnest($5)",
            cols,
        )


def drop_tail(con: duckdb.DuckDBPyConnection, keys: np.ndarray) -> None:
    """Forget the tail rows of deleted versions (inside the caller's transaction)."""
    if len(keys):
        con.execute("DELETE FROM bm25_tail WHERE key = ANY($1)", [[int(k) for k in keys]])
