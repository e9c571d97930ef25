"""A deterministic hashed bag-of-words embedder for fast unit tests (never a user default)."""

from __future__ import annotations

import hashlib
import re

import numpy as np

_WORD = re.compile(r"\w+")


class FakeEmbedder:
    """Hashes each lower-cased word into a signed bucket; same text, same vector.

    Texts sharing words get positive cosine similarity, so ranking tests can reason about it.
    """

    name = "fake-hash-v1"

    def __init__(self, dim: int = 64, window: int = 510) -> None:
        self.dim = dim
        self.window = window  # a "token" is a whitespace word here
        self.calls = 0
        self.texts_embedded = 0

    def count_tokens(self, texts: list[str]) -> list[int]:
        """Whitespace words: the fake model's tokens."""
        return [len(t.split()) for t in texts]

    def embed(self, texts: list[str]) -> np.ndarray:
        """Return one unit vector per text."""
        self.calls += 1
        self.texts_embedded += len(texts)
        out = np.zeros((len(texts), self.dim), np.float32)
        for i, text in enumerate(texts):
            for word in _WORD.findall(text.lower()) or [text]:
                h = hashlib.blake2b(word.encode(), digest_size=8).digest()
                out[i, h[0] % self.dim] += 1.0 if h[1] & 1 else -1.0
                out[i, h[2] % self.dim] += 0.5
            norm = np.linalg.norm(out[i])
            out[i] = out[i] / norm if norm else out[i]
            if not norm:
                out[i, 0] = 1.0
        return out
