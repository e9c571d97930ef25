"""The default summarizer: the text's most central sentences, chosen with the embedding model.

Candidates: only real sentences are quoted (`candidates.py`: at least 6 words, ending like a
sentence, no boilerplate, table rows, citations or repeats). A text of fragments only (a
list of short bullets, a metadata block) falls back to what it has: its fragments in text
order, joined with "; ", as many as fit in `max_chars`.

Algorithm: centrality around a document vector. The candidates and their text are embedded
(unit vectors; in two calls, so sentences are not padded to the text's length). The document
vector is the sum of two unit vectors: the model's embedding of the candidates' text (their
first `WHOLE_TEXT_CHARS` characters, so navigation and tables do not pull it; the model
itself sees only its window, 256 tokens for MiniLM) and the word-count-weighted centroid of
the sentence vectors (which sees every considered sentence). A sentence's score is its cosine
similarity to that document vector, plus a small prior for the first sentence. The top
`sentences` (skipping near-duplicates, and any that would overflow `max_chars` in favour of
shorter ones that still score above the median) are output in their original order.

Why a centroid rather than TextRank: on a dense cosine-similarity graph PageRank's stationary
vector is very close to weighted degree, and a sentence's weighted degree sum_j cos(i, j) is
n * (v_i . mean(v)): the centroid score. TextRank would cost O(n^2) memory and an iteration
loop, need a damping factor and a policy for negative cosines, and end up ranking (almost) the
same sentences. The centroid is O(n * dim), deterministic, and aims directly at what a summary
is for here: being close to the text's meaning in the vector space `find` searches. Word-count
weights make the centroid approximate mean pooling over tokens, so a two-word fragment weighs
less than a full sentence. Adding the whole-text embedding (one extra text per batch) brings
in what a bag of sentences misses (context, word order across sentences). Measured on 494
SciFact abstracts with >= 6 sentences (3 sentences, 500 chars, MiniLM): the summary held the
sentence most similar to the text's embedding in 436 (centroid alone: 271; lead-3: 219), and
its mean similarity to the text was 0.872 (centroid alone about 0.83; lead-3 0.840).
The first-sentence prior (+0.03 cosine) breaks near-ties in favour of the lead, which in notes,
articles and abstracts usually states the topic.

Without an embedding function the same scoring runs on TF-IDF vectors around their centroid
(lexical centrality), so the provider still works, just with less sense of meaning.

Long texts: only the first `MAX_SENTENCES` (200) candidates are considered, which bounds the
cost to one embedding batch of <= 201 texts at the price of ignoring late material in very
long documents.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable

import numpy as np

from keepui_engine.core.errors import ProviderError
from keepui_engine.providers.summary.candidates import candidates
from keepui_engine.providers.summary.text import cut, normalize, split_sentences

MAX_SENTENCES = 200
WHOLE_TEXT_CHARS = 4000  # more than a 256-token window; bounds tokenizing huge texts
FIRST_SENTENCE_PRIOR = 0.03
DUPLICATE_SIMILARITY = 0.95

EmbedFn = Callable[[list[str]], np.ndarray]

_WORD = re.compile(r"\w+")
_STOPWORD_TEXT = (
    "a an and are as at be but by for from has have he her his i if in into is it its of on "
    "or our she so that the their them they this to was we were which who will with you your"
)
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_CLOSERS = frozenset(".!?…\"'”’)]")


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length; all-zero rows stay zero."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


def tfidf_vectors(sentences: list[str]) -> np.ndarray:
    """Unit TF-IDF vectors (sublinear tf, smoothed idf, English stopwords dropped), one per row."""
    docs = [
        Counter(w for w in _WORD.findall(s.lower()) if len(w) > 1 and w not in _STOPWORDS)
        for s in sentences
    ]
    vocab = {w: i for i, w in enumerate(sorted({w for d in docs for w in d}))}
    df = Counter(w for d in docs for w in d)
    n = len(sentences)
    out = np.zeros((n, max(len(vocab), 1)), np.float32)
    for row, doc in enumerate(docs):
        for word, tf in doc.items():
            idf = math.log((1 + n) / (1 + df[word])) + 1.0
            out[row, vocab[word]] = (1.0 + math.log(tf)) * idf
    return _unit_rows(out)


def centrality(
    vectors: np.ndarray, weights: np.ndarray, whole: np.ndarray | None = None
) -> np.ndarray:
    """Cosine similarity of each row of `vectors` to the document vector.

    Args:
        vectors: One unit vector per sentence.
        weights: One non-negative weight per sentence (its word count).
        whole: The unit embedding of the whole text, or None to use the centroid alone.

    Returns:
        One score per sentence, in [-1, 1]; all zeros when the document vector is zero.
    """
    doc = _unit_rows((vectors * weights[:, None]).sum(axis=0, keepdims=True))[0]
    if whole is not None:
        doc = _unit_rows((doc + whole)[None, :])[0]
    if not doc.any():
        return np.zeros(len(vectors), np.float32)
    return vectors @ doc


class ExtractiveSummarizer:
    """The `sentences` most central sentences of a text, in their original order.

    Args:
        max_chars: Longest summary.
        sentences: How many sentences to pick.
        embed: Texts to unit vectors (the store's embedder); None for TF-IDF centrality.
    """

    name = "extractive"
    uses_context = False

    def __init__(self, max_chars: int, sentences: int = 3, embed: EmbedFn | None = None) -> None:
        self.max_chars = max_chars
        self.sentences = sentences
        self.embed = embed

    @property
    def method(self) -> str:
        """What the centrality is computed on: "embedding" or "tfidf"."""
        return "embedding" if self.embed is not None else "tfidf"

    def summarize(self, text: str, *, context: list[str] | None = None) -> str:
        """Return the central sentences in text order; `context` is ignored.

        A text with at most `sentences` sentences (fragments included) is returned whole
        (normalised and cut); so is one with nothing but boilerplate. When the text has no
        more real sentences than `sentences`, they are all used, as far as `max_chars` allows;
        a text of fragments only (a list of bullets) gives its fragments in order, as many as
        fit, since centrality means little between three-word items.

        Raises:
            ProviderError: The embedding function failed or returned the wrong shape.
        """
        if len(split_sentences(text)) <= self.sentences:
            return cut(normalize(text), self.max_chars)
        pieces, real = candidates(text)
        pieces = pieces[:MAX_SENTENCES]
        if not pieces:
            return cut(normalize(text), self.max_chars)
        if not real or len(pieces) <= self.sentences:
            return self._join(pieces, range(len(pieces)))
        scores, vectors = self.rank(normalize(" ".join(pieces)), pieces)
        return self._assemble(pieces, scores, vectors)

    def rank(self, text: str, sentences: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Score sentences by centrality.

        Args:
            text: The whole text (embedded alongside the sentences).
            sentences: At least one sentence of it.

        Returns:
            The score of each sentence (first-sentence prior included) and their unit vectors.

        Raises:
            ProviderError: The embedding function failed or returned the wrong shape.
        """
        weights = np.array([max(len(s.split()), 1) for s in sentences], np.float32)
        if self.embed is None:
            vectors, whole = tfidf_vectors(sentences), None
        else:
            batch = [*sentences, text[:WHOLE_TEXT_CHARS]]
            # two calls: in one batch every short sentence would be padded to the long text's
            # 256 tokens, which made summarizing about five times slower
            parts = [self.embed(list(sentences)), self.embed([batch[-1]])]
            shapes = [np.asarray(p).shape for p in parts]
            if any(len(sh) != 2 for sh in shapes) or [sh[0] for sh in shapes] != [
                len(sentences),
                1,
            ]:
                raise ProviderError(
                    f"the embedding model returned arrays of shapes {shapes} for "
                    f"{len(sentences)} sentences and 1 text; the extractive summarizer needs one "
                    "row per text. Check [embedding] in keepui.toml.",
                    "Summarization failed",
                )
            embedded = np.concatenate([np.asarray(p, np.float32) for p in parts])
            embedded = _unit_rows(embedded)
            vectors, whole = embedded[:-1], embedded[-1]
        scores = centrality(vectors, weights, whole).astype(np.float64)
        scores[0] += FIRST_SENTENCE_PRIOR
        return scores, vectors

    def _assemble(self, sentences: list[str], scores: np.ndarray, vectors: np.ndarray) -> str:
        """Pick by score, skipping near-duplicates and overflows; output in text order.

        A sentence that would overflow `max_chars` is skipped for a shorter, lower-ranked one,
        but never for one scoring below the median: a summary of fewer sentences beats one
        padded with off-topic text. When not even one sentence fits, the best one is cut.
        """
        order = np.argsort(-scores, kind="stable")
        floor = float(np.median(scores))
        chosen: list[int] = []
        used = 0
        for i in (int(j) for j in order):
            if len(chosen) == self.sentences or (chosen and scores[i] < floor):
                break
            if any(float(vectors[i] @ vectors[j]) >= DUPLICATE_SIMILARITY for j in chosen):
                continue
            extra = len(sentences[i]) + (1 if chosen else 0)
            if used + extra > self.max_chars:
                continue
            chosen.append(i)
            used += extra
        if not chosen:
            return cut(sentences[int(order[0])], self.max_chars)
        return _joined([sentences[i] for i in sorted(chosen)])

    def _join(self, pieces: list[str], order: range) -> str:
        """All pieces in order while they fit in `max_chars` (the first one cut if it alone
        does not)."""
        kept: list[str] = []
        for i in order:
            if len(_joined([*kept, pieces[i]])) > self.max_chars:
                break
            kept.append(pieces[i])
        return _joined(kept) if kept else cut(pieces[0], self.max_chars)


def _joined(pieces: list[str]) -> str:
    """Sentences joined by a space; a fragment (no closing punctuation) is followed by "; "."""
    out = ""
    for piece in pieces:
        if out:
            out += " " if out[-1] in _CLOSERS else "; "
        out += piece
    return out
