"""BM25 on PostgreSQL, in SQL over the postings table, with the Lucene formula and tokenizer
keepui_engine.store.duckdb.fulltext uses, pruned MaxScore-style and exact."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from keepui_engine.store.postgres.search import EXACT_MAX, POST_FILTER_MAX, member
from keepui_engine.store.tables.bm25_stats import K1, B, Tokenizer, lucene_idf, lucene_tf

if TYPE_CHECKING:
    from keepui_engine.store.postgres.sql import PgConnection

# N (whole texts: idf counts documents, not passages), the mean whole-text length and the
# mean passage length from the summed shards (store/schema.py; store/tables/bm25_stats.py)
STATS = (
    "SELECT coalesce(sum(n) - sum(n_part), 0)::float8 AS n, "
    "coalesce(sum(dl_sum - dl_part)::float8 / nullif(sum(n) - sum(n_part), 0), 0)::float8 "
    "AS avgdl, coalesce(sum(dl_part)::float8 / nullif(sum(n_part), 0), 0)::float8 AS avgpart "
    "FROM bm25_stats"
)
SLACK = 1 + 1e-6  # bounds compared with float4 scores: room for their rounding
# BM25 of a document over the terms joined as w(term, idf), with $3 = k1, $4 = b, $5 = the
# mean whole-text length and {part} the mean passage length (a float written in)
SCORE = (
    "sum(w.idf * p.tf / (p.tf + $3 * (1 - $4 + $4 * p.dl / "
    "CASE WHEN p.passage THEN {part}::float8 ELSE $5 END)))"
)


class PgFullText:
    """BM25 over `bm25_tail` (term, key, tf, dl), with N and the mean length from `bm25_stats`
    and each term's df and bounds from `bm25_terms`, scored in SQL.

    Every version's postings are written in the transaction that writes the version, so the
    channel is exact at all times: there is no base index to rebuild.

    A query whose terms have more than `prune_above` postings in all is pruned, MaxScore
    style, and stays exact: a term's contribution is at most its idf times the largest tf
    part any of its postings can have (`_bound`). Only the documents holding one of the
    "essential" terms (those whose bounds, smallest first, no longer add up to less than the
    k-th best score found) are scored: the best of them by those terms' partial score get
    their full score, which gives a k-th score; the essential set grows while the other
    terms' bounds could still reach it, and when documents past the first batch might, every
    document that can is scored in one statement (`_reaching`). So common words of a long
    query cost no more than their bound.

    Args:
        con: The store's connection.
        prune_above: Postings (summed df) past which the pruned search runs.
    """

    rebuildable = False

    def __init__(self, con: PgConnection, prune_above: int = 20000) -> None:
        self.con = con
        self.prune_above = prune_above
        self.post_filter_above = EXACT_MAX  # allowed keys past this are not sent (search)
        self.tokenize = Tokenizer()
        self._last: tuple[str, np.ndarray] | None = None  # the last search's query and idf
        self.scored_terms = 0  # the terms whose every posting the last search scored
        self._avgpart = 1.0  # the mean passage length the last statistics read gave

    def _terms(self, query: str) -> list[str]:
        return sorted(set(self.tokenize([query])[0]) - {""})

    def _weights(
        self, terms: list[str]
    ) -> tuple[np.ndarray, float, float, dict[str, tuple[int, int, int]]]:
        """Each term's idf, N, the mean length, and term -> (df, max tf, min length) of the
        terms present."""
        n, avgdl, found, whole = self._stats(terms)
        # a term only passages hold counts as in one document; one no text holds as none
        df = np.asarray([max(whole[t], 1) if t in whole else 0 for t in terms], np.float64)
        return lucene_idf(df, max(n, 1.0)), n, avgdl, found

    def _stats(
        self, terms: list[str]
    ) -> tuple[float, float, dict[str, tuple[int, int, int]], dict[str, int]]:
        """N, the mean whole-text length, term -> (postings, max tf, min length) of the terms
        present, and term -> whole texts holding it (idf's df); sets the mean passage length."""
        rows = self.con.raw(
            f"WITH s AS ({STATS}), t AS (SELECT term, sum(df)::bigint AS df, max(max_tf) AS mt, "
            "min(min_dl) AS md, (sum(df) - sum(df_part))::bigint AS dw FROM bm25_terms "
            "WHERE term = ANY($1) GROUP BY term) "
            "SELECT s.n, s.avgdl, s.avgpart, t.term, t.df, t.mt, t.md, t.dw "
            "FROM s LEFT JOIN t ON t.df > 0",
            [terms],
        ).fetchall()
        n, avgdl = float(rows[0][0]), float(rows[0][1])
        self._avgpart = max(float(rows[0][2]), 1e-9)
        found = {r[3]: (int(r[4]), int(r[5]), int(r[6])) for r in rows if r[3]}
        return n, avgdl, found, {r[3]: int(r[7]) for r in rows if r[3]}

    def search(
        self, query: str, k: int, live: np.ndarray | None, allowed: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(keys, BM25 scores) of the best k versions, best first (ties: newest key first).

        Only live versions have postings, so `live` is not needed here.
        """
        terms = self._terms(query)
        if not terms or k <= 0 or (allowed is not None and not len(allowed)):
            return np.empty(0, np.int64), np.empty(0, np.float32)
        idf, n, avgdl, found = self._weights(terms)
        self._last = (query, idf)
        present = {
            t: (float(w), found[t]) for t, w in zip(terms, idf.tolist(), strict=True) if t in found
        }
        if not present:
            return np.empty(0, np.int64), np.empty(0, np.float32)
        avgdl = max(avgdl, 1e-9)
        self.scored_terms = len(present)
        got = None
        if allowed is not None and len(allowed) > self.post_filter_above:
            got = self._post_filtered(present, n, avgdl, k, allowed)
        if got is None:
            got = self._best(present, avgdl, k) if allowed is None else None
        if got is None:
            got = self._scored(present, avgdl, k, allowed)
        got.sort(key=lambda r: (-r[1], -r[0]))
        got = got[:k]
        return (
            np.asarray([r[0] for r in got], np.int64),
            np.asarray([r[1] for r in got], np.float32),
        )

    def _best(
        self, present: dict[str, tuple[float, tuple[int, int, int]]], avgdl: float, k: int
    ) -> list[tuple[int, float]]:
        """The best k of all documents: pruned when the terms have many postings."""
        if sum(f[0] for _, f in present.values()) > self.prune_above:
            return self._pruned(present, avgdl, k)
        return self._scored(present, avgdl, k)

    def _post_filtered(
        self,
        present: dict[str, tuple[float, tuple[int, int, int]]],
        n: float,
        avgdl: float,
        k: int,
        allowed: np.ndarray,
    ) -> list[tuple[int, float]] | None:
        """Many allowed keys: the best of all documents, the allowed kept, fetching more
        until k are; exact, since every allowed document past the fetched ones ranks after
        them. None past POST_FILTER_MAX (then the key list is sent)."""
        fetch = max(k, int(2 * k / max(len(allowed) / max(n, 1.0), 1e-9)))
        while fetch <= POST_FILTER_MAX:
            top = self._best(present, avgdl, fetch)
            inside = member(allowed, np.asarray([key for key, _ in top], np.int64))
            kept = [r for r, ok in zip(top, inside.tolist(), strict=True) if ok]
            if len(kept) >= k or len(top) < fetch:
                return kept
            fetch *= 4
        return None

    def _scored(
        self,
        present: dict[str, tuple[float, tuple[int, int, int]]],
        avgdl: float,
        k: int,
        allowed: np.ndarray | None = None,
        limit_by: list[str] | None = None,
    ) -> list[tuple[int, float]]:
        """The best k (key, score) in SQL, over every document holding a term, or (limit_by)
        by the partial score of those terms only."""
        terms = limit_by or sorted(present)
        params: list[object] = [terms, [present[t][0] for t in terms], K1, B, avgdl, k]
        where = ""
        if allowed is not None:
            params.append(allowed.tolist())
            where = "WHERE p.key = ANY($7)"
        return self._ranked(
            f"SELECT p.key, {self._score}::float4 AS score "
            "FROM unnest($1::text[], $2::float8[]) AS w(term, idf) "
            f"JOIN bm25_tail p ON p.term = w.term {where} "
            "GROUP BY p.key ORDER BY score DESC, p.key DESC LIMIT $6",
            params,
        )

    def _reaching(
        self,
        present: dict[str, tuple[float, tuple[int, int, int]]],
        avgdl: float,
        essential: list[str],
        at_least: float,
        k: int,
    ) -> list[tuple[int, float]]:
        """The best k of the documents whose essential terms score `at_least`, by their full
        score: one statement, the other terms' postings joined by hash to those documents."""
        rest = sorted(set(present) - set(essential))
        params: list[object] = [
            essential,
            [present[t][0] for t in essential],
            K1,
            B,
            avgdl,
            at_least,
            rest,
            [present[t][0] for t in rest],
            k,
        ]
        return self._ranked(
            f"WITH c AS MATERIALIZED (SELECT p.key, {self._score} AS s "
            "FROM unnest($1::text[], $2::float8[]) AS w(term, idf) "
            f"JOIN bm25_tail p ON p.term = w.term GROUP BY p.key HAVING {self._score} >= $6), "
            f"x AS (SELECT p.key, {self._score} AS s "
            "FROM unnest($7::text[], $8::float8[]) AS w(term, idf) "
            "JOIN bm25_tail p ON p.term = w.term WHERE p.key IN (SELECT key FROM c) "
            "GROUP BY p.key) "
            "SELECT c.key, (c.s + coalesce(x.s, 0))::float4 AS score "
            "FROM c LEFT JOIN x USING (key) ORDER BY score DESC, c.key DESC LIMIT $9",
            params,
        )

    @property
    def _score(self) -> str:
        return SCORE.format(part=repr(float(self._avgpart)))

    def _ranked(self, sql: str, params: list[object]) -> list[tuple[int, float]]:
        """(key, score) rows of a statement that ranks documents. Scores are float4, as the
        channel reports them: one order of ties in every database."""
        return [(int(key), float(value)) for key, value in self.con.raw(sql, params).fetchall()]

    def _rescored(
        self,
        present: dict[str, tuple[float, tuple[int, int, int]]],
        avgdl: float,
        partial: list[tuple[int, float]],
        k: int,
    ) -> tuple[list[tuple[int, float]], float]:
        """The full scores of the documents `partial` lists, best first, and the k-th score
        (0 when there are fewer than k)."""
        full = self._full(present, avgdl, [key for key, _ in partial])
        scores = sorted(
            ((key, float(np.float32(s))) for key, s in full.items()), key=lambda r: (-r[1], -r[0])
        )
        return scores, scores[k - 1][1] if len(scores) >= k else 0.0

    def _full(
        self,
        present: dict[str, tuple[float, tuple[int, int, int]]],
        avgdl: float,
        keys: list[int],
    ) -> dict[int, float]:
        """The full BM25 score of each of `keys` (float64, summed in term order)."""
        rows = self.con.raw(
            "SELECT key, term, tf, dl, passage FROM bm25_tail WHERE term = ANY($1) "
            "AND key = ANY($2) ORDER BY key, term",
            [sorted(present), keys],
        ).fetchall()
        out = dict.fromkeys(keys, 0.0)
        for key, term, tf, dl, passage in rows:
            out[key] += present[term][0] * lucene_tf(tf, dl, self._avgpart if passage else avgdl)
        return out

    def _pruned(
        self, present: dict[str, tuple[float, tuple[int, int, int]]], avgdl: float, k: int
    ) -> list[tuple[int, float]]:
        """The best k, scoring only what can still reach the k-th score (see the class)."""
        widest = max(avgdl, self._avgpart)  # the shortest length relative to either kind's mean
        bound = {t: _bound(w, mt, md, widest) for t, (w, (_, mt, md)) in present.items()}
        by_bound = sorted(present, key=lambda t: (bound[t], t))
        essential = set(by_bound[-1:])
        for _ in range(len(present)):
            rest = [t for t in by_bound if t not in essential]  # always a prefix of by_bound
            self.scored_terms = len(essential)
            depth = max(4 * k, 100)
            partial = self._scored(present, avgdl, depth, limit_by=sorted(essential))
            if not rest:  # every term counted: SQL's order is the final one
                return partial
            scores, theta = self._rescored(present, avgdl, partial, k)
            # any document with no essential term scores at most `outside`
            outside = SLACK * sum(bound[t] for t in rest)
            if outside >= theta:  # essential: all but the longest prefix whose sum stays under
                total = 0.0
                for t in rest:
                    total += SLACK * bound[t]
                    if total >= theta:
                        essential.add(t)
                continue
            if len(partial) == depth and SLACK * partial[-1][1] + outside >= theta:
                # documents past depth may still reach theta: take every one that can
                return self._reaching(present, avgdl, sorted(essential), theta / SLACK - outside, k)
            return scores
        self.scored_terms = len(present)
        return self._scored(present, avgdl, k)

    def upper_bound(self, query: str) -> float:
        """The sum of the query terms' idf (see FullText.upper_bound)."""
        return float(self.idf(query).sum())

    def idf(self, query: str) -> np.ndarray:
        """The idf of each distinct query term (see FullText.idf); the last search's, when it
        was for the same query and this is the first call since (a find asks right after)."""
        last, self._last = self._last, None  # once: a later call reads the counts again
        if last is not None and last[0] == query:
            return last[1]
        terms = self._terms(query)
        if not terms:
            return np.empty(0, np.float64)
        return self._weights(terms)[0]


def _bound(idf: float, max_tf: int, min_dl: int, avgdl: float) -> float:
    """The most one term can add to a score: its idf times the tf part of its largest tf in
    its shortest document (the part grows with tf and shrinks with length)."""
    return idf * lucene_tf(max_tf, min_dl, avgdl)
