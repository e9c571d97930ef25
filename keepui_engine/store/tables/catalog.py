"""The vector keys' catalog in memory: every key's document, version and head version.

A find maps each channel's keys to documents twice (dense and BM25) and scopes both channels
to the current versions; on DuckDB one scan of `vector_keys` per committed write serves all
of it (the engine caches a KeyCatalog until the next write), where each lookup had been a
statement of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np


@dataclass(frozen=True)
class KeyCatalog:
    """Parallel arrays sorted by key."""

    keys: np.ndarray  # int64
    doc_ids: np.ndarray  # object (str)
    versions: np.ndarray  # int64
    heads: np.ndarray  # int64

    @classmethod
    def read(cls, con: Any) -> KeyCatalog:
        got = con.execute(
            "SELECT key, doc_id, version, head FROM vector_keys ORDER BY key"
        ).fetchnumpy()
        return cls(
            np.asarray(got["key"], np.int64),
            np.asarray(got["doc_id"], object),
            np.asarray(got["version"], np.int64),
            np.asarray(got["head"], np.int64),
        )

    @cached_property
    def current(self) -> np.ndarray:
        """The keys of every document's current version and its parts, sorted (computed once
        per catalog, that is once per committed write)."""
        return self.keys[self.versions == self.heads]

    def lookup(self, keys: np.ndarray | list[int]) -> list[tuple[int, str, int, int]]:
        """(key, doc_id, version, head) of each of `keys` the catalog holds, in their order."""
        if not len(keys) or not len(self.keys):
            return []
        want = np.asarray(keys, np.int64)
        at = np.minimum(np.searchsorted(self.keys, want), len(self.keys) - 1)
        hit = np.flatnonzero(self.keys[at] == want)
        at = at[hit]
        return list(
            zip(
                want[hit].tolist(),
                self.doc_ids[at].tolist(),
                self.versions[at].tolist(),
                self.heads[at].tolist(),
                strict=True,
            )
        )
