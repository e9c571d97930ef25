"""How much a BM25 point is worth in cosine for one query: the exchange rate of score fusion.

Score fusion adds the two channels, `cos + rate x bm25`, so everything it decides per query is
in `rate`. Two ways to set it each fail somewhere:

* absolute (`share` fusion, the old default): `1 / sum(idf of the query's words)`, the most
  BM25 any text could score. A document's value is its share of the query's word evidence,
  which keeps a match on one common word weak in a small store. But a long query (a whole
  paragraph) has a huge idf sum that no text comes near, so BM25 shrinks to a flat sliver
  and hybrid is dense alone, even when BM25 is the better channel for that query.
* relative: `spread of cosine / spread of BM25` over each channel's own best hits for this
  query (z-score fusion). A channel whose best hits stand out counts for more, whatever its
  units. But in a small store the spreads come from a handful of texts, and one partial match
  stands out against texts that match nothing.

The rate used is their geometric mean, and each spread is a robust one (median absolute
deviation over the channel's best POOL documents, BM25's padded with the zeros of texts
that matched no word) shrunk towards a prior spread by PRIOR pseudo-documents: a cosine
spread of 0.1 and a BM25 spread of half an average query word's idf (about one query word
matched once in a text of average length). The choice was made on collections built from
SciFact's abstracts and the shared documents (benchmarks/bench_collections.py), with SciFact's
own queries as the held-out check.
"""

from __future__ import annotations

import math

import numpy as np

POOL = 30
PRIOR = 3.0
DENSE_SPREAD = 0.1
BM25_UNIT = 0.5
_MAD = 1.4826  # MAD x this estimates the standard deviation of a normal distribution


def robust_spread(values: np.ndarray, prior: float, weight: float = PRIOR) -> float:
    """The MAD spread of `values` (scaled to a standard deviation), shrunk towards `prior`.

    Args:
        values: The scores of the pool.
        prior: The spread assumed before seeing any score.
        weight: How many documents the prior counts as.
    """
    n = len(values)
    mad = float(np.median(np.abs(values - np.median(values)))) * _MAD if n else 0.0
    return math.sqrt((n * mad * mad + weight * prior * prior) / (n + weight))


def bm25_rate(
    dense_pool: np.ndarray, bm25_pool: np.ndarray, idf: np.ndarray, prior: float = PRIOR
) -> float:
    """Cosine per BM25 point for this query (0 when the query has no indexable word).

    Args:
        dense_pool: Cosine similarities of the dense channel's best documents, best first.
        bm25_pool: BM25 scores of the BM25 channel's best documents, best first.
        idf: The idf of each distinct query word (a word no text has counts as the rarest).
        prior: How many documents the prior spreads count for (`[search] score_prior`).
    """
    total = float(idf.sum())
    if total <= 0:
        return 0.0
    dense = np.asarray(dense_pool[:POOL], np.float64)
    bm25 = np.asarray(bm25_pool[:POOL], np.float64)
    if len(bm25) < len(dense):
        bm25 = np.concatenate([bm25, np.zeros(len(dense) - len(bm25))])
    relative = robust_spread(dense, DENSE_SPREAD, prior) / robust_spread(
        bm25, BM25_UNIT * float(idf.mean()), prior
    )
    return math.sqrt(relative / total)
