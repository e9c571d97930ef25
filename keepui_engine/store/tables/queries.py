"""Read queries for search and listing: filter to vector keys, hydrate hits, list documents."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from keepui_engine.store.tables import dialect

if TYPE_CHECKING:
    import duckdb


@dataclass(frozen=True)
class KeyRow:
    """What a vector key points at, for building a hit."""

    key: int
    doc_id: str
    version: int
    head_version: int
    part: int
    summary: str
    tags: dict[str, list[str]]
    sys: dict[str, Any]
    created: datetime
    updated: datetime


def tag_conditions(
    filters: dict[str, list[str] | None], column: str, sql: str = "duckdb"
) -> tuple[str, list[Any]]:
    """SQL conditions (AND) for tag filters on a JSON column of key -> list of values.

    Keys are validated against ^[A-Za-z][A-Za-z0-9_-]*$ before they get here, so they are
    safe inside the JSON path. `sql` is the dialect (`duckdb` or `postgres`).
    """
    conds: list[str] = []
    params: list[Any] = []
    for key, values in filters.items():
        path = f"'$.\"{key}\"'"
        if sql == "postgres":
            if not values:
                conds.append(f"({column})::jsonb ? '{key}'")
            for value in values or []:
                params.append(value)
                conds.append(f"({column})::jsonb -> '{key}' ? ${len(params)}")
            continue
        if not values:
            conds.append(f"json_exists({column}, {path})")
        for value in values or []:
            params.append(value)
            conds.append(
                f"list_contains(CAST(json_extract({column}, {path}) AS VARCHAR[]), ${len(params)})"
            )
    return " AND ".join(conds), params


def filter_keys(
    con: duckdb.DuckDBPyConnection,
    tags: dict[str, list[str] | None],
    since: datetime | None,
    until: datetime | None,
    *,
    current: bool = False,
) -> np.ndarray:
    """Sorted vector keys whose version passes the tag and time filters.

    With `current`, only keys of each document's current version (and its parts), so the
    filters test the current tags and time; without it, each version's own."""
    where, params = tag_conditions(tags, "tags", dialect(con))
    conds = [where] if where else []
    if current:
        conds.append("version = head")
    for value, op in ((since, ">="), (until, "<")):
        if value is not None:
            params.append(value.replace(tzinfo=None))
            conds.append(f"updated {op} ${len(params)}")
    sql = f"SELECT key FROM vector_keys WHERE {' AND '.join(conds) or 'true'} ORDER BY key"
    return np.asarray(con.execute(sql, params).fetchnumpy()["key"], np.int64)


def as_of_keys(con: duckdb.DuckDBPyConnection, moment: datetime) -> np.ndarray:
    """Sorted vector keys of the version of each document that was current at `moment`."""
    recs = con.execute(
        "SELECT k.key FROM vector_keys k JOIN (SELECT doc_id, max(version) AS v FROM vector_keys "
        "WHERE updated <= $1 GROUP BY doc_id) c ON k.doc_id = c.doc_id AND k.version = c.v "
        "ORDER BY k.key",
        [moment],
    ).fetchnumpy()
    return np.asarray(recs["key"], np.int64)


def hydrate(con: duckdb.DuckDBPyConnection, keys: list[int]) -> dict[int, KeyRow]:
    """Rows for the given vector keys (keys whose document is gone are absent)."""
    if not keys:
        return {}
    recs = con.execute(
        "SELECT key, doc_id, version, head, part, summary, tags, sys, created, updated "
        "FROM vector_keys WHERE key = ANY($1)",
        [keys],
    ).fetchall()
    return {
        r[0]: KeyRow(
            r[0], r[1], r[2], r[3], r[4], r[5], json.loads(r[6]), json.loads(r[7]), r[8], r[9]
        )
        for r in recs
    }


def any_conditions(
    any_tags: dict[str, list[str]] | None, column: str, params: list[Any], sql: str = "duckdb"
) -> list[str]:
    """SQL conditions for facet selections: per key, any of the values (OR); keys AND."""
    conds = []
    for key, values in (any_tags or {}).items():
        if values and sql == "postgres":
            params.append(list(values))
            conds.append(f"({column})::jsonb -> '{key}' ?| ${len(params)}")
        elif values:
            params.append(list(values))
            conds.append(
                f"list_has_any(CAST(json_extract({column}, '$.\"{key}\"') AS VARCHAR[]), "
                f"${len(params)})"
            )
    return conds


def facets(
    con: duckdb.DuckDBPyConnection,
    tags: dict[str, list[str] | None],
    any_tags: dict[str, list[str]] | None = None,
    ids: list[str] | None = None,
    prefix: str | None = None,
) -> dict[str, dict[str, int]]:
    """KEY -> VALUE -> how many current documents carry it, among those passing the filters
    (and among `ids`, when given). System documents (ids starting with `.`) are left out."""
    sql = dialect(con)
    where, params = tag_conditions(tags, "d.tags", sql)
    conds = [where] if where else []
    if prefix:
        params.append(prefix)
        conds.append(f"starts_with(d.id, ${len(params)})")
    conds += any_conditions(any_tags, "d.tags", params, sql)
    conds.append("NOT starts_with(d.id, '.')")
    if ids is not None:
        params.append(list(ids))
        conds.append(f"d.id IN (SELECT unnest(${len(params)}))")
    values = (
        "json_array_elements_text(j.value) AS u(v)"
        if sql == "postgres"
        else "unnest(from_json(j.value, '[\"VARCHAR\"]')) AS u(v)"
    )
    recs = con.execute(
        f"SELECT j.key, u.v, count(DISTINCT d.id) FROM documents d, json_each(d.tags) j, {values} "
        f"WHERE {' AND '.join(conds)} GROUP BY 1, 2 ORDER BY 1, 3 DESC, 2",
        params,
    ).fetchall()
    out: dict[str, dict[str, int]] = {}
    for key, value, n in recs:
        out.setdefault(key, {})[value] = int(n)
    return out


def list_ids(
    con: duckdb.DuckDBPyConnection,
    prefix: str | None,
    tags: dict[str, list[str] | None],
    sort: str,
    limit: int,
    any_tags: dict[str, list[str]] | None = None,
    include_system: bool = False,
) -> list[str]:
    """Ids of current documents matching a prefix and tag filters, in the asked order.

    System documents (ids starting with `.`) only with `include_system` or a prefix that
    starts with `.`."""
    sql = dialect(con)
    where, params = tag_conditions(tags, "tags", sql)
    conds = [where] if where else []
    conds += any_conditions(any_tags, "tags", params, sql)
    if not include_system and not (prefix or "").startswith("."):
        conds.append("NOT starts_with(id, '.')")
    if prefix:
        params.append(prefix)
        conds.append(f"starts_with(id, ${len(params)})")
    order = "id ASC" if sort == "id" else f"{sort} DESC, id ASC"
    params.append(limit)
    sql = (
        f"SELECT id FROM documents WHERE {' AND '.join(conds) or 'true'} "
        f"ORDER BY {order} LIMIT ${len(params)}"
    )
    return [r[0] for r in con.execute(sql, params).fetchall()]


def counts(con: duckdb.DuckDBPyConnection) -> tuple[int, int, int, int]:
    """(documents, versions including heads, vector keys, system documents) — documents
    without the system ones (ids starting with `.`)."""
    docs = con.execute(
        "SELECT count(*) FILTER (WHERE NOT starts_with(id, '.')), "
        "count(*) FILTER (WHERE starts_with(id, '.')) FROM documents"
    ).fetchone()
    vers = con.execute("SELECT count(*) FROM versions").fetchone()
    keys = con.execute("SELECT count(*) FROM vector_keys").fetchone()
    n_docs, n_system = (int(docs[0]), int(docs[1])) if docs else (0, 0)
    n_versions = n_docs + n_system + (int(vers[0]) if vers else 0)
    return n_docs, n_versions, int(keys[0]) if keys else 0, n_system
