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
SLACK = 1 + 1e-6  # bounds compared with float4 scores: room for their rounding


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
                "SELECT key, vec FROM key_vectors WHERE key = ANY($1)", [keys.tolist()], binary=True
            ).fetchall()
        )
        for i, k in enumerate(keys.tolist()):
            if k in got:
                out[i] = got[k].to_numpy()
        return out


class PgFullText:
    """BM25 over `bm25_tail` (term, key, tf, dl), with N and the mean length from `bm25_stats`
    and each term's df and bounds from `bm25_terms`, scored in SQL.

    Every version's postings are written in the transaction that writes the version, so the
    channel is exact at all times: there is no base index to rebuild.

    A query whose terms have more than `prune_above` postings in all is pruned, MaxScore
    style, and stays exact: a term's contribution is at most its idf times the largest tf
    part any of its postings can have (`_bound`). Only the documents holding one of the
    "essential" terms (those whose bounds, smallest first, no longer add up to less than the
    k-th best score found) are scored, the best `depth` of them by those terms' partial
    score get their full score, and the loop widens until no other document can reach the
    k-th score. So common words of a long query cost no more than their bound.

    Args:
        con: The store's connection.
        prune_above: Postings (summed df) past which the pruned search runs.
    """

    rebuildable = False

    def __init__(self, con: PgConnection, prune_above: int = 20000) -> None:
        self.con = con
        self.prune_above = prune_above
        self.tokenize = Tokenizer()
        self._last: tuple[str, np.ndarray] | None = None  # the last search's query and idf
        self.scored_terms = 0  # the terms whose every posting the last search scored

    def _terms(self, query: str) -> list[str]:
        return sorted(set(self.tokenize([query])[0]) - {""})

    def _stats(self, terms: list[str]) -> tuple[float, float, dict[str, tuple[int, int, int]]]:
        """N, the mean length, and term -> (df, max tf, min length) of the terms present."""
        rows = self.con.raw(
            f"WITH s AS ({STATS}), t AS (SELECT term, sum(df)::bigint AS df, max(max_tf) AS mt, "
            "min(min_dl) AS md FROM bm25_terms WHERE term = ANY($1) GROUP BY term) "
            "SELECT s.n, s.avgdl, t.term, t.df, t.mt, t.md FROM s LEFT JOIN t ON t.df > 0",
            [terms],
        ).fetchall()
        n, avgdl = float(rows[0][0]), float(rows[0][1])
        return n, avgdl, {r[2]: (int(r[3]), int(r[4]), int(r[5])) for r in rows if r[2]}

    def search(
        self, query: str, k: int, live: np.ndarray | None, allowed: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(keys, BM25 scores) of the best k versions, best first (ties: newest key first).

        Only live versions have postings, so `live` is not needed here.
        """
        terms = self._terms(query)
        if not terms or k <= 0 or (allowed is not None and not len(allowed)):
            return np.empty(0, np.int64), np.empty(0, np.float32)
        n, avgdl, found = self._stats(terms)
        df = np.asarray([found.get(t, (0, 0, 0))[0] for t in terms], np.float64)
        idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5))
        self._last = (query, idf)
        present = {
            t: (float(w), found[t]) for t, w in zip(terms, idf.tolist(), strict=True) if t in found
        }
        if not present:
            return np.empty(0, np.int64), np.empty(0, np.float32)
        avgdl = max(avgdl, 1e-9)
        self.scored_terms = len(present)
        if allowed is None and sum(f[0] for _, f in present.values()) > self.prune_above:
            got = self._pruned(present, avgdl, k)
        else:
            got = self._scored(present, avgdl, k, allowed)
        got.sort(key=lambda r: (-r[1], -r[0]))
        got = got[:k]
        return (
            np.asarray([r[0] for r in got], np.int64),
            np.asarray([r[1] for r in got], np.float32),
        )

    def _scored(
        self,
        present: dict[str, tuple[float, tuple[int, int, int]]],
        avgdl: float,
        k: int,
        allowed: np.ndarray | None = None,
        limit_by: list[str] | None = None,
    ) -> list[tuple[int, float]]:
        """The best k (key, score) in SQL: over every document holding a term, or (limit_by)
        the best k by the partial score of those terms only."""
        terms = limit_by or sorted(present)
        params: list[object] = [terms, [present[t][0] for t in terms], k, K1, B, avgdl]
        where = ""
        if allowed is not None:
            params.append(allowed.tolist())
            where = "WHERE p.key = ANY($7)"
        # float4, as the channel reports it: one order of ties in every database
        return [
            (int(key), float(score))
            for key, score in self.con.raw(
                "SELECT p.key, sum(w.idf * p.tf / (p.tf + $4 * (1 - $5 + $5 * p.dl / $6))"
                ")::float4 AS score FROM unnest($1::text[], $2::float8[]) AS w(term, idf) "
                f"JOIN bm25_tail p ON p.term = w.term {where} "
                "GROUP BY p.key ORDER BY score DESC, p.key DESC LIMIT $3",
                params,
            ).fetchall()
        ]

    def _full(
        self,
        present: dict[str, tuple[float, tuple[int, int, int]]],
        avgdl: float,
        keys: list[int],
    ) -> dict[int, float]:
        """The full BM25 score of each of `keys` (float64, summed in term order)."""
        rows = self.con.raw(
            "SELECT key, term, tf, dl FROM bm25_tail WHERE term = ANY($1) AND key = ANY($2) "
            "ORDER BY key, term",
            [sorted(present), keys],
        ).fetchall()
        out = dict.fromkeys(keys, 0.0)
        for key, term, tf, dl in rows:
            out[key] += present[term][0] * tf / (tf + K1 * (1 - B + B * dl / avgdl))
        return out

    def _pruned(
        self, present: dict[str, tuple[float, tuple[int, int, int]]], avgdl: float, k: int
    ) -> list[tuple[int, float]]:
        """The best k, scoring only what can still reach the k-th score (see the class)."""
        bound = {t: _bound(w, mt, md, avgdl) for t, (w, (_, mt, md)) in present.items()}
        by_bound = sorted(present, key=lambda t: (bound[t], t))
        essential = set(by_bound[-1:])
        depth = max(4 * k, 100)
        for _ in range(6):
            rest = [t for t in by_bound if t not in essential]  # always a prefix of by_bound
            self.scored_terms = len(essential)
            partial = self._scored(present, avgdl, depth, limit_by=sorted(essential))
            if not rest:  # every term counted: SQL's order is the final one
                return partial
            full = self._full(present, avgdl, [key for key, _ in partial])
            scores = sorted(
                ((key, float(np.float32(s))) for key, s in full.items()),
                key=lambda r: (-r[1], -r[0]),
            )
            theta = scores[k - 1][1] if len(scores) >= k else 0.0
            # no document outside `partial` can reach theta when both bounds are below it:
            # one with no essential term, and one whose essential terms ranked past depth
            outside = SLACK * sum(bound[t] for t in rest)
            beyond = SLACK * partial[-1][1] + outside if len(partial) == depth else -1.0
            if outside < theta and beyond < theta:
                return scores
            if outside >= theta:  # essential: all but the longest prefix whose sum stays under
                total = 0.0
                for t in rest:
                    total += SLACK * bound[t]
                    if total >= theta:
                        essential.add(t)
            if beyond >= theta:
                depth *= 4
        self.scored_terms = len(present)
        return self._scored(present, avgdl, k)

    def upper_bound(self, query: str) -> float:
        """The sum of the query terms' idf (see FullText.upper_bound)."""
        return float(self.idf(query).sum())

    def idf(self, query: str) -> np.ndarray:
        """The idf of each distinct query term (see FullText.idf); the last search's, when it
        was for the same query."""
        if self._last is not None and self._last[0] == query:
            return self._last[1]
        terms = self._terms(query)
        if not terms:
            return np.empty(0, np.float64)
        n, _, found = self._stats(terms)
        d = np.asarray([found.get(t, (0, 0, 0))[0] for t in terms], np.float64)
        return np.log(1.0 + (n - d + 0.5) / (d + 0.5))


def _bound(idf: float, max_tf: int, min_dl: int, avgdl: float) -> float:
    """The most one term can add to a score: its idf times the tf part of its largest tf in
    its shortest document (the part grows with tf and shrinks with length)."""
    return idf * max_tf / (max_tf + K1 * (1 - B + B * min_dl / avgdl))
