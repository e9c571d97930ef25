"""The two search channels on PostgreSQL: pgvector HNSW (cosine, halfvec) and BM25 in SQL over
the postings table, with the Lucene formula and tokenizer keepui_engine.store.fulltext uses."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from keepui_engine.store.fulltext import K1, B, Tokenizer

if TYPE_CHECKING:
    from keepui_engine.store.pg_sql import PgConnection

EF_SEARCH = 200
# Filtered searches over at most this many keys are exact (index on key, then sort).
EXACT_MAX = 20000
# N and the mean length from the summed shards (pg_schema.BM25_STATS)
STATS = (
    "SELECT coalesce(sum(n), 0)::float8 AS n, "
    "coalesce(sum(dl_sum)::float8 / nullif(sum(n), 0), 0)::float8 AS avgdl FROM bm25_stats"
)
COUNT_CAP = 50000  # vectors counted one by one; past this, the planner's estimate


def _halfvecs(vecs: np.ndarray) -> list[object]:
    from pgvector import HalfVector

    return [HalfVector(np.asarray(v, np.float32)) for v in vecs]


class PgVectorIndex:
    """The `key_vectors` table searched like keepui_engine.store.vectors.VectorIndex.

    Args:
        con: The store's connection.
        dim: Vector dimension.
        exact_max: Up to this many vectors, an unfiltered search is exact; beyond, HNSW.
    """

    def __init__(self, con: PgConnection, dim: int, exact_max: int = 30000) -> None:
        self.con = con
        self.dim = dim
        self.exact_max = exact_max

    def repair(self, model: str) -> int:
        """Add the vectors of committed keys that have none (a writer died between its commit
        and its vector insert); return how many."""
        recs = self.con.raw(
            "SELECT k.key, e.vec FROM vector_keys k JOIN embeddings e ON e.content_hash = "
            "k.content_hash AND e.model = k.model WHERE k.model = $1 AND NOT EXISTS "
            "(SELECT 1 FROM key_vectors v WHERE v.key = k.key)",
            [model],
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

    def vectors_for(self, keys: np.ndarray) -> np.ndarray:
        """Vectors of the given keys (rows of zeros for unknown keys)."""
        keys = np.asarray(keys, np.int64)
        out = np.zeros((len(keys), self.dim), np.float32)
        if not len(keys):
            return out
        got = dict(
            self.con.raw(
                "SELECT key, vec FROM key_vectors WHERE key = ANY($1)", [keys.tolist()]
            ).fetchall()
        )
        for i, k in enumerate(keys.tolist()):
            if k in got:
                out[i] = got[k].to_numpy()
        return out


class PgFullText:
    """BM25 over `bm25_tail` (term, key, tf, dl) and `bm25_docs` (key, dl), scored in SQL.

    Every version's postings are written in the transaction that writes the version, so the
    channel is exact at all times: there is no base index to rebuild.
    """

    rebuildable = False

    def __init__(self, con: PgConnection) -> None:
        self.con = con
        self.tokenize = Tokenizer()

    def _terms(self, query: str) -> list[str]:
        return sorted(set(self.tokenize([query])[0]) - {""})

    def search(
        self, query: str, k: int, live: np.ndarray | None, allowed: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(keys, BM25 scores) of the best k versions, best first (ties: newest key first).

        Only live versions have postings, so `live` is not needed here.
        """
        terms = self._terms(query)
        if not terms or k <= 0 or (allowed is not None and not len(allowed)):
            return np.empty(0, np.int64), np.empty(0, np.float32)
        params: list[object] = [terms, k, K1, B]
        where = ""
        if allowed is not None:
            params.append(allowed.tolist())
            where = "AND p.key = ANY($5)"
        recs = self.con.raw(
            f"WITH s AS ({STATS}), f AS (SELECT term, count(*)::float8 AS df FROM bm25_tail "
            "WHERE term = ANY($1) GROUP BY term) "
            "SELECT p.key, sum(ln(1 + (s.n - f.df + 0.5) / (f.df + 0.5)) * p.tf "
            "/ (p.tf + $3 * (1 - $4 + $4 * p.dl / greatest(s.avgdl, 1e-9))) "
            "ORDER BY p.term) AS score "  # one summation order: the same score in every database
            "FROM bm25_tail p JOIN f ON f.term = p.term CROSS JOIN s "
            f"WHERE p.term = ANY($1) {where} "
            "GROUP BY p.key ORDER BY score DESC, p.key DESC LIMIT $2",
            params,
        ).fetchall()
        return (
            np.asarray([r[0] for r in recs], np.int64),
            np.asarray([r[1] for r in recs], np.float32),
        )

    def upper_bound(self, query: str) -> float:
        """The sum of the query terms' idf (see FullText.upper_bound)."""
        return float(self.idf(query).sum())

    def idf(self, query: str) -> np.ndarray:
        """The idf of each distinct query term (see FullText.idf)."""
        terms = self._terms(query)
        if not terms:
            return np.empty(0, np.float64)
        n = float(self.con.raw(STATS).fetchone()[0])
        df = dict(
            self.con.raw(
                "SELECT term, count(*) FROM bm25_tail WHERE term = ANY($1) GROUP BY term", [terms]
            ).fetchall()
        )
        d = np.asarray([df.get(t, 0) for t in terms], np.float64)
        return np.log(1.0 + (n - d + 0.5) / (d + 0.5))
