"""Store: one DuckDB file plus the vector index files, opened and closed together.

The database is the truth and the index files are derived from it, so a store whose database
is gone, or has lost writes the index files already hold (a deleted or cut WAL), is refused
with what to do instead of being answered from an empty or older database.
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from keepui_engine.core import private
from keepui_engine.core.errors import StoreError
from keepui_engine.core.writable import DB_NAME
from keepui_engine.store import transaction
from keepui_engine.store.duckdb.schema import migrate
from keepui_engine.store.duckdb.vector_files import attested_max_key
from keepui_engine.store.duckdb.vectors import VectorIndex
from keepui_engine.store.tables import documents, meta

if TYPE_CHECKING:
    from keepui_engine.store.duckdb.fulltext import FullText

DERIVED = ("vectors.json", "bm25", DB_NAME + ".wal")  # what only a store with a database has


def derived_files(root: Path) -> list[str]:
    """The files beside a store's database that only exist once it has one (sorted names)."""
    found = {p.name for p in root.glob("vectors.*")} | {n for n in DERIVED if (root / n).exists()}
    return sorted(found)


def missing_database(root: Path) -> str | None:
    """What to do about a store whose database is gone while its index files remain, or None.

    DuckDB would create an empty database in its place and the store would answer as if
    empty; nothing in the index files can bring the texts back.
    """
    if (root / DB_NAME).exists():
        return None
    left = derived_files(root)
    if not left:
        return None
    return (
        f"the database {root / DB_NAME} is missing, but {', '.join(left[:4])} "
        f"{'are' if len(left) > 1 else 'is'} still there: the documents were in the database "
        "and cannot be rebuilt from the index files. Restore the folder from a backup; or, to "
        f"start an empty store, move the folder aside (mv {root} {root}.old) and put again."
    )


class Store:
    """The open tables and vector index of one store directory.

    The caller holds the store's StoreLock for as long as the Store is open.

    Args:
        root: Store directory.
        model: Embedding model name (recorded on first open, checked after).
        dim: Embedding dimension.
        exact_max: Exact search limit passed to the vector index.
    """

    dialect = "duckdb"

    notify = ""  # no other process listens: DuckDB is one process's file

    def __init__(
        self, root: Path, model: str, dim: int, exact_max: int = 30000, *, check_model: bool = True
    ) -> None:
        import duckdb

        self.root = root
        self.model = model
        self.dim = dim
        self.exact_max = exact_max
        self.lock = threading.RLock()
        gone = missing_database(root)
        if gone is not None:
            raise StoreError(gone, "Database missing")
        try:
            self.con = duckdb.connect(str(root / DB_NAME))
            private.tighten(root)
            self.writes = 0  # committed transactions: lets readers cache what writes change
            self.in_transaction = False
            migrate(self.con)
        except duckdb.Error as exc:
            raise _open_error(root, exc) from exc
        if check_model:  # reindex and doctor check (and repair) the store themselves
            self._check_model()
            lost = self.lost_writes()
            if lost is not None:
                raise StoreError(lost, "Writes lost")
        self._index: VectorIndex | None = None

    def lost_writes(self) -> str | None:
        """What to do about a database that lost committed writes, or None: the vector files
        hold keys (appended after each commit) beyond the database's key sequence, which
        happens when its WAL was deleted or cut before DuckDB checkpointed it."""
        attested = attested_max_key(self.root)
        if not attested:
            return None
        row = self.con.execute(
            "SELECT coalesce(max(last_value), 0) FROM duckdb_sequences() "
            "WHERE sequence_name = 'vector_key_seq'"
        ).fetchone()
        last = int(row[0]) if row else 0
        if attested <= last:
            return None
        return (
            f"the database {self.root / DB_NAME} has lost committed writes: the index files "
            f"hold vector keys up to {attested}, the database's sequence ends at {last} (its "
            f"write-ahead log {DB_NAME}.wal was deleted or cut before it was checkpointed). "
            "Restore the folder from a backup; or run `keepui doctor --repair` to keep what "
            "the database holds and rebuild the indexes from it (the lost writes stay lost)."
        )

    def _check_model(self) -> None:
        meta.check_model(self, "keepui.toml", f"keepui reindex --store {self.root}")

    def set_model(self, model: str, dim: int) -> None:
        """Record a new model after a reindex (the caller re-embeds everything)."""
        self.con.execute(
            "INSERT INTO meta VALUES ('model', $1), ('dim', $2)"
            " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
            [model, str(dim)],
        )
        self.model, self.dim = model, dim
        self._index = None

    def reset_index(self) -> None:
        """Drop the vector files; the next use rebuilds them from the tables."""
        for path in self.root.glob("vectors.*"):
            path.unlink(missing_ok=True)
        self._index = None

    def lock_ids(self, ids: list[str]) -> bool:
        """Nothing to lock: one process writes a DuckDB file at a time (the store lock), so
        what a writer read before its transaction is still current (False: no check)."""
        return False

    def transaction(self) -> contextlib.AbstractContextManager[None]:
        """Run a block in one DuckDB transaction under the write lock."""
        return transaction(self)

    @property
    def index(self) -> VectorIndex:
        """The vector index, loaded, checked and reconciled with the tables on first use."""
        if self._index is None:
            self.open_index()
        assert self._index is not None
        return self._index

    def open_index(self, *, full: bool = False) -> VectorIndex:
        """(Re)open the vector index, rebuilding damaged files from the tables.

        Args:
            full: Checksum every file and compare every row with the tables (doctor).
        """
        (mode,) = self.con.execute("SELECT current_setting('access_mode')").fetchone() or ("",)
        index = VectorIndex(
            self.root, self.model, self.dim, self.exact_max, readonly=mode == "read_only"
        )
        with self.lock:
            index.open(documents.live_keys(self.con), self.fetch_vectors, full=full)
        self._index = index
        return index

    def fetch_vectors(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(keys, vectors) the embedding cache holds for these keys (the index's source)."""
        return documents.vectors_for_keys(self.con, keys, self.model)

    def open_fulltext(self) -> FullText:
        """The BM25 channel: a bm25s base in `bm25/` plus the DuckDB tail."""
        from keepui_engine.store.duckdb.fulltext import FullText

        return FullText(self.root, self.con, self.lock, stamp=self._write_stamp)

    def _write_stamp(self) -> int | None:
        """The committed writes so far, or None while a transaction is open (what the BM25
        channel keys its cached statistics on)."""
        return None if self.in_transaction else self.writes

    def live_keys(self) -> np.ndarray:
        """Every vector key the database holds, sorted."""
        return documents.live_keys(self.con)

    def index_add(self, keys: np.ndarray, vecs: np.ndarray) -> None:
        """Append committed vectors to the index files (and the loaded index, if any)."""
        if self._index is not None:
            self._index.append(keys, vecs)
        elif len(keys):
            VectorIndex(self.root, self.model, self.dim, self.exact_max).append(keys, vecs)

    def maybe_extend_hnsw(self) -> bool:
        """Build or extend the HNSW graph once the vector files outgrow exact search."""
        probe = self._index or VectorIndex(self.root, self.model, self.dim, self.exact_max)
        if not probe.needs_hnsw_work():
            return False
        return self.index.maybe_extend_hnsw()

    def index_remove(self, keys: np.ndarray) -> None:
        """Forget deleted keys in the loaded index (files are reconciled on the next open)."""
        if self._index is not None:
            self._index.remove(keys)

    def size_bytes(self) -> int:
        """Bytes used by the store directory."""
        return sum(p.stat().st_size for p in self.root.iterdir() if p.is_file())

    def database_problems(self) -> list[str]:
        """Read every row of every table (DuckDB checks each block's checksum on reading):
        what could not be read, by table."""
        import duckdb

        problems = []
        tables = self.con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE NOT internal ORDER BY table_name"
        ).fetchall()
        for (name,) in tables:
            try:
                self.con.execute(f'SELECT count(*), sum(hash(t)) FROM "{name}" t').fetchone()
            except duckdb.Error as exc:
                problems.append(f"table {name}: {exc}")
        return problems

    def close(self) -> None:
        """Checkpoint and close the database."""
        with contextlib.suppress(Exception):  # closing must not mask the caller's error
            self.con.close()


def _open_error(root: Path, exc: Exception) -> StoreError:
    """The error for a database DuckDB cannot open, saying what to do."""
    text, db = str(exc), root / DB_NAME
    if "Corrupt WAL" in text:
        wal = root / (DB_NAME + ".wal")
        return StoreError(
            f"cannot open {db}: its write-ahead log {wal.name} is damaged ({text}). Restore "
            f"the folder from a backup; or move the log aside (mv {wal} {wal}.damaged), which "
            "loses the writes since the last checkpoint, and run `keepui doctor --repair`.",
            "Database log damaged",
        )
    if any(m in text for m in ("Corrupt database", "Could not read enough", "not a valid")):
        return StoreError(
            f"cannot open {db}: the database file is damaged ({text}). Restore the folder "
            "from a backup: the documents are in this file, and the index files beside it "
            "cannot bring them back.",
            "Database damaged",
        )
    return StoreError(
        f"cannot open {db}: {text}. If another program holds the file, close it; if the file "
        "is damaged, restore it from a backup.",
        "Cannot open the database",
    )
