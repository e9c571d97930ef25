"""`keepui doctor`: every file of a DuckDB store (or every derived table of a PostgreSQL one)
checked against what it derives from, and with `repair` rebuilt where it can be.

The database holds the documents; the vector files, the BM25 base and the PostgreSQL vector
and BM25 tables are derived from it and can always be rebuilt. A damaged database cannot:
doctor says so and what to do (a backup), and changes nothing without `repair`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from keepui_engine.store.protocol import RebuiltFullText
from keepui_engine.store.tables import checks

if TYPE_CHECKING:
    from keepui_engine.ops.ports import Operations
    from keepui_engine.store.duckdb.store import Store

OK, DAMAGED, REPAIRED = "ok", "damaged", "repaired"
REPAIR_HINT = "run keepui doctor --repair"
BACKUP_HINT = "restore the store folder from a backup"
REINDEX_HINT = "run keepui reindex"


@dataclass(frozen=True)
class Check:
    """One thing doctor looked at.

    Args:
        name: What was checked ("database", "vectors", "word index" …).
        status: "ok", "damaged" (still) or "repaired".
        detail: What was found (for "repaired": what was wrong).
        hint: What to do about damage that remains ("" otherwise).
    """

    name: str
    status: str
    detail: str
    hint: str = ""


@dataclass(frozen=True)
class DoctorReport:
    """What doctor found, check by check.

    Args:
        store: The store directory (or the redacted URL).
        backend: "duckdb" or "postgres".
        repair: Whether repairs were asked for.
        checks: The checks, in the order they ran.
    """

    store: str
    backend: str
    repair: bool
    checks: list[Check] = field(default_factory=list)

    @property
    def healthy(self) -> bool:
        """No damage remains (everything ok, or repaired)."""
        return all(c.status != DAMAGED for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the CLI's --json adds "schema": 1)."""
        return {
            "store": self.store,
            "backend": self.backend,
            "repair": self.repair,
            "healthy": self.healthy,
            "checks": [asdict(c) for c in self.checks],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DoctorReport:
        """Rebuild from `to_dict` output (the store socket)."""
        return cls(
            data["store"],
            data["backend"],
            data["repair"],
            [Check(**c) for c in data["checks"]],
        )


def missing_database(root: Path) -> DoctorReport | None:
    """The report on a store whose database is gone while its index files remain (opening
    it would create an empty one); None when the database is there or the store is new."""
    from keepui_engine.store.duckdb.store import missing_database as problem

    found = problem(root)
    if found is None:
        return None
    check = Check("database", DAMAGED, found, BACKUP_HINT)
    return DoctorReport(str(root), "duckdb", False, [check])


def _check(
    name: str, problem: str | None, fine: str, fix: Callable[[], str | None] | None, repair: bool
) -> Check:
    """A check's outcome: `fix()` repairs and returns what is still wrong (None: nothing)."""
    if problem is None:
        return Check(name, OK, fine)
    if fix is None:
        return Check(name, DAMAGED, problem, BACKUP_HINT)
    if not repair:
        return Check(name, DAMAGED, problem, REPAIR_HINT)
    left = fix()
    if left is None:
        return Check(name, REPAIRED, problem)
    return Check(name, DAMAGED, f"{problem}; after the repair: {left}", BACKUP_HINT)


def run(engine: Operations, repair: bool = False) -> DoctorReport:
    """Check the open store, and repair what can be rebuilt when `repair`."""
    found: list[Check] = []
    model = _model(engine)
    if engine.store.dialect == "duckdb":
        _duckdb(engine, repair, model, found)
    else:
        _postgres(engine, repair, model, found)
    return DoctorReport(str(engine.store.root), engine.store.dialect, repair, found)


def _model(engine: Operations) -> Check:
    """The store's vectors against the embedder keepui.toml names."""
    model, dim = checks.model_of(engine.store.con)
    want = (engine.embedder.name, str(engine.embedder.dim))
    if model is None or (model, dim) == want:
        return Check("model", OK, f"{want[0]} ({want[1]} dimensions)")
    return Check(
        "model",
        DAMAGED,
        f"the vectors were made with {model} ({dim} dimensions), keepui.toml names {want[0]} "
        f"({want[1]}): the vector checks were skipped",
        REINDEX_HINT,
    )


def _embeddings(engine: Operations, repair: bool) -> Check:
    lacking = checks.lacking_vectors(engine.store.con)
    problem = f"{lacking} version(s) have no stored vector" if lacking else None

    def fix() -> str | None:
        engine.reindex()  # embeds what is missing, then rebuilds both indexes
        left = checks.lacking_vectors(engine.store.con)
        return f"{left} version(s) still have no stored vector" if left else None

    return _check("embeddings", problem, "every version has its vector", fix, repair)


def _duckdb(engine: Operations, repair: bool, model: Check, found: list[Check]) -> None:
    store: Store = engine.store  # type: ignore[assignment]
    wal = store.root / "keepui.duckdb.wal"
    unread = store.database_problems()
    size = wal.stat().st_size if wal.exists() else 0
    fine = "every table reads" + (f"; {size} bytes of writes in its WAL" if size else "")
    found.append(_check("database", "; ".join(unread) or None, fine, None, repair))
    if unread:
        return  # the other checks read those tables
    lost = store.lost_writes()

    def rebuild_all() -> str | None:
        store.reset_index()
        store.open_index()
        rebuild_words(engine)
        return store.lost_writes()

    fine = "the index files hold no write the database lacks"
    found.append(_check("writes", lost, fine, rebuild_all, repair))
    found.append(model)
    if model.status == DAMAGED:
        return
    found.append(_embeddings(engine, repair))
    found.extend(_vectors(store, repair))
    found.extend(_words(engine, repair))


def _vectors(store: Store, repair: bool) -> list[Check]:
    from keepui_engine.store.duckdb.vectors import VectorIndex

    live = store.live_keys()

    def inspect() -> tuple[str | None, VectorIndex]:
        index = VectorIndex(store.root, store.model, store.dim, store.exact_max, readonly=True)
        problem = index.check(live, store.fetch_vectors, full=True)
        if problem is None:
            gone = len(index.missing(live)) - checks.lacking_vectors(store.con)
            problem = f"{gone} version(s) have no row in the vector files" if gone > 0 else None
        return problem, index

    problem, index = inspect()

    def fix() -> str | None:
        store.open_index(full=True)
        return inspect()[0]

    rows = index.file_rows()
    out = [_check("vectors", problem, f"{rows} row(s) match the database", fix, repair)]
    graph = index.files.graph_problem(full=True) if problem is None else None

    def regraph() -> str | None:
        store.index.files.drop_graph()
        store.index.maybe_extend_hnsw()
        return store.index.files.graph_problem(full=True)

    covered = int(index.files.meta.get("hnsw", 0))
    fine = f"covers {covered} row(s)" if covered else "none (every search is exact)"
    out.append(_check("vector graph", graph, fine, regraph, repair))
    return out


def _words(engine: Operations, repair: bool) -> list[Check]:
    text = engine.fulltext
    if not isinstance(text, RebuiltFullText):  # PostgreSQL's is checked with its tables
        return []
    problem = text.check(full=True)

    def fix() -> str | None:
        text.repair(problem or "")
        return text.check(full=True)

    based = any(text.dir.glob("g*"))
    fine = "bm25/ matches its manifest" if based else "no base yet: the tail holds every version"
    out = [_check("word index", problem, fine, fix, repair)]
    if problem is not None and not repair:
        return out
    live, tail = engine.live_keys(), checks.tail_keys(engine.store.con)
    stray = tail[~np.isin(tail, live)]
    indexed = np.union1d(text.base_keys(), tail)
    unindexed = _with_words(engine, live[~np.isin(live, indexed)])
    issues = []
    if len(stray):
        issues.append(f"{len(stray)} version(s) no longer stored still have tail rows")
    if unindexed:
        issues.append(f"{unindexed} version(s) are in neither the base nor the tail")

    def refill() -> str | None:
        with engine.store.transaction():
            checks.drop_tail_except(engine.store.con, live)
        if unindexed:
            rebuild_words(engine)
        return None

    fine = f"{len(tail)} recent version(s) in the tail"
    out.append(_check("word tail", "; ".join(issues) or None, fine, refill, repair))
    return out


def _with_words(engine: Operations, keys: np.ndarray) -> int:
    """How many of these versions have a text with at least one indexed word."""
    if not len(keys):
        return 0
    from keepui_engine.store.tables import documents

    all_keys, texts = documents.texts_for_keys(engine.store.con)
    wanted = set(keys.tolist())
    chosen = [t for k, t in zip(all_keys, texts, strict=True) if k in wanted]
    return sum(1 for tokens in engine.fulltext.tokenize(chosen) if tokens)


def _postgres(engine: Operations, repair: bool, model: Check, found: list[Check]) -> None:
    from keepui_engine.store.postgres import checks as pg_checks

    found.append(model)
    if model.status == DAMAGED:
        return
    found.append(_embeddings(engine, repair))
    con: Any = engine.store.con
    for name, problem in pg_checks.problems(con).items():

        def fix(name: str = name) -> str | None:
            with engine.store.transaction():
                pg_checks.repair(con, [name])
            if name == "vectors":
                engine.store.index.repair(engine.embedder.name)  # type: ignore[attr-defined]
            return pg_checks.problems(con)[name]

        found.append(_check(name, problem, "consistent", fix, repair))


def rebuild_words(engine: Operations) -> None:
    """Rebuild the BM25 index from the tables (reindex; doctor after lost writes)."""
    ft = engine.fulltext
    if isinstance(ft, RebuiltFullText):
        from keepui_engine.store.tables import documents

        keys, texts = documents.texts_for_keys(engine.store.con)
        ft.rebuild(keys, texts)
        return
    from keepui_engine.store.postgres import checks as pg_checks

    with engine.store.transaction():
        pg_checks.rebuild_words(engine.store.con)
