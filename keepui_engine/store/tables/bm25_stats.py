"""BM25 as both backends score it: the tokenizer, Lucene's formula, and its statistics when a
store holds passages beside whole texts.

A long text is indexed whole and as its passages, so counted over every key a word of a long
text would be counted once per passage it falls in (overlaps twice), and one mean length would
mix whole texts with window-sized passages. So:

* a word's idf counts whole texts only (part 0 of a version): how many documents hold it, N
  the number of whole texts; a passage is scored with its document's idf;
* length is normalised within each kind: a whole text against the mean whole text, a passage
  against the mean passage (per-passage normalisation), so a passage is not rewarded only for
  being shorter than the texts it sits among.

Measured on SciFact (passages of split abstracts, per-passage fusion): hybrid nDCG@10 0.7296
with statistics over every key, 0.7340 with these. Without passages nothing changes: every key
is a whole text and these are BM25's usual statistics.

bm25s builds its score matrix with statistics over every key; `restat` rewrites it in place:
each stored score is idf x tf / (tf + K1 (1 - B + B dl / avgdl)), so tf is recovered exactly
(an integer, rounded) and scored again with these statistics.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np


def idf(df: Any, n: float) -> Any:
    """Lucene's idf of terms in `df` of `n` documents (numbers or arrays)."""
    return np.log(1.0 + (n - df + 0.5) / (df + 0.5))


K1 = 0.9
B = 0.4


# Lucene's English stop words, the list bm25s uses for stopwords="en".
_STOPWORDS = (
    "a an and are as at be but by for if in into is it no not of on or such that the their "
    "then there these they this to was will with"
)
STOPWORDS = frozenset(_STOPWORDS.split())
TOKEN = re.compile(r"(?u)\b\w\w+\b")


class Tokenizer:
    """bm25s's tokenization without importing bm25s (and scipy) on the write path.

    Lower case, words of two or more characters, English stop words removed, Snowball English
    stems; the same for texts and queries. A test checks it against `bm25s.tokenize`.
    """

    def __init__(self) -> None:
        import Stemmer

        self._stem = Stemmer.Stemmer("english").stemWords

    def __call__(self, texts: list[str]) -> list[list[str]]:
        """Token lists, one per text."""
        return [
            self._stem([w for w in TOKEN.findall(t.lower()) if w not in STOPWORDS]) for t in texts
        ]


lucene_idf = idf  # Lucene's idf of terms in `df` of `n` documents


def lucene_tf(tf: Any, dl: Any, avgdl: float) -> Any:
    """Lucene's saturated, length-normalised term frequency (numbers or arrays)."""
    return tf / (tf + K1 * (1.0 - B + B * dl / avgdl))


def norm(dl: Any, avgdl: float, k1: float, b: float) -> Any:
    """The length term K1 (1 - B + B dl / avgdl) of a key of length `dl`."""
    return k1 * (1.0 - b + b * dl / max(avgdl, 1e-9))


def kinds(lengths: np.ndarray, passage: np.ndarray) -> dict[str, float]:
    """Counts and summed lengths of whole texts and passages (stats.json's new fields)."""
    return {
        "n_whole": int((~passage).sum()),
        "dl_whole": float(lengths[~passage].sum()),
        "n_part": int(passage.sum()),
        "dl_part": float(lengths[passage].sum()),
    }


def base_kinds(stats: dict[str, Any]) -> dict[str, float]:
    """A base's counts and summed lengths of each kind (stats.json); a base built before
    passages had their own statistics holds one kind, every key a whole text."""
    if "n_whole" in stats:
        return {k: float(stats[k]) for k in ("n_whole", "dl_whole", "n_part", "dl_part")}
    n = float(stats.get("n", 0))
    return {
        "n_whole": n,
        "dl_whole": n * float(stats.get("avgdl", 0.0)),
        "n_part": 0.0,
        "dl_part": 0.0,
    }


def mean_lengths(stats: dict[str, float]) -> tuple[float, float]:
    """(mean whole-text length, mean passage length), each 1.0 when there is none."""
    whole = stats["dl_whole"] / stats["n_whole"] if stats["n_whole"] else 1.0
    part = stats["dl_part"] / stats["n_part"] if stats["n_part"] else 1.0
    return whole, part


def restat(
    scores: dict[str, Any], lengths: np.ndarray, passage: np.ndarray, k1: float, b: float
) -> np.ndarray:
    """Rescore bm25s's matrix (`scores`: data, indices, indptr; a column per term) in place
    with whole-text idf and per-kind lengths; return each term's whole-text df.

    Args:
        scores: bm25s's `BM25.scores` after `index` (method "lucene", the same k1 and b).
        lengths: Each key's token count, in index order.
        passage: Whether each key is a passage, in index order.
        k1: BM25's k1.
        b: BM25's b.
    """
    data = np.asarray(scores["data"])
    docs = np.asarray(scores["indices"])
    indptr = np.asarray(scores["indptr"])
    counts = np.diff(indptr)
    term = np.repeat(np.arange(len(counts)), counts)
    n_all = len(lengths)
    df_whole = np.bincount(term, weights=(~passage[docs]).astype(np.float64), minlength=len(counts))
    if not len(data):
        return df_whole.astype(np.int64)
    old_idf = idf(counts.astype(np.float64), float(n_all))[term]
    old_norm = norm(lengths[docs], float(lengths.mean()), k1, b)
    share = np.minimum(data.astype(np.float64) / np.maximum(old_idf, 1e-12), 1.0 - 1e-7)
    tf = np.maximum(np.rint(share * old_norm / (1.0 - share)), 1.0)
    stats = kinds(lengths, passage)
    whole_len, part_len = mean_lengths(stats)
    new_norm = np.where(
        passage[docs], norm(lengths[docs], part_len, k1, b), norm(lengths[docs], whole_len, k1, b)
    )
    # a term only passages hold (a whole text kept as its summary) counts as in one document
    df = np.maximum(df_whole, (counts > 0).astype(np.float64))
    new_idf = idf(df, float(max(stats["n_whole"], 1)))[term]
    data[:] = (new_idf * tf / (tf + new_norm)).astype(data.dtype)
    return df_whole.astype(np.int64)


def postings(
    tf: np.ndarray,
    dl: np.ndarray,
    df: np.ndarray,
    passage: np.ndarray,
    stats: dict[str, float],
    k1: float,
    b: float,
) -> np.ndarray:
    """BM25 of (term, key) postings scored exactly (the tail of new writes): whole-text idf
    (`df` counts whole texts; at least 1) and each key's length against its kind's mean."""
    whole_len, part_len = mean_lengths(stats)
    length = np.where(passage, norm(dl, part_len, k1, b), norm(dl, whole_len, k1, b))
    return idf(np.maximum(df, 1.0), max(stats["n_whole"], 1.0)) * tf / (tf + length)
