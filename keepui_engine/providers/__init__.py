"""Embedding and other providers behind Protocols, created lazily by name."""

from __future__ import annotations

from typing import TYPE_CHECKING

from keepui_engine.core.errors import ConfigError

if TYPE_CHECKING:
    from keepui_engine.core.config import Settings
    from keepui_engine.providers.base import Embedder

EMBEDDERS = ("sentence-transformers", "fake")


def create_embedder(settings: Settings, *, lean: bool = False) -> Embedder:
    """Build the embedder keepui.toml names (heavy imports happen inside the provider).

    Args:
        settings: The store's settings.
        lean: For a long-lived owner: keep memory small (see the provider).
    """
    name = settings.embedding_provider
    if name == "sentence-transformers":
        from keepui_engine.providers.sentence_transformers import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(
            settings.embedding_model, settings.model_path, settings.batch_size, lean=lean
        )
    if name == "fake":
        from keepui_engine.providers.fake import FakeEmbedder

        return FakeEmbedder()
    raise ConfigError(
        f"{settings.config_path}: [embedding] provider = {name!r} is unknown; "
        f"choose one of {', '.join(EMBEDDERS)}."
    )
