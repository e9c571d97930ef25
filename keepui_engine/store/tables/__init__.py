"""The store's SQL by table family, the same statements on DuckDB and PostgreSQL (where the two
dialects differ, a module asks `dialect(con)` and runs the form written for it)."""

from __future__ import annotations

from typing import Any


def dialect(con: Any) -> str:
    """`postgres` for a PgConnection, `duckdb` for a DuckDB connection."""
    return getattr(con, "dialect", "duckdb")
