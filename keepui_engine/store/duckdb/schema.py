"""The DuckDB store's schema: the shared migrations (store/schema.py) as DuckDB runs them, each
in its own transaction, recorded in `_migrations`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from keepui_engine.store.schema import for_dialect, migrations_table

if TYPE_CHECKING:
    import duckdb

NAMES = [m.name for m in for_dialect("duckdb")]


def migrate(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Apply every migration not yet recorded, each in its own transaction.

    Returns:
        The names of the migrations applied now.
    """
    con.execute(migrations_table("duckdb"))
    done = {row[0] for row in con.execute("SELECT name FROM _migrations").fetchall()}
    applied = []
    for step in for_dialect("duckdb"):
        if step.name in done:
            continue
        con.execute("BEGIN")
        try:
            for sql in step.statements("duckdb"):
                con.execute(sql)
            con.execute("INSERT INTO _migrations VALUES ($1, now())", [step.name])
            con.execute("COMMIT")
        except Exception:
            con.execute("ROLLBACK")
            raise
        applied.append(step.name)
    return applied
