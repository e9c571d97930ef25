"""Every SQL statement lives under keepui_engine/store, written once for both backends."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.fast

ENGINE = Path(__file__).resolve().parents[2] / "keepui_engine"
STORE = ENGINE / "store"
CALL = re.compile(r"\.(execute|executemany|raw)\(")
# DuckDB-only forms: the portable SQL must not use them (PostgreSQL runs it unrewritten)
DUCKDB_ONLY = re.compile(r"INSERT OR REPLACE|list_contains\(\$|FROM range\(|BEGIN TRANSACTION")


def _sources(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def test_no_sql_outside_the_store() -> None:
    outside = [
        f"{p.relative_to(ENGINE)}:{n}"
        for p in _sources(ENGINE)
        if STORE not in p.parents
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if CALL.search(line)
    ]
    assert outside == []


def test_shared_sql_has_no_duckdb_only_forms() -> None:
    shared = [*_sources(STORE / "tables"), *_sources(STORE / "postgres"), STORE / "__init__.py"]
    found = [
        f"{p.relative_to(ENGINE)}:{n}: {m.group(0)}"
        for p in shared
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        for m in [DUCKDB_ONLY.search(line)]
        if m
    ]
    assert found == []


def test_json_paths_only_where_the_dialect_is_asked() -> None:
    # json_exists/json_extract are DuckDB's: a table module using them must branch on dialect()
    for p in _sources(STORE / "tables"):
        text = p.read_text(encoding="utf-8")
        if "json_exists(" in text or "json_extract(" in text:
            assert "dialect(" in text, p
