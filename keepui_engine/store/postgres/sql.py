"""The PostgreSQL connection behind the `execute` the store's tables call.

The statements in store/tables are written once, in the SQL both backends take: `$1`
parameters (psycopg runs them as they are through its RawCursor), `unnest` and `= ANY` of list
parameters, `generate_series`, `ON CONFLICT ... DO UPDATE`, `RETURNING`, `starts_with`,
`any_value`, `count(*) FILTER`. Where the dialects differ (tag filters on JSON, facets, the
queue claim) a table module asks `dialect(con)` and runs the form written for each; nothing is
rewritten here.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

_UNNEST = re.compile(r"unnest\(\$(\d+)\)")


def _typed_nulls(sql: str, params: list[Any]) -> str:
    """Give `unnest($n)` of an empty or all-NULL list a type (psycopg cannot infer one)."""

    def fix(m: re.Match[str]) -> str:
        value = params[int(m.group(1)) - 1]
        if isinstance(value, list) and all(v is None for v in value):
            return f"unnest(${m.group(1)}::text[])"
        return m.group(0)

    return _UNNEST.sub(fix, sql)


class Result:
    """The rows of one statement, read the way the DuckDB modules read them."""

    def __init__(self, rows: list[tuple[Any, ...]], names: list[str]) -> None:
        self._rows = rows
        self._names = names

    def fetchall(self) -> list[tuple[Any, ...]]:
        """Every row."""
        return self._rows

    def fetchone(self) -> tuple[Any, ...] | None:
        """The first row, or None."""
        return self._rows[0] if self._rows else None

    def fetchnumpy(self) -> dict[str, np.ndarray]:
        """Column name -> numpy array (integer keys as int64)."""
        out = {}
        for i, name in enumerate(self._names):
            col = [r[i] for r in self._rows]
            out[name] = np.asarray(col, np.int64) if name == "key" else np.asarray(col)
        return out


class PgConnection:
    """One psycopg connection in autocommit mode; transactions are explicit BEGIN/COMMIT, as
    the store modules issue them.

    Args:
        url: A `postgresql://` connection URL.
    """

    dialect = "postgres"

    def __init__(self, url: str) -> None:
        import psycopg
        from pgvector.psycopg import register_vector
        from psycopg.types.string import StrBinaryDumper, StrDumper, TextLoader

        self._con = psycopg.connect(
            url, autocommit=True, cursor_factory=psycopg.RawCursor, options="-c TimeZone=UTC"
        )
        # str as `text` (not `unknown`), so `unnest($1)` of a list of strings has a type
        self._con.adapters.register_dumper(str, StrDumper)
        self._con.adapters.register_dumper(str, StrBinaryDumper)
        # JSON columns come back as text, as DuckDB returns them
        self._con.adapters.register_loader("json", TextLoader)
        self._con.adapters.register_loader("jsonb", TextLoader)
        self.has_vector = bool(
            self._con.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone()
        )
        if self.has_vector:
            register_vector(self._con)

    def register_vector(self) -> None:
        """Load pgvector's types once its extension exists."""
        from pgvector.psycopg import register_vector

        register_vector(self._con)
        self.has_vector = True

    def execute(self, sql: str, params: list[Any] | None = None) -> Result:
        """Run one statement and read its rows."""
        if params:
            sql = _typed_nulls(sql, params)
        cur = self._con.execute(sql, params or None)
        if cur.description is None:
            return Result([], [])
        return Result(cur.fetchall(), [d.name for d in cur.description])

    def raw(self, sql: str, params: list[Any] | None = None, binary: bool = False) -> Any:
        """Run PostgreSQL as it is (no translation); the psycopg cursor. `binary` reads the
        rows in binary format (vectors: ten times faster than parsing their text)."""
        return self._con.execute(sql, params or None, binary=binary)

    def close(self) -> None:
        """Close the connection."""
        self._con.close()
