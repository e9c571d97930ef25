"""The dense channel on PostgreSQL: pgvector HNSW (cosine, halfvec) over `key_vectors`; BM25 is
in keepui_engine.store.postgres.bm25."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from keepui_engine.store.postgres.sql import PgConnection

EF_SEARCH = 200
# Filtered searches over at most this many keys are exact (index on key, then sort).
EXACT_MAX = 20000
# Past this many candidates, a search with many allowed keys sends the key list after all
POST_FILTER_MAX = 10000
COUNT_CAP = 50000  # vectors counted one by one; past this, the planner's estimate


def member(allowed: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Which of `keys` are in `allowed` (sorted), as a boolean mask."""
    at = np.searchsorted(allowed, keys)
    return (at < len(allowed)) & (allowed[np.minimum(at, len(allowed) - 1)] == keys)


def _halfvecs(vecs: np.ndarray) -> list[object]:
    from pgvector import HalfVector

    return [HalfVector(np.asarray(v, np.float32)) for v in vecs]


class PgVectorIndex:
    """The `key_vectors` table searched like keepui_engine.store.duckdb.vectors.VectorIndex.

    Args:
        con: The store's connection.
        dim: Vector dimension.
        exact_max: Up to this many vectors, an unfiltered search is exact; beyond, HNSW.
    """

    def __init__(self, con: PgConnection, dim: int, exact_max: int = 30000) -> None:
        self.con = con
        self.dim = dim
        self.exact_max = exact_max
        self.post_filter_above = EXACT_MAX  # allowed keys past this are not sent (see search)

    def repair(self, model: str) -> int:
        """Add the vectors of committed keys that have none (a writer died between its commit
        and its vector insert); return how many."""
        recs = self.con.raw(
            "SELECT k.key, e.vec FROM vector_keys k JOIN embeddings e ON e.content_hash = "
            "k.content_hash AND e.model = k.model WHERE k.model = $1 AND NOT EXISTS "
            "(SELECT 1 FROM key_vectors v WHERE v.key = k.key)",
            [model],
            binary=True,
        ).fetchall()
        recs = [(k, v) for k, v in recs if len(v) == 4 * self.dim]
        if recs:
            self.append(
                np.asarray([k for k, _ in recs], np.int64),
                np.stack([np.frombuffer(v, np.float32) for _, v in recs]),
            )
        return len(recs)

    def append(self, keys: np.ndarray, vecs: np.ndarray) -> None:
        """Store vectors of committed keys (keys deleted meanwhile are skipped)."""
        if not len(keys):
            return
        self.con.raw(
            "INSERT INTO key_vectors SELECT k, v FROM unnest($1::bigint[], $2::halfvec[]) "
            "AS u(k, v) WHERE EXISTS (SELECT 1 FROM vector_keys WHERE key = k) "
            "ON CONFLICT (key) DO UPDATE SET vec = EXCLUDED.vec",
            [[int(k) for k in keys], _halfvecs(vecs)],
        )

    def remove(self, keys: np.ndarray) -> None:
        """Drop the vectors of deleted keys."""
        if len(keys):
            self.con.raw("DELETE FROM key_vectors WHERE key = ANY($1)", [[int(k) for k in keys]])

    def missing(self, keys: np.ndarray) -> np.ndarray:
        """The keys among `keys` that have no vector."""
        keys = np.asarray(keys, np.int64)
        if not len(keys):
            return keys
        have = {
            k
            for (k,) in self.con.raw(
                "SELECT key FROM key_vectors WHERE key = ANY($1)", [keys.tolist()]
            ).fetchall()
        }
        return np.asarray([k for k in keys.tolist() if k not in have], np.int64)

    @property
    def live_count(self) -> int:
        """How many vectors the table holds: counted up to COUNT_CAP (and past `exact_max`,
        which decides exact against HNSW), estimated beyond by the planner's row count, as
        counting a million rows would cost more than the search it reports on. When the
        estimate is already past twice the cap, it is the one statement run."""
        cap = max(COUNT_CAP, self.exact_max + 1)
        est = self.con.raw(
            "SELECT reltuples::bigint FROM pg_class WHERE oid = 'key_vectors'::regclass"
        ).fetchone()[0]
        if est is not None and est >= 2 * cap:
            return int(est)
        n = int(
            self.con.raw(
                "SELECT count(*) FROM (SELECT 1 FROM key_vectors LIMIT $1) AS s", [cap]
            ).fetchone()[0]
        )
        return n if n < cap else max(int(est or 0), n)

    def maybe_extend_hnsw(self) -> bool:
        """PostgreSQL maintains the HNSW index itself."""
        return False

    def search(
        self, query: np.ndarray, k: int, allowed: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, str, int]:
        """(keys, cosine similarities, method, vectors considered), best first."""
        from pgvector import HalfVector

        q = HalfVector(np.asarray(query, np.float32).reshape(-1))
        if k <= 0 or (allowed is not None and not len(allowed)):
            return np.empty(0, np.int64), np.empty(0, np.float32), "exact", 0
        total = self.live_count if allowed is None else len(allowed)
        if allowed is None and total <= self.exact_max:  # exact: `+ 0` keeps the index out
            recs = self.con.raw(
                "SELECT key, vec <=> $1 FROM key_vectors ORDER BY (vec <=> $1) + 0, key DESC "
                "LIMIT $2",
                [q, k],
            ).fetchall()
            method, considered = "exact", total
        elif (
            allowed is not None
            and len(allowed) > self.post_filter_above
            and ((kept := self._post_filtered(q, k, allowed)) is not None)
        ):
            recs, method, considered = kept, "hnsw", len(allowed)
        elif allowed is not None and len(allowed) <= EXACT_MAX:
            recs = self.con.raw(
                "SELECT key, vec <=> $1 FROM key_vectors WHERE key = ANY($2) "
                "ORDER BY 2, key DESC LIMIT $3",
                [q, allowed.tolist(), k],
            ).fetchall()
            method, considered = "exact", len(allowed)
        else:
            where = "" if allowed is None else "WHERE key = ANY($3)"
            params: list[object] = [q, k] + ([allowed.tolist()] if allowed is not None else [])
            # hnsw.ef_search and hnsw.iterative_scan are set for the session (PgStore)
            recs = self.con.raw(
                f"SELECT key, vec <=> $1 AS d FROM key_vectors {where} "
                "ORDER BY vec <=> $1 LIMIT $2",
                params,
            ).fetchall()
            recs.sort(key=lambda r: (r[1], -r[0]))  # relaxed order: sort what came back
            method = "hnsw"
            considered = total
        keys = np.asarray([r[0] for r in recs], np.int64)
        sims = np.asarray([1.0 - float(r[1]) for r in recs], np.float32)
        return keys, sims, method, considered

    def _post_filtered(self, q: object, k: int, allowed: np.ndarray) -> list[Any] | None:
        """Many allowed keys: the nearest of all, the allowed kept, fetching more until k are
        (a list of hundreds of thousands of keys costs seconds to send); None past
        POST_FILTER_MAX candidates (then the key list is sent)."""
        total = self.live_count
        fetch = max(k, int(2 * k * total / max(len(allowed), 1)))
        while fetch <= POST_FILTER_MAX:
            recs = self.con.raw(
                "SELECT key, vec <=> $1 AS d FROM key_vectors ORDER BY vec <=> $1 LIMIT $2",
                [q, fetch],
            ).fetchall()
            inside = member(allowed, np.asarray([r[0] for r in recs], np.int64))
            kept = sorted(
                (r for r, ok in zip(recs, inside.tolist(), strict=True) if ok),
                key=lambda r: (r[1], -r[0]),
            )
            if len(kept) >= k or fetch >= total:
                return kept[:k]
            if len(recs) < fetch:  # the scan stopped short (hnsw.max_scan_tuples)
                return None
            fetch *= 4
        return None

    def vectors_for(self, keys: np.ndarray) -> np.ndarray:
        """Vectors of the given keys (rows of zeros for unknown keys)."""
        keys = np.asarray(keys, np.int64)
        out = np.zeros((len(keys), self.dim), np.float32)
        if not len(keys):
            return out
        got = dict(
            self.con.raw(
                "SELECT key, vec FROM key_vectors WHERE key = ANY($1)", [keys.tolist()], binary=True
            ).fetchall()
        )
        for i, k in enumerate(keys.tolist()):
            if k in got:
                out[i] = got[k].to_numpy()
        return out
