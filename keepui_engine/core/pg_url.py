"""Whether a store argument names a PostgreSQL database: a prefix test that loads nothing, so a
DuckDB store's commands never import the PostgreSQL modules."""

from __future__ import annotations

URL_PREFIXES = ("postgresql://", "postgres://")


def is_url(store: object) -> bool:
    """Whether a --store value names a PostgreSQL database."""
    return isinstance(store, str) and store.startswith(URL_PREFIXES)
