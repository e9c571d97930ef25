"""Provider Protocols: what the engine needs from an embedder."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit vectors.

    Attributes:
        name: Model name recorded in the store; vectors of different names never mix.
        dim: Vector dimension.
    """

    name: str
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """Return float32 unit vectors, one row per text.

        Raises:
            ProviderError: The model is missing or failed.
        """
        ...
