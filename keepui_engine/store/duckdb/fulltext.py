"""BM25 over every stored version: a bm25s base index plus an exactly scored tail of new writes.

bm25s scores fastest and best here (SciFact nDCG@10 0.676 against tantivy's 0.659, whose k1/b
are fixed), but it cannot add a document to a built index. So each new version's term counts go
into the DuckDB table `bm25_tail` in the same transaction as the version itself, and a query
scores those rows with the same Lucene BM25 formula and the base's statistics. When the tail
outgrows a few percent of the base (or the base holds too many deleted versions), the base is
rebuilt from the tables and the tail emptied. Everything is derived from DuckDB, so a crash at
any point leaves a consistent index: the worst case is a rebuild.

Each base generation `bm25/gN/` ends with a manifest.json (every file's size, CRC-32 and stat
stamp, written after the files and before the database switches to N). A base that does not
match it, or has none, is rebuilt from the tables when it is first loaded, and the rebuild is
reported (see store.manifest).
"""

from __future__ import annotations

import json
import shutil
import threading
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from keepui_engine.core.errors import StoreError
from keepui_engine.store.duckdb import manifest
from keepui_engine.store.duckdb.vectors import member as _member
from keepui_engine.store.tables import bm25_stats, documents
from keepui_engine.store.tables.bm25_stats import K1, B, Tokenizer, lucene_idf

if TYPE_CHECKING:
    from collections.abc import Callable

    import duckdb

TAIL_MIN = 200
TAIL_SHARE = 0.05
DEAD_SHARE = 0.2
MANIFEST = "manifest.json"


class FullText:
    """The BM25 channel of one open DuckDB store.

    Args:
        root: The store directory (the base index lives in `bm25/`).
        con: The store's DuckDB connection.
        lock: The store's write lock (held while a damaged base is rebuilt).
    """

    rebuildable = True  # the base index falls behind and is rebuilt (see Engine.maintain)

    def __init__(
        self,
        root: Path,
        con: duckdb.DuckDBPyConnection,
        lock: Any = None,
        stamp: Callable[[], int | None] | None = None,
    ) -> None:
        self.dir = root / "bm25"
        self.con = con
        self.lock = lock or threading.RLock()  # the store's write lock: one repair at a time
        # The store's committed writes (None inside a transaction): the tail's statistics
        # and the base's generation are read once per write, not on every search (a
        # long-lived owner searches many times between writes; each query cost milliseconds).
        self._stamp = stamp
        self._rebuilds = 0
        self._memo: dict[str, tuple[tuple[int, int], Any]] = {}
        self._last_tail: tuple[tuple[int, int, tuple[str, ...]], dict[str, Any]] | None = None
        self.tokenize = Tokenizer()
        self._base: Any = None
        self._base_keys = np.empty(0, np.int64)
        self._live_mask: tuple[np.ndarray, np.ndarray] | None = None
        self._stats: dict[str, Any] = {}
        self._df: dict[str, int] = {}
        self.repaired: str | None = None  # what the last load found damaged and rebuilt

    # -- base index -------------------------------------------------------------------------
    def _now(self) -> tuple[int, int] | None:
        """What cached statistics are valid for: (committed writes, rebuilds); None inside a
        transaction or without a stamp (a process that is not the store's only writer)."""
        count = self._stamp() if self._stamp is not None else None
        return None if count is None else (count, self._rebuilds)

    def _cached(self, name: str, compute: Callable[[], Any]) -> Any:
        """`compute()`, reused until the next committed write or rebuild."""
        stamp = self._now()
        if stamp is None:
            return compute()
        hit = self._memo.get(name)
        if hit is not None and hit[0] == stamp:
            return hit[1]
        value = compute()
        self._memo[name] = (stamp, value)
        return value

    def _generation(self) -> int:
        def read() -> int:
            row = self.con.execute(
                "SELECT value FROM meta WHERE key = 'bm25_generation'"
            ).fetchone()
            return int(row[0]) if row else 0

        return int(self._cached("generation", read))

    def _load(self, *, model: bool = True, again: bool = True) -> None:
        """Read the base's keys and statistics, and (for searching) the bm25s model; a damaged
        base is rebuilt first (once: `again` is False after the rebuild).

        Writers only need the keys and counts, so they never import bm25s (and scipy).
        """
        gen = self._generation()
        if self._stats.get("generation") != gen:
            path = self.dir / f"g{gen}"
            self._base, self._df = None, {}
            problem = self.check(gen)
            if problem is not None:
                with self.lock:
                    if self._generation() == gen:  # nobody rebuilt it meanwhile
                        self._repair_once(problem, again)
                return self._load(model=model, again=False)
            self._live_mask = None
            if gen:
                self._base_keys = np.load(path / "keys.npy")
                self._stats = json.loads((path / "stats.json").read_text())
            else:
                self._base_keys = np.empty(0, np.int64)
                self._stats = {"generation": gen, "n": 0, "avgdl": 0.0}
        if model and self._base is None and len(self._base_keys):
            import bm25s

            path = self.dir / f"g{gen}"
            try:
                self._base = bm25s.BM25.load(str(path), mmap=True, show_progress=False)
            except Exception as exc:  # noqa: BLE001 - whatever bm25s cannot read is rebuilt
                self._stats = {}
                with self.lock:
                    self._repair_once(f"bm25s cannot read bm25/{path.name}: {exc}", again)
                return self._load(model=model, again=False)
            legacy = not (path / "df.npy").exists()  # built before whole-text statistics
            counts = np.diff(self._base.scores["indptr"]) if legacy else np.load(path / "df.npy")
            self._df = {t: int(counts[i]) for t, i in self._base.vocab_dict.items() if t}

    def check(self, gen: int | None = None, *, full: bool = False) -> str | None:
        """Why the base generation's files differ from their manifest, or None.

        Args:
            gen: The generation (the one the database names by default).
            full: Checksum every file, whatever its stat stamp says (`keepui doctor`).
        """
        gen = self._generation() if gen is None else gen
        if not gen:
            return None  # no base yet: the tail holds every version
        path = self.dir / f"g{gen}"
        if not path.is_dir():
            return f"bm25/{path.name} is missing"
        got = manifest.read_json(path / MANIFEST)
        files = (got or {}).get("files")
        if not isinstance(files, dict) or got.get("generation") != gen:  # type: ignore[union-attr]
            return f"bm25/{path.name}/{MANIFEST} is missing or unreadable"
        if not {"stats.json", "keys.npy"} <= files.keys():
            return f"bm25/{path.name}/{MANIFEST} lists no stats.json or keys.npy"
        for name, want in files.items():
            stamp = want.get("stamp") if isinstance(want, dict) else None
            problem = manifest.check(path / name, want, full=full)
            if problem is not None:
                return f"bm25/{path.name}/{problem}"
            if want.get("stamp") != stamp and not full:  # the same bytes: keep the new stamp
                manifest.try_write_json(path / MANIFEST, got)  # type: ignore[arg-type]
        return None

    def _repair_once(self, problem: str, again: bool) -> None:
        if not again:  # a base just rebuilt is damaged again: the disk, not keepui
            raise StoreError(
                f"the word index in {self.dir} is damaged ({problem}) and rebuilding it did "
                "not help: check the disk (free space, errors in dmesg), then run "
                "`keepui doctor --repair`.",
                "Word index damaged",
            )
        self.repair(problem)

    def repair(self, problem: str) -> None:
        """Rebuild the base from the tables, and say why."""
        keys, texts = documents.texts_for_keys(self.con)
        self.rebuild(keys, texts)
        self.repaired = (
            f"the word index was damaged ({problem}): rebuilt bm25/ from the database "
            f"({len(keys)} version(s))"
        )
        manifest.repaired(self.repaired)

    def _passage_keys(self) -> np.ndarray:
        got = self.con.execute("SELECT key FROM vector_keys WHERE part > 0").fetchnumpy()["key"]
        return np.asarray(got, np.int64)

    def base_keys(self) -> np.ndarray:
        """The keys the base indexes (a damaged base is rebuilt first)."""
        self._load(model=False)
        return self._base_keys

    def needs_rebuild(self, live: np.ndarray) -> bool:
        """Whether the tail or the dead part of the base has grown enough to rebuild."""
        self._load(model=False)
        n_tail = int(self._cached("n_tail", self._count_tail))
        n_base = len(self._base_keys)
        dead = n_base - int(_member(self._base_keys, live).sum()) if n_base else 0
        stale = bool(n_base) and "n_whole" not in self._stats  # built before passage statistics
        return (
            stale
            or n_tail > max(TAIL_MIN, TAIL_SHARE * n_base)
            or dead > DEAD_SHARE * max(n_base, 1)
        )

    def _count_tail(self) -> int:
        tail = self.con.execute("SELECT count(DISTINCT key) FROM bm25_tail").fetchone()
        return int(tail[0]) if tail else 0

    def settled(self, live: np.ndarray) -> bool:
        """Whether the base alone indexes exactly the live keys (no tail, nothing dead), so
        every score comes from one set of statistics whatever the order of the writes."""
        self._load(model=False)
        (n_tail,) = self.con.execute("SELECT count(*) FROM bm25_tail").fetchone() or (0,)
        n_base = len(self._base_keys)
        stale = bool(n_base) and "n_whole" not in self._stats
        return (
            not stale
            and not n_tail
            and n_base == len(live)
            and bool(_member(self._base_keys, live).all())
        )

    def rebuild(self, keys: list[int], texts: list[str]) -> None:
        """Index these (live key, text) pairs as the new base and empty the tail."""
        import bm25s

        gen = self._generation() + 1
        path = self.dir / f"g{gen}"
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        tokens = self.tokenize(texts)
        lengths = np.asarray([len(t) for t in tokens], np.float64)
        model = bm25s.BM25(k1=K1, b=B, method="lucene")
        model.index(tokens if tokens else [[""]], show_progress=False)
        passage = np.isin(np.asarray(keys, np.int64), self._passage_keys())
        if tokens:
            df = bm25_stats.restat(model.scores, lengths, passage, K1, B)
        else:
            df = np.zeros(len(model.vocab_dict), np.int64)
        model.save(str(path), show_progress=False)
        np.save(path / "keys.npy", np.asarray(keys, np.int64))
        np.save(path / "df.npy", df)
        stats = {
            "generation": gen,
            "n": len(keys),
            "avgdl": float(np.mean(lengths)) if len(lengths) else 0.0,
            **bm25_stats.kinds(lengths, passage),
        }
        (path / "stats.json").write_text(json.dumps(stats))
        files = {p.name: manifest.entry(p) for p in sorted(path.iterdir()) if p.is_file()}
        manifest.write_json(path / MANIFEST, {"generation": gen, "files": files})
        # Counted before and after the commit: what a reader caches while it runs is for
        # neither the old base nor the new one.
        self._rebuilds += 1
        self.con.execute("BEGIN")
        try:
            self.con.execute(
                "INSERT INTO meta VALUES ('bm25_generation', $1)"
                " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                [str(gen)],
            )
            self.con.execute("DELETE FROM bm25_tail WHERE key <= $1", [max(keys, default=0)])
            self.con.execute("COMMIT")
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        finally:
            self._rebuilds += 1
        for old in self.dir.glob("g*"):
            if old.name != path.name:
                shutil.rmtree(old, ignore_errors=True)
        self._stats = {}

    # -- search --------------------------------------------------------------------------------
    def search(
        self, query: str, k: int, live: np.ndarray, allowed: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(keys, BM25 scores) of the best k live versions, best first.

        Args:
            query: The query text.
            k: How many to return at most.
            live: Sorted keys that exist.
            allowed: Sorted keys the filters let through, or None for all.
        """
        self._load()
        terms = sorted(set(self.tokenize([query])[0]) - {""})
        if not terms or k <= 0:
            return np.empty(0, np.int64), np.empty(0, np.float32)
        tail = self._tail_rows(terms)
        keys, scores = [], []
        if self._base is not None and any(t in self._df for t in terms):
            if self._live_mask is None or self._live_mask[0] is not live:
                self._live_mask = (live, _member(self._base_keys, live))
            mask = self._live_mask[1]
            if allowed is not None:
                mask = mask & _member(self._base_keys, allowed)
            if mask.any():
                ids, got = self._base.retrieve(
                    [terms],
                    k=min(k, len(self._base_keys)),
                    weight_mask=mask.astype(np.float32),
                    show_progress=False,
                )
                ok = got[0] > 0
                keys.append(self._base_keys[ids[0][ok]])
                scores.append(got[0][ok])
        if len(tail["key"]):
            keys_t, scores_t = self._score_tail(tail, live, allowed)
            keys.append(keys_t)
            scores.append(scores_t)
        if not keys:
            return np.empty(0, np.int64), np.empty(0, np.float32)
        all_keys, all_scores = np.concatenate(keys), np.concatenate(scores).astype(np.float32)
        order = np.lexsort((-all_keys, -all_scores))[:k]  # ties: the newest key first
        return all_keys[order], all_scores[order]

    def upper_bound(self, query: str) -> float:
        """The most BM25 score any text could get for this query: the sum of its terms' idf.

        Each term adds idf x tf / (tf + K1 x ...) < idf, so no document reaches it; dividing by
        it says how much of the query's word evidence a document carries, which keeps a match
        on one common query word from looking like a full match in a small store.
        """
        return float(self.idf(query).sum())

    def idf(self, query: str) -> np.ndarray:
        """The idf of each distinct query term, as the search scores it (empty: no term).

        A term no text contains still counts, as the rarest: a document matching only the
        common words of a query has matched little of it.
        """
        self._load()
        terms = sorted(set(self.tokenize([query])[0]) - {""})
        if not terms:
            return np.empty(0, np.float64)
        tail_df = self._tail_df(terms)
        n = max(self._kinds()["n_whole"], 1.0)
        # a term only passages hold counts as in one document (as the base scores it)
        df = np.asarray(
            [
                max(self._df.get(t, 0) + tail_df.get(t, 0), 1)
                if t in self._df or t in tail_df
                else 0
                for t in terms
            ],
            np.float64,
        )
        return lucene_idf(df, n)

    def _tail_rows(self, terms: list[str]) -> dict[str, Any]:
        """The tail's postings of these terms (key, term, tf, dl, passage columns); the last
        query's are kept until the next write, as its idf and its search both read them."""
        stamp = self._now()
        key = None if stamp is None else (*stamp, tuple(terms))
        if key is not None and self._last_tail is not None and self._last_tail[0] == key:
            return self._last_tail[1]
        rows: dict[str, Any] = self.con.execute(
            "SELECT key, term, tf, dl, passage FROM bm25_tail WHERE term = ANY($1)",
            [terms],
        ).fetchnumpy()
        if key is not None:
            self._last_tail = (key, rows)
        return rows

    def _tail_df(self, terms: list[str]) -> dict[str, int]:
        """Of these terms, each one the tail holds: its count of whole texts holding it."""
        rows = self._tail_rows(terms)
        whole = ~np.asarray(rows["passage"], bool)
        pairs = {
            (str(t), int(k)) for t, k, w in zip(rows["term"], rows["key"], whole, strict=True) if w
        }
        df = Counter(t for t, _ in pairs)
        held = {str(t) for t in rows["term"]}
        return {t: df.get(t, 0) for t in terms if t in held}

    def _kinds(self) -> dict[str, float]:
        """Whole texts' and passages' counts and summed lengths, base and tail together."""
        return dict(self._cached(f"kinds{self._stats.get('generation')}", self._read_kinds))

    def _read_kinds(self) -> dict[str, float]:
        got = bm25_stats.base_kinds(self._stats)
        for passage, count, total in self.con.execute(
            "SELECT passage, count(*), coalesce(sum(dl), 0) FROM (SELECT key, any_value(dl) "
            "AS dl, any_value(passage) AS passage FROM bm25_tail GROUP BY key) GROUP BY 1"
        ).fetchall():
            kind = "part" if passage else "whole"
            got[f"n_{kind}"] += float(count)
            got[f"dl_{kind}"] += float(total)
        return got

    def _score_tail(
        self, tail: dict[str, Any], live: np.ndarray, allowed: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        terms = [str(t) for t in tail["term"]]
        passage = np.asarray(tail["passage"], bool)
        tail_df = Counter(t for t, p in zip(terms, passage.tolist(), strict=True) if not p)
        df = np.asarray([self._df.get(t, 0) + tail_df[t] for t in terms], np.float64)
        part = bm25_stats.postings(
            np.asarray(tail["tf"], np.float64),
            np.asarray(tail["dl"], np.float64),
            df,
            passage,
            self._kinds(),
            K1,
            B,
        )
        keys = np.asarray(tail["key"], np.int64)
        uniq, inverse = np.unique(keys, return_inverse=True)
        total = np.zeros(len(uniq))
        np.add.at(total, inverse, part)
        ok = _member(uniq, live)
        if allowed is not None:
            ok &= _member(uniq, allowed)
        return uniq[ok], total[ok]
