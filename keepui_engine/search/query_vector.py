"""The query's vector: its whole text's, pooled with its sentences' when it has several.

MiniLM sees at most 256 word pieces and, below that, one vector for a paragraph leans on
whatever dominates it. A query of several sentences (a pasted paragraph, an argument) is
embedded whole and sentence by sentence, and its vector is the normalised sum of the whole
text's vector and the mean of its sentences', so each point it makes counts. A one-sentence
query (almost every typed one) keeps its plain vector at no extra cost.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

MIN_WORDS = 24
MAX_SENTENCES = 16
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")


def sentences(text: str) -> list[str]:
    """The sentences of a query (a plain punctuation rule), each of three words or more."""
    parts = [s.strip() for s in _SENTENCE.split(" ".join(text.split()))]
    return [s for s in parts if len(s.split()) >= 3]


def query_vector(text: str, embed: Callable[[str], np.ndarray]) -> np.ndarray:
    """The unit vector to search with for `text`.

    Args:
        text: The query.
        embed: Embeds one text into a unit vector (cached by the caller).

    Returns:
        embed(text) for a short or one-sentence query; otherwise the normalised sum of it and
        the mean of the vectors of its first MAX_SENTENCES sentences.
    """
    whole = embed(text)
    if len(text.split()) < MIN_WORDS:
        return whole
    parts = sentences(text)[:MAX_SENTENCES]
    if len(parts) < 2:
        return whole
    pooled = whole + np.mean([embed(s) for s in parts], axis=0)
    norm = float(np.linalg.norm(pooled))
    return (pooled / norm).astype(whole.dtype) if norm > 0 else whole
