"""Summarizers behind the Summarizer Protocol, created by name from the [summarization] settings.

Every provider returns one line of whitespace-normalised text of at most `max_chars`
characters (cut at a word boundary and ended with "…" when it had to be shortened).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from keepui_engine.core.config import SUMMARIZERS
from keepui_engine.core.errors import ConfigError

if TYPE_CHECKING:
    import numpy as np

    from keepui_engine.providers.base import Summarizer


__all__ = ["SUMMARIZERS", "SummaryConfig", "create_summarizer"]


@dataclass(frozen=True)
class SummaryConfig:
    """The [summarization] settings.

    Attributes:
        provider: One of `SUMMARIZERS`.
        max_chars: Longest summary any provider returns.
        sentences: How many sentences the extractive provider picks.
        base_url: OpenAI-compatible API root, ending in /v1.
        model: Model name (openai-compatible) or mlx model repo id / path.
        api_key_env: NAME of the environment variable holding the API key (never the key).
        timeout_s: Seconds to wait for an LLM server's reply.
    """

    provider: str = "extractive"
    max_chars: int = 500
    sentences: int = 3
    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    timeout_s: float = 60.0


def create_summarizer(
    config: SummaryConfig, embed: Callable[[list[str]], np.ndarray] | None = None
) -> Summarizer:
    """Build the summarizer `config` names (LLM backends are imported only here).

    Args:
        config: The [summarization] settings.
        embed: Texts to unit vectors, one row per text (the store's loaded embedder); used by
            the extractive provider, which falls back to TF-IDF without it.

    Raises:
        ConfigError: Unknown provider, or a setting the provider needs is missing or invalid.
        ProviderError: The mlx provider on a machine without mlx-lm.
    """
    _check_common(config)
    name = config.provider
    if name == "extractive":
        from keepui_engine.providers.summary.extractive import ExtractiveSummarizer

        return ExtractiveSummarizer(config.max_chars, config.sentences, embed)
    if name in ("truncate", "passthrough", "first_paragraph"):
        from keepui_engine.providers.summary import simple

        if name == "first_paragraph":
            return simple.FirstParagraphSummarizer(config.max_chars)
        if name == "passthrough":
            return simple.PassthroughSummarizer(config.max_chars)
        return simple.TruncateSummarizer(config.max_chars)
    if name == "openai-compatible":
        from keepui_engine.providers.summary.llm import OpenAICompatibleSummarizer

        return OpenAICompatibleSummarizer(
            _base_url(config.base_url),
            _required_model(config),
            config.max_chars,
            config.api_key_env or None,
            config.timeout_s,
        )
    if name == "mlx":
        from keepui_engine.providers.summary.llm import MlxSummarizer, load_mlx_lm

        model = _required_model(config)
        return MlxSummarizer(model, config.max_chars, load_mlx_lm())
    raise ConfigError(
        f"keepui.toml [summarization] provider = {name!r} is unknown; choose one of "
        f"{', '.join(SUMMARIZERS)}."
    )


def _check_common(config: SummaryConfig) -> None:
    if config.max_chars < 1:
        raise ConfigError(
            f"the summary length limit max_chars = {config.max_chars} must be at least 1 "
            "(keepui.toml [summarization])."
        )
    if config.sentences < 1:
        raise ConfigError(
            f"keepui.toml [summarization] sentences = {config.sentences} must be at least 1."
        )
    if not config.timeout_s > 0:
        raise ConfigError(
            f"keepui.toml [summarization] timeout_s = {config.timeout_s} must be positive."
        )


def _required_model(config: SummaryConfig) -> str:
    if not config.model:
        example = "llama3.2:3b" if config.provider == "openai-compatible" else "mlx-community/…"
        raise ConfigError(
            f"keepui.toml [summarization] provider = {config.provider!r} needs "
            f'[summarization] model (e.g. model = "{example}").'
        )
    return config.model


def _base_url(base_url: str | None) -> str:
    """Validate the API root: http(s), a host, and a path (usually /v1)."""
    if not base_url:
        raise ConfigError(
            "keepui.toml [summarization] provider = 'openai-compatible' needs "
            '[summarization] base_url (e.g. base_url = "http://127.0.0.1:11434/v1" for Ollama).'
        )
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(
            f"keepui.toml [summarization] base_url = {base_url!r} is not an http(s) URL; "
            'use e.g. "http://127.0.0.1:11434/v1".'
        )
    if parts.path.strip("/") == "":
        raise ConfigError(
            f"keepui.toml [summarization] base_url = {base_url!r} has no API path; OpenAI-"
            f"compatible servers serve under /v1: try {base_url.rstrip('/') + '/v1'!r}."
        )
    return base_url.rstrip("/")
