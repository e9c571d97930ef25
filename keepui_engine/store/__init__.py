"""Every SQL statement keepui runs, by backend.

- protocol.py: what the engine uses of an open store (Backend) and the capabilities its
  channels offer (full text, rebuilt full text, vector search);
- tables/: the portable SQL, by table family (documents and versions, parts, structure,
  search queries, postings, the queue, judgments, search history, edges);
- duckdb/: the DuckDB store (schema, the bm25s base with its tail, usearch/numpy vectors);
- postgres/: the PostgreSQL store (schema, pgvector, BM25 in SQL, LISTEN/NOTIFY).

`transaction` runs a block in one transaction of either backend.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from keepui_engine.core import interrupts


@contextmanager
def transaction(store: Any) -> Iterator[None]:
    """Run a block in one transaction of `store.con` under `store.lock`; each commit counts in
    `store.writes` (what caches of derived state compare against). Both backends use it: the
    PostgreSQL store also sends `store.notify` (a
    NOTIFY that other processes' change feeds hear) before it commits."""
    with store.lock:
        store.in_transaction = True  # caches of derived state are bypassed until it ends
        try:
            store.con.execute("BEGIN")
            try:
                yield
            except BaseException:
                store.con.execute("ROLLBACK")
                raise
            with interrupts.shield():  # Ctrl-C never lands between COMMIT and its bookkeeping
                if store.notify:  # PostgreSQL: tell listeners (delivered at the commit)
                    store.con.execute(store.notify)
                store.con.execute("COMMIT")
                store.writes += 1
        finally:
            store.in_transaction = False
