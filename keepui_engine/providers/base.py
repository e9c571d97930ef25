"""Provider Protocols: what the engine needs from an embedder and a summarizer."""

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


@runtime_checkable
class TokenCounter(Protocol):
    """An embedder that can say how much of a text one vector sees (optional).

    Attributes:
        window: Tokens of text one vector sees (the model's window less its special tokens).
    """

    window: int

    def count_tokens(self, texts: list[str]) -> list[int]:
        """The model's tokens in each text, special tokens left out."""
        ...


@runtime_checkable
class Summarizer(Protocol):
    """Turns a text into a short summary.

    Attributes:
        name: Provider name (the [summarization] provider value).
        uses_context: True for LLM providers, which take related items' summaries as context.
    """

    name: str
    uses_context: bool

    def summarize(self, text: str, *, context: list[str] | None = None) -> str:
        """Return a summary of at most the configured number of characters.

        Args:
            text: The item's text.
            context: Summaries of related items (contextual summarization); providers
                without `uses_context` ignore it.

        Raises:
            ProviderError: The provider is missing or failed.
        """
        ...
